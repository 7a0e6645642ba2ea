/**
 * Where a file's bytes come from: an HTTP(S) URL, a `Blob`/`File`, or bytes in memory.
 *
 * A {@link Source} answers "give me bytes `start..end`" and nothing else: it knows nothing about
 * Parquet. Every read is recorded in the request log (range, status, bytes, milliseconds), which
 * tests and the explorer read to see exactly what a query cost.
 *
 * The tail read at open is kept: later reads inside it (a small file's pages, the last row group's
 * columns) are answered from memory, not fetched again.
 *
 * For URLs the source remembers the file's size and version (ETag, else Last-Modified) from the
 * first response, so later reads use `bytes=start-end` (no CORS preflight) and a file replaced
 * between two reads fails with `FILE_CHANGED` instead of mixing two versions. A URL of unknown size
 * is opened with one suffix request (`bytes=-n`); a server that gets the suffix form wrong (see
 * `http.ts`) costs the size (named in its answer, or learned with `bytes=0-3`) and then an explicit
 * range, and its origin is remembered, so later opens there start with `bytes=0-3`.
 *
 * Reads need no WebAssembly: a URL's tail is on its way while the core still compiles.
 */
import { abortReason, invalidArgument, ParquetSkimError } from '../errors.js';
import type { RequestLogEntry } from '../metadata.js';
import type { Chunk } from '../worker/protocol.js';
import { type ByteRange, coalesce } from './coalesce.js';
import { takeHeld } from './held.js';
import {
  type BodyMeter,
  describe,
  fetchRange,
  type HttpOptions,
  type RangeResponse,
  type RangeSpec,
  rangeHeader,
  SuffixNotSupported,
} from './http.js';
import { httpErrors, RetryableError } from './http-errors.js';
import { fetchParts, multiRangeHeader, type PartsResponse } from './multipart.js';

/** A readable file. */
export interface Source {
  /** The file's size, once known. */
  readonly fileLen: number | undefined;
  /** The file's version (ETag or Last-Modified), once seen. */
  readonly version: string | undefined;
  /** Reads the last `n` bytes (all of a smaller file), learning the file's size on the way. */
  readTail(n: number): Promise<{ start: number; data: Uint8Array }>;
  /** Reads bytes `start..end`. Aborting `signal` rejects with its reason. */
  read(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;
  /** Every read so far. */
  requestLog(): RequestLogEntry[];
}

/** Origins whose servers got a suffix range wrong: later opens there learn the size first. */
const suffixBroken = new Set<string>();

/**
 * What each origin's server does with several ranges in one request, once a request found out
 * (`yes`: parts; `no`: anything else), or, while the first such request waits for its answer's
 * headers, what they will say: reads planned meanwhile go one range per request, and requests for
 * several ranges already planned wait for those headers (a round trip, not the body).
 */
const multiRanges = new Map<string, 'yes' | 'no' | Promise<boolean>>();

/** A whole file sent for several ranges is kept up to twice their bytes, or this much. */
const WHOLE_FILE_FLOOR_BYTES = 64 * 1024;

/**
 * What an origin's link moves: bytes received over the time at least one response body from it
 * was in transit (from its headers to its last byte: latency is not counted, since a gap read
 * through costs its bytes only), so that six bodies sharing a link measure the link, not a sixth
 * of it. The I/O queue reads through larger gaps on a link measured fast (`coalesce.ts`). Per
 * origin, not per file: a dataset's files share the link, and their footers are often too small
 * to measure it. Recent reads weigh most: past {@link LINK_WINDOW_BYTES} both sums are halved.
 * The package's own `.wasm` download is one such body (`wasm-loader.ts`): a page that opens a file
 * of its own origin as it loads reads the footer beside it, and the footer alone measured the
 * share of the link the download left it.
 */
export class LinkMeter implements BodyMeter {
  private inFlight = 0;
  private busySince = 0;
  private busyMs = 0;
  private bytes = 0;
  /** The latest spells with a body in transit, ended: what a body reported after the fact overlaps. */
  private readonly spells: Array<{ start: number; end: number }> = [];

  /** A response body from the origin starts to arrive now. */
  begin(now = performance.now()): void {
    if (this.inFlight === 0) this.busySince = now;
    this.inFlight += 1;
  }

