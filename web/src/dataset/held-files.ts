/**
 * Which of a dataset's files stay open: a bound on the memory their decoded footers hold.
 *
 * An open file holds its decoded footer in the core (`ParquetFile.memoryBytes`), in the page's
 * WebAssembly instance and in every worker a scan of it ran on. A file of many row groups holds
 * several times its footer: lineitem written by pyarrow per month (~180 row groups × 16 columns,
 * a 292 KB footer) holds ~1.3 MB, and a page's instance ends at 4 GiB. A dataset that kept every
 * file a scan reached open failed a `count` over 3,024 such files partway (`INTERNAL:
 * unreachable`, the allocator out of memory), though the count needs only a few of its columns.
 *
 * So the files are counted here against a budget (`DatasetOptions.footerMemoryBytes`). A file is
 * *pinned* while a run needs it — opened ahead for the run, then read by it until its last task is
 * done — and *idle* otherwise. Whenever the files open hold more than the budget, idle files are
 * closed (`close`: the dataset forgets the file, keeping its path, partitions, size and rows); a
 * scan that reaches one again opens it again, one footer request. Pinned files are never closed,
 * so a run's own files stay within the budget only as far as the dataset opens ahead of a run
 * within it ({@link hasRoom}): a run holds at most half the budget plus the file it is on.
 *
 * Which idle file goes first: the one a run let go of last. A scan goes through the files in
 * order, so least-recently-used would close each file just before the next scan over the dataset
 * reaches it — every scan would open every file again; this way a scan larger than the budget
 * closes the files behind it as it goes, and the dataset's first files stay open for the next —
 * in the half of the budget a run's files opened ahead leave free.
 *
 * Under the budget nothing changes: every file opened stays open, as before (the 84-file hive
 * lineitem holds ~112 MiB, under the default 256 MiB).
 */
export class HeldFiles {
  /** Bytes each open file holds, by file index. */
  private readonly held = new Map<number, number>();
  private total = 0;
  /** Runs holding each pinned file (opened or not yet). */
  private readonly pins = new Map<number, number>();
  /** Open files no run holds, in the order runs let go of them (a `Set` keeps insertion order). */
  private readonly idle = new Set<number>();
  /** Bytes and count of every file opened so far: the size a file about to open is taken to have. */
  private seenBytes = 0;
  private seenFiles = 0;
  /** Files closed to stay within the budget, since the dataset was opened. */
  closed = 0;

  constructor(
    readonly budget: number,
    private readonly close: (index: number) => void,
  ) {}

  /** Bytes the open files hold. */
  get bytes(): number {
    return this.total;
  }

  /** File `index` is open, holding `bytes`. Idle unless a run pinned it. */
  opened(index: number, bytes: number): void {
    this.forget(index);
    this.held.set(index, bytes);
    this.total += bytes;
    this.seenBytes += bytes;
    this.seenFiles += 1;
    if (!this.pins.has(index)) this.idle.add(index);
    this.trim();
  }

  /** File `index` was closed by its owner (the dataset's own close): no longer counted. */
  forget(index: number): void {
    const bytes = this.held.get(index);
    if (bytes === undefined) return;
    this.held.delete(index);
    this.idle.delete(index);
    this.total -= bytes;
  }

  /** A run needs file `index` (open or about to be). */
  pin(index: number): void {
    this.pins.set(index, (this.pins.get(index) ?? 0) + 1);
    this.idle.delete(index);
  }

  /** A run is done with file `index`: idle once no run holds it, and the first of those to close. */
  unpin(index: number): void {
    const left = (this.pins.get(index) ?? 0) - 1;
    if (left > 0) {
      this.pins.set(index, left);
      return;
    }
    this.pins.delete(index);
    if (this.held.has(index)) this.idle.add(index);
    this.trim();
  }

  /**
   * Whether another file may open ahead of a run: the files runs hold (one not open yet counted
   * as the average file opened so far) and one more such file within half the budget — the other
   * half keeps files runs let go of, for the next run. Before any file has opened, there is room.
   */
  hasRoom(): boolean {
    if (this.seenFiles === 0) return true;
    const average = this.seenBytes / this.seenFiles;
    let pinned = average;
    for (const index of this.pins.keys()) pinned += this.held.get(index) ?? average;
    return pinned <= this.budget / 2;
  }

  /** Closes idle files, the one let go of last first, until the open ones fit the budget. */
  private trim(): void {
    if (this.total <= this.budget) return;
    const newestFirst = [...this.idle].reverse();
    for (const index of newestFirst) {
      if (this.total <= this.budget) return;
      this.forget(index);
      this.closed += 1;
      this.close(index);
    }
  }
}
