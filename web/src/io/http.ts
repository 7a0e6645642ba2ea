/**
 * One HTTP range request through the global `fetch`, checked against what was asked.
 *
 * Ranges are sent as `bytes=start-end` whenever the size is known: a suffix range (`bytes=-n`) is
 * not CORS-safelisted and costs a preflight, so it is used only for the first read of a file whose
 * size nobody told us.
 *
 * Servers lie in practice (proxies drop `Range`), so every `206` is validated: `Content-Range` must
 * be present and cover exactly the asked bytes, and the body must have that length. A `200` (Range
 * ignored) is accepted only when the caller allows the whole body (a file smaller than the open's
 * tail read); otherwise the download is aborted at once and the error says so.
 *
 * The suffix form is the one servers most often get wrong: Vite's dev and preview servers answer
 * `bytes=-n` with `bytes 0-n/size` (a prefix), http-server with `416`, Azure Blob Storage (and
 * Azurite) with `500`. Such answers reject with {@link SuffixNotSupported}, with the size when the
 * server named it, and the body unread: the source learns the size and reads the tail with an
 * explicit range instead.
 *
 * Servers also fail: connections drop, bodies stop mid-stream, a load balancer answers 503, a server
 * stalls. Range reads are idempotent, so each is retried (`retries`) with exponential backoff and
 * jitter, honouring `Retry-After`; every attempt has a timeout that covers headers and body, and the
 * caller's abort cancels both the request and a backoff wait at once. Statuses that will not change
 * (403, 404, 416, 500, …) fail at once. A range sent with a `Content-Encoding` (the bytes are not
 * the file's) fails with `CONTENT_ENCODING`; a replaced file fails with `FILE_CHANGED` — from the
 * version check of every response, and from the server itself (412) when preconditions are sent.
 * A `text/html` answer is never a Parquet file's bytes: it is a page, usually a dev server's
 * `index.html` served for a path that does not exist, and the error says so.
 *
 * One attempt ({@link attempt}) and the retries around it ({@link withRetries}) are shared with
 * requests for several ranges at once (`multipart.ts`), which read their answers their own way.
 */
import { ParquetSkimError, throwIfAborted } from '../errors.js';
import { httpErrors, RetryableError } from './http-errors.js';

/** Which bytes to ask for: `[start, end)`, or the last `suffix` bytes of a file of unknown size. */
export type RangeSpec = { start: number; end: number } | { suffix: number };

/** The `Range` header value of `spec`. */
export function rangeHeader(spec: RangeSpec): string {
  return 'suffix' in spec ? `bytes=-${spec.suffix}` : `bytes=${spec.start}-${Math.max(0, spec.end - 1)}`;
}

/** How to make requests: extra headers, the credentials mode, and how hard to try. */
export interface HttpOptions {
  headers: Array<[string, string]>;
  credentials?: 'omit' | 'same-origin' | 'include';
  /** Retries after a transient failure (connection error, cut body, timeout, 429/502/503/504). */
  retries: number;
  /** First backoff; each retry doubles it (±25% jitter), capped at {@link MAX_RETRY_DELAY_MS}. */
  retryDelayMs: number;
  /** Per-attempt limit on the whole exchange, headers and body; 0 for none. */
  timeoutMs: number;
  /** A `200` with the whole body is accepted as the file when it is at most this long. */
  maxFullBodyBytes: number;
  /** Send `If-Match` (or `If-Unmodified-Since`) with the version seen first. */
  conditional: boolean;
  /** Ask for several ranges in one request until the origin's server shows it does not answer so (`multipart.ts`). */
  multiRange: boolean;
}

/** The longest wait between two attempts, whatever `Retry-After` asks. */
export const MAX_RETRY_DELAY_MS = 10_000;

/** A validated answer to a range request. */
export interface RangeResponse {
  status: number;
  /** Where the bytes start in the file. */
  start: number;
  data: Uint8Array;
  /** The file's size, from `Content-Range` (or the whole body's length after a `200`). */
  fileLen: number;
  /** `ETag`, else `Last-Modified`: what identifies this version of the file. */
  version: string | undefined;
}

/**
 * A suffix request the server did not answer as one: another span (`how` says which), or a
 * refusal (`416`, `400`, `405`, `500`, `501`). `fileLen` is the size when the answer named it.
 */
export class SuffixNotSupported extends Error {
  constructor(
    readonly status: number,
    readonly how: string,
    readonly fileLen: number | undefined,
  ) {
    super(`the server does not support suffix ranges (it ${how})`);
  }
}