  /** A body begun earlier ended now, having brought `bytes` (0 when it failed). */
  end(bytes: number, now = performance.now()): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.bytes += bytes;
    if (this.inFlight === 0) {
      this.busyMs += now - this.busySince;
      this.spells.push({ start: this.busySince, end: now });
      if (this.spells.length > KEPT_SPELLS) this.spells.shift();
    }
    this.halveWhenFull(now);
  }

  /**
   * A body that arrived from `start` to `end` (both `performance.now()` times in the past) with
   * `bytes`, reported after the fact (the browser's record of the package's `.wasm` download):
   * its bytes count, and the part of its time no other body's spell covered.
   */
  addPast(start: number, end: number, bytes: number, now = performance.now()): void {
    if (!(end >= start) || !(bytes > 0)) return;
    const covered = [...this.spells, ...(this.inFlight > 0 ? [{ start: this.busySince, end: now }] : [])];
    let uncovered = [{ start, end }];
    for (const spell of covered) {
      uncovered = uncovered.flatMap((part) =>
        [
          { start: part.start, end: Math.min(part.end, spell.start) },
          { start: Math.max(part.start, spell.end), end: part.end },
        ].filter((piece) => piece.end > piece.start),
      );
    }
    this.busyMs += uncovered.reduce((sum, part) => sum + (part.end - part.start), 0);
    this.spells.push({ start, end });
    this.spells.sort((a, b) => a.start - b.start);
    if (this.spells.length > KEPT_SPELLS) this.spells.shift();
    this.bytes += bytes;
    this.halveWhenFull(now);
  }

  private halveWhenFull(now: number): void {
    if (this.bytes > LINK_WINDOW_BYTES) {
      // Recent reads weigh most: a long-gone fast (or slow) spell fades out.
      this.bytes /= 2;
      this.busyMs /= 2;
      if (this.inFlight > 0) this.busySince = now - (now - this.busySince) / 2;
    }
  }

  /** Bytes per millisecond, once at least {@link LINK_SAMPLE_BYTES} came in; else undefined. */
  bytesPerMs(now = performance.now()): number | undefined {
    if (this.bytes < LINK_SAMPLE_BYTES) return undefined;
    const ms = this.busyMs + (this.inFlight > 0 ? now - this.busySince : 0);
    return this.bytes / Math.max(ms, 0.1);
  }
}

/** Ended spells a meter keeps to tell what a body reported after the fact overlapped. */
const KEPT_SPELLS = 16;

/** Until this many bytes came in, a link's reads say more about its latency than its speed. */
export const LINK_SAMPLE_BYTES = 256 * 1024;
/** Past this many bytes a link's sums are halved (see {@link LinkMeter}). */
export const LINK_WINDOW_BYTES = 32 * 1024 * 1024;
/** Each origin's meter. */
const links = new Map<string, LinkMeter>();

/** The meter of `url`'s origin (one per origin, made on first use). */
export function linkOf(url: string): LinkMeter {
  const origin = originOf(url);
  let link = links.get(origin);
  if (link === undefined) {
    link = new LinkMeter();
    links.set(origin, link);
  }
  return link;
}

/** What every source shares: the size, the tail kept from the open, the log. */
abstract class BaseSource implements Source {
  fileLen: number | undefined;
  version: string | undefined = undefined;
  protected readonly log: RequestLogEntry[] = [];
  /** The bytes of the tail read and where they start. */
  protected tail: { start: number; data: Uint8Array } | undefined;

  constructor(fileLen: number | undefined) {
    this.fileLen = fileLen;
  }

  requestLog(): RequestLogEntry[] {
    return this.log.map((e) => ({ ...e }));
  }

  async readTail(n: number): Promise<{ start: number; data: Uint8Array }> {
    const len = this.fileLen ?? (await this.learnSize(n));
    const start = Math.max(0, len - n);
    const kept = this.inTail(start, len);
    if (kept !== undefined) return { start, data: kept };
    const data = await this.read(start, len);
    this.tail = { start, data };
    return this.tail;
  }

  async read(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.checkRange(start, end);
    const kept = this.inTail(start, end);
    if (kept !== undefined) return kept;
    return this.readUncached(start, end, signal);
  }

