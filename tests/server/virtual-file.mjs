/**
 * virtual-file — an HTTP server for Parquet files larger than 4 GiB that exist only as a
 * template, for the big-file browser tests.
 *
 * Design note
 * - A template (`crate/datagen` `big-template --out DIR`: `template.json` + `template.bin`)
 *   describes a virtual file: a 4-byte head, `copies` byte-identical copies of one row group of
 *   `groupLen` bytes from `groupStart`, then the footer. The row group is a list of segments,
 *   each either stored in `template.bin` or a run of zeros. {@link loadTemplate} reads it and
 *   checks that the pieces tile the file exactly.
 * - Offsets are plain JS numbers (exact up to 2^53) and only `+ - * /`, `Math.floor` and
 *   comparisons touch them: no `|`, `>>`, `>>>` or typed-array indexes on file positions, which
 *   would wrap at 2^31 or 2^32. Bodies are generated in chunks of at most 1 MiB, streamed with
 *   backpressure, so a 5 GiB `200` costs no memory (and stops when the client goes away).
 * - The same conventions as range-server.mjs: one `bytes=a-b`, `bytes=a-` or `bytes=-n` range
 *   (its `parseRange`) gives 206 with `Content-Range`, an unsatisfiable one 416, none (or several)
 *   the whole body as 200; HEAD, OPTIONS preflights, `If-Match` (412) and `If-None-Match` (304)
 *   against a fixed ETag; CORS with the range headers exposed, COOP/COEP/CORP, `no-store`.
 * - Every request is logged as `{ method, path, range, status, bytes, ms, start, end }` (`start`
 *   and `end`: the half-open byte span served, null when none), pushed before the response ends,
 *   so a test can assert which bytes of which copy were asked for.
 * - `startVirtualFileServer({ files: { '/big.parquet': DIR } })` serves each template at its
 *   path; it is its own origin, so the page reads it cross-origin, as from a CDN.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { parseRange, trackRequest } from './range-server.mjs';

/** The manifest format this server understands (crate/datagen/src/big.rs `FORMAT`). */
export const TEMPLATE_FORMAT = 'parquet-skim big-file template 1';

/** Largest chunk of a body generated at once. */
const CHUNK_BYTES = 1 << 20;

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
  'Access-Control-Allow-Headers': 'Range, If-Match, If-None-Match, Authorization, Content-Type',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Max-Age': '600',
};

/** A fixed date: the virtual file never changes. */
const LAST_MODIFIED = new Date(Date.UTC(2026, 0, 1)).toUTCString();

/**
 * Reads the template in `dir` and checks that its pieces tile the virtual file.
 * @param {string} dir
 */
export async function loadTemplate(dir) {
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'template.json'), 'utf8'));
  if (manifest.format !== TEMPLATE_FORMAT) {
    throw new Error(`${dir}: expected a template of format '${TEMPLATE_FORMAT}', got '${manifest.format}'`);
  }
  const bin = await fs.readFile(path.join(dir, 'template.bin'));
  const { head, segments, footer, groupStart, groupLen, copies, footerStart, fileLen } = manifest;
  const stored = (piece) => piece.bin >= 0 && piece.bin + piece.len <= bin.length;
  let at = 0;
  for (const s of segments) {
    if (s.at !== at || s.len <= 0 || !(s.zeros === true || stored(s))) throw new Error(`${dir}: bad segment at ${at}`);
    at += s.len;
  }
  if (
    head.len !== groupStart ||
    !stored(head) ||
    at !== groupLen ||
    footerStart !== groupStart + copies * groupLen ||
    !stored(footer) ||
    fileLen !== footerStart + footer.len ||
    !Number.isSafeInteger(fileLen)
  ) {
    throw new Error(`${dir}: the template's pieces do not tile a ${fileLen}-byte file`);
  }
  return { manifest, bin, size: fileLen, etag: `"virtual-${fileLen.toString(16)}-${bin.length.toString(16)}"` };
}

/**
 * The bytes `start..end` (half-open) of the virtual file, as Buffers of at most 1 MiB.
 * @param {{ manifest: any, bin: Buffer }} template
 * @param {number} start
 * @param {number} end
 * @returns {Generator<Buffer>}
 */
