/**
 * The task host: what runs inside a worker (or inline in Node), with no knowledge of how
 * messages travel.
 *
 * It keeps the files a scan has shown it (rebuilt from footer bytes with the same metadata
 * decoder as the main thread), the scans of them (each bound to its file once, by `openScan`:
 * columns resolved, filter typed) and the running tasks. `runTask` pushes the prefetched chunks and
 * decodes. With a filter, arrow-rs then asks for the output pages holding the rows that passed
 * (phase 2 of the two-phase I/O, unless they were prefetched): the host answers `needs`, and the
 * scheduler follows up with `pushChunks`. Decoding, projection and IPC encoding of a batch all
 * happen here, in one pass, on one thread.
 */
import { serializeError } from '../errors.js';
import { explainFailure } from '../trap.js';
import type { TaskStep } from '../wasm/contract.js';
import type { ParquetFileHandle, Scan, Task } from '../wasm/parquet_skim_wasm.js';
import { type Wasm, wasmMemoryBytes } from '../wasm-loader.js';
import type { Chunk, HostRequest, HostResponse } from './protocol.js';

type FileHandle = ParquetFileHandle;

/** Runs host requests against an instantiated core. */
export class TaskHost {
  private readonly files = new Map<number, FileHandle>();
  /** Files whose handle belongs to someone else (see {@link TaskHost.adopt}): never freed here. */
  private readonly borrowed = new Set<number>();
  /** Footers that failed to decode: the error is each of that file's tasks' answer. */
  private readonly failedOpens = new Map<number, unknown>();
  /** Open scans, and the file each reads. */
  private readonly scans = new Map<number, { scan: Scan; fileId: number }>();
  /** Scans that could not be bound (or whose file could not be opened): each task's answer. */
  private readonly failedScans = new Map<number, { error: unknown; fileId: number }>();
  private readonly tasks = new Map<number, Task>();
  /** Time spent in each running task's calls so far (a two-phase task takes two or more). */
  private readonly taskMs = new Map<number, number>();
  /** The slice of each running task decoded in slices (see `runTask`'s `sliceMs`). */
  private readonly sliceMs = new Map<number, number>();
  /** Whether a task has run here (then there is nothing left to warm up). */
  private tasksSeen = false;
  /** When each running task started here (absolute milliseconds, comparable across threads). */
  private readonly taskStartedAt = new Map<number, number>();

  constructor(private readonly wasm: Wasm) {}

  /**
   * Uses a file already decoded on this thread (the reader's own handle, when tasks run inline)
   * instead of decoding its footer again. The owner frees it; `closeFile` only forgets it.
   */
  adopt(fileId: number, handle: FileHandle): void {
    this.files.set(fileId, handle);
    this.borrowed.add(fileId);
  }

  /**
   * One warm-up pass over the core's small embedded file (`decode`: tasks too, as a worker runs
   * them), so that the first real query does not run code for the first time: measured in V8
   * (Node), the first open and first 100 rows of TPC-H SF1 in memory take 4–6× as long cold as
   * warm. Skipped once a task has run here. A failure only means no warm-up.
   */
  warmUp(decode: boolean): HostResponse | undefined {
    if (this.tasksSeen) return undefined;
    try {
      return { kind: 'warmed', ms: this.wasm.warmUp(decode) };
    } catch {
      return undefined;
    }
  }

