/**
 * What the scheduler needs from whoever decodes: run one task, given the file's footer and the
 * task's prefetched chunks, asking for more bytes through `fetchMore` if the decoder needs them.
 * Implemented by {@link WorkerPool} (browsers) and {@link InlineExecutor} (Node, or `workers: 0`).
 */
import { toSkimError } from '../errors.js';
import type { ByteRange, Partial } from '../wasm/contract.js';
import type { CacheReport, Chunk, HostRequest, HostResponse } from '../worker/protocol.js';
import type { CacheDelta } from './cache-keys.js';

/** A file as a task host needs it: identity and footer bytes. */
export interface FileFooter {
  fileId: number;
  fileLen: number;
  starts: number[];
  buffers: Uint8Array[];
  /** View columns are read as views (see `OpenOptions.viewTypes` in the core). */
  viewTypes: boolean;
}

/**
 * A scan of one file as task hosts see it: sent to a host once, before its first task of the scan
 * (then bound to the file there once), and closed when the scan ends.
 */
export interface ScanRef {
  /** The scan's id, unique in this page or process (the spec's `scanId`, given at planning). */
  scanId: number;
  /** JSON of the plan's `scan`: columns, filter, aggregates, limits, cache budgets. */
  spec: string;
  /**
   * The same with the page's own share of the cross-scan cache (`Executor.pageCacheShare`), for
   * the calling thread's instance when it runs tasks beside workers; absent, `spec` serves all.
   */
  pageSpec?: string;
  /** The scan has a filter (its tasks read in two phases). */
  filtered: boolean;
}

/** One task handed to an executor. */
export interface TaskJob {
  file: FileFooter;
  scan: ScanRef;
  /** JSON of the planned task's spec: what differs per task. */
  spec: string;
  /** The spec's cross-scan cache key: the pool prefers the worker that holds it. */
  cacheKey?: string;
  /** Prefetched bytes (transferred to the worker: the caller must not reuse them). */
  chunks: Chunk[];
  /** Bytes the plan lists for the task (filter and output pages; an upper bound with a filter). */
  plannedBytes: number;
  /**
   * The same for the task's whole scan (all its tasks known so far): how big a query it belongs to;
   * unbounded once a second file of a dataset has tasks (see `KnownTasks.queryBytes`).
   */
  scanPlannedBytes: number;
  /** Reads more bytes. */
  fetchMore(ranges: ByteRange[]): Promise<Chunk[]>;
  signal?: AbortSignal;
  /**
   * This run is the second look at a task whose decode failed as the engine might make it fail
   * (`recheck.ts`): a failure now is the task's error, not looked at again.
   */
  rechecked?: boolean;
}

/** What a finished task returns. */
export interface TaskResult {
  ipc: Uint8Array;
  rows: number;
  batches: number;
  decodeMs: number;
  /** From `run()` to the task starting in its host (a worker still starting, or busy). */
  queueMs: number;
  /** Aggregate tasks: partial results, in spec order. */
  partials?: Partial[];
  /** Output rows of filter columns not decoded twice (predicate cache, or a cross-scan hit's kept columns). */
  rowsFromCache: number;
  /** Pages the plan fetched in part whose rest the task fetched after all. */
  pagesReadAgain: number;
  /** Bytes of the WebAssembly memory of the worker (or thread) that ran the task, after it. */
  wasmMemoryBytes: number;
  /** Tasks with a cache key: what the worker's cross-scan cache did, and how its counters moved. */
  cache?: CacheReport;
  cacheDelta?: CacheDelta;
}

/**
 * The message that sends `file` to a task host (a worker, or the page's own instance), or the error that says why it cannot be built: the
 * footer's bytes are copied out of the page's core when first sent (`ParquetFile`), and that copy
 * can fail — the core out of memory, or trapped (a task that trapped on the page and runs again
 * in a worker: the copy is tried all the same, and fails this task, typed, if the core cannot make it).
 */
export function openFileRequest(file: FileFooter): HostRequest | Error {
  try {
    return { kind: 'openFile', ...file };
  } catch (error) {
    return toSkimError(error);
  }
}