  /** Refuses a reversed range, or one past the end of a file of known size. */
  protected checkRange(start: number, end: number): void {
    const len = this.fileLen;
    if (!(start <= end) || (len !== undefined && end > len)) {
      throw invalidArgument('range', `a range inside the ${len ?? 0}-byte file`, `${start}..${end}`);
    }
  }

  /** The size of a file that did not say it (URLs): learned, the tail possibly kept on the way. */
  protected learnSize(_n: number): Promise<number> {
    return Promise.reject(new ParquetSkimError('INTERNAL', 'only HTTP sources have an unknown size'));
  }

  protected abstract readUncached(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;

  /** A copy of `start..end` when the tail read holds all of it. */
  protected inTail(start: number, end: number): Uint8Array | undefined {
    const tail = this.tail;
    if (tail === undefined || start < tail.start || end > tail.start + tail.data.byteLength) return undefined;
    return tail.data.slice(start - tail.start, end - tail.start);
  }

  protected record(entry: Omit<RequestLogEntry, 'at' | 'ms'>, startedAt: number): void {
    const at = performance.timeOrigin + startedAt;
    this.log.push({ ...entry, at, ms: performance.now() - startedAt });
  }
}

/** A file served over HTTP(S). */
export class HttpSource extends BaseSource {
  /** Its reads cross a network: worth starting ahead of the tasks that need them. */
  readonly remote = true;
  private suffixRefused: string | undefined;

  /** Its origin's meter, shared with the origin's other files. */
  private readonly link: LinkMeter;
  private readonly origin: string;

  constructor(
    readonly url: string,
    private readonly options: HttpOptions,
    size: number | undefined,
  ) {
    super(size);
    this.link = linkOf(url);
    this.origin = originOf(url);
  }

  /** What its origin's link moves (see {@link LinkMeter}), once measured. */
  get bytesPerMs(): number | undefined {
    return this.link.bytesPerMs();
  }

  /** `fetchRange`, its bodies timed on its origin's {@link LinkMeter}. */
  private fetchMetered(
    spec: RangeSpec,
    fullBodyLimit: number,
    signal?: AbortSignal,
    pinned?: string,
  ): Promise<RangeResponse> {
    return fetchRange(this.url, spec, this.options, fullBodyLimit, signal, pinned, this.link);
  }

  override async readTail(n: number): Promise<{ start: number; data: Uint8Array }> {
    const tail = await super.readTail(n);
    this.refuseHtml(tail.data);
    return tail;
  }

  protected override async learnSize(n: number): Promise<number> {
    // A server that ignores Range answers with the whole file: take it when it is small.
    const wholeFileLimit = Math.max(n, this.options.maxFullBodyBytes);
    const origin = originOf(this.url);
    if (!suffixBroken.has(origin)) {
      const spec: RangeSpec = { suffix: n };
      const startedAt = performance.now();
      try {
        const response = await this.fetchMetered(spec, wholeFileLimit);
        this.acceptFirst(response, spec, startedAt);
        return response.fileLen;
      } catch (error) {
        if (!(error instanceof SuffixNotSupported)) throw error;
        this.suffixRefused = error.message;
        this.record(
          { start: 0, end: 0, range: rangeHeader(spec), status: error.status, bytes: 0, note: error.message },
          startedAt,
        );
        suffixBroken.add(origin);
        if (error.fileLen !== undefined) {
          this.fileLen = error.fileLen;
          return error.fileLen;
        }
      }
    }
    // The size from `Content-Range: bytes 0-3/size`: a CORS-safelisted range, so no preflight.
    // Not `bytes=0-0`: Vite reads an end of 0 as "to the end of the file".
    const spec: RangeSpec = { start: 0, end: 4 };
    const startedAt = performance.now();
    let response: RangeResponse;
    try {
      response = await this.fetchMetered(spec, wholeFileLimit);
    } catch (error) {
      throw this.afterSuffix(error);
    }
    this.acceptFirst(response, spec, startedAt);
    return response.fileLen;
  }

  /** Takes the size and version of a file's first answer, logs it, and keeps a whole body. */
  private acceptFirst(response: RangeResponse, spec: RangeSpec, startedAt: number): void {
    this.fileLen = response.fileLen;
    this.checkVersion(response.version);
    const end = response.start + response.data.byteLength;
    this.record(
      { start: response.start, end, range: rangeHeader(spec), status: response.status, bytes: end - response.start },
      startedAt,
    );
    if (response.status === 200 || 'suffix' in spec) this.tail = { start: response.start, data: response.data };
  }