/** Statuses with which servers refuse the suffix form itself, not the file or for a while. */
const SUFFIX_REFUSALS = new Set([400, 405, 416, 500, 501]);

/** Told when a response body starts to arrive and when it ends (`LinkMeter` in `source.ts`). */
export interface BodyMeter {
  begin(): void;
  /** The body ended with `bytes` received (0 when the attempt failed). */
  end(bytes: number): void;
}

/** Why one attempt failed: worth another try, or final. */
export class Transient {
  constructor(
    readonly error: ParquetSkimError,
    readonly waitMs: number | undefined,
  ) {}
}

/**
 * Requests `spec` of `url`, retrying transient failures with exponential backoff. A `200` with a
 * whole body of at most `fullBodyLimit` bytes is accepted as the whole file; a larger one is
 * aborted. `pinned` is the file version seen before, sent as a precondition when `conditional`.
 * Aborting `signal` rejects with its reason. `meter` sees each attempt's body in transit: from
 * its headers to its last byte.
 */
export function fetchRange(
  url: string,
  spec: RangeSpec,
  options: HttpOptions,
  fullBodyLimit: number,
  signal?: AbortSignal,
  pinned?: string,
  meter?: BodyMeter,
): Promise<RangeResponse> {
  const header = rangeHeader(spec);
  return withRetries(options, signal, () =>
    attempt(url, header, options, signal, pinned, meter, async (response, answer, errors, transient) => {
      if (answer.status !== 206 && answer.status !== 200) throw refusal(answer, spec, header, pinned, errors);
      const body =
        answer.status === 206
          ? await partial(response, answer, spec, header, errors, transient)
          : await whole(response, answer, header, fullBodyLimit, errors, transient);
      return { value: body, received: body.data.byteLength };
    }),
  );
}

/**
 * Runs `once` (one attempt) until it succeeds, fails for good, or `options.retries` retries of
 * transient failures were spent, waiting with exponential backoff and jitter between attempts
 * (at least what a `Retry-After` asked). Aborting `signal` rejects with its reason.
 */
export async function withRetries<T>(
  options: HttpOptions,
  signal: AbortSignal | undefined,
  once: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let failure: Transient;
    try {
      return await once();
    } catch (error) {
      // Cancelled: reject with the caller's own reason, whatever the request made of it.
      throwIfAborted(signal);
      if (!(error instanceof Transient)) throw error;
      failure = error;
    }
    if (attempt > options.retries) throw withAttempts(failure.error, attempt);
    const backoff = options.retryDelayMs * 2 ** Math.min(attempt - 1, 16) * (0.75 + 0.5 * Math.random());
    await sleep(Math.min(Math.max(backoff, failure.waitMs ?? 0), MAX_RETRY_DELAY_MS), signal);
    throwIfAborted(signal);
  }
}

/** Records in `error` how many attempts were made (its message says so). */
function withAttempts(error: ParquetSkimError, attempts: number): ParquetSkimError {
  return error instanceof RetryableError ? error.withAttempts(attempts) : error;
}

/** Waits `ms`, or until `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, Math.min(ms, MAX_RETRY_DELAY_MS)));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The headers of an answer that matter here. */
export interface Answer {
  status: number;
  contentRange: string | null;
  contentLength: number | undefined;
  contentType: string | null;
  retryAfter: string | null;
  version: string | undefined;
  /** A `Content-Encoding` other than identity (visible same-origin, or when exposed). */
  encoding: string | undefined;
}

function answerOf(response: Response): Answer {
  const header = (name: string) => response.headers.get(name);
  const length = header('content-length');
  const encoding = header('content-encoding')?.trim().toLowerCase();
  return {
    status: response.status,
    contentRange: header('content-range'),
    contentLength: length !== null && /^\s*\d+\s*$/.test(length) ? Number(length) : undefined,
    contentType: header('content-type'),
    retryAfter: header('retry-after'),
    version: header('etag') ?? header('last-modified') ?? undefined,
    encoding: encoding === undefined || encoding === '' || encoding === 'identity' ? undefined : encoding,
  };
}

function isHtml(answer: Answer): boolean {
  const type = answer.contentType?.trim().toLowerCase() ?? '';
  return type.startsWith('text/html') || type.startsWith('application/xhtml');
}

/**
 * Reads an answer whose headers arrived: its value and the body bytes received, or a thrown
 * error (a {@link Transient} for one worth another try). An HTML page was refused before.
 */
