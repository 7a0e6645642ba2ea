/**
 * range-server — a small static HTTP server that speaks byte ranges, for the
 * browser tests, the benchmarks and the explorer.
 *
 * Design note
 * - Plain Node (node:http, node:fs), no dependencies and no build step, so the
 *   same file runs under vitest, Playwright's webServer and `node` directly.
 * - `mounts` maps URL prefixes to directories; the longest matching prefix
 *   wins. The path below the prefix is percent-decoded once and then checked
 *   segment by segment: any `..` segment, a NUL byte, a backslash, or a
 *   resolved path outside the mount root is answered with 403 before the file
 *   system is touched. A directory URL ending in `/` serves its index.html; a
 *   directory URL without the slash is redirected (301) to the slashed form.
 * - Ranges follow RFC 9110 §14: one `bytes=a-b`, `bytes=a-` or `bytes=-n`
 *   range gives 206 with `Content-Range: bytes start-end/total` (end clamped to
 *   size-1); a satisfiable-looking but out-of-file range gives 416 with
 *   `Content-Range: bytes *\/total`; several ranges (a comma) are answered as
 *   nginx does, each satisfiable one a part of a `multipart/byteranges` body in
 *   the order asked (none satisfiable: 416; the hostile modes `multi-whole` and
 *   `multi-first` answer as servers without it do); a syntactically invalid
 *   Range header is ignored (200). `If-Range` that does not match the current ETag
 *   or date also falls back to the full 200 body. `If-Match` failures give 412
 *   and `If-None-Match` matches give 304, so readers can pin a file version.
 * - Sizes and offsets are plain JS numbers (exact up to 2^53), never 32-bit
 *   arithmetic, so files larger than 4 GiB are served correctly; bodies are
 *   streamed with fs.createReadStream({ start, end }).
 * - Every response carries CORS headers (any origin, range headers exposed),
 *   cross-origin-isolation headers (COOP/COEP/CORP, for SharedArrayBuffer in
 *   the pages it serves), `Cache-Control: no-store`, `Accept-Ranges: bytes`.
 * - `latencyMs` delays the start of every response, to simulate a network
 *   round trip. `bandwidthMbps` caps the bytes of file bodies per second
 *   across all responses together, as one shared link would ({@link Link}):
 *   with 20 ms and 200 Mbit/s, or 80 ms and 50 Mbit/s, a scan meets what a
 *   real network costs (round trips, then bytes). Every request, OPTIONS included, is appended to `log` as
 *   `{ method, path, range, status, bytes, ms }`; the entry is pushed once the
 *   last body byte has been handed to the socket (before the response is
 *   ended), so a client that has read the whole body always finds its entry;
 *   a response the client closed early is logged with `aborted: true`.
 * - `/hostile/<modes>/<path>` serves `<path>` the way a misbehaving server
 *   would (Range ignored, HEAD refused, headers not exposed, error statuses,
 *   503s, cut connections, stalls, gzip on ranges, a file replaced mid-read):
 *   see hostile.mjs.
 * - CLI: `node tests/server/range-server.mjs --mount /=DIR --mount /data/=DIR
 *   [--port N] [--host H] [--latency MS] [--bandwidth MBIT]` prints `listening on URL` and runs
 *   until SIGINT or SIGTERM.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { gzip, gzippedFile, HostileCounters, parseHostile } from './hostile.mjs';

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
  '.parquet': 'application/octet-stream',
  '.arrow': 'application/octet-stream',
};

const COMMON_HEADERS = {
  'Accept-Ranges': 'bytes',
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

const PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Headers': 'Range, If-Match, If-None-Match, Authorization, Content-Type, X-Test',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Max-Age': '600',
};

/** Content-Type for a file name; unknown extensions are opaque bytes. */
export function contentTypeFor(fileName) {
  return CONTENT_TYPES[path.extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Interpret a Range header against a body of `size` bytes.
 * Returns { kind: 'full' } (serve 200), { kind: 'range', start, end } (206,
 * end inclusive) or { kind: 'unsatisfiable' } (416).
 */
export function parseRange(header, size) {
  if (header == null) return { kind: 'full' };
  const value = header.trim();
  const eq = value.indexOf('=');
  if (eq < 0 || value.slice(0, eq).trim().toLowerCase() !== 'bytes') return { kind: 'full' };
  const spec = value.slice(eq + 1).trim();
  if (spec.includes(',')) {
    const each = spec.split(',').map((one) => parseRange(`bytes=${one}`, size));
    if (each.some((one) => one.kind === 'full')) return { kind: 'full' };
    const ranges = each.filter((one) => one.kind === 'range');
    if (ranges.length === 0) return { kind: 'unsatisfiable' };
    return ranges.length === 1 ? ranges[0] : { kind: 'multi', ranges };
  }
  const m = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'full' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (last < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: Math.min(last, size - 1) };
}

function etagOf(stat) {
  return `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

function listMatches(header, etag) {
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

/** Normalise the mounts object into [{ prefix, root }] sorted longest first. */
function normaliseMounts(mounts) {
  const list = Object.entries(mounts ?? {}).map(([prefix, dir]) => {
    if (!prefix.startsWith('/')) throw new Error(`mount prefix must start with '/': ${prefix}`);
    const root = path.resolve(dir);
    if (!fs.statSync(root).isDirectory()) throw new Error(`mount ${prefix} is not a directory: ${root}`);
    return { prefix: prefix.endsWith('/') ? prefix : `${prefix}/`, root };
  });
  if (list.length === 0) throw new Error('startRangeServer needs at least one mount');
  return list.sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * Map a raw request target to a file path.
 * Returns { file } or { status } (400 malformed, 403 forbidden, 404 unmounted).
 */
function resolveTarget(rawUrl, mounts) {
  const rawPath = rawUrl.split(/[?#]/, 1)[0];
  let decoded;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return { status: 400 };
  }
  if (!decoded.startsWith('/')) return { status: 400 };
  const mount = mounts.find((m) => decoded.startsWith(m.prefix));
  if (!mount) return { status: 404 };
  const rest = decoded.slice(mount.prefix.length);
  if (rest.includes('\0') || rest.includes('\\')) return { status: 403 };
  const segments = rest.split('/');
  if (segments.some((s) => s === '..' || s === '.')) return { status: 403 };
  const file = path.resolve(mount.root, ...segments.filter((s) => s !== ''));
  if (file !== mount.root && !file.startsWith(mount.root + path.sep)) return { status: 403 };
  return { file, pathname: decoded };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A `multipart/byteranges` answer of `ranges` (inclusive ends) of a `size`-byte representation of
 * `type` (RFC 9110 §14.6, as nginx writes it): its boundary, its length, and its bytes — streamed
 * from the file part by part as nginx does (`stream`), or built in memory from `slice(start,
 * length)` (`body`) for the modes that change or cut them.
 */
function byteranges(ranges, size, type) {
  const boundary = `skim${Math.random().toString(16).slice(2, 14)}`;
  const heads = ranges.map(({ start, end }) =>
    Buffer.from(`\r\n--${boundary}\r\nContent-Type: ${type}\r\nContent-Range: bytes ${start}-${end}/${size}\r\n\r\n`),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = ranges.reduce((n, { start, end }, i) => n + heads[i].length + (end - start + 1), tail.length);
  return {
    boundary,
    length,
    async body(slice) {
      const pieces = [];
      for (const [i, { start, end }] of ranges.entries()) {
        pieces.push(heads[i], Buffer.from(await slice(start, end - start + 1)));
      }
      return Buffer.concat([...pieces, tail]);
    },
    async *stream(file) {
      const handle = await fs.promises.open(file, 'r');
      try {
        for (const [i, { start, end }] of ranges.entries()) {
          yield heads[i];
          for (let at = start; at <= end; at += 65536) {
            const piece = Buffer.alloc(Math.min(65536, end - at + 1));
            const { bytesRead } = await handle.read(piece, 0, piece.length, at);
            yield piece.subarray(0, bytesRead);
          }
        }
        yield tail;
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * The request log's bookkeeping, shared with virtual-file.mjs: an entry for `req` (with `extra`
 * fields), pushed to `log` once by `record()` — at the last body byte, or when the connection
 * closes, marked `aborted` if the client closed it before the response finished.
 */
export function trackRequest(req, res, log, started, extra = {}) {
  const entry = {
    method: req.method ?? '',
    path: req.url ?? '',
    range: req.headers.range ?? null,
    ...extra,
    status: 0,
    bytes: 0,
    ms: 0,
  };
  let logged = false;
  const record = () => {
    if (logged) return;
    logged = true;
    entry.status = res.statusCode;
    entry.ms = performance.now() - started;
    log.push(entry);
  };
  res.on('close', () => {
    if (!logged && !res.writableFinished) entry.aborted = true;
    record();
  });
  return { entry, record };
}

/** `length` bytes of `file` from `start`. */
async function readSlice(file, start, length) {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Start the server. Resolves once it is listening.
 * @param {{ mounts: Record<string, string>, host?: string, port?: number,
 *   latencyMs?: number, bandwidthMbps?: number, headers?: Record<string, string> }} options
 * @returns {Promise<{ url: string, log: Array<{ method: string, path: string,
 *   range: string | null, status: number, bytes: number, ms: number }>,
 *   resetLog: () => void, close: () => Promise<void> }>}
 */
export async function startRangeServer({
  mounts,
  host = '127.0.0.1',
  port = 0,
  latencyMs = 0,
  bandwidthMbps = 0,
  headers = {},
}) {
  const mountList = normaliseMounts(mounts);
  const link = bandwidthMbps > 0 ? new Link(bandwidthMbps) : null;
  const log = [];
  const counters = new HostileCounters();

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) {
        res.writeHead(500, {
          ...COMMON_HEADERS,
          ...headers,
          'Content-Type': 'text/plain',
        });
        res.end(String(err?.message ?? err));
      } else {
        res.destroy(err);
      }
    });
  });

  let open = 0;

  async function handle(req, res) {
    const started = performance.now();
    open += 1;
    res.on('close', () => {
      open -= 1;
    });
    let hostile = null;
    try {
      hostile = parseHostile(req.url ?? '');
    } catch (error) {
      res.writeHead(400, { ...COMMON_HEADERS, 'Content-Type': 'text/plain' });
      res.end(`${error.message}\n`);
      return;
    }
    const modes = hostile?.modes ?? {};
    const common = modes['no-expose']
      ? Object.fromEntries(Object.entries(COMMON_HEADERS).filter(([name]) => name !== 'Access-Control-Expose-Headers'))
      : COMMON_HEADERS;
    const { entry, record } = trackRequest(req, res, log, started, {
      authorization: req.headers.authorization ?? null,
      ifMatch: req.headers['if-match'] ?? null,
    });

    const reply = (status, extra = {}, body = '') => {
      const payload = req.method === 'HEAD' ? '' : body;
      const length = status === 204 || status === 304 ? {} : { 'Content-Length': String(Buffer.byteLength(body)) };
      res.writeHead(status, {
        ...common,
        ...headers,
        ...length,
        ...extra,
      });
      entry.bytes = Buffer.byteLength(payload);
      record();
      res.end(payload);
    };

    if (latencyMs > 0) await sleep(latencyMs);

    if (req.method === 'OPTIONS') return reply(204, PREFLIGHT_HEADERS);
    if (req.method === 'HEAD' && modes['no-head']) {
      return reply(405, { Allow: 'GET, OPTIONS', 'Content-Type': 'text/plain' }, 'HEAD is not allowed\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return reply(405, { Allow: 'GET, HEAD, OPTIONS', 'Content-Type': 'text/plain' }, 'method not allowed\n');
    }

    // The number of this GET among the ones the modes apply to (0: they do not apply).
    const getNumber = req.method === 'GET' && hostile ? counters.next(entry.path) - (modes.after ?? 0) : 0;
    if (getNumber <= 0) {
      for (const mode of ['status', 'fail', 'drop', 'slowMs', 'stall']) delete modes[mode];
    }
    if (modes.status)
      return reply(modes.status, { 'Content-Type': 'text/plain' }, `${http.STATUS_CODES[modes.status]}\n`);
    if (modes.fail && getNumber <= modes.fail.count) {
      return reply(modes.fail.status, { 'Retry-After': '0', 'Content-Type': 'text/plain' }, 'try again\n');
    }
    if (modes.slowMs) await sleep(modes.slowMs);

    const target = resolveTarget(hostile?.url ?? entry.path, mountList);
    if (target.status) {
      return reply(target.status, { 'Content-Type': 'text/plain' }, `${http.STATUS_CODES[target.status]}\n`);
    }
    let file = target.file;
    let stat = await fs.promises.stat(file).catch(() => null);
    if (stat?.isDirectory()) {
      if (!target.pathname.endsWith('/')) {
        const query = entry.path.slice(entry.path.split(/[?#]/, 1)[0].length);
        return reply(301, {
          Location: `${entry.path.split(/[?#]/, 1)[0]}/${query}`,
        });
      }
      file = path.join(file, 'index.html');
      stat = await fs.promises.stat(file).catch(() => null);
    }
    if (!stat?.isFile()) return reply(404, { 'Content-Type': 'text/plain' }, 'Not Found\n');

    const changed = modes.changeAfter !== undefined && getNumber > modes.changeAfter;
    let size = stat.size;
    const etag = changed ? `"${etagOf(stat).slice(1, -1)}-v2"` : etagOf(stat);
    const lastModified = new Date(stat.mtimeMs + (changed ? 1000 : 0)).toUTCString();
    // gzip-range: the representation is the gzipped file, ranges are ranges of it.
    const gzBody = modes['gzip-range'] ? gzippedFile(file, await fs.promises.readFile(file), etag) : null;
    if (gzBody) size = gzBody.length;
    const fileHeaders = {
      ETag: etag,
      'Last-Modified': lastModified,
      'Content-Type': contentTypeFor(file),
    };

    const ifMatch = req.headers['if-match'];
    if (ifMatch && !listMatches(ifMatch, etag)) return reply(412, fileHeaders);
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch && listMatches(ifNoneMatch, etag)) return reply(304, { ETag: etag, 'Last-Modified': lastModified });

    let rangeHeader = modes['no-range'] ? null : (req.headers.range ?? null);
    const ifRange = req.headers['if-range'];
    if (rangeHeader && ifRange) {
      const fresh = ifRange.startsWith('"') || ifRange.startsWith('W/') ? ifRange === etag : ifRange === lastModified;
      if (!fresh) rangeHeader = null;
    }
    let range = parseRange(rangeHeader, size);
    if (range.kind === 'multi' && modes['multi-whole']) range = { kind: 'full' };
    if (range.kind === 'multi' && modes['multi-first']) range = range.ranges[0];
    if (range.kind === 'unsatisfiable') {
      return reply(416, {
        ...fileHeaders,
        'Content-Range': `bytes */${size}`,
        'Content-Type': 'text/plain',
      });
    }

    // Several ranges: the parts of a multipart body, streamed from the file; built in memory where
    // a mode changes or cuts the body.
    const multi = range.kind === 'multi' ? byteranges(range.ranges, size, fileHeaders['Content-Type']) : null;
    const built =
      multi && (gzBody || modes['gzip-fly'] || modes['multi-bad'] || modes.stall || modes.drop)
        ? await multi.body((at, length) => (gzBody ? gzBody.subarray(at, at + length) : readSlice(file, at, length)))
        : null;
    const multiBody = built && modes['multi-bad'] ? built.subarray(0, built.length - 40) : built;
    const start = range.kind === 'range' ? range.start : 0;
    const end = multi ? (multiBody?.length ?? multi.length) - 1 : range.kind === 'range' ? range.end : size - 1;
    const length = end - start + 1;
    const status = range.kind === 'full' ? 200 : 206;
    const bodyHeaders = { ...fileHeaders, 'Content-Length': String(length) };
    if (multi) bodyHeaders['Content-Type'] = `multipart/byteranges; boundary=${multi.boundary}`;
    else if (status === 206) bodyHeaders['Content-Range'] = `bytes ${start}-${end}/${size}`;
    /** `length` bytes of the body from `at` (of a file's, or of the multipart body built). */
    const bodySlice = (at, length) => (multiBody ? multiBody.subarray(at, at + length) : readSlice(file, at, length));

    if (req.method === 'HEAD' || length === 0) {
      res.writeHead(status, { ...common, ...headers, ...bodyHeaders });
      record();
      res.end();
      return;
    }

    if (gzBody || modes['gzip-fly']) {
      // gzip-range: the parts are ranges of the gzip bytes already (a multipart body as is).
      const gz = multiBody ?? gzBody?.subarray(start, end + 1);
      const slice = gz ?? gzip(await bodySlice(start, length));
      bodyHeaders['Content-Encoding'] = 'gzip';
      bodyHeaders['Content-Length'] = String(slice.length);
      res.writeHead(status, { ...common, ...headers, ...bodyHeaders });
      entry.bytes = slice.length;
      record();
      res.end(slice);
      return;
    }

    const cutAt = modes.stall || (modes.drop && getNumber <= modes.drop) ? Math.floor(length / 2) : null;
    if (cutAt !== null) {
      res.writeHead(status, { ...common, ...headers, ...bodyHeaders });
      const half = await bodySlice(start, cutAt);
      entry.bytes = half.length;
      res.write(half);
      // drop: cut the connection; stall: leave it open until the client gives up.
      if (!modes.stall) setTimeout(() => res.destroy(), 20);
      return;
    }

    res.writeHead(status, { ...common, ...headers, ...bodyHeaders });
    const stream = multi ? Readable.from(multi.stream(file)) : fs.createReadStream(file, { start, end });
    res.on('close', () => stream.destroy());
    res.on('drain', () => stream.resume());
    /** A chunk held back by the link: written when this settles. */
    let held = null;
    /** Bytes handed to the socket: the entry is logged before the last of them (see the doc). */
    let sent = 0;
    const write = (chunk) => {
      sent += chunk.length;
      if (sent >= length) record();
      return res.write(chunk);
    };
    stream.on('data', (chunk) => {
      entry.bytes += chunk.length;
      const waitMs = link?.reserve(chunk.length) ?? 0;
      if (waitMs <= 0) {
        if (!write(chunk)) stream.pause();
        return;
      }
      // The link is busy: hold this chunk (and the stream) until the link has carried it. The
      // stream may end meanwhile (this was its last chunk): the response ends after the write.
      stream.pause();
      held = new Promise((resolve) =>
        setTimeout(() => {
          held = null;
          resolve();
          if (!res.destroyed && write(chunk)) stream.resume();
        }, waitMs),
      );
    });
    stream.on('end', async () => {
      if (held !== null) await held;
      record();
      res.end();
    });
    stream.on('error', (err) => {
      record();
      res.destroy(err);
    });
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const hostPart = address.family === 'IPv6' || address.family === 6 ? `[${address.address}]` : address.address;

  return {
    url: `http://${hostPart}:${address.port}`,
    log,
    resetLog() {
      log.length = 0;
    },
    /** Responses started and not yet finished or closed (requests still open). */
    get openRequests() {
      return open;
    },
    close() {
      return new Promise((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/**
 * One shared link of a fixed capacity, first come first served: a chunk is handed to the socket
 * when the link has carried it and every chunk reserved before it (so concurrent responses share
 * the bandwidth, and the total rate never exceeds it).
 */
export class Link {
  /** @param {number} mbps megabits per second */
  constructor(mbps) {
    if (!Number.isFinite(mbps) || mbps <= 0) throw new Error(`bandwidth must be > 0 Mbit/s, got ${mbps}`);
    this.bytesPerMs = (mbps * 1e6) / 8 / 1000;
    this.freeAt = 0;
  }

  /** Reserves the link for `bytes`; the milliseconds until they have crossed it. */
  reserve(bytes) {
    const now = performance.now();
    this.freeAt = Math.max(this.freeAt, now) + bytes / this.bytesPerMs;
    return this.freeAt - now;
  }
}

/** Parse CLI arguments into startRangeServer options. */
export function parseCliArgs(argv) {
  const options = { mounts: {}, host: '127.0.0.1', port: 0, latencyMs: 0, bandwidthMbps: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] =
      arg.includes('=') && arg.startsWith('--')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--mount': {
        const spec = value();
        const eq = spec.indexOf('=');
        if (eq <= 0) throw new Error(`--mount expects PREFIX=DIR, got ${spec}`);
        options.mounts[spec.slice(0, eq)] = path.resolve(spec.slice(eq + 1));
        break;
      }
      case '--port':
        options.port = Number(value());
        break;
      case '--host':
        options.host = value();
        break;
      case '--latency':
        options.latencyMs = Number(value());
        break;
      case '--bandwidth':
        options.bandwidthMbps = Number(value());
        break;
      default:
        throw new Error(`unknown argument: ${arg}`);
    }
  }
  if (!Number.isInteger(options.port) || options.port < 0) throw new Error('--port must be a non-negative integer');
  if (!Number.isFinite(options.latencyMs) || options.latencyMs < 0) throw new Error('--latency must be >= 0');
  if (!Number.isFinite(options.bandwidthMbps) || options.bandwidthMbps < 0) {
    throw new Error('--bandwidth must be >= 0 (Mbit/s; 0: no cap)');
  }
  return options;
}

async function main() {
  let options;
  try {
    options = parseCliArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`range-server: ${err.message}`);
    console.error(
      'usage: node tests/server/range-server.mjs --mount /=DIR [--mount /data/=DIR] [--port N] [--host H] [--latency MS] [--bandwidth MBIT]',
    );
    process.exit(2);
  }
  const server = await startRangeServer(options);
  console.log(`listening on ${server.url}`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  await main();
}
