/**
 * The executor of a browser reader: the page's own instance of the core for small tasks while no
 * worker is ready and for small queries, and the worker pool for everything else.
 *
 * Starting workers costs a fresh page more than a small first query does. Each worker loads its
 * script and instantiates the core on a core of its own — two more threads competing with the page
 * on a machine with few cores — and its first task runs cold code. Measured on the interactive
 * bench (2 cores, first 100 rows of TPC-H SF1, cold page): 385–433 ms decoding on the page against
 * 473–496 ms with two workers in Chromium; 311–324 against 625–696 ms with WebKit's four; 353–417
 * against 380–427 ms in Firefox. So the pool starts lazily: when a task too big for the page comes,
 * or once the page has run a task and then been quiet for {@link WORKERS_AFTER_QUIET_MS} (the first
 * query is answered: the workers start for the next one, in the time the user takes to look at it).
 * Not at once: small queries often come in a burst — a grid's next rows as it scrolls, a lookup
 * after the first rows — and each of them ran beside the workers' start. WebKit reported four
 * cores (`hardwareConcurrency`) on a two-core machine, so there a small query right after the
 * first one shared the two with four workers instantiating the core: warm first 100
 * rows 38–46 ms (layout a) and 50–52 (DuckDB's file), against 31–42 and 37–40 with no workers
 * (`bench/results/2026-11-29-workers-after-quiet.md`). A bulk scan in that quiet time starts them
 * itself ({@link prepare}), as on a fresh page.
 *
 * "Small" is `inlineTaskBytes` of planned bytes (default 4 MiB: a first page of rows or a lookup);
 * bigger tasks would hold the page's thread for tens of milliseconds or more. A small task decodes
 * in slices of a batch at a time, yielding every 8 ms (`PAGE_SLICE_MS`); a batch cannot be split,
 * and a first batch of cold code takes 15–50 ms.
 *
 * Once workers are ready, a whole *query* that small — every task of its scan within
 * `inlineScanBytes` (default 2 MiB) — still decodes on the page when the page is idle. A hop to a
 * worker costs more than such a task: posting it, the worker waking, the result's IPC cloned back,
 * and a worker that is still decoding the footer of a file just opened. Measured in Chromium, warm,
 * TPC-H SF1 (layout a) in memory: the first 100 rows 13.0 ms with two workers against 10 ms on the
 * page, a lookup 16.0 against 7 ms (natively 5.1 and 5.7 ms on two threads). Such a query decodes
 * in 2–5 ms warm, within one 8 ms slice of the page's thread. A scan of many small tasks is a bulk
 * read and goes to the workers whatever its tasks' sizes, so it never holds the page.
 *
 * While the workers start, the page takes a bulk scan's small tasks; each waits in the page's
 * queue, and when its turn comes goes to a worker if one got ready meanwhile
 * ({@link InlineExecutor.runUnless}, which also lets the worker's `ready` message in: from bytes
 * in memory the page's own decoding left no turn for it, and a loop of scans of a DuckDB-written
 * file — 17 tasks of ~3 MB — decoded on the page for good, the workers started but never ready).
 *
 * A scan bigger than that, and than one task the page would take, starts the workers as soon as
 * it is planned ({@link prepare}), not when its first task's bytes have arrived: worker start
 * (script, instantiation) then overlaps the first fetch instead of following it. On a fresh page, the first bulk scan used to fetch its
 * first task, decode it on the page (no worker yet), and only then start the workers.
 *
 * The workers see a file's footer only when a scan of it will use them (`prepare`, or its first
 * task there), not when it is opened: each worker decodes the footer on its own thread, and four
 * workers doing so on two cores slowed the page's own small query that followed the open. In
 * WebKit (4 workers), warm, TPC-H SF1 first 100 rows: 56 → 46 ms, against 38 ms with no workers.
 * A query over `inlineScanBytes` but within a page task, planned while workers are up, goes to
 * them: its footer goes at once to the first ready worker only (the one an idle pool hands the
 * task), which decodes it while the bytes travel — the wait for a worker on a 3.6–4.5 MB lookup
 * went from 2.2–10.5 ms to 0.4–2.4 in Chromium, Firefox and WebKit
 * (`bench/results/2026-12-07-warm-runs.md`).
 *
 * The page's instance keeps a cross-scan cache of its own, beside the workers': an eighth of the
 * reader's budget ({@link PAGE_CACHE_SHARE}), the workers splitting the rest, so that all caches
 * together stay within `cacheBytes`. Until 2026-11-29 every host kept `cacheBytes / workers`, the
 * page's as much as a worker's: measured, 74.9 MiB held against a 64 MiB budget (two workers,
 * small queries on the page, then bulk scans), and up to 1.5× by construction. The page's share
 * is small because its tasks are: at most `inlineTaskBytes` planned each, and its cache serves
 * re-queries of small queries, which decode in milliseconds anyway; the workers' bulk scans are
 * what a cache saves seconds on.
 *
 * A task that fails on the page is not always the file's fault. One that traps runs again in a
 * worker, and the page decodes no more (its instance's state is then unknown); one that reads the
 * file as invalid (or fails inside the core) runs again in a worker too, whose answer — rows or the
 * same error — is the scan's (`recheck.ts`: WebKit's optimizing tier has been seen to do both).
 */

import { mayBeEngineFault, rechecks } from '../recheck.js';
import type { ParquetFileHandle } from '../wasm/parquet_skim_wasm.js';
import type { Executor, FileFooter, TaskJob, TaskResult } from './executor.js';
import type { InlineExecutor } from './inline.js';
import type { WorkerPool } from './pool.js';

