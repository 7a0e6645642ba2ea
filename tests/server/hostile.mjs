/**
 * Hostile modes of the range server: the ways real servers, proxies and CDNs misbehave, each
 * reachable by URL so one server serves every case of the robustness tests.
 *
 * A request for `/hostile/<mode>[+<mode>…]/<path>` is served as `/<path>` with the modes applied.
 * Counters are kept per request URL (query included), so a test that wants fresh counters adds a
 * unique `?run=…`. Modes:
 * - `no-range` — ignores `Range`: 200 with the whole body (python's http.server does this).
 * - `no-head` — `HEAD` is 405 (S3 presigned GET URLs refuse HEAD).
 * - `no-expose` — no `Access-Control-Expose-Headers`: cross-origin, `Content-Range` is unreadable.
 * - `status-NNN` — every GET answers NNN (403, 404, 416, 500, …).
 * - `fail-NNN-K` — the first K GETs answer NNN with `Retry-After: 0` (503 from a load balancer).
 * - `drop-K` — the first K GETs send the headers and half the body, then cut the connection.
 * - `slow-MS` — every GET waits MS before the headers.
 * - `stall` — every GET sends the headers and half the body, then stalls until the client gives up.
 * - `gzip-range` — the representation is the gzipped file (`Content-Encoding: gzip`), and ranges
 *   are ranges of those gzip bytes, as S3 serves an object stored with `Content-Encoding: gzip`.
 * - `gzip-fly` — ranges of the file, each compressed on the fly (`Content-Encoding: gzip`).
 * - `multi-whole` — several ranges in one request get 200 and the whole body (Node's `send`).
 * - `multi-first` — several ranges get 206 with the first range only (Vite's `sirv`).
 * - `multi-bad` — several ranges get a `multipart/byteranges` body whose parts are cut short.
 * - `after-N` — the modes above apply only from the (N+1)th GET on, e.g. `after-1+drop-2` cuts
 *   the 2nd and 3rd GETs: the open's footer read gets through, the scan's reads do not.
 * - `change-after-K` — after K GETs the file has a new ETag and Last-Modified (it was replaced;
 *   the bytes stay the same), so `If-Match` with the old ETag gets 412.
 */
import zlib from 'node:zlib';

const PREFIX = '/hostile/';

/** Splits `/hostile/<modes>/<rest>` into `{ modes, url: '/<rest>' }`; `null` for other URLs. */
export function parseHostile(rawUrl) {
  if (!rawUrl.startsWith(PREFIX)) return null;
  const slash = rawUrl.indexOf('/', PREFIX.length);
  if (slash < 0) return null;
  const modes = {};
  const patterns = [
    [/^status-(\d{3})$/, (m) => ({ status: Number(m[1]) })],
    [/^fail-(\d{3})-(\d+)$/, (m) => ({ fail: { status: Number(m[1]), count: Number(m[2]) } })],
    [/^drop-(\d+)$/, (m) => ({ drop: Number(m[1]) })],
    [/^slow-(\d+)$/, (m) => ({ slowMs: Number(m[1]) })],
    [/^change-after-(\d+)$/, (m) => ({ changeAfter: Number(m[1]) })],
    [/^after-(\d+)$/, (m) => ({ after: Number(m[1]) })],
    [
      /^(no-range|no-head|no-expose|stall|gzip-range|gzip-fly|multi-whole|multi-first|multi-bad)$/,
      (m) => ({ [m[1]]: true }),
    ],
  ];
  for (const mode of rawUrl.slice(PREFIX.length, slash).split('+')) {
    const found = patterns.find(([pattern]) => pattern.test(mode));
    if (!found) throw new Error(`unknown hostile mode '${mode}'`);
    Object.assign(modes, found[1](found[0].exec(mode)));
  }
  return { modes, url: rawUrl.slice(slash) };
}

/** Per-URL GET counters of one server. */
export class HostileCounters {
  #counts = new Map();
  /** Counts a GET of `url` and returns its number (1 for the first). */
  next(url) {
    const n = (this.#counts.get(url) ?? 0) + 1;
    this.#counts.set(url, n);
    return n;
  }
}

const gzipCache = new Map();
/** The gzipped bytes of `file` (cached per file and version). */
export function gzippedFile(file, buffer, version) {
  const key = `${file} ${version}`;
  let gz = gzipCache.get(key);
  if (!gz) {
    gz = zlib.gzipSync(buffer);
    gzipCache.set(key, gz);
  }
  return gz;
}

/** `buffer` gzipped, for `gzip-fly`. */
export const gzip = (buffer) => zlib.gzipSync(buffer);
