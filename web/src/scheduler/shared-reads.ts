/**
 * Byte ranges that several tasks of one file's scan read whole: read once, handed to each.
 *
 * A row group split into tasks by rows (the reader's re-plan for parallelism: one big row group,
 * two workers) reads less per task only where an offset index names the pages. Where none does —
 * pyarrow's, DuckDB's and Polars' defaults — every task of the row group asks for the same whole
 * column chunks, and each used to fetch them: a one-row-group pyarrow file scanned on two workers
 * (four tasks) moved its bytes four times. The plan lists each task's ranges, so the ranges
 * listed by more than one task are known before any is read.
 *
 * The first task to want such a range starts one read (with its own other ranges, so its
 * requests coalesce as before); the others take copies of those bytes (a task's bytes are
 * transferred to a worker). Phase-2 asks (a filter's output columns, asked once the rows are
 * known) go through the same map: a row group's tasks ask for the same whole output chunks. A
 * range's bytes are dropped when every task listing it has finished, so at most the split row
 * group's chunks are held, and only while a task that may still want them has not finished.
 */
import { ParquetSkimError } from '../errors.js';
import type { ByteRange } from '../io/coalesce.js';
import { takeHeld } from '../io/held.js';
import type { ReadTask } from '../wasm/contract.js';
import type { Chunk } from '../worker/protocol.js';

/** One key per byte range, for sets and maps of ranges. */
export const keyOf = (range: ByteRange): string => `${range.start}-${range.end}`;

/** The distinct ranges `task` lists, both phases. */
function keysOf(task: ReadTask): Set<string> {
  const keys = new Set<string>();
  for (const range of task.filterRanges) keys.add(keyOf(range));
  for (const range of task.outputRanges) keys.add(keyOf(range));
  return keys;
}

/** The ranges of one part's tasks that more than one task lists, and their bytes once read. */
export class SharedReads {
  /** Tasks not yet finished that list each shared range. */
  private readonly wanted = new Map<string, number>();
  /** The read carrying each shared range, once a task has started it. */
  private readonly reads = new Map<string, Promise<Chunk[]>>();

  constructor(tasks: readonly ReadTask[]) {
    for (const task of tasks) {
      for (const key of keysOf(task)) this.wanted.set(key, (this.wanted.get(key) ?? 0) + 1);
    }
    for (const [key, tasksListing] of this.wanted) if (tasksListing < 2) this.wanted.delete(key);
  }

  /**
   * The bytes of `ranges`: shared ones from the read that carries them (started by `read`, with
   * this call's other ranges, if no task has started it yet), the rest by `read`. `taken`: the
   * ranges whose bytes another task's read fetched (this call moved none of their bytes). A
   * failed shared read fails every task waiting on it.
   */
  async read(
    ranges: readonly ByteRange[],
    read: (ranges: ByteRange[]) => Promise<Chunk[]>,
  ): Promise<{ chunks: Chunk[]; taken: ByteRange[] }> {
    const shared = ranges.filter((r) => this.wanted.has(keyOf(r)));
    if (shared.length === 0) return { chunks: await read([...ranges]), taken: [] };
    const own = ranges.filter((r) => !this.wanted.has(keyOf(r)));
    const taken = shared.filter((r) => this.reads.has(keyOf(r)));
    const unread = shared.filter((r) => !this.reads.has(keyOf(r)));
    let ownChunks: Promise<Chunk[]> | undefined;
    if (unread.length > 0) {
      const started = read([...unread, ...own]);
      started.catch(() => undefined);
      for (const range of unread) this.reads.set(keyOf(range), started);
      if (own.length > 0) ownChunks = started.then((chunks) => takeHeld(own, chunks).chunks);
    } else if (own.length > 0) {
      ownChunks = read(own);
    }
    // Awaited below, unless a shared read fails first: then its failure is the task's.
    ownChunks?.catch(() => undefined);
    const chunks: Chunk[] = [];
    for (const range of shared) {
      const carrier = this.reads.get(keyOf(range));
      // Dropped only once every task listing it has finished, and this one has not.
      if (carrier === undefined) {
        throw new ParquetSkimError(
          'INTERNAL',
          `internal error: shared bytes ${keyOf(range)} dropped while a task wanted them`,
        );
      }
      chunks.push(...takeHeld([range], await carrier).chunks);
    }
    if (ownChunks !== undefined) chunks.push(...(await ownChunks));
    return { chunks, taken };
  }

  /** `task` has finished (or failed): the shared ranges no unfinished task lists are dropped. */
  release(task: ReadTask): void {
    if (this.wanted.size === 0) return;
    for (const key of keysOf(task)) {
      const left = this.wanted.get(key);
      if (left === undefined) continue;
      if (left <= 1) {
        this.wanted.delete(key);
        this.reads.delete(key);
      } else {
        this.wanted.set(key, left - 1);
      }
    }
  }
}
