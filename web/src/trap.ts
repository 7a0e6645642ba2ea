/**
 * What a WebAssembly trap in this thread meant.
 *
 * The core is built with `panic = "abort"`: a Rust panic, and an allocation the heap cannot make,
 * end in an `unreachable` trap — a bare `RuntimeError` that says nothing of its cause. The core
 * keeps the cause for whoever catches the trap: the panic's message (`takePanicMessage`), or the
 * size of the allocation that failed (`takeAllocationFailure`: the memory was full, at the engine's
 * 4 GiB or at `memoryLimitBytes`). {@link explainTrap} asks this thread's instance and turns the
 * trap into an error that says so: `OUT_OF_MEMORY` with the size, the memory in use and what to
 * lower; else `INTERNAL` with the panic's message.
 *
 * One instance of the core per thread (see `wasm-loader.ts`), so a trap caught in this thread is
 * this instance's: {@link watchTraps} registers it when it is instantiated. A trap is explained in
 * the thread it happened in — by the task host (a worker's, or the page's inline tasks), or by
 * `toSkimError` for a live `WebAssembly.RuntimeError` of the page's own calls (open, plan) — never
 * again after it crossed `postMessage`.
 */
import type { SerializedError } from './errors.js';

/** What the core can say of its last trap. */
interface TrapCauses {
  takePanicMessage(): string | undefined;
  takeAllocationFailure(): number | undefined;
}

let core: TrapCauses | undefined;
let memory: WebAssembly.Memory | undefined;
let limitBytes: number | undefined;

/** Registers this thread's instance (and its memory, and the limit set on it) as the one that traps. */
export function watchTraps(instance: TrapCauses, instanceMemory: WebAssembly.Memory): void {
  core = instance;
  memory = instanceMemory;
}

/** Notes the memory limit this thread's instance was given (for the message). */
export function noteMemoryLimit(bytes: number): void {
  limitBytes = bytes;
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

/**
 * `error` explained, if it is a trap of this thread's instance (a `RuntimeError` without a
 * `code`): `OUT_OF_MEMORY` when an allocation had failed, else the panic's message added when
 * there was one (it stays a code-less trap: `INTERNAL`, and the pool's cue to replace a worker).
 * Anything else is returned as it is.
 */
export function explainTrap(error: SerializedError): SerializedError {
  if (error.name !== 'RuntimeError' || error.code !== undefined || core === undefined) return error;
  return explain(error);
}

/** What each live trap turned out to be: the core's causes can be taken only once. */
const explained = new WeakMap<WebAssembly.RuntimeError, SerializedError>();

/**
 * {@link explainTrap} for a trap caught live in this thread (`toSkimError`), the same answer each
 * time it is asked: a trap may be looked at more than once on its way up (recheck.ts asks whether
 * it may be the engine's fault, then the caller reports it).
 */
export function explainLiveTrap(trap: WebAssembly.RuntimeError, flat: SerializedError): SerializedError {
  let answer = explained.get(trap);
  if (answer === undefined) {
    answer = explainTrap(flat);
    explained.set(trap, answer);
  }
  return answer;
}

function explain(error: SerializedError): SerializedError {
  if (core === undefined) return error;
  let failed: number | undefined;
  let panic: string | undefined;
  try {
    failed = core.takeAllocationFailure();
    panic = core.takePanicMessage();
  } catch {
    // The instance cannot even answer: the trap's own message will do.
  }
  if (failed !== undefined) {
    const inUse = memory?.buffer.byteLength ?? 0;
    const limit = limitBytes === undefined ? "WebAssembly's 4 GiB" : `memoryLimitBytes, ${size(limitBytes)}`;
    const where = inWorker ? "a worker's" : "the page's";
    return {
      ...error,
      code: 'OUT_OF_MEMORY',
      message:
        `out of memory: ${where} WebAssembly core could not allocate ${size(failed)}: it has ${size(inUse)}, ` +
        `grows 16 MiB at a time, and its limit is ${limit}. Read less at once — fewer columns, a narrower filter, ` +
        'smaller row groups — lower cacheBytes, or, for a dataset, footerMemoryBytes' +
        (limitBytes === undefined ? '' : '; or raise memoryLimitBytes'),
    };
  }
  return panic === undefined ? error : { ...error, message: `${error.message} (${panic})` };
}
