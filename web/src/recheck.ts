/**
 * A second look at a decode that failed on this thread's WebAssembly instance, before its error
 * reaches the caller.
 *
 * WebKit's JavaScriptCore (WebKitGTK 2.50) has been seen, on about 1 in 100 fresh pages of the
 * interactive bench, to fail a decode of a valid file on the page: `INVALID_FILE` from the
 * footer's Thrift ("Integer overflow: out of range integral type conversion attempted",
 * "Required field file_offset is missing"), or a trap in a task. The same bytes decode exactly on
 * every other try, in every other engine and in Node; the traps vanish with JavaScriptCore's
 * optimizing tier off (`JSC_useOMGJIT=0`, tests/bench/engine-stress.mjs). The bytes reach the core
 * by copy, in one synchronous call, and each decode is one synchronous call too, so neither a
 * fetch racing the parse nor a buffer reused or detached under it can explain the failure: it is
 * code compiled while the first decodes of a page run.
 *
 * So a decode that fails with a code such a fault produces ({@link mayBeEngineFault}) runs once
 * more: a valid file then reads, an invalid one fails the same way at the cost of one more decode
 * (the error reported is the second one). A task is looked at again in a worker (one that
 * failed on the page: `scheduler/hybrid.ts`; in a worker: `scheduler/pool.ts`, its bytes read
 * again); the page's own decodes — opening, schemas, plans — here, on the page. {@link rechecks}
 * counts both outcomes for `reader.stats()`.
 */
import { isAbortError, toSkimError } from './errors.js';

/** Decodes on this thread that failed and ran again, and of those, the ones that then passed. */
export const rechecks = { ran: 0, passed: 0 };

/**
 * Whether `error` could be the engine's rather than the file's: a file read as invalid, an
 * internal error, or a WebAssembly trap (`RuntimeError`, which the core reports as `INTERNAL`).
 * Not an abort, an I/O error, a bad argument or a decoding limit: those say the same every time.
 */
export function mayBeEngineFault(error: unknown): boolean {
  if (isAbortError(error)) return false;
  const { code } = toSkimError(error) as { code?: string };
  return code === 'INVALID_FILE' || code === 'INTERNAL';
}

/**
 * `decode()`, run once more when it throws what may be the engine's fault (see the module doc);
 * `reset` first puts back what the failed run used up (a fresh loader, say).
 */
export function recheck<T>(decode: () => T, reset?: () => void): T {
  try {
    return decode();
  } catch (error) {
    if (!mayBeEngineFault(error)) throw error;
    rechecks.ran += 1;
    reset?.();
    const value = decode();
    rechecks.passed += 1;
    return value;
  }
}