export function* virtualBytes(template, start, end) {
  const { manifest, bin } = template;
  const { head, segments, footer, groupStart, groupLen, footerStart } = manifest;
  const zeros = Buffer.alloc(CHUNK_BYTES);
  let position = start;
  while (position < end) {
    const left = Math.min(end - position, CHUNK_BYTES);
    let chunk;
    if (position < groupStart) {
      const n = Math.min(left, groupStart - position);
      chunk = bin.subarray(head.bin + position, head.bin + position + n);
    } else if (position < footerStart) {
      const copy = Math.floor((position - groupStart) / groupLen);
      const local = position - groupStart - copy * groupLen;
      // Segments are few (tens): a linear search is clear and cheap.
      const segment = segments.find((s) => local < s.at + s.len);
      const into = local - segment.at;
      const n = Math.min(left, segment.len - into);
      chunk = segment.zeros ? zeros.subarray(0, n) : bin.subarray(segment.bin + into, segment.bin + into + n);
    } else {
      const into = position - footerStart;
      const n = Math.min(left, footer.len - into);
      chunk = bin.subarray(footer.bin + into, footer.bin + into + n);
    }
    if (chunk.length === 0) throw new Error(`no bytes at ${position} of the virtual file`);
    yield chunk;
    position += chunk.length;
  }
}

/**
 * Starts a server for virtual files. Resolves once it is listening.
 * @param {{ files: Record<string, string>, host?: string, port?: number, latencyMs?: number }} options
 */
export async function startVirtualFileServer({ files, host = '127.0.0.1', port = 0, latencyMs = 0 }) {
  const templates = new Map();
  for (const [urlPath, dir] of Object.entries(files)) templates.set(urlPath, await loadTemplate(dir));
  const log = [];

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (res.headersSent) res.destroy(error);
      else {
        res.writeHead(500, { ...COMMON_HEADERS, 'Content-Type': 'text/plain' });
        res.end(String(error?.message ?? error));
      }
    });
  });

  async function handle(req, res) {
    const started = performance.now();
    const { entry, record } = trackRequest(req, res, log, started, { start: null, end: null });
    const reply = (status, headers = {}, body = '') => {
      res.writeHead(status, { ...COMMON_HEADERS, 'Content-Length': String(Buffer.byteLength(body)), ...headers });
      if (req.method !== 'HEAD') entry.bytes = Buffer.byteLength(body);
      record();
      res.end(req.method === 'HEAD' ? '' : body);
    };

    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...COMMON_HEADERS, ...PREFLIGHT_HEADERS });
      record();
      res.end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, { Allow: 'GET, HEAD, OPTIONS' });
    const template = templates.get(entry.path.split(/[?#]/, 1)[0]);
    if (template === undefined) return reply(404, { 'Content-Type': 'text/plain' }, 'Not Found\n');

    const { size, etag } = template;
    const fileHeaders = { ETag: etag, 'Last-Modified': LAST_MODIFIED, 'Content-Type': 'application/octet-stream' };
    const ifMatch = req.headers['if-match'];
    if (ifMatch && !ifMatch.split(',').some((t) => t.trim() === '*' || t.trim() === etag)) {
      return reply(412, fileHeaders);
    }
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
      res.writeHead(304, { ...COMMON_HEADERS, ETag: etag });
      record();
      res.end();
      return;
    }
    const range = parseRange(req.headers.range ?? null, size);
    if (range.kind === 'unsatisfiable') {
      return reply(416, { ...fileHeaders, 'Content-Range': `bytes */${size}`, 'Content-Type': 'text/plain' });
    }
    const start = range.kind === 'range' ? range.start : 0;
    const last = range.kind === 'range' ? range.end : size - 1;
    const headers = { ...COMMON_HEADERS, ...fileHeaders, 'Content-Length': String(last - start + 1) };
    if (range.kind === 'range') headers['Content-Range'] = `bytes ${start}-${last}/${size}`;
    entry.start = start;
    entry.end = last + 1;
    res.writeHead(range.kind === 'range' ? 206 : 200, headers);
    if (req.method === 'HEAD') {
      record();
      res.end();
      return;
    }
    for (const chunk of virtualBytes(template, start, last + 1)) {
      if (res.destroyed) return;
      entry.bytes += chunk.length;
      if (!res.write(chunk)) {
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      }
    }
    record();
    res.end();
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    url: `http://${address.address}:${address.port}`,
    log,
    resetLog() {
      log.length = 0;
    },
    close() {
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
