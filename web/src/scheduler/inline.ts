/**
 * Runs tasks on the calling thread with the main instance of the core: what Node (and Vitest)
 * use, and browsers with `workers: 0`. Same {@link TaskHost} as a worker, minus `postMessage`.
 */
import { ParquetSkimError, throwIfAborted, toSkimError } from '../errors.js';
import type { ParquetFileHandle } from '../wasm/parquet_skim_wasm.js';
import type { Wasm } from '../wasm-loader.js';
import type { HostResponse } from '../worker/protocol.js';
import { TaskHost } from '../worker/task-host.js';
import { CacheKeys } from './cache-keys.js';
import {
  type Executor,
  type FileFooter,
  HostHoldings,
  openFileRequest,
  type TaskJob,
  type TaskResult,
  taskResultOf,
} from './executor.js';

/**
 * Most milliseconds a task decodes on the calling thread before it yields to the event loop (then
 * goes on): the page stays responsive while it decodes a small query itself (a frame is 16 ms).
 * A batch cannot be split, so one batch is the finest slice: a first, cold batch can take longer.
 */
export const PAGE_SLICE_MS = 8;

/**
 * Whether this thread is a page's (it paints and takes input): only there is a task decoded in
 * slices. Node, and a worker's own thread, decode a task in one go.
 */
const ON_A_PAGE = typeof (globalThis as { document?: unknown }).document !== 'undefined';

/**
 * The next turn of the event loop: `scheduler.yield()` where there is one (Chromium), else
 * {@link afterQueuedTasks}. A `scheduler.yield()` continuation goes before the tasks of normal
 * priority already queued (input and painting still go first): the page's decode resumes at
 * once, but a message from a worker waits until the page runs out of work.
 */
function nextTurn(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return afterQueuedTasks();
}

/**
 * A turn of the event loop behind the tasks already queued: a `MessageChannel` message — not a
 * timer, which browsers clamp to 4 ms once nested. Messages from workers queued before it (a
 * worker's `ready`) get their turn: measured, a bulk scan's tasks went to the workers after 1–15
 * of them ran on the page, in Chromium, Firefox and WebKit.
 */
