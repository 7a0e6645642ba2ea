/**
 * Several byte ranges in one HTTP request: the `Range: bytes=a-b,c-d` form and its
 * `multipart/byteranges` answer (RFC 9110 §14.6).
 *
 * A lookup reads a dozen columns' pages spread over a row group, and a dense scan a few columns
 * with others between them. One range per request either reads the bytes between them (a gap
 * read through) or makes a request for each (HTTP/1.1 runs six at a time; the rest wait their
 * turn). One request with several ranges does neither: nginx, Apache, Caddy and Go's file server
 * answer it with each range as a part of a `multipart/byteranges` body.
 *
 * Many servers do not: they answer with the whole file (`200`: Node's `send`), with the first
 * range only (`206` with one `Content-Range`: Vite's `sirv`), or with an error. So an answer is
 * read for what it holds (parts, one span, or a whole body, each span checked against the file)
 * and the caller fetches whatever it still lacks (`source.ts`). A server may also merge ranges it
 * finds close; the RFC allows it, and a part covering several asked ranges serves them all.
 *
 * Parts are taken by the length their `Content-Range` names, not by searching for the boundary:
 * a part's bytes may contain anything, the boundary included.
 */
import type { Chunk } from '../worker/protocol.js';
import type { ByteRange } from './coalesce.js';
import {
  type Answer,
  attempt,
  type BodyMeter,
  contentRangeSize,
  describe,
  type HttpOptions,
  parseContentRange,
  partial,
  type RangeResponse,
  type RangeSpec,
  refusal,
  whole,
  withRetries,
} from './http.js';

/** The `Range` header asking for each of `parts` (half-open, sorted, not overlapping). */
export function multiRangeHeader(parts: readonly ByteRange[]): string {
  return `bytes=${parts.map((p) => `${p.start}-${Math.max(p.start, p.end - 1)}`).join(',')}`;
}

/** The boundary of a `multipart/byteranges` content type, or undefined for any other type. */
export function byterangesBoundary(contentType: string | null): string | undefined {
  if (contentType === null) return undefined;
  const [type, ...params] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'multipart/byteranges') return undefined;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    const value = param.slice(eq + 1).trim();
    const unquoted = value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
    return unquoted === '' ? undefined : unquoted;
  }
  return undefined;
}

/** One part of a `multipart/byteranges` body: where its bytes lie in a file of `total` bytes. */
export interface BodyPart {
  start: number;
  end: number;
  total: number;
  /** A view into the body. */
  data: Uint8Array;
}

const CR = 13;
const LF = 10;
const DASH = 45;

/**
 * The parts of a `multipart/byteranges` `body` delimited by `boundary`. Throws an `Error` saying
 * what was expected where the body does not follow the form: no delimiter, a part without a
 * `Content-Range`, a part shorter than its `Content-Range` says, no delimiter after a part.
 */
export function parseByteranges(body: Uint8Array, boundary: string): BodyPart[] {
  const delimiter = new TextEncoder().encode(`--${boundary}`);
  const parts: BodyPart[] = [];
  // The first delimiter may follow a preamble (usually an empty line).
  let at = indexOf(body, delimiter, 0);
  if (at < 0) throw new Error(`expected the boundary '--${boundary}', found none`);
  for (;;) {
    at += delimiter.length;
    if (body[at] === DASH && body[at + 1] === DASH) return parts; // the close delimiter
    at = skipLineEnd(body, skipSpaces(body, at), 'after the boundary');
    // Headers up to an empty line.
    let contentRange: string | undefined;
    for (;;) {
      const lineEnd = lineEndOf(body, at);
      if (lineEnd < 0) throw new Error('expected a part header line ending in CRLF, found the end of the body');
      const line = new TextDecoder().decode(body.subarray(at, lineEnd));
      at = skipLineEnd(body, lineEnd, 'after a part header');
      if (line === '') break;
      const colon = line.indexOf(':');
      if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-range') {
        contentRange = line.slice(colon + 1).trim();
      }
    }
    if (contentRange === undefined) throw new Error(`expected a Content-Range header in part ${parts.length + 1}`);
    let span: { start: number; end: number; total: number };
    try {
      span = parseContentRange(contentRange);
    } catch (problem) {
      throw new Error(`part ${parts.length + 1}'s Content-Range '${contentRange}': ${(problem as Error).message}`);
    }
    const length = span.end - span.start;
    if (at + length > body.byteLength) {
      throw new Error(
        `part ${parts.length + 1} (${contentRange}) promised ${length} bytes, the body has ${body.byteLength - at} left`,
      );
    }
    parts.push({ ...span, data: body.subarray(at, at + length) });
    at += length;
    // CRLF, then the next delimiter.
    if (body[at] === CR) at += 1;
    if (body[at] === LF) at += 1;
    if (!startsWith(body, delimiter, at)) {
      throw new Error(`expected the boundary after part ${parts.length} (${contentRange}), found other bytes`);
    }
  }
}

function indexOf(body: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  for (let i = body.indexOf(first as number, from); i >= 0; i = body.indexOf(first as number, i + 1)) {
    if (i + needle.length > body.byteLength) return -1;
    if (startsWith(body, needle, i)) return i;
  }
  return -1;
}

function startsWith(body: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at + needle.length > body.byteLength) return false;
  for (let k = 0; k < needle.length; k++) if (body[at + k] !== needle[k]) return false;
  return true;
}

function skipSpaces(body: Uint8Array, at: number): number {
  let i = at;
  while (body[i] === 32 || body[i] === 9) i += 1;
  return i;
}

/** Where the line starting at `at` ends (its CR, or its LF when a server sends bare LFs); -1: none. */
function lineEndOf(body: Uint8Array, at: number): number {
  const lf = body.indexOf(LF, at);
  if (lf < 0) return -1;
  return lf > at && body[lf - 1] === CR ? lf - 1 : lf;
}

