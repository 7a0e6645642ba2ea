import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ErrorCode, ParquetSkimError } from '../errors.js';
import { rechecks } from '../recheck.js';
import type { FileFooter, TaskJob, TaskResult } from './executor.js';
import { HybridExecutor } from './hybrid.js';
import type { InlineExecutor } from './inline.js';
import type { WorkerPool } from './pool.js';

const result = (ms: number): TaskResult => ({
  ipc: new Uint8Array(),
  rows: 0,
  batches: 0,
  decodeMs: ms,
  queueMs: 0,
  rowsFromCache: 0,
  pagesReadAgain: 0,
  wasmMemoryBytes: 0,
});

/** Stand-ins that record where each task ran (the real ones need a core and workers). */
function executors(options: { trapOnPage?: boolean; failOnPage?: string; failInWorker?: string } = {}) {
  const ran: string[] = [];
  const page = {
    trapped: false,
    idle: true,
    tasksStarted: 0,
    run: async (job: TaskJob) => {
      page.tasksStarted += 1;
      ran.push(`page:${job.spec}`);
      if (options.trapOnPage) {
        page.trapped = true;
        throw new Error('RuntimeError: Out of bounds memory access');
      }
      if (options.failOnPage !== undefined) throw new ParquetSkimError(options.failOnPage as ErrorCode, 'on the page');
      return result(1);
    },
    /** As the real one: the task runs here unless `elsewhere()` says otherwise when its turn comes. */
    runUnless: async (job: TaskJob, elsewhere: () => boolean) => {
      await tick();
      return elsewhere() ? undefined : page.run(job);
    },
    holds: () => false,
    cachedBytes: () => 0,
    openFile() {},
    dispose() {},
  };
  const pool = {
    concurrency: 2,
    tasksAlive: 4,
    anyReady: false,
    starting: false,
    started: 0,
    shown: [] as number[],
    shownToOne: [] as number[],
    start() {
      pool.started += 1;
      pool.anyReady = true;
    },
    showFile(file: FileFooter, firstReadyOnly = false) {
      (firstReadyOnly ? pool.shownToOne : pool.shown).push(file.fileId);
    },
    run: async (job: TaskJob) => {
      ran.push(`worker:${job.spec}${job.rechecked === true ? ' (rechecked)' : ''}`);
      if (options.failInWorker !== undefined) {
        throw new ParquetSkimError(options.failInWorker as ErrorCode, 'in the worker');
      }
      return result(2);
    },
    holds: () => false,
    cachedBytes: () => 0,
    dispose() {},
  };
  const hybrid = new HybridExecutor(
    page as unknown as InlineExecutor,
    pool as unknown as WorkerPool,
    1000,
    600,
    QUIET_MS,
  );
  return { ran, page, pool, hybrid };
}

