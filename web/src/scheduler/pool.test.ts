/**
 * The worker pool's lifecycle rules, against a fake `Worker` that records what it is posted and
 * answers only when a test tells it to: settle once, crash and retry, abort while queued or while
 * waiting for bytes, dispose with work pending.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rechecks } from '../recheck.js';
import type { HostRequest, HostResponse } from '../worker/protocol.js';
import type { FileFooter, TaskJob } from './executor.js';

/** A stand-in for a Web Worker: messages posted to it are kept; a test answers for it. */
class FakeWorker {
  static all: FakeWorker[] = [];
  onmessage: ((event: MessageEvent<HostResponse>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  onmessageerror: (() => void) | null = null;
  readonly posted: HostRequest[] = [];
  terminated = false;

  constructor() {
    FakeWorker.all.push(this);
  }

  postMessage(message: HostRequest): void {
    if (this.terminated) throw new Error('posted to a terminated worker');
    this.posted.push(message);
  }

  terminate(): void {
    this.terminated = true;
  }

  /** The worker answers `message`. */
  answer(message: HostResponse): void {
    this.onmessage?.({ data: message } as MessageEvent<HostResponse>);
  }

  /** The worker dies of an uncaught error. */
  crash(message = 'boom'): void {
    this.onerror?.({ message, preventDefault() {} } as unknown as ErrorEvent);
  }

  tasks(): Array<Extract<HostRequest, { kind: 'runTask' }>> {
    return this.posted.filter((m): m is Extract<HostRequest, { kind: 'runTask' }> => m.kind === 'runTask');
  }
}

vi.mock('../worker-script.js', () => ({
  startWorker: () => ({ worker: new FakeWorker(), release() {} }),
}));

const { WorkerPool } = await import('./pool.js');

const file: FileFooter = { fileId: 1, fileLen: 100, starts: [90], buffers: [new Uint8Array(10)], viewTypes: false };
const module = Promise.resolve({} as WebAssembly.Module);

function job(overrides: Partial<TaskJob> = {}): TaskJob {
  return {
    file,
    scan: { scanId: 7, spec: '{}', filtered: false },
    spec: '{}',
    chunks: [],
    plannedBytes: 10,
    scanPlannedBytes: 10,
    fetchMore: () => Promise.resolve([]),
    ...overrides,
  };
}

function done(taskId: number): HostResponse {
  return {
    kind: 'done',
    taskId,
    ipc: new Uint8Array([taskId]),
    rows: 1,
    batches: 1,
    decodeMs: 1,
    startedAt: performance.timeOrigin + performance.now(),
    rowsFromCache: 0,
    pagesReadAgain: 0,
    partials: null,
    cache: null,
    wasmMemoryBytes: 0,
  };
}

/** Lets the pool's promise callbacks (module ready, fetches) run. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  FakeWorker.all = [];
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('WorkerPool', () => {
  it('shows a footer to its workers once, and only when asked or with a first task', async () => {
    const pool = new WorkerPool(2, module, { warmUp: false, workerUrl: undefined, lazy: true });
    // Shown before the workers start: they get it when they do.
    pool.showFile(file);
    await tick();
    expect(FakeWorker.all).toHaveLength(0);
    pool.start();
    await tick();
    const kinds = () => FakeWorker.all.map((w) => w.posted.map((m) => m.kind).join(','));
    expect(kinds()).toEqual(['init,openFile', 'init,openFile']);
    // A file never shown goes to a worker with its first task there, and to no other worker.
    const other = { ...file, fileId: 2 };
    const result = pool.run(job({ file: other }));
    await tick();
    const ran = FakeWorker.all.find((w) => w.tasks().length > 0) as FakeWorker;
    expect(ran.posted.filter((m) => m.kind === 'openFile').map((m) => (m as { fileId: number }).fileId)).toEqual([
      1, 2,
    ]);
    expect(FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'openFile')).toHaveLength(3);
    // Showing a file again posts nothing new; its task does not post the footer again.
    pool.showFile(file);
    await tick();
    expect(FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'openFile')).toHaveLength(3);
    ran.answer(done(ran.tasks()[0]?.taskId ?? -1));
    await result;
    pool.dispose();
  });

  it('shows a footer to the first ready worker only when asked so, and its task there posts it no more', async () => {
    const pool = new WorkerPool(2, module, { warmUp: false, workerUrl: undefined, lazy: true });
    pool.start();
    await tick();
    const [first, second] = FakeWorker.all as [FakeWorker, FakeWorker];
    // Not ready yet: nobody to show it to.
    pool.showFile(file, true);
    await tick();
    const openFiles = (w: FakeWorker) => w.posted.filter((m) => m.kind === 'openFile').length;
    expect([openFiles(first), openFiles(second)]).toEqual([0, 0]);
    second.answer({ kind: 'ready' });
    first.answer({ kind: 'ready' });
    pool.showFile(file, true);
    await tick();
    expect([openFiles(first), openFiles(second)]).toEqual([1, 0]);
    // The idle pool hands the file's task to that worker, which has the footer already.
    const result = pool.run(job());
    await tick();
    expect(first.tasks()).toHaveLength(1);
    expect([openFiles(first), openFiles(second)]).toEqual([1, 0]);
    first.answer(done(first.tasks()[0]?.taskId ?? -1));
    await result;
    // Workers started later are not sent it.
    expect(pool.stats().started).toBe(2);
    // A file closed in the turn it was shown goes to no worker (none would hear of its close).
    const closed = { ...file, fileId: 4 };
    pool.showFile(closed, true);
    pool.closeFile(closed.fileId);
    await tick();
    expect(FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'openFile' && m.fileId === 4)).toEqual([]);
    pool.dispose();
  });

  it("fails a task whose file's footer cannot be copied out, typed, and the worker runs the next", async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    // The footer's bytes come out of the page's core when first sent: that copy can fail.
    const broken: FileFooter = {
      fileId: 3,
      fileLen: 100,
      starts: [90],
      get buffers(): Uint8Array[] {
        throw new Error('null pointer passed to rust');
      },
      viewTypes: false,
    };
    pool.showFile(broken);
    await tick();
    const [worker] = FakeWorker.all as [FakeWorker];
    expect(worker.posted.map((m) => m.kind)).toEqual(['init']);
    await expect(pool.run(job({ file: broken }))).rejects.toMatchObject({ name: 'ParquetSkimError', code: 'INTERNAL' });
    expect(worker.tasks()).toHaveLength(0);
    // Nothing was left half-started: the next task (another file) runs on the same worker.
    const next = pool.run(job());
    await tick();
    expect(worker.tasks()).toHaveLength(1);
    worker.answer(done(worker.tasks()[0]?.taskId ?? -1));
    await expect(next).resolves.toMatchObject({ rows: 1 });
    pool.dispose();
  });

  it('sends a scan to a worker once, with its first task there, and closes it where it went', async () => {
    const pool = new WorkerPool(2, module);
    await tick();
    const scan = { scanId: 11, spec: '{"columns":["a"]}', filtered: false };
    const first = pool.run(job({ scan, spec: '{"taskIdx":0}' }));
    const second = pool.run(job({ scan, spec: '{"taskIdx":1}' }));
    await tick();
    const opens = () => FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'openScan');
    // Each worker that runs one of its tasks gets the scan once, before that task.
    expect(opens()).toHaveLength(2);
    expect(opens()[0]).toEqual({ kind: 'openScan', scanId: 11, fileId: 1, spec: scan.spec });
    for (const worker of FakeWorker.all) {
      const kinds = worker.posted.map((m) => m.kind);
      expect(kinds.indexOf('openScan')).toBeLessThan(kinds.indexOf('runTask'));
      worker.answer(done(worker.tasks()[0]?.taskId ?? -1));
    }
    await Promise.all([first, second]);
    // A third task on a worker that has the scan: no second openScan.
    const third = pool.run(job({ scan, spec: '{"taskIdx":2}' }));
    await tick();
    expect(opens()).toHaveLength(2);
    const ran = FakeWorker.all.find((w) => w.tasks().length === 2) as FakeWorker;
    ran.answer(done(ran.tasks()[1]?.taskId ?? -1));
    await third;
    pool.closeScan(11);
    const closes = FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'closeScan');
    expect(closes).toEqual([
      { kind: 'closeScan', scanId: 11 },
      { kind: 'closeScan', scanId: 11 },
    ]);
    // Closing again posts nothing.
    pool.closeScan(11);
    expect(FakeWorker.all.flatMap((w) => w.posted).filter((m) => m.kind === 'closeScan')).toHaveLength(2);
    pool.dispose();
  });

  it('settles each task once: a late or repeated answer is ignored', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const [worker] = FakeWorker.all as [FakeWorker];
    expect(worker.posted[0]?.kind).toBe('init');
    const result = pool.run(job());
    const [task] = worker.tasks();
    expect(task?.scanId).toBe(7);
    // The footer went first, then the scan: the worker had seen neither.
    expect(worker.posted.map((m) => m.kind)).toEqual(['init', 'openFile', 'openScan', 'runTask']);
    worker.answer(done(task?.taskId ?? -1));
    worker.answer(done(task?.taskId ?? -1));
    worker.answer({ kind: 'failed', taskId: task?.taskId ?? -1, error: { name: 'Error', message: 'late' } });
    await expect(result).resolves.toMatchObject({ rows: 1, ipc: new Uint8Array([task?.taskId ?? -1]) });
    pool.dispose();
  });

  it('replaces a crashed worker and retries its task once, then fails it with WORKER_CRASHED', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const first = FakeWorker.all[0] as FakeWorker;
    first.answer({ kind: 'ready' });
    const result = pool.run(job());
    first.crash('trap');
    expect(first.terminated).toBe(true);
    const second = FakeWorker.all[1] as FakeWorker;
    expect(second.tasks()).toHaveLength(1);
    second.answer({ kind: 'ready' });
    second.crash('trap again');
    await expect(result).rejects.toMatchObject({ code: 'WORKER_CRASHED' });
    // The pool still has a worker, and it runs the next task.
    const third = FakeWorker.all[2] as FakeWorker;
    const next = pool.run(job());
    const [task] = third.tasks();
    third.answer(done(task?.taskId ?? -1));
    await expect(next).resolves.toMatchObject({ rows: 1 });
    expect(pool.stats().started).toBe(3);
    pool.dispose();
  });

  it('gives up after workers that never start, rejecting every task', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const result = pool.run(job());
    for (let i = 0; i < 3; i++) (FakeWorker.all[i] as FakeWorker).crash('cannot load');
    // Not blamed on the task (it never ran): the error says the workers did not start.
    await expect(result).rejects.toMatchObject({
      code: 'WORKER_CRASHED',
      message: expect.stringContaining('failed to start'),
    });
    await expect(pool.run(job())).rejects.toMatchObject({ code: 'WORKER_CRASHED' });
    expect(FakeWorker.all).toHaveLength(3);
  });

  it('an aborted queued task never reaches a worker; an aborted task waiting for bytes is dropped from it', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const worker = FakeWorker.all[0] as FakeWorker;
    let release: (() => void) | undefined;
    const waiting = new AbortController();
    const first = pool.run(
      job({
        signal: waiting.signal,
        fetchMore: () =>
          new Promise((resolve) => {
            release = () => resolve([]);
          }),
      }),
    );
    const queued = new AbortController();
    // Two tasks per worker: the third waits in the queue.
    const second = pool.run(job());
    const third = pool.run(job({ signal: queued.signal }));
    const [a] = worker.tasks();
    expect(worker.tasks()).toHaveLength(1);
    worker.answer({ kind: 'needs', taskId: a?.taskId ?? -1, ranges: [{ start: 0, end: 10 }] });
    // While the first waits for bytes, the worker decodes the second.
    expect(worker.tasks()).toHaveLength(2);
    queued.abort(new Error('not wanted'));
    await expect(third).rejects.toThrow('not wanted');
    waiting.abort(new Error('stop'));
    await expect(first).rejects.toThrow('stop');
    expect(worker.posted.at(-1)).toEqual({ kind: 'dropTask', taskId: a?.taskId });
    // Bytes arriving after the abort are not posted.
    const posts = worker.posted.length;
    release?.();
    await tick();
    expect(worker.posted).toHaveLength(posts);
    expect(worker.terminated).toBe(false);
    const [, running] = worker.tasks();
    worker.answer(done(running?.taskId ?? -1));
    await expect(second).resolves.toMatchObject({ rows: 1 });
    // The aborted queued task never reached the worker.
    expect(worker.tasks()).toHaveLength(2);
    pool.dispose();
  });

  it('aborting a task being decoded replaces its worker and reruns the other task elsewhere', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const worker = FakeWorker.all[0] as FakeWorker;
    worker.answer({ kind: 'ready' });
    const waiting = pool.run(job());
    const [a] = worker.tasks();
    worker.answer({ kind: 'needs', taskId: a?.taskId ?? -1, ranges: [{ start: 0, end: 10 }] });
    const decoding = new AbortController();
    const aborted = pool.run(job({ signal: decoding.signal }));
    expect(worker.tasks()).toHaveLength(2);
    decoding.abort(new Error('cancelled'));
    await expect(aborted).rejects.toThrow('cancelled');
    expect(worker.terminated).toBe(true);
    const fresh = FakeWorker.all[1] as FakeWorker;
    const [rerun] = fresh.tasks();
    expect(rerun).toBeDefined();
    fresh.answer(done(rerun?.taskId ?? -1));
    await expect(waiting).resolves.toMatchObject({ rows: 1 });
    pool.dispose();
  });

  it('dispose rejects queued and running tasks with DISPOSED and terminates every worker', async () => {
    const pool = new WorkerPool(2, module);
    await tick();
    const results = [pool.run(job()), pool.run(job()), pool.run(job()), pool.run(job()), pool.run(job())];
    pool.dispose();
    for (const result of results) await expect(result).rejects.toMatchObject({ code: 'DISPOSED' });
    expect(FakeWorker.all.every((w) => w.terminated)).toBe(true);
    await expect(pool.run(job())).rejects.toMatchObject({ code: 'DISPOSED' });
  });

  it('a worker that fails a task reports a typed error, and the worker keeps working', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const worker = FakeWorker.all[0] as FakeWorker;
    const failing = pool.run(job());
    const fail = (code: string) => {
      const task = worker.tasks().at(-1);
      worker.answer({
        kind: 'failed',
        taskId: task?.taskId ?? -1,
        error: { name: 'ParquetSkimError', code, message: `bad page (${code})` },
      });
    };
    fail('TOO_LARGE');
    await expect(failing).rejects.toMatchObject({ code: 'TOO_LARGE' });
    expect(worker.tasks()).toHaveLength(1);
    expect(worker.terminated).toBe(false);
    pool.dispose();
  });

  it('runs a task read as invalid once more (the engine may be at fault); the second answer is the one', async () => {
    const pool = new WorkerPool(1, module);
    await tick();
    const worker = FakeWorker.all[0] as FakeWorker;
    worker.answer({ kind: 'ready' });
    const before = { ...rechecks };
    const invalid = (taskId: number): HostResponse => ({
      kind: 'failed',
      taskId,
      error: { name: 'ParquetSkimError', code: 'INVALID_FILE', message: `bad page ${taskId}` },
    });
    const lastTask = () => worker.tasks().at(-1)?.taskId ?? -1;

    const opens = () => worker.posted.filter((m) => m.kind === 'openFile' || m.kind === 'openScan').length;
    const passes = pool.run(job());
    expect(opens()).toBe(2);
    worker.answer(invalid(lastTask()));
    await tick();
    expect(worker.tasks()).toHaveLength(2);
    // The worker is shown the file and the scan again: it may have failed them, and kept that.
    expect(opens()).toBe(4);
    worker.answer(done(lastTask()));
    await expect(passes).resolves.toMatchObject({ rows: 1 });

    const fails = pool.run(job());
    worker.answer(invalid(lastTask()));
    await tick();
    worker.answer(invalid(lastTask()));
    await expect(fails).rejects.toThrow(`bad page ${lastTask()}`);
    expect(worker.tasks()).toHaveLength(4);

    // Already a second look (the page's failure, rechecked here): not looked at a third time.
    const second = pool.run(job({ rechecked: true }));
    worker.answer(invalid(lastTask()));
    await expect(second).rejects.toMatchObject({ code: 'INVALID_FILE' });
    expect(worker.tasks()).toHaveLength(5);
    expect([rechecks.ran - before.ran, rechecks.passed - before.passed]).toEqual([2, 1]);
    expect(worker.terminated).toBe(false);
    pool.dispose();
  });
});