export type AnswerReader<T> = (
  response: Response,
  answer: Answer,
  errors: ReturnType<typeof httpErrors>,
  transient: (detail: string) => Transient,
) => Promise<{ value: T; received: number }>;

/**
 * One attempt at a request with `Range: header` of `url`: sent with the caller's headers, its
 * credentials and a precondition on `pinned`, limited by `options.timeoutMs`, aborted with
 * `signal`; its answer read by `read`. Whatever is left of a body nobody read is aborted.
 */
export async function attempt<T>(
  url: string,
  header: string,
  options: HttpOptions,
  signal: AbortSignal | undefined,
  pinned: string | undefined,
  meter: BodyMeter | undefined,
  read: AnswerReader<T>,
): Promise<T> {
  const errors = httpErrors(url);
  // One controller per attempt, linked by hand to the caller's signal and to the timer (not with
  // AbortSignal.any, whose links outlive the request), and unlinked when the attempt ends.
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`no answer within ${options.timeoutMs} ms`, 'TimeoutError'));
        }, options.timeoutMs)
      : undefined;
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const transient = (detail: string) =>
    new Transient(timedOut ? errors.timeout(options.timeoutMs, 1) : errors.network(detail), undefined);
  const init: RequestInit = {
    method: 'GET',
    headers: requestHeaders(options, header, pinned),
    signal: controller.signal,
    // Past the HTTP cache: Chromium lets one request per URL at a time use its cache entry, so
    // concurrent ranges of one file would each wait for the previous one's headers (measured: a
    // footer and 16 pages at 20 ms per request, 390 ms instead of 110). Ranges are cached here.
    cache: 'no-store',
  };
  if (options.credentials !== undefined) init.credentials = options.credentials;
  try {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      throw transient(describe(error));
    }
    const answer = answerOf(response);
    meter?.begin();
    let received = 0;
    try {
      if ((answer.status === 206 || answer.status === 200) && isHtml(answer)) {
        throw errors.htmlPage(`${answer.status}, Content-Type: ${answer.contentType ?? ''}`);
      }
      const got = await read(response, answer, errors, transient);
      received = got.received;
      return got.value;
    } catch (error) {
      // Whatever is left of the body is not wanted.
      controller.abort();
      throw error;
    } finally {
      meter?.end(received);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

function requestHeaders(options: HttpOptions, range: string, pinned: string | undefined): Headers {
  const headers = new Headers();
  for (const [name, value] of options.headers) {
    try {
      headers.set(name, value);
    } catch (error) {
      throw new ParquetSkimError('INVALID_ARGUMENT', `invalid option 'headers': header '${name}': ${describe(error)}`);
    }
  }
  headers.set('Range', range);
  if (pinned !== undefined && options.conditional) {
    // A strong ETag pins the exact bytes; a weak one cannot be used with If-Match.
    if (pinned.startsWith('"')) headers.set('If-Match', pinned);
    else if (!pinned.startsWith('W/')) headers.set('If-Unmodified-Since', pinned);
  }
  return headers;
}

/**
 * A `206`: the span must be exactly the one asked (any span inside the file when not `exact`),
 * and the body that long.
 */
export async function partial(
  response: Response,
  answer: Answer,
  spec: RangeSpec,
  header: string,
  errors: ReturnType<typeof httpErrors>,
  transient: (detail: string) => Transient,
  exact = true,
): Promise<RangeResponse> {
  const contentRange = answer.contentRange;
  if (contentRange === null) {
    throw errors.badContentRange(
      'the 206 response has no readable Content-Range header; the server must send it and, cross-origin, list it in Access-Control-Expose-Headers (Access-Control-Expose-Headers: Content-Range, Content-Length, ETag)',
    );
  }
  let span: { start: number; end: number; total: number };
  try {
    const got = parseContentRange(contentRange);
    span = exact ? checkCovers(spec, got) : got;
  } catch (problem) {
    if ('suffix' in spec) {
      // Vite reads `bytes=-n` as `bytes=0-n`: the size it names is still the file's.
      const how = `answered ${header} with 206 and Content-Range '${contentRange}', not the last bytes of the file`;
      throw new SuffixNotSupported(206, how, contentRangeSize(contentRange));
    }
    throw errors.badContentRange(`asked ${header}, got Content-Range '${contentRange}': ${(problem as Error).message}`);
  }
  let data: Uint8Array;
  try {
    data = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    if (answer.encoding !== undefined) {
      throw errors.contentEncoding(
        `the range came with Content-Encoding: ${answer.encoding} and its body could not be read (${describe(error)})`,
      );
    }
    throw transient(
      `reading the body: ${describe(error)} (a connection cut mid-body, or a Content-Encoding the browser could not decode)`,
    );
  }
  if (data.byteLength !== span.end - span.start) {
    const why =
      answer.encoding === undefined
        ? ' (a Content-Encoding such as gzip, or a proxy rewriting the body)'
        : ` after the browser undid Content-Encoding: ${answer.encoding}`;
    throw errors.contentEncoding(
      `${contentRange} promised ${span.end - span.start} bytes and the body has ${data.byteLength}${why}`,
    );
  }
  return { status: 206, start: span.start, data, fileLen: span.total, version: answer.version };
}

/** A `200` (Range ignored): the whole file, accepted up to `limit` bytes. */
export async function whole(
  response: Response,
  answer: Answer,
  header: string,
  limit: number,
  errors: ReturnType<typeof httpErrors>,
  transient: (detail: string) => Transient,
): Promise<RangeResponse> {
  const length = answer.contentLength;
  // With a Content-Encoding, Content-Length counts encoded bytes: no basis to accept.
  if (length === undefined || length > limit || answer.encoding !== undefined) {
    const size = length === undefined ? 'of unknown size' : `${length} bytes`;
    throw errors.rangeNotSupported(
      `it answered ${header} with 200 and the whole body (${size}), more than the ${limit} bytes allowed for a whole-file download (\`maxFullBodyBytes\`); the download was aborted`,
    );
  }
  let data: Uint8Array;
  try {
    data = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw transient(`reading the body: ${describe(error)}`);
  }
  return { status: 200, start: 0, data, fileLen: data.byteLength, version: answer.version };
}

/** Any other status. */
export function refusal(
  answer: Answer,
  spec: RangeSpec,
  header: string,
  pinned: string | undefined,
  errors: ReturnType<typeof httpErrors>,
): Error | Transient {
  const { status } = answer;
  if (status === 412) {
    return errors.fileChanged(
      `the server refused the precondition on version ${pinned ?? '?'}: it now serves another version`,
    );
  }
  if ('suffix' in spec && SUFFIX_REFUSALS.has(status)) {
    // A 416 may name the size: `Content-Range: bytes */size`.
    const size = answer.contentRange === null ? undefined : contentRangeSize(answer.contentRange);
    return new SuffixNotSupported(status, `answered ${header} with ${status}`, size);
  }
  const error = errors.httpStatus(status, header, 1);
  if (status === 429 || status === 502 || status === 503 || status === 504) {
    const seconds = answer.retryAfter === null ? Number.NaN : Number(answer.retryAfter.trim());
    return new Transient(error, Number.isFinite(seconds) ? seconds * 1000 : undefined);
  }
  return error;
}

/** `bytes start-last/total` → `{ start, end: last + 1, total }`; a `*` total is refused. */
export function parseContentRange(value: string): { start: number; end: number; total: number } {
  const match = /^\s*bytes\s+(\d+)\s*-\s*(\d+)\s*\/\s*(\S+)\s*$/.exec(value);
  if (match === null) throw new Error("expected the form 'bytes start-end/size'");
  const [, first, last, size] = match as unknown as [string, string, string, string];
  if (!/^\d+$/.test(size)) throw new Error(`expected a numeric size, got '${size}'`);
  const start = Number(first);
  const lastByte = Number(last);
  const total = Number(size);
  if (start > lastByte || lastByte >= total)
    throw new Error(`span ${start}-${lastByte} is not inside a ${total}-byte file`);
  return { start, end: lastByte + 1, total };
}

/** The size a `Content-Range` names (after its `/`), whatever its span, even a `*` one. */
export function contentRangeSize(value: string): number | undefined {
  const size = value.trim().split('/').pop()?.trim() ?? '';
  return /^\d+$/.test(size) ? Number(size) : undefined;
}

/** Checks that the received span is exactly what `spec` asked for, given the file size. */
export function checkCovers(
  spec: RangeSpec,
  span: { start: number; end: number; total: number },
): { start: number; end: number; total: number } {
  const want =
    'suffix' in spec
      ? { start: Math.max(0, span.total - spec.suffix), end: span.total }
      : { start: spec.start, end: Math.min(spec.end, span.total) };
  if (span.start !== want.start || span.end !== want.end) {
    throw new Error(`expected bytes ${want.start}-${Math.max(0, want.end - 1)} of ${span.total}`);
  }
  return span;
}

/** Text of a thrown value. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
