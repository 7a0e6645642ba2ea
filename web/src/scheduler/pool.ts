/**
 * The worker pool: N Web Workers, each decoding one task at a time — but holding up to
 * {@link TASKS_PER_WORKER} tasks, so that while one waits for the pages its filter asked for
 * (phase 2 of late materialization), the worker decodes another instead of idling: I/O never
 * holds a core.
 *
 * Lifecycle rules, each one so that nothing is ever left pending:
 * - A job is settled exactly once ({@link WorkerPool.settle}); late messages from a replaced
 *   worker are ignored because the slot is no longer in the pool.
 * - A worker that crashes (an uncaught error, a message that cannot be read, or a WebAssembly
 *   trap reported by its host) is terminated and replaced; its task is retried once on a fresh
 *   worker, then fails with `WORKER_CRASHED`.
 * - A task a worker reads as invalid (or fails inside the core) runs once more, its bytes asked
 *   for again: the engine may be at fault (`recheck.ts`); its second answer is the one.
 * - Aborting a job's signal removes it from the queue; a job waiting for bytes is dropped from
 *   its worker; one being decoded has its worker terminated and replaced (the worker's other
 *   task goes back to the queue, without counting as an attempt). It rejects with the reason.
 * - `dispose()` terminates every worker and rejects every queued and running job (`DISPOSED`).
 *
 * Footers are sent to a worker the first time it runs a task of a file (copied: each worker
 * needs its own), and a scan the first time it runs a task of that scan (bound to the file there
 * once; a task then carries only what differs per task); task chunks are transferred.
 */
import { abortReason, ParquetSkimError, toSkimError } from '../errors.js';
import { mayBeEngineFault, rechecks } from '../recheck.js';
import type { ByteRange } from '../wasm/contract.js';
import { type HostRequest, type HostResponse, ownedChunks, transferablesOf } from '../worker/protocol.js';
import { startWorker } from '../worker-script.js';
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

interface Job {
  task: TaskJob;
  resolve(result: TaskResult): void;
  reject(error: unknown): void;
  attempts: number;
  taskId: number;
  slot: Slot | null;
  /** A request for this job was posted and not yet answered: the worker has work for it. */
  posted: boolean;
  /** When `run()` took it (absolute milliseconds, comparable with a worker's). */
  queuedAt: number;
  settled: boolean;
  onAbort: (() => void) | null;
  /** Its decode failed as the engine might make it fail, and it runs again (`recheck.ts`). */
  rechecking: boolean;
}

interface Slot {
  worker: Worker;
  /** Frees what starting the worker took (a cross-origin script's `blob:` shim). */
  release(): void;
  /** Files (footers) and scans the worker has been sent. */
  held: HostHoldings;
  /** Tasks living in this worker, decoding or waiting for bytes. */
  jobs: Job[];
  /** What the worker's cross-scan cache holds. */
  cache: CacheKeys;
  /** Whether the worker's script loaded and answered `init`. */
  ready: boolean;
}

/** Ends `slot`'s worker. */
function terminate(slot: Slot): void {
  slot.worker.terminate();
  slot.release();
}

/**
 * Tasks a worker holds at once: one decoding, one waiting for its phase-2 bytes. More would
 * only hold more memory (each keeps its pages and predicate cache) without more decoding.
 */
export const TASKS_PER_WORKER = 2;

/** Queued jobs cached by one busy worker before an idle one takes (and re-decodes) one. */
const STEAL_BACKLOG = 8;

/** Workers in a row that die before answering `init` before the pool gives up respawning. */
const MAX_START_FAILURES = 3;

/** Runs tasks on Web Workers. */
export class WorkerPool implements Executor {
  readonly concurrency: number;
  readonly tasksAlive: number;
  readonly pageCacheShare = 0;
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextTaskId = 1;
  private disposed = false;
  /** Consecutive workers that died before becoming ready. */
  private startFailures = 0;
  /** Set when workers cannot start at all: every job rejects with it. */
  private broken: ParquetSkimError | null = null;
  /** The core, once compiled: a worker started then gets it at once. */
  private compiled: WebAssembly.Module | undefined;
  /** Workers started over the pool's life, replacements included. */
  private workersStarted = 0;
  /** Tasks started on a worker while another of its tasks waited for bytes. */
  private tasksInterleaved = 0;
  /** `performance.now()` when each worker answered `init` (instantiated the core), in order. */
  private readonly readyAt: number[] = [];
  /** `performance.now()` when each worker finished its warm-up pass, in order. */
  private readonly warmedAt: number[] = [];