  protected async readUncached(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array> {
    const spec: RangeSpec = { start, end };
    const startedAt = performance.now();
    let response: RangeResponse;
    try {
      response = await this.fetchMetered(spec, 0, signal, this.version);
    } catch (error) {
      throw this.afterSuffix(error);
    }
    this.checkSame(response.fileLen, response.version);
    this.record({ start, end, range: rangeHeader(spec), status: response.status, bytes: end - start }, startedAt);
    return response.data;
  }

  /**
   * Whether a read of several ranges may be planned as one request now: asked for
   * (`multiRange`), and the origin's server not known to answer otherwise, nor being asked.
   */
  get multiRange(): boolean {
    const known = multiRanges.get(this.origin);
    return this.options.multiRange && (known === 'yes' || known === undefined);
  }

  /**
   * Reads `parts` (sorted, apart) in one request where the server answers with parts (see
   * `multipart.ts`); what the answer lacked — all of it from a server that sent one span, a
   * refusal, or a whole file too large to keep — is read with one range per request (coalesced),
   * and the origin is not asked so again. Parts inside the open's tail come from memory.
   * Resolves to the parts' bytes and the requests made.
   */
  async readParts(
    parts: readonly ByteRange[],
    signal?: AbortSignal,
  ): Promise<{ chunks: Chunk[]; requests: number; bytes: number }> {
    const kept: Chunk[] = [];
    const asked: ByteRange[] = [];
    for (const part of parts) {
      this.checkRange(part.start, part.end);
      const data = this.inTail(part.start, part.end);
      if (data === undefined) asked.push(part);
      else kept.push({ start: part.start, data });
    }
    let known = multiRanges.get(this.origin);
    // Another request is finding out: its answer's headers tell (or this read is cancelled).
    if (known instanceof Promise) known = (await unlessAborted(known, signal)) ? 'yes' : 'no';
    if (asked.length < 2 || !this.options.multiRange || known === 'no') {
      const read = await this.readEach(asked, signal);
      return { chunks: [...kept, ...read.chunks], requests: read.requests, bytes: read.bytes };
    }
    const asking = known === undefined;
    let tell = (_multipart: boolean): void => undefined;
    if (asking) multiRanges.set(this.origin, new Promise<boolean>((resolve) => (tell = resolve)));
    const onAnswer = (multipart: boolean) => {
      if (!asking) return;
      multiRanges.set(this.origin, multipart ? 'yes' : 'no');
      tell(multipart);
    };
    const startedAt = performance.now();
    let response: PartsResponse;
    try {
      // A whole file sent instead is kept only when small beside what was asked.
      const wanted = asked.reduce((sum, part) => sum + (part.end - part.start), 0);
      const wholeLimit = Math.min(this.options.maxFullBodyBytes, Math.max(2 * wanted, WHOLE_FILE_FLOOR_BYTES));
      response = await fetchParts(this.url, asked, this.options, wholeLimit, signal, this.version, this.link, onAnswer);
    } catch (error) {
      // Nothing learned: the reads waiting go a range at a time, and a later one asks again.
      if (asking && multiRanges.get(this.origin) instanceof Promise) multiRanges.delete(this.origin);
      tell(false);
      throw this.afterSuffix(error);
    }
    this.checkSame(response.fileLen, response.version);
    // A body not in the form, after headers that promised parts: not asked again either.
    if (response.declined !== undefined) multiRanges.set(this.origin, 'no');
    const first = asked[0] as ByteRange;
    const last = asked[asked.length - 1] as ByteRange;
    this.record(
      {
        start: first.start,
        end: last.end,
        range: multiRangeHeader(asked),
        status: response.status,
        bytes: response.received,
        parts: asked.length,
        ...(response.declined !== undefined ? { note: `the server ${response.declined}` } : {}),
      },
      startedAt,
    );
    const { chunks, missing } = takeHeld(asked, response.spans);
    const rest = await this.readEach(missing, signal);
    return {
      chunks: [...kept, ...chunks, ...rest.chunks],
      requests: 1 + rest.requests,
      bytes: response.received + rest.bytes,
    };
  }

  /** `ranges` read with one range per request, coalesced as the I/O queue's default rule does. */
  private async readEach(
    ranges: readonly ByteRange[],
    signal?: AbortSignal,
  ): Promise<{ chunks: Chunk[]; requests: number; bytes: number }> {
    if (ranges.length === 0) return { chunks: [], requests: 0, bytes: 0 };
    const requests = coalesce(ranges);
    const read = await Promise.all(
      requests.map(async (request) => ({
        start: request.start,
        data: await this.read(request.start, request.end, signal),
      })),
    );
    const bytes = read.reduce((sum, chunk) => sum + chunk.data.byteLength, 0);
    return { chunks: takeHeld(ranges, read).chunks, requests: requests.length, bytes };
  }

  /** An HTTP status met on the way around a refused suffix range says so. */
  private afterSuffix(error: unknown): unknown {
    if (this.suffixRefused === undefined || !(error instanceof RetryableError) || error.answered === undefined) {
      return error;
    }
    const { status, range } = error.answered;
    const note = `${this.suffixRefused}, so the reader read the file's size and tail with explicit ranges`;
    return httpErrors(this.url).httpStatus(status, range, error.attempts, note);
  }

  /** An answer's size and version must be the file's seen so far (`FILE_CHANGED`). */
  private checkSame(fileLen: number | undefined, version: string | undefined): void {
    if (fileLen !== undefined && this.fileLen !== undefined && this.fileLen !== fileLen) {
      throw httpErrors(this.url).fileChanged(`its size went from ${this.fileLen} to ${fileLen} bytes`);
    }
    this.checkVersion(version);
  }

  private checkVersion(seen: string | undefined): void {
    if (seen === undefined) return;
    if (this.version === undefined) this.version = seen;
    else if (this.version !== seen) {
      throw httpErrors(this.url).fileChanged(`its version went from ${this.version} to ${seen}`);
    }
  }

  /**
   * An HTML page where a file's tail was expected (from a server that did not say `text/html`) is
   * named as one, rather than left to fail as a corrupt footer.
   */
  private refuseHtml(tail: Uint8Array): void {
    const magic = String.fromCharCode(...tail.subarray(Math.max(0, tail.byteLength - 4)));
    const head = new TextDecoder().decode(tail.subarray(0, 64));
    if (magic === 'PAR1' || magic === 'PARE' || !looksLikeHtml(head)) return;
    const start = head.trimStart().slice(0, 24);
    throw httpErrors(this.url).htmlPage(`its bytes start with '${start}'`);
  }
}

/** A `Blob` or `File`, read with `Blob.slice`. */
export class BlobSource extends BaseSource {
  constructor(private readonly blob: Blob) {
    super(blob.size);
  }

