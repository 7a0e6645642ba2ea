/**
 * Messages between the scheduler and a task host (a Web Worker, or the inline host in Node).
 *
 * Discriminated unions on `kind`, named fields, byte ranges as the core's `ByteRange` objects
 * (half-open); a task's answers mirror the core's `TaskStep` (needs, yielded, done). Every request that expects an answer carries an id; every answer names
 * it, so nothing is left pending when a worker dies: the client rejects whatever it still holds.
 */
import type { SerializedError } from '../errors.js';
import type { ByteRange, CacheReport, CacheStats, TaskStep } from '../wasm/contract.js';

/** Bytes of a file starting at `start`. */
export interface Chunk {
  start: number;
  data: Uint8Array;
}

/** Scheduler → host. */
export type HostRequest =
  /** `warmUp`: run the core over its embedded file before the first task (see `TaskHost.warmUp`). */
  | { kind: 'init'; module: WebAssembly.Module; warmUp: boolean; memoryLimitBytes: number | null }
  | { kind: 'openFile'; fileId: number; fileLen: number; starts: number[]; buffers: Uint8Array[]; viewTypes: boolean }
  | { kind: 'closeFile'; fileId: number }
  /**
   * A scan of an open file: `spec` is the JSON of its plan's `scan` (columns, filter, aggregates,
   * limits), bound to the file once here; its tasks then carry only what differs per task.
   */
  | { kind: 'openScan'; scanId: number; fileId: number; spec: string }
  | { kind: 'closeScan'; scanId: number }
  /**
   * `spec`: the JSON of a planned task's `spec` (row group, rows, batch size, cache key).
   * `sliceMs`: decode a batch at a time and answer `yielded` once this much time has gone (the
   * page's own thread, which must stay responsive); absent, the task runs until it needs bytes
   * or is done.
   */
  | { kind: 'runTask'; taskId: number; scanId: number; spec: string; chunks: Chunk[]; sliceMs?: number }
  | { kind: 'pushChunks'; taskId: number; chunks: Chunk[] }
  /** Go on with a task that answered `yielded`. */
  | { kind: 'resumeTask'; taskId: number }
  /** Forget a task that will not be finished (aborted, or its bytes could not be read). */
  | { kind: 'dropTask'; taskId: number };

/** Host → scheduler. */
export type HostResponse =
  | { kind: 'ready' }
  /** The host ran its warm-up pass before any task (see `TaskHost.warmUp`), in `ms`. */
  | { kind: 'warmed'; ms: number }
  | { kind: 'needs'; taskId: number; ranges: ByteRange[] }
  /** The task used its slice (`sliceMs`) with more to decode: `resumeTask` goes on. */
  | { kind: 'yielded'; taskId: number }
  /** The core's `done` step (rows, batches, partials, cache report), and what the host adds. */
  | (Extract<TaskStep, { kind: 'done' }> & {
      taskId: number;
      ipc: Uint8Array;
      decodeMs: number;
      /** When the host started the task: `performance.timeOrigin + performance.now()` there. */
      startedAt: number;
      /** The host's WebAssembly memory after the task: its high-water mark so far. */
      wasmMemoryBytes: number;
    })
  | { kind: 'failed'; taskId: number | null; error: SerializedError };

/** Counters of a worker's cross-scan cache of decoded filter columns (the core's `CacheStats`). */
export type CacheCounters = CacheStats;

export type { CacheReport };

/**
 * `chunks` ready to post to another thread: a chunk that views part of a larger buffer (bytes
 * opened from memory are read as views, not copies) is copied, since posting a view clones its
 * whole buffer. Copies and whole buffers are then transferred (see {@link transferablesOf}).
 */
export function ownedChunks(chunks: readonly Chunk[]): Chunk[] {
  return chunks.map((chunk) => (isWholeBuffer(chunk.data) ? chunk : { start: chunk.start, data: chunk.data.slice() }));
}

function isWholeBuffer(data: Uint8Array): boolean {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
}

/** The `ArrayBuffer`s of `chunks`, for the transfer list of `postMessage`. */
export function transferablesOf(chunks: readonly Chunk[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const chunk of chunks) {
    const buffer = chunk.data.buffer;
    // Only whole, unshared buffers can be transferred without detaching someone else's view.
    if (buffer instanceof ArrayBuffer && isWholeBuffer(chunk.data)) {
      buffers.add(buffer);
    }
  }
  return [...buffers];
}