function afterQueuedTasks(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** An executor without workers. */
export class InlineExecutor implements Executor {
  readonly concurrency = 1;
  readonly tasksAlive = 1;
  readonly pageCacheShare = 0;
  /** The host, once the core is instantiated (tasks only come after an open, which waits for it). */
  private host: TaskHost | undefined;
  private readonly hosting: Promise<TaskHost>;
  /** Files and scans shown to the host. */
  private readonly held = new HostHoldings();
  private readonly cache = new CacheKeys();
  private nextTaskId = 1;
  private disposed = false;
  /**
   * A task trapped here (a WebAssembly `RuntimeError`): this instance's state is then unknown. The
   * hybrid executor stops sending it tasks and reruns that one in a worker.
   */
  trapped = false;
  /** Tasks run one at a time: decoding is synchronous, so interleaving would gain nothing. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Tasks queued or running here (one waiting for bytes counts). */
  private pending = 0;
  /** Times a task here yielded to the event loop after a slice ({@link PAGE_SLICE_MS}). */
  slices = 0;
  /** Tasks that started here (not those handed elsewhere at their turn, {@link runUnless}). */
  tasksStarted = 0;

  /**
   * `sliceMs`: decode a task a batch at a time and yield to the event loop once this much time has
   * gone ({@link PAGE_SLICE_MS} on a page; none in Node, where nothing paints).
   */
  constructor(
    wasm: Promise<Wasm>,
    private readonly sliceMs: number | undefined = ON_A_PAGE ? PAGE_SLICE_MS : undefined,
  ) {
    this.hosting = wasm.then((core) => {
      this.host = new TaskHost(core);
      return this.host;
    });
    this.hosting.catch(() => undefined);
  }

  run(job: TaskJob): Promise<TaskResult> {
    const queuedAt = performance.timeOrigin + performance.now();
    return this.queue(() => this.runNow(job, queuedAt));
  }

  /**
   * Runs `job` here when its turn comes, unless `elsewhere()` then says it has a better place (a
   * worker became ready while it waited): then it resolves `undefined`, the task not started.
   * Before asking, the page lets the tasks queued meanwhile run ({@link afterQueuedTasks}): a
   * worker's `ready` is a message, and while this thread goes from one of its own tasks to the
   * next (promises) and from slice to slice (`scheduler.yield()`), no message is handled.
   * Without that turn, a bulk scan of small tasks from bytes in memory (DuckDB's 122,880-row
   * groups: 17 tasks of ~3 MB) decoded every task on the page, and the workers, started, never
   * got to say they were ready. Such a task's slices also yield behind the queued messages
   * ({@link afterQueuedTasks}, not `scheduler.yield()`), so that a worker ready while the page
   * decodes is known at the next task's turn: a first bulk scan of SF1 from memory in Chromium
   * and Firefox ran 2–4 tasks on the page before, 1–3 after (Chromium: its workers' `ready`
   * handled 133–234 ms after the open, against 196–532); the scan's time did not move beyond
   * this machine's noise (`bench/results/2026-11-29-fill-in.md`).
   */
  runUnless(job: TaskJob, elsewhere: () => boolean): Promise<TaskResult | undefined> {
    const queuedAt = performance.timeOrigin + performance.now();
    return this.queue(async () => {
      await afterQueuedTasks();
      return elsewhere() ? undefined : this.runNow(job, queuedAt, afterQueuedTasks);
    });
  }

  /** Runs `task` after the tasks queued here before it (one at a time). */
  private queue<T>(task: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const result = this.tail.then(task).finally(() => {
      this.pending -= 1;
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** No task queued or running here. */
  get idle(): boolean {
    return this.pending === 0;
  }

  private async runNow(job: TaskJob, queuedAt: number, yieldTurn: () => Promise<void> = nextTurn): Promise<TaskResult> {
    if (this.disposed) throw new ParquetSkimError('DISPOSED', 'the reader was disposed');
    throwIfAborted(job.signal);
    const host = await this.hosting;
    this.tasksStarted += 1;
    const { file } = job;
    if (!this.held.hasFile(file.fileId)) {
      // Not shown before (a file opened by another reader, say): decode its footer.
      const openFile = openFileRequest(file);
      if (openFile instanceof Error) throw openFile;
      checked(host.handle(openFile));
      this.held.addFile(file.fileId);
    }
    const { scan } = job;
    if (!this.held.hasScan(scan.scanId)) {
      const spec = scan.pageSpec ?? scan.spec;
      host.handle({ kind: 'openScan', scanId: scan.scanId, fileId: file.fileId, spec });
      this.held.addScan(scan.scanId, file.fileId);
    }
    const taskId = this.nextTaskId++;
    let response = host.handle({
      kind: 'runTask',
      taskId,
      scanId: scan.scanId,
      spec: job.spec,
      chunks: job.chunks,
      ...(this.sliceMs !== undefined ? { sliceMs: this.sliceMs } : {}),
    });
    const check = (answer: HostResponse | undefined): HostResponse | undefined => {
      if (answer?.kind === 'failed') {
        if (answer.error.name === 'RuntimeError') this.trapped = true;
        throw toSkimError(answer.error);
      }
      return answer;
    };
    try {
      for (;;) {
        const answer = check(response);
        if (answer?.kind === 'done') {
          return taskResultOf(answer, queuedAt, this.cache.update(answer.cache));
        }
        if (answer?.kind === 'yielded') {
          // Its slice is used: let the page paint and handle input, then go on.
          this.slices += 1;
          await yieldTurn();
          throwIfAborted(job.signal);
          response = host.handle({ kind: 'resumeTask', taskId });
          continue;
        }
        if (answer?.kind !== 'needs') throw new ParquetSkimError('INTERNAL', `unexpected host answer ${answer?.kind}`);
        const chunks = await job.fetchMore(answer.ranges);
        throwIfAborted(job.signal);
        response = host.handle({ kind: 'pushChunks', taskId, chunks });
      }
    } finally {
      // A task that did not finish (abort, failed read) must not keep its bytes and decoder.
      host.handle({ kind: 'dropTask', taskId });
    }
  }

  holds(cacheKey: string): boolean {
    return this.cache.has(cacheKey);
  }

  cachedBytes(): number {
    return this.cache.bytes;
  }

  openFile(file: FileFooter, handle: object): void {
    // A file is opened after the core is: the host exists.
    this.host?.adopt(file.fileId, handle as ParquetFileHandle);
    if (this.host !== undefined) this.held.addFile(file.fileId);
  }

  closeFile(fileId: number): void {
    this.host?.handle({ kind: 'closeFile', fileId });
    this.held.dropFile(fileId);
  }

  closeScan(scanId: number): void {
    if (this.held.dropScan(scanId)) this.host?.handle({ kind: 'closeScan', scanId });
  }

  dispose(): void {
    this.disposed = true;
  }
}

function checked(response: HostResponse | undefined): HostResponse | undefined {
  if (response?.kind === 'failed') throw toSkimError(response.error);
  return response;
}