/** Default bound on the planned bytes of a task the page decodes itself while no worker is ready. */
export const DEFAULT_INLINE_TASK_BYTES = 4 * 1024 * 1024;
/** Default bound on the planned bytes of a whole scan the page decodes itself once workers are ready. */
export const DEFAULT_INLINE_SCAN_BYTES = 2 * 1024 * 1024;

/**
 * How long the page, having decoded a task, stays without one before the workers start (when
 * nothing else started them): see the module doc.
 */
export const WORKERS_AFTER_QUIET_MS = 250;

/** The part of the reader's cache budget the page's own instance keeps (none if it never runs a task). */
export const PAGE_CACHE_SHARE = 1 / 8;

export class HybridExecutor implements Executor {
  readonly concurrency: number;
  readonly tasksAlive: number;
  readonly pageCacheShare: number;
  /** Tasks that trapped on the page and ran again in a worker (for stats). */
  trapsOnPage = 0;
  /** The timer that starts the workers once the page has had no task for a while. */
  private quiet: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly inline: InlineExecutor,
    private readonly pool: WorkerPool,
    private readonly inlineTaskBytes: number,
    private readonly inlineScanBytes: number = DEFAULT_INLINE_SCAN_BYTES,
    private readonly quietMs: number = WORKERS_AFTER_QUIET_MS,
  ) {
    this.concurrency = pool.concurrency;
    this.tasksAlive = pool.tasksAlive;
    this.pageCacheShare = inlineTaskBytes > 0 || inlineScanBytes > 0 ? PAGE_CACHE_SHARE : 0;
  }

  run(job: TaskJob): Promise<TaskResult> {
    const small = job.plannedBytes <= this.inlineTaskBytes;
    // A task whose filter columns the page's own cross-scan cache holds stays on the page.
    const cachedHere = job.cacheKey !== undefined && this.inline.holds(job.cacheKey);
    // A small query on an idle page: no hop to a worker.
    const smallQuery = job.scanPlannedBytes <= this.inlineScanBytes && this.inline.idle;
    if (small && !this.inline.trapped && (cachedHere || !this.pool.anyReady || smallQuery)) {
      clearTimeout(this.quiet);
      // Here only because the workers, started, are not ready yet: when its turn on the page
      // comes, the task goes to them if one is ready by then.
      const fillingIn = !cachedHere && !smallQuery && this.pool.starting;
      const onPage: Promise<TaskResult | undefined> = fillingIn
        ? this.inline.runUnless(job, () => this.pool.anyReady)
        : this.inline.run(job);
      const result = onPage.then(
        (done) => {
          if (done !== undefined) return done;
          return this.pool.run(job);
        },
        async (error: unknown) => {
          // A trap on the page's instance (seen in WebKit, ~1 in 1,000 tasks, only with its
          // optimizing tier on): the task runs again in a worker, and the page decodes no more.
          if (this.inline.trapped) {
            this.trapsOnPage += 1;
            return this.pool.run(job);
          }
          // A file read as invalid on the page may be the engine's fault too (recheck.ts): a
          // worker looks at the task again, and its answer — rows or the same error — is the one.
          if (!mayBeEngineFault(error) || job.signal?.aborted === true) throw error;
          rechecks.ran += 1;
          const again = await this.pool.run({ ...job, rechecked: true }).catch((poolError: unknown) => {
            // No worker could look (they cannot start, or the reader went): the page's error stands.
            const code = (poolError as { code?: unknown }).code;
            throw code === 'WORKER_CRASHED' || code === 'DISPOSED' ? error : poolError;
          });
          rechecks.passed += 1;
          return again;
        },
      );
      // The query is (about to be) answered: the workers start for the next one once the page
      // has had no task for a while (see the module doc).
      result
        .finally(() => {
          if (this.inline.idle) this.quiet = setTimeout(() => this.pool.start(), this.quietMs);
        })
        .catch(() => undefined);
      return result;
    }
    return this.pool.run(job);
  }

  prepare(file: FileFooter, scanPlannedBytes: number): void {
    // A scan the page could decode in one of its own tasks does not start them: they would only
    // compete with it (a 3 MB lookup in WebKit, its four workers starting: 740 ms cold, not 320).
    if (scanPlannedBytes <= Math.max(this.inlineScanBytes, this.inlineTaskBytes)) {
      // But once they are up, a query over `inlineScanBytes` goes to them (`run`): the worker
      // that will take it decodes the footer while its bytes travel, not after they came.
      if (this.pool.anyReady && scanPlannedBytes > this.inlineScanBytes) this.pool.showFile(file, true);
      return;
    }
    this.pool.start();
    this.pool.showFile(file);
  }

  holds(cacheKey: string): boolean {
    return this.pool.holds(cacheKey) || this.inline.holds(cacheKey);
  }

  cachedBytes(): number {
    return this.pool.cachedBytes() + this.inline.cachedBytes();
  }

  openFile(file: FileFooter, handle: object): void {
    this.inline.openFile(file, handle as ParquetFileHandle);
  }

  closeFile(fileId: number): void {
    this.inline.closeFile(fileId);
    this.pool.closeFile(fileId);
  }

  closeScan(scanId: number): void {
    this.inline.closeScan(scanId);
    this.pool.closeScan(scanId);
  }

  dispose(): void {
    clearTimeout(this.quiet);
    this.inline.dispose();
    this.pool.dispose();
  }

  /** Tasks the page started itself (for stats). */
  get tasksInline(): number {
    return this.inline.tasksStarted;
  }

  /** The page's own executor, for its counters. */
  get page(): InlineExecutor {
    return this.inline;
  }

  /** The pool, for its counters. */
  get workers(): WorkerPool {
    return this.pool;
  }
}