  /** Whether the workers were started (see {@link WorkerPool.start}). */
  private started = false;
  /** Files a scan will read on the workers ({@link showFile}): a worker started later gets their footers at once. */
  private readonly files = new Map<number, FileFooter>();
  /** Files to show one ready worker ({@link showFile}), until posted or closed. */
  private readonly toOne = new Map<number, FileFooter>();

  /**
   * Workers start with {@link WorkerPool.start} — or at once with `lazy: false` — and load their
   * script while `module` (the core) may still compile; each gets it as soon as it is compiled. If
   * it cannot be, every task rejects with that error.
   */
  constructor(
    private readonly size: number,
    private readonly module: Promise<WebAssembly.Module>,
    private readonly options: {
      warmUp: boolean;
      workerUrl: string | URL | undefined;
      lazy?: boolean;
      memoryLimitBytes?: number | null;
    } = {
      warmUp: false,
      workerUrl: undefined,
    },
  ) {
    this.concurrency = size;
    this.tasksAlive = size * TASKS_PER_WORKER;
    module.then(
      (compiled) => {
        this.compiled = compiled;
      },
      (error: unknown) => this.fail(toSkimError(error) as ParquetSkimError),
    );
    if (options.lazy !== true) this.start();
  }

  /** Starts the workers (once); every file shown so far is sent to each. */
  start(): void {
    if (this.started || this.disposed || this.broken !== null) return;
    this.started = true;
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
    for (const file of this.files.values()) this.showFile(file);
  }

  /** Workers started ({@link start}) and none ready yet. */
  get starting(): boolean {
    return this.started && !this.anyReady;
  }

  /** Whether some worker has its core instantiated (answered `init`). */
  get anyReady(): boolean {
    return this.slots.some((slot) => slot.ready);
  }

  /** Workers alive now. */
  get workerCount(): number {
    return this.slots.length;
  }

  /** The pool's counters (see `ReaderStats.workers`). */
  stats(): {
    alive: number;
    ready: number;
    started: number;
    readyAt: number[];
    warmedAt: number[];
    tasksInterleaved: number;
  } {
    return {
      alive: this.slots.length,
      ready: this.slots.filter((s) => s.ready).length,
      started: this.workersStarted,
      readyAt: [...this.readyAt],
      warmedAt: [...this.warmedAt],
      tasksInterleaved: this.tasksInterleaved,
    };
  }