  protected async readUncached(start: number, end: number): Promise<Uint8Array> {
    const startedAt = performance.now();
    let data: Uint8Array;
    try {
      data = new Uint8Array(await this.blob.slice(start, end).arrayBuffer());
    } catch (error) {
      throw new ParquetSkimError('NETWORK', `the request for blob failed: reading the Blob failed: ${describe(error)}`);
    }
    this.record({ start, end, range: null, status: null, bytes: end - start }, startedAt);
    return data;
  }
}

/**
 * Bytes already in memory, read as views: a task decoded on this thread copies what it needs into
 * the core's memory anyway, and one posted to a worker is copied there (`ownedChunks`). A view of
 * the caller's whole buffer is copied, so that posting it can never transfer (detach) that buffer.
 */
export class BytesSource extends BaseSource {
  constructor(private readonly bytes: Uint8Array) {
    super(bytes.byteLength);
  }

  protected async readUncached(start: number, end: number): Promise<Uint8Array> {
    const startedAt = performance.now();
    const view = this.bytes.subarray(start, end);
    const data = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view.slice() : view;
    this.record({ start, end, range: null, status: null, bytes: end - start }, startedAt);
    return data;
  }
}

/** `promise`, or a rejection with `signal`'s reason as soon as it aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Whether `head` (the first characters of a body) starts like an HTML document. */
export function looksLikeHtml(head: string): boolean {
  const text = head.replace(/^[\s\ufeff]+/, '').toLowerCase();
  return ['<!doctype html', '<html', '<head', '<body', '<meta', '<script', '<title'].some((s) => text.startsWith(s));
}

/** `scheme://host[:port]` of an absolute URL. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
