/**
 * What a failure of this thread's core meant, when memory or a panic is behind it.
 *
 * The core is built with `panic = "abort"`: a Rust panic, and an allocation the heap cannot make,
 * end in an `unreachable` trap — a bare `RuntimeError` that says nothing of its cause. Some code
 * handles a failed allocation itself instead (zlib-rs and zstd report it as an error), and that
 * reaches us as an ordinary core error, `INVALID_FILE` say, which is just as wrong. So the core
 * keeps the cause for whoever catches the failure: the size of the allocation that failed
 * (`takeAllocationFailure`: the memory was full, at the engine's 4 GiB or at `memoryLimitBytes`),
 * and for a trap the panic's message (`takePanicMessage`). {@link explainFailure} asks this
 * thread's instance and says so: `OUT_OF_MEMORY` with the size, the memory in use and what to
 * lower; else, for a trap, the panic's message added.
 *
 * One instance of the core per thread (see `wasm-loader.ts`), so a failure caught live in this
 * thread is this instance's: {@link watchFailures} registers it when it is instantiated. It is
 * explained where it is caught — by the task host (a worker's, or the page's inline tasks), or by
 * `toSkimError` for the page's own calls (open, plan) — and never again once it has crossed
 * `postMessage` (it is then a plain object, with its `code`).
 *
 * A failed allocation a decoder handled quietly leaves its size behind until the next failure
 * takes it: that failure is then reported as out of memory — which it likely is, the memory
 * having been full a moment before.
 */
import type { SerializedError } from './errors.js';

/** What the core can say of its last failure. */
interface Causes {
  takePanicMessage(): string | undefined;
  takeAllocationFailure(): number | undefined;
}

let core: Causes | undefined;
let memory: WebAssembly.Memory | undefined;
let limitBytes: number | undefined;
let trappedHere = false;

/** Registers this thread's instance (and its memory) as the one whose failures are explained here. */
export function watchFailures(instance: Causes, instanceMemory: WebAssembly.Memory): void {
  core = instance;
  memory = instanceMemory;
}

/** Notes the memory limit this thread's instance was given (for the message). */
export function noteMemoryLimit(bytes: number): void {
  limitBytes = bytes;
}

/**
 * Whether this thread's instance has trapped: its state is then suspect (a trapped call leaves
 * what it allocated, and the objects it borrowed stay borrowed), and optional work — a closed
 * file's summary kept for later — is better skipped.
 */
export function instanceTrapped(): boolean {
  return trappedHere;
}

const MIB = 2 ** 20;
/** A size as people read it: bytes, KiB or MiB. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < MIB) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;
}

/** Whether this code runs in a worker (for the message: whose memory was full). */
const inWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined';

/** What each live failure turned out to be: the core's causes can be taken only once. */
const explained = new WeakMap<object, SerializedError>();

/**
 * `flat` (the serialized form of `error`, caught live in this thread) explained: `OUT_OF_MEMORY`
 * when an allocation had failed; for a trap (`RuntimeError`) with no such cause, the panic's
 * message added (it stays a code-less trap: `INTERNAL`, and the pool's cue to replace a worker).
 * A JS error of our own (no `code`) or another thread's (a plain object) is left alone. The same
 * answer each time it is asked: a failure may be looked at more than once on its way up
 * (recheck.ts asks whether it may be the engine's fault, then the caller reports it).
 */
export function explainFailure(error: unknown, flat: SerializedError): SerializedError {
  // A plain object crossed `postMessage`: another thread's, explained there.
  if (!(error instanceof Error)) return flat;
  let answer = explained.get(error);
  if (answer === undefined) {
    answer = explain(error instanceof WebAssembly.RuntimeError, flat);
    explained.set(error, answer);
  }
  return answer;
}

function explain(trap: boolean, error: SerializedError): SerializedError {
  if (core === undefined || (!trap && error.code === undefined)) return error;
  if (trap) trappedHere = true;
  let failed: number | undefined;
  let panic: string | undefined;
  try {
    failed = core.takeAllocationFailure();
    if (trap) panic = core.takePanicMessage();
  } catch {
    // The instance cannot even answer: the error's own message will do.
  }
  if (failed !== undefined) {
    const inUse = memory?.buffer.byteLength ?? 0;
    const limit = limitBytes === undefined ? "WebAssembly's 4 GiB" : `memoryLimitBytes, ${size(limitBytes)}`;
    const where = inWorker ? "a worker's" : "the page's";
    // A trap's own message is `unreachable`; a handled failure's names what could not be done.
    const detail = [trap ? undefined : error.message, panic].filter((d) => d !== undefined);
    return {
      ...error,
      code: 'OUT_OF_MEMORY',
      message:
        `out of memory: ${where} WebAssembly core could not allocate ${size(failed)}: it has ${size(inUse)}, ` +
        `and its limit is ${limit}${detail.length === 0 ? '' : ` (${detail.join('; ')})`}. Read less at once — ` +
        'fewer columns, a narrower filter, smaller row groups — lower cacheBytes, or, for a dataset, footerMemoryBytes' +
        (limitBytes === undefined ? '' : '; or raise memoryLimitBytes'),
    };
  }
  return panic === undefined ? error : { ...error, message: `${error.message} (${panic})` };
}
