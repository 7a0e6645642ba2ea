/**
 * Errors of parquet-skim: one class, {@link ParquetSkimError}, with a stable {@link ErrorCode}.
 *
 * Errors are born in three places: the Rust core (a JS `Error` with `name` and `code`), the
 * worker boundary (serialized as plain `{name, code, message, stack}` because `Error` objects do
 * not survive `postMessage` faithfully in every browser), and this package (pool, arguments).
 * {@link toSkimError} turns any of them back into a `ParquetSkimError`, so callers branch on
 * `error.code` and never parse messages.
 */
import { explainFailure } from './trap.js';
import { ERROR_CODES, type ErrorCode } from './wasm/contract.js';

/**
 * Every code a {@link ParquetSkimError} can carry, and what each means: declared once, in the
 * core (`ErrorCode` in crate/core/src/error.rs), and generated into the build's contract. Codes
 * never change meaning.
 */
export type { ErrorCode };

const CODES: ReadonlySet<string> = new Set<ErrorCode>(ERROR_CODES);

/** The error every parquet-skim operation rejects with (cancellation aside: that is the signal's `AbortError`). */
export class ParquetSkimError extends Error {
  override readonly name = 'ParquetSkimError';
  /** Stable machine-readable cause; branch on this. */
  readonly code: ErrorCode;
  /** For `INVALID_FILTER`: the offset in the filter text where parsing failed. */
  readonly position: number | undefined;
  /** For an error in one file of a dataset: that file's path (the message names it too). */
  readonly file: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; position?: number; file?: string }) {
    super(message, options);
    this.code = code;
    this.position = options?.position;
    this.file = options?.file;
  }
}

/** An error as it crosses `postMessage`. */
export interface SerializedError {
  name: string;
  code?: string;
  message: string;
  stack?: string;
  position?: number;
}

/** Flattens any thrown value for `postMessage`. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const { code, position } = error as { code?: unknown; position?: unknown };
    return {
      name: error.name,
      message: error.message,
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof position === 'number' ? { position } : {}),
      ...(error.stack !== undefined ? { stack: error.stack } : {}),
    };
  }
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    // Already flat (an error that crossed postMessage): keep its fields.
    const flat = error as { name?: unknown; code?: unknown; message: string; stack?: unknown; position?: unknown };
    return {
      name: typeof flat.name === 'string' ? flat.name : 'Error',
      message: flat.message,
      ...(typeof flat.code === 'string' ? { code: flat.code } : {}),
      ...(typeof flat.position === 'number' ? { position: flat.position } : {}),
      ...(typeof flat.stack === 'string' ? { stack: flat.stack } : {}),
    };
  }
  return { name: 'Error', message: String(error) };
}

/**
 * Any thrown value → `ParquetSkimError` (an `AbortError` passes through unchanged, so callers
 * can tell cancellation apart).
 */
export function toSkimError(error: unknown): Error {
  if (error instanceof ParquetSkimError) return error;
  if (isAbortError(error)) return error as Error;
  // A failure of this thread's own core says what it was (out of memory, a panic).
  const flat = explainFailure(error, serializeError(error));
  if (flat.name === 'AbortError') {
    return new DOMException(flat.message, 'AbortError');
  }
  const code = flat.code !== undefined && CODES.has(flat.code) ? (flat.code as ErrorCode) : 'INTERNAL';
  const message = code === 'INTERNAL' && flat.code === undefined ? `internal error: ${flat.message}` : flat.message;
  const result = new ParquetSkimError(code, message, {
    cause: error,
    ...(flat.position !== undefined ? { position: flat.position } : {}),
  });
  if (flat.stack !== undefined) result.stack = flat.stack;
  return result;
}

/** Whether `error` is the rejection of an aborted signal. */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/** Throws the signal's reason (an `AbortError` by default) when it is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** The value to reject with when `signal` aborts. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** An `INVALID_ARGUMENT` error for option `name`. */
export function invalidArgument(name: string, expected: string, got: unknown): ParquetSkimError {
  return new ParquetSkimError('INVALID_ARGUMENT', `invalid option '${name}': expected ${expected}, got ${String(got)}`);
}