/**
 * A host's `done` answer as the task's result: `queuedAt` is when `run()` took the task, in the
 * host's clock (`performance.timeOrigin + performance.now()`); `cacheDelta` how the host's
 * cache counters moved.
 */
export function taskResultOf(
  done: Extract<HostResponse, { kind: 'done' }>,
  queuedAt: number,
  cacheDelta: CacheDelta | undefined,
): TaskResult {
  const { ipc, rows, batches, decodeMs, startedAt, partials, rowsFromCache, pagesReadAgain, wasmMemoryBytes, cache } =
    done;
  return {
    ipc,
    rows,
    batches,
    decodeMs,
    queueMs: Math.max(0, startedAt - queuedAt),
    rowsFromCache,
    pagesReadAgain,
    wasmMemoryBytes,
    ...(partials !== null ? { partials } : {}),
    ...(cache !== null ? { cache } : {}),
    ...(cacheDelta !== undefined ? { cacheDelta } : {}),
  };
}

/** Runs tasks. */
export interface Executor {
  /** Tasks decoded at the same time. */
  readonly concurrency: number;
  /**
   * Most tasks alive at once — decoding, or holding their decoder while they wait for bytes.
   * The predicate-cache budget is split among them.
   */
  readonly tasksAlive: number;
  /**
   * The part of the reader's cross-scan cache budget kept for the calling thread's own instance
   * when it runs tasks beside `concurrency` workers (they split the rest); 0 when tasks run in
   * one kind of host only.
   */
  readonly pageCacheShare: number;
  run(job: TaskJob): Promise<TaskResult>;
  /**
   * A scan of `file` planning `scanPlannedBytes` is about to fetch its first bytes: an executor
   * that starts its task hosts lazily may start them now, and show them the file's footer, so that
   * both happen while those bytes are on their way instead of after they arrived.
   */
  prepare?(file: FileFooter, scanPlannedBytes: number): void;
  /**
   * Whether some worker's cross-scan cache holds `cacheKey` (then the task's filter columns
   * need not be fetched: it is routed to that worker).
   */
  holds(cacheKey: string): boolean;
  /** Bytes held by all hosts' cross-scan caches (the workers' and the page's), as last reported. */
  cachedBytes(): number;
  /**
   * A file was opened. `handle` is the calling thread's own decoded file (the core's
   * `ParquetFileHandle`, owned by the caller, which frees it): an executor on this thread uses it
   * as it is. Hosts on other threads get the footer with the file's first task there, or ahead of
   * it from {@link prepare}.
   */
  openFile(file: FileFooter, handle: object): void;
  /** Forgets a file's footer wherever it was sent (and the scans of it). */
  closeFile(fileId: number): void;
  /** A scan ended: forgets it wherever it was sent. */
  closeScan(scanId: number): void;
  /** Ends all work; pending tasks reject with `DISPOSED`. */
  dispose(): void;
}

/**
 * What one task host (the page's instance, or a worker) holds: the files whose footers it has
 * decoded and the scans bound there. A file's scans go with it when it is closed.
 */
export class HostHoldings {
  private readonly files = new Set<number>();
  /** Scan id → its file's id. */
  private readonly scans = new Map<number, number>();

  hasFile(fileId: number): boolean {
    return this.files.has(fileId);
  }

  addFile(fileId: number): void {
    this.files.add(fileId);
  }

  /** Forgets the file and its scans; whether the host held the file. */
  dropFile(fileId: number): boolean {
    for (const [scanId, scanFile] of this.scans) if (scanFile === fileId) this.scans.delete(scanId);
    return this.files.delete(fileId);
  }

  hasScan(scanId: number): boolean {
    return this.scans.has(scanId);
  }

  addScan(scanId: number, fileId: number): void {
    this.scans.set(scanId, fileId);
  }

  /** Forgets the scan; whether the host held it. */
  dropScan(scanId: number): boolean {
    return this.scans.delete(scanId);
  }
}