/** Past the CRLF (or bare LF) at `at`. */
function skipLineEnd(body: Uint8Array, at: number, where: string): number {
  if (body[at] === CR && body[at + 1] === LF) return at + 2;
  if (body[at] === LF) return at + 1;
  throw new Error(
    `expected a line end ${where}, found ${at >= body.byteLength ? 'the end of the body' : 'other bytes'}`,
  );
}

/** What a request for several ranges brought back. */
export interface PartsResponse {
  status: number;
  /** The spans it holds — its parts, one span, or the whole file — each with its bytes. */
  spans: Chunk[];
  /** Body bytes received (parts' headers not counted). */
  received: number;
  /** The file's size, when the answer named it. */
  fileLen: number | undefined;
  version: string | undefined;
  /** How the server answered when it did not answer with parts; undefined when it did. */
  declined: string | undefined;
}

/** Statuses with which a server refuses several ranges in one request (not the file, not for a while). */
const MULTI_REFUSALS = new Set([400, 405, 416, 501]);

/**
 * Requests `parts` of `url` in one request (see the module doc), retrying transient failures as
 * {@link fetchRange} does. An answer that is not `multipart/byteranges` is not an error: what it
 * holds is returned with `declined` saying how the server answered — one span (`206`), the whole
 * file (`200`, read when at most `fullBodyLimit` bytes, else aborted), or a refusal (`400`, `405`,
 * `416`, `501`, or a body not in the multipart form). Any other status fails as a single range's
 * would (`404`, `412`, a `503` after its retries, …). `onAnswer` is told, once the headers came,
 * whether they promise parts.
 */
export function fetchParts(
  url: string,
  parts: readonly ByteRange[],
  options: HttpOptions,
  fullBodyLimit: number,
  signal?: AbortSignal,
  pinned?: string,
  meter?: BodyMeter,
  onAnswer?: (multipart: boolean) => void,
): Promise<PartsResponse> {
  const header = multiRangeHeader(parts);
  const first = parts[0];
  const last = parts[parts.length - 1];
  const outline: RangeSpec = { start: first?.start ?? 0, end: last?.end ?? 0 };
  return withRetries(options, signal, () =>
    attempt(url, header, options, signal, pinned, meter, async (response, answer, errors, transient) => {
      const declined = (how: string): { value: PartsResponse; received: number } => {
        void response.body?.cancel().catch(() => undefined);
        const fileLen = answer.contentRange === null ? undefined : contentRangeSize(answer.contentRange);
        const value = {
          status: answer.status,
          spans: [],
          received: 0,
          fileLen,
          version: answer.version,
          declined: how,
        };
        return { value, received: 0 };
      };
      // What the server does is known from the headers: told before the body arrives.
      if (answer.status === 200 || answer.status === 206 || MULTI_REFUSALS.has(answer.status)) {
        const boundary = answer.status === 206 ? byterangesBoundary(answer.contentType) : undefined;
        onAnswer?.(boundary !== undefined && answer.encoding === undefined);
      }
      if (MULTI_REFUSALS.has(answer.status)) return declined(`answered ${answer.status}`);
      if (answer.status === 200) {
        const length = answer.contentLength;
        if (length === undefined || length > fullBodyLimit || answer.encoding !== undefined) {
          return declined(`answered 200 with the whole file (${length ?? 'unknown'} bytes; aborted)`);
        }
        const body = await whole(response, answer, header, fullBodyLimit, errors, transient);
        return { value: answered(body, 'answered 200 with the whole file'), received: body.data.byteLength };
      }
      if (answer.status !== 206) throw refusal(answer, outline, header, pinned, errors);
      if (answer.encoding !== undefined) return declined(`answered with Content-Encoding: ${answer.encoding}`);
      const boundary = byterangesBoundary(answer.contentType);
      if (boundary === undefined) {
        // One span: the first range (Vite's sirv), or every range merged. Checked like any 206.
        const one = await partial(response, answer, outline, header, errors, transient, false);
        const how = `answered with one span (${answer.contentRange ?? ''})`;
        return { value: answered(one, how), received: one.data.byteLength };
      }
      let body: Uint8Array;
      try {
        body = new Uint8Array(await response.arrayBuffer());
      } catch (error) {
        throw transient(`reading the body: ${describe(error)}`);
      }
      let got: BodyPart[];
      try {
        got = parseByteranges(body, boundary);
      } catch (problem) {
        return { value: malformed(answer, (problem as Error).message), received: body.byteLength };
      }
      const totals = new Set(got.map((part) => part.total));
      if (totals.size > 1) {
        return { value: malformed(answer, `its parts name ${totals.size} file sizes`), received: body.byteLength };
      }
      const spans = got.map((part) => ({ start: part.start, data: part.data }));
      const received = spans.reduce((sum, span) => sum + span.data.byteLength, 0);
      const fileLen = got[0]?.total;
      const value = { status: 206, spans, received, fileLen, version: answer.version, declined: undefined };
      return { value, received };
    }),
  );
}

/** A single range's answer to a request for several: its one span. */
function answered(one: RangeResponse, how: string): PartsResponse {
  const spans = [{ start: one.start, data: one.data }];
  return {
    status: one.status,
    spans,
    received: one.data.byteLength,
    fileLen: one.fileLen,
    version: one.version,
    declined: how,
  };
}

/** A `multipart/byteranges` answer whose body did not follow the form: none of it is used. */
function malformed(answer: Answer, why: string): PartsResponse {
  return {
    status: answer.status,
    spans: [],
    received: 0,
    fileLen: undefined,
    version: answer.version,
    declined: `answered with a multipart/byteranges body not in the form (${why})`,
  };
}