const job = (spec: string, plannedBytes: number, scanPlannedBytes = 10 * plannedBytes): TaskJob => ({
  file: { fileId: 1, fileLen: 10, starts: [], buffers: [], viewTypes: true },
  scan: { scanId: 1, spec: '{}', filtered: false },
  spec,
  chunks: [],
  plannedBytes,
  scanPlannedBytes,
  fetchMore: async () => [],
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
/** The executors' quiet time before the workers start (the reader's is WORKERS_AFTER_QUIET_MS). */
const QUIET_MS = 40;

describe('HybridExecutor', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('decodes a small task on the page while no worker is ready, then starts the workers once the page is quiet', async () => {
    vi.useFakeTimers();
    const { ran, pool, hybrid } = executors();
    await hybrid.run(job('small', 500));
    expect(ran).toEqual(['page:small']);
    vi.advanceTimersByTime(QUIET_MS - 1);
    expect(pool.started).toBe(0);
    vi.advanceTimersByTime(1);
    expect(pool.started).toBe(1);
    await hybrid.run(job('next', 500));
    expect(ran).toEqual(['page:small', 'worker:next']);
  });

  it('starts no worker while small queries follow each other on the page', async () => {
    vi.useFakeTimers();
    const { ran, pool, hybrid } = executors();
    for (let i = 0; i < 6; i++) {
      await hybrid.run(job(`burst-${i}`, 500));
      // Just under the quiet time between two queries.
      vi.advanceTimersByTime(QUIET_MS - 1);
    }
    expect(pool.started).toBe(0);
    expect(ran).toHaveLength(6);
    expect(ran.every((where) => where.startsWith('page:'))).toBe(true);
    vi.advanceTimersByTime(1);
    expect(pool.started).toBe(1);
  });

  it('starts no worker after a page task once the reader is disposed', async () => {
    vi.useFakeTimers();
    const { pool, hybrid } = executors();
    await hybrid.run(job('small', 500));
    hybrid.dispose();
    vi.advanceTimersByTime(10 * QUIET_MS);
    expect(pool.started).toBe(0);
  });

  it('keeps a small query on an idle page once workers are ready; a bulk scan of small tasks goes to them', async () => {
    const { ran, page, pool, hybrid } = executors();
    pool.anyReady = true;
    await hybrid.run(job('lookup', 500, 500));
    expect(ran).toEqual(['page:lookup']);
    await hybrid.run(job('bulk-part', 500, 50_000));
    expect(ran.at(-1)).toBe('worker:bulk-part');
    page.idle = false;
    await hybrid.run(job('while-busy', 500, 500));
    expect(ran.at(-1)).toBe('worker:while-busy');
    page.idle = true;
    await hybrid.run(job('too-big-task', 5000, 5000));
    expect(ran.at(-1)).toBe('worker:too-big-task');
  });

  it('starts the workers and shows them the file when a bulk scan is planned; a small one or an open leaves them', () => {
    const { pool, hybrid } = executors();
    const file = { fileId: 7, fileLen: 10, starts: [], buffers: [], viewTypes: false };
    hybrid.openFile(file, {});
    hybrid.prepare(file, 600);
    // Over inlineScanBytes (600) but within one page task (1000): still the page's.
    hybrid.prepare(file, 1000);
    expect(pool.started).toBe(0);
    expect(pool.shown).toEqual([]);
    hybrid.prepare(file, 1001);
    expect(pool.started).toBe(1);
    expect(pool.shown).toEqual([7]);
  });

  it('shows ready workers the file of a query too big for the page at once, not of a small one, and starts none', () => {
    const { pool, hybrid } = executors();
    pool.anyReady = true;
    const file = { fileId: 8, fileLen: 10, starts: [], buffers: [], viewTypes: false };
    hybrid.openFile(file, {});
    // Within inlineScanBytes (600): the page decodes it, the workers need no footer.
    hybrid.prepare(file, 600);
    expect(pool.shownToOne).toEqual([]);
    // Over it, within one page task (1000): its tasks go to the ready workers, the first of which
    // gets the footer now.
    hybrid.prepare(file, 1000);
    expect(pool.shownToOne).toEqual([8]);
    expect(pool.shown).toEqual([]);
    expect(pool.started).toBe(0);
  });

  it('sends a small task of a bulk scan queued on the page while the workers start to a worker ready by its turn', async () => {
    const { ran, pool, hybrid } = executors();
    pool.starting = true;
    const queued = hybrid.run(job('bulk-part', 500, 50_000));
    // A worker answers `init` before the page gets to the task.
    pool.anyReady = true;
    pool.starting = false;
    await queued;
    expect(ran).toEqual(['worker:bulk-part']);
    expect(hybrid.tasksInline).toBe(0);
    // Still starting when its turn comes: the page decodes it.
    const later = executors();
    later.pool.starting = true;
    await later.hybrid.run(job('bulk-part-2', 500, 50_000));
    expect(later.ran).toEqual(['page:bulk-part-2']);
    expect(later.hybrid.tasksInline).toBe(1);
  });

  it('sends a big task to the workers at once', async () => {
    const { ran, hybrid } = executors();
    await hybrid.run(job('big', 5000));
    expect(ran).toEqual(['worker:big']);
    expect(hybrid.tasksInline).toBe(0);
  });

  it('reruns a task that trapped on the page in a worker, and decodes no more on the page', async () => {
    const { ran, page, pool, hybrid } = executors({ trapOnPage: true });
    const outcome = await hybrid.run(job('trap', 500));
    expect(outcome.decodeMs).toBe(2);
    expect(ran).toEqual(['page:trap', 'worker:trap']);
    expect(page.trapped).toBe(true);
    pool.anyReady = false;
    await hybrid.run(job('after', 500));
    expect(ran.at(-1)).toBe('worker:after');
  });

  it('has a worker look again at a task the page read as invalid; its answer is the one', async () => {
    const before = { ...rechecks };
    const passes = executors({ failOnPage: 'INVALID_FILE' });
    expect((await passes.hybrid.run(job('flaky', 500))).decodeMs).toBe(2);
    // The worker is told it is the second look (a failure there is not looked at a third time).
    expect(passes.ran).toEqual(['page:flaky', 'worker:flaky (rechecked)']);
    // Not a trap: the page keeps decoding small tasks.
    expect(passes.page.trapped).toBe(false);
    expect([rechecks.ran - before.ran, rechecks.passed - before.passed]).toEqual([1, 1]);

    const fails = executors({ failOnPage: 'INVALID_FILE', failInWorker: 'INVALID_FILE' });
    await expect(fails.hybrid.run(job('broken', 500))).rejects.toThrow('in the worker');
    expect([rechecks.ran - before.ran, rechecks.passed - before.passed]).toEqual([2, 1]);
    // Workers that cannot start: the page's own error stands, not WORKER_CRASHED.
    const noWorkers = executors({ failOnPage: 'INVALID_FILE', failInWorker: 'WORKER_CRASHED' });
    await expect(noWorkers.hybrid.run(job('alone', 500))).rejects.toThrow('on the page');

    // An error that says the same every time is not looked at again.
    const refused = executors({ failOnPage: 'TOO_LARGE' });
    await expect(refused.hybrid.run(job('huge-page', 500))).rejects.toThrow('on the page');
    expect(refused.ran).toEqual(['page:huge-page']);
  });
});