  run(task: TaskJob): Promise<TaskResult> {
    if (this.disposed) return Promise.reject(new ParquetSkimError('DISPOSED', 'the reader was disposed'));
    if (this.broken !== null) return Promise.reject(this.broken);
    this.start();
    return new Promise<TaskResult>((resolve, reject) => {
      const job: Job = {
        task,
        resolve,
        reject,
        attempts: 0,
        taskId: 0,
        slot: null,
        posted: false,
        queuedAt: performance.timeOrigin + performance.now(),
        settled: false,
        onAbort: null,
        rechecking: false,
      };
      const { signal } = task;
      if (signal !== undefined) {
        if (signal.aborted) {
          reject(abortReason(signal));
          return;
        }
        job.onAbort = () => this.abort(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Nothing yet: the workers get a footer when a scan will use them ({@link showFile}, or a first task). */
  openFile(_file: FileFooter): void {}

  /**
   * Shows a file's footer to every worker, so that decoding it there is off its first task's path:
   * called when a scan that will use the workers is planned. Posted after the calling turn ends
   * (cloning the footer for each worker takes about a millisecond of the page's time); a worker's
   * first task of a file posts the footer first if it has not gone yet. `firstReadyOnly`: only to
   * the first ready worker without it — the one an idle pool hands its next task — for a query of
   * a few tasks, whose bytes are on their way while it decodes (every worker doing so would take
   * the cores of a small machine from that fetch), and not to workers started later.
   */
  showFile(file: FileFooter, firstReadyOnly = false): void {
    const shown = firstReadyOnly ? this.toOne : this.files;
    shown.set(file.fileId, file);
    setTimeout(() => {
      // Closed meanwhile (or shown again): no worker would hear of its close.
      if (this.disposed || shown.get(file.fileId) !== file) return;
      if (firstReadyOnly) this.toOne.delete(file.fileId);
      for (const slot of this.slots) {
        if (slot.held.hasFile(file.fileId) || (firstReadyOnly && !slot.ready)) continue;
        const openFile = openFileRequest(file);
        // Not shown: the file's first task here tries again, and fails typed if it must.
        if (openFile instanceof Error) return;
        this.post(slot, openFile);
        slot.held.addFile(file.fileId);
        if (firstReadyOnly) return;
      }
    }, 0);
  }

  closeFile(fileId: number): void {
    this.files.delete(fileId);
    this.toOne.delete(fileId);
    for (const slot of this.slots) {
      // The worker forgets the file's scans with it.
      if (slot.held.dropFile(fileId)) this.post(slot, { kind: 'closeFile', fileId });
    }
  }

  closeScan(scanId: number): void {
    for (const slot of this.slots) {
      if (slot.held.dropScan(scanId)) this.post(slot, { kind: 'closeScan', scanId });
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const error = new ParquetSkimError('DISPOSED', 'the reader was disposed while this task was pending');
    for (const slot of this.slots) {
      terminate(slot);
      for (const job of slot.jobs) this.settle(job, { error });
    }
    for (const job of this.queue) this.settle(job, { error });
    this.slots = [];
    this.queue = [];
  }

  private spawn(): Slot {
    const { worker, release } = startWorker(this.options.workerUrl);
    this.workersStarted += 1;
    const slot: Slot = {
      worker,
      release,
      held: new HostHoldings(),
      jobs: [],
      cache: new CacheKeys(),
      ready: false,
    };
    worker.onmessage = (event: MessageEvent<HostResponse>) => this.onMessage(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.onCrash(slot, event.message || 'uncaught error in worker');
    };
    worker.onmessageerror = () => this.onCrash(slot, 'a message from the worker could not be read');
    // `init` goes first: a replacement gets its task right after this returns.
    const { warmUp } = this.options;
    const memoryLimitBytes = this.options.memoryLimitBytes ?? null;
    if (this.compiled !== undefined) this.post(slot, { kind: 'init', module: this.compiled, warmUp, memoryLimitBytes });
    else {
      this.module.then(
        (module) => {
          if (this.slots.includes(slot)) this.post(slot, { kind: 'init', module, warmUp, memoryLimitBytes });
        },
        () => undefined,
      );
    }
    return slot;
  }

  private post(slot: Slot, request: HostRequest, transfer: Transferable[] = []): void {
    slot.worker.postMessage(request, transfer);
  }

  holds(cacheKey: string): boolean {
    return this.slots.some((slot) => slot.cache.has(cacheKey));
  }

  cachedBytes(): number {
    return this.slots.reduce((sum, slot) => sum + slot.cache.bytes, 0);
  }

  /** Hands queued jobs to workers that have nothing to decode and room for another task. */
  private pump(): void {
    const free = (slot: Slot) => !slot.jobs.some((j) => j.posted) && slot.jobs.length < TASKS_PER_WORKER;
    for (let started = true; started && this.queue.length > 0; ) {
      started = false;
      for (const slot of this.slots) {
        if (!free(slot)) continue;
        const index = this.pickFor(slot);
        const [job] = index < 0 ? [] : this.queue.splice(index, 1);
        if (job === undefined) continue;
        this.startJob(slot, job);
        started = true;
      }
    }
  }

  /**
   * Affinity: `slot` takes the first queued job whose filter columns its cache holds, else the
   * first no worker's cache holds. A job another worker caches waits for that worker: a cached
   * task costs about a tenth of one that fetches and decodes its filter columns again (measured
   * on the hits benchmark), so stealing pays only behind a backlog of {@link STEAL_BACKLOG} —
   * then `slot` takes the last of them, and no worker idles behind a long queue.
   */
  private pickFor(slot: Slot): number {
    const holder = (j: Job) =>
      j.task.cacheKey === undefined ? undefined : this.slots.find((s) => s.cache.has(j.task.cacheKey as string));
    const mine = this.queue.findIndex((j) => holder(j) === slot);
    if (mine >= 0) return mine;
    const unclaimed = this.queue.findIndex((j) => holder(j) === undefined);
    if (unclaimed >= 0) return unclaimed;
    const backlog = new Map<Slot, number[]>();
    this.queue.forEach((j, i) => {
      const h = holder(j);
      if (h !== undefined) backlog.set(h, [...(backlog.get(h) ?? []), i]);
    });
    for (const indexes of backlog.values()) {
      if (indexes.length >= STEAL_BACKLOG) return indexes[indexes.length - 1] as number;
    }
    return -1;
  }

  private startJob(slot: Slot, job: Job): void {
    const { file, scan, spec } = job.task;
    const openFile = slot.held.hasFile(file.fileId) ? undefined : openFileRequest(file);
    if (openFile instanceof Error) {
      // The file's footer could not be taken out of the page's core: the task fails, typed,
      // before the worker is given anything (it stays free for the next).
      this.settle(job, { error: openFile });
      return;
    }
    if (slot.jobs.length > 0) this.tasksInterleaved += 1;
    slot.jobs.push(job);
    job.slot = slot;
    job.posted = true;
    job.taskId = this.nextTaskId++;
    if (openFile !== undefined) {
      this.post(slot, openFile);
      slot.held.addFile(file.fileId);
    }
    if (!slot.held.hasScan(scan.scanId)) {
      this.post(slot, { kind: 'openScan', scanId: scan.scanId, fileId: file.fileId, spec: scan.spec });
      slot.held.addScan(scan.scanId, file.fileId);
    }
    // Chunks are transferred, so a retry starts with none and asks for what it needs.
    const chunks = ownedChunks(job.task.chunks);
    job.task.chunks = [];
    this.post(
      slot,
      { kind: 'runTask', taskId: job.taskId, scanId: scan.scanId, spec, chunks },
      transferablesOf(chunks),
    );
  }

  private onMessage(slot: Slot, message: HostResponse): void {
    if (!this.slots.includes(slot)) return;
    if (message.kind === 'warmed') {
      this.warmedAt.push(performance.now());
      return;
    }
    if (message.kind === 'ready') {
      slot.ready = true;
      this.readyAt.push(performance.now());
      this.startFailures = 0;
      return;
    }
    if (message.kind === 'failed' && message.error.name === 'RuntimeError') {
      // A WebAssembly trap: the instance's state is unknown, so the worker must go.
      this.onCrash(slot, message.error.message, message.taskId, message.error.code);
      return;
    }
    const job = slot.jobs.find((j) => j.taskId === message.taskId) ?? null;
    if (job !== null) job.posted = false;
    switch (message.kind) {
      case 'needs':
        if (job !== null) this.onNeeds(slot, job, message.ranges);
        return;
      case 'done':
        if (job !== null) this.onDone(slot, job, message);
        return;
      case 'failed':
        this.onFailed(slot, job, message);
        return;
    }
  }

  /** A task asks for more bytes (its output columns' pages): read them and push them to it. */
  private onNeeds(slot: Slot, job: Job, ranges: ByteRange[]): void {
    // The worker is free to decode another task while these bytes travel.
    this.pump();
    job.task.fetchMore(ranges).then(
      (read) => {
        if (job.slot !== slot || !this.slots.includes(slot)) return;
        job.posted = true;
        const chunks = ownedChunks(read);
        this.post(slot, { kind: 'pushChunks', taskId: job.taskId, chunks }, transferablesOf(chunks));
      },
      (error: unknown) => {
        if (job.slot !== slot || !this.slots.includes(slot)) return;
        // The worker holds the half-run task's decoder and bytes: drop them.
        this.detach(job);
        this.post(slot, { kind: 'dropTask', taskId: job.taskId });
        this.settle(job, { error });
        this.pump();
      },
    );
  }

  private onDone(slot: Slot, job: Job, message: Extract<HostResponse, { kind: 'done' }>): void {
    const cacheDelta = slot.cache.update(message.cache);
    this.detach(job);
    if (job.rechecking) rechecks.passed += 1;
    this.settle(job, { result: taskResultOf(message, job.queuedAt, cacheDelta) });
    this.pump();
  }

  private onFailed(slot: Slot, job: Job | null, message: Extract<HostResponse, { kind: 'failed' }>): void {
    if (message.taskId === null) {
      // Not about a task: the worker could not instantiate the core, so it is useless.
      this.onCrash(slot, message.error.message);
      return;
    }
    if (job !== null) {
      this.detach(job);
      const error = toSkimError(message.error);
      if (this.mayRecheck(job, error)) {
        // A file read as invalid may be the engine's fault (recheck.ts): once more, on the
        // first worker free; its bytes are asked for again (they were transferred). This
        // worker may have failed the file's footer or the scan's binding, and keeps that
        // failure: it is shown both again, so it tries them again.
        job.rechecking = true;
        rechecks.ran += 1;
        slot.held.dropFile(job.task.file.fileId);
        this.queue.unshift(job);
      } else {
        this.settle(job, { error });
      }
    }
    this.pump();
  }

  /** Whether `job`'s failure gets a second look: once per task, and not after a crash's retry. */
  private mayRecheck(job: Job, error: Error): boolean {
    const first = job.task.rechecked !== true && !job.rechecking && job.attempts === 0;
    return first && job.task.signal?.aborted !== true && mayBeEngineFault(error);
  }

  /**
   * Replaces a crashed worker. The task that trapped (`culprit`, when the worker named it; all of
   * its tasks otherwise) is retried once, then fails with `WORKER_CRASHED` (`OUT_OF_MEMORY` when
   * the trap was the worker's memory running out, `code`); its other task goes
   * back to the queue as it was. A worker that crashed before it was ready blames no task: its
   * jobs wait for a worker that starts, and {@link MAX_START_FAILURES} in a row give up.
   */
  private onCrash(slot: Slot, reason: string, culprit: number | null = null, code?: string): void {
    if (!this.slots.includes(slot)) return;
    if (!slot.ready) {
      this.startFailures += 1;
      if (this.startFailures >= MAX_START_FAILURES) {
        this.giveUp(reason);
        return;
      }
    }
    // A worker that never started never ran its tasks: they are not to blame (the start failures
    // above bound the retries), and they go back to the queue as they were.
    const started = slot.ready;
    const jobs = this.replace(slot);
    for (const job of jobs.reverse()) {
      if (job.settled) continue;
      const blamed = started && (culprit === null || culprit === job.taskId);
      if (!blamed || job.attempts === 0) {
        if (blamed) job.attempts = 1;
        this.queue.unshift(job);
      } else {
        this.settle(job, {
          error:
            code === 'OUT_OF_MEMORY'
              ? // The task needs more memory than a fresh worker has: not a bug, and not worth a third try.
                new ParquetSkimError('OUT_OF_MEMORY', `${reason} (on a fresh worker as well)`)
              : new ParquetSkimError(
                  'WORKER_CRASHED',
                  `a worker crashed twice running the same task (${reason}); the file may trigger a decoder bug, please report it`,
                ),
        });
      }
    }
    this.pump();
  }

  /** Workers cannot start (bad `workerUrl`, blocked by CSP, …): stop respawning, reject all. */
  private giveUp(reason: string): void {
    this.fail(
      new ParquetSkimError(
        'WORKER_CRASHED',
        `${MAX_START_FAILURES} workers in a row failed to start (${reason}); check workerUrl and the page's Content-Security-Policy (worker-src)`,
      ),
    );
  }

  /** Nothing can run (no workers, or no core): every task, now and later, rejects with `error`. */
  private fail(error: ParquetSkimError): void {
    if (this.disposed || this.broken !== null) return;
    this.broken = error;
    for (const slot of this.slots) {
      terminate(slot);
      for (const job of slot.jobs) this.settle(job, { error });
    }
    for (const job of this.queue) this.settle(job, { error });
    this.slots = [];
    this.queue = [];
  }

  /** Takes `job` off its worker (it keeps the worker's other task). */
  private detach(job: Job): void {
    const slot = job.slot;
    if (slot !== null) slot.jobs = slot.jobs.filter((j) => j !== job);
    job.slot = null;
  }

  /**
   * Terminates `slot`'s worker and puts a fresh one in its place; returns the jobs it held, taken
   * off it (their chunks were transferred, so a rerun asks for what it needs).
   */
  private replace(slot: Slot): Job[] {
    const index = this.slots.indexOf(slot);
    terminate(slot);
    const jobs = slot.jobs;
    slot.jobs = [];
    for (const job of jobs) {
      job.slot = null;
      job.posted = false;
    }
    if (index >= 0 && !this.disposed) this.slots[index] = this.spawn();
    return jobs;
  }

  private abort(job: Job): void {
    if (job.settled) return;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = job.slot;
    if (slot !== null && !job.posted) {
      // Waiting for bytes: the worker is not decoding it, so dropping it is enough.
      this.detach(job);
      this.post(slot, { kind: 'dropTask', taskId: job.taskId });
    } else if (slot !== null) {
      // Being decoded: only terminating the worker stops it. Its other task is rerun elsewhere.
      const others = this.replace(slot).filter((j) => j !== job && !j.settled);
      this.queue.unshift(...others);
    }
    const { signal } = job.task;
    this.settle(job, { error: signal === undefined ? new DOMException('aborted', 'AbortError') : abortReason(signal) });
    this.pump();
  }

  private settle(job: Job, outcome: { result: TaskResult } | { error: unknown }): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort !== null) job.task.signal?.removeEventListener('abort', job.onAbort);
    if ('result' in outcome) job.resolve(outcome.result);
    else job.reject(outcome.error);
  }
}