  /** Handles one request; returns the response to send, if any. */
  handle(request: HostRequest): HostResponse | undefined {
    switch (request.kind) {
      case 'init':
        return { kind: 'ready' };
      case 'openFile':
        if (!this.files.has(request.fileId)) {
          try {
            const file = this.wasm.ParquetFileHandle.fromFooter(
              request.fileLen,
              request.starts,
              request.buffers,
              request.viewTypes,
            );
            this.files.set(request.fileId, file);
            this.failedOpens.delete(request.fileId);
          } catch (error) {
            // Explained now (memoized), while the core's cause is still this failure's.
            explainFailure(error, serializeError(error));
            this.failedOpens.set(request.fileId, error);
          }
        }
        return undefined;
      case 'closeFile':
        if (!this.borrowed.delete(request.fileId)) this.files.get(request.fileId)?.free();
        this.files.delete(request.fileId);
        this.failedOpens.delete(request.fileId);
        for (const [scanId, open] of [...this.scans, ...this.failedScans]) {
          if (open.fileId === request.fileId) this.closeScan(scanId);
        }
        return undefined;
      case 'openScan':
        this.openScan(request.scanId, request.fileId, request.spec);
        return undefined;
      case 'closeScan':
        this.closeScan(request.scanId);
        return undefined;
      case 'runTask':
        return this.guard(request.taskId, () => {
          const scan = this.scans.get(request.scanId)?.scan;
          if (scan === undefined) {
            throw (
              this.failedScans.get(request.scanId)?.error ??
              new Error(`task ${request.taskId} names unknown scan ${request.scanId}`)
            );
          }
          this.tasksSeen = true;
          this.taskStartedAt.set(request.taskId, performance.timeOrigin + performance.now());
          // Building the task (spec, projection, decoder) counts as its decode time too.
          const building = performance.now();
          const task = new this.wasm.Task(scan, request.spec);
          this.taskMs.set(request.taskId, performance.now() - building);
          this.tasks.set(request.taskId, task);
          if (request.sliceMs !== undefined) this.sliceMs.set(request.taskId, request.sliceMs);
          return this.push(request.taskId, task, request.chunks);
        });
      case 'resumeTask':
        return this.guard(request.taskId, () => {
          const task = this.tasks.get(request.taskId);
          if (task === undefined) throw new Error(`no running task ${request.taskId}`);
          return this.step(request.taskId, task, performance.now());
        });
      case 'dropTask':
        this.finish(request.taskId);
        return undefined;
      case 'pushChunks':
        return this.guard(request.taskId, () => {
          const task = this.tasks.get(request.taskId);
          if (task === undefined) throw new Error(`no running task ${request.taskId}`);
          return this.push(request.taskId, task, request.chunks);
        });
    }
  }

  /**
   * Binds a scan to its file (once); a failure is kept as the answer of the scan's tasks until
   * the scan is sent again (a task rechecked after it, recheck.ts), which tries once more.
   */
  private openScan(scanId: number, fileId: number, spec: string): void {
    if (this.scans.has(scanId)) return;
    this.failedScans.delete(scanId);
    const file = this.files.get(fileId);
    try {
      if (file === undefined)
        throw this.failedOpens.get(fileId) ?? new Error(`scan ${scanId} names unknown file ${fileId}`);
      this.scans.set(scanId, { scan: new this.wasm.Scan(file, spec), fileId });
    } catch (error) {
      explainFailure(error, serializeError(error));
      this.failedScans.set(scanId, { error, fileId });
    }
  }

  private closeScan(scanId: number): void {
    const open = this.scans.get(scanId);
    this.scans.delete(scanId);
    this.failedScans.delete(scanId);
    try {
      open?.scan.free();
    } catch {
      // After a trap the handle may be unusable: the pool replaces this worker anyway.
    }
  }

  private push(taskId: number, task: Task, chunks: Chunk[]): HostResponse {
    const started = performance.now();
    for (const chunk of chunks) task.push(chunk.start, chunk.data);
    return this.step(taskId, task, started);
  }

  /** Runs `task` until it needs bytes or is done — or, decoded in slices, its slice is used up. */
  private step(taskId: number, task: Task, started: number): HostResponse {
    const slice = this.sliceMs.get(taskId);
    let step: TaskStep;
    if (slice === undefined) step = JSON.parse(task.run()) as TaskStep;
    else {
      // A batch at a time: a batch cannot be split, so that is as fine as a slice gets.
      do step = JSON.parse(task.run(1)) as TaskStep;
      while (step.kind === 'yielded' && performance.now() - started < slice);
    }
    const spent = (this.taskMs.get(taskId) ?? 0) + performance.now() - started;
    if (step.kind !== 'done') {
      this.taskMs.set(taskId, spent);
      return step.kind === 'yielded' ? { kind: 'yielded', taskId } : { kind: 'needs', taskId, ranges: step.ranges };
    }
    const startedAt = this.taskStartedAt.get(taskId) ?? performance.timeOrigin + started;
    const ipc = task.takeIpc();
    this.finish(taskId);
    return { ...step, taskId, ipc, decodeMs: spent, startedAt, wasmMemoryBytes: wasmMemoryBytes() };
  }

  private finish(taskId: number): void {
    const task = this.tasks.get(taskId);
    this.tasks.delete(taskId);
    this.taskMs.delete(taskId);
    this.sliceMs.delete(taskId);
    this.taskStartedAt.delete(taskId);
    try {
      task?.free();
    } catch {
      // After a WebAssembly trap the task is still marked borrowed and cannot be freed; the
      // trap itself is reported, and the pool replaces this worker.
    }
  }

  private guard(taskId: number | null, work: () => HostResponse | undefined): HostResponse | undefined {
    try {
      return work();
    } catch (error) {
      if (taskId !== null) this.finish(taskId);
      // A failure of the core says what it was (out of memory; for a trap, the Rust panic's message).
      const serialized = explainFailure(error, serializeError(error));
      return { kind: 'failed', taskId, error: serialized };
    }
  }
}
