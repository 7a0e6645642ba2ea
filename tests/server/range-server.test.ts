/**
 * Tests for range-server.mjs against a real server on 127.0.0.1.
 *
 * Design note: every behaviour is checked over the wire with the platform
 * fetch, except request targets that fetch would normalise before sending
 * (`..`, `%2e%2e`), which go through node:http with the raw path. Fixtures are
 * written to a fresh temporary directory: a 1000-byte file whose byte i is
 * i % 251 (so any misplaced offset shows up as wrong bytes), a static tree
 * with index.html, a secret file beside the mounts for traversal attempts, and
 * a sparse 5 GiB file to prove offsets past 2^32 are served exactly.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { byterangesBoundary, parseByteranges } from '../../web/src/io/multipart.ts';
import { Link, parseCliArgs, parseRange, startRangeServer } from './range-server.mjs';

type Server = Awaited<ReturnType<typeof startRangeServer>>;

const SERVER_SCRIPT = fileURLToPath(new URL('./range-server.mjs', import.meta.url));
const SIZE = 1000;
const BIG_SIZE = 5 * 2 ** 30;
const BIG_OFFSET = 4.5 * 2 ** 30;
const BIG_MARK = Buffer.from('past-four-gibibytes');

let tmp: string;
let dataDir: string;
let staticDir: string;
let server: Server;
let pattern: Buffer;

function rawRequest(base: string, target: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path: target, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

async function bytesOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'range-server-'));
  dataDir = path.join(tmp, 'data');
  staticDir = path.join(tmp, 'static');
  fs.mkdirSync(path.join(dataDir, 'sub'), { recursive: true });
  fs.mkdirSync(path.join(staticDir, 'data'), { recursive: true });
  fs.mkdirSync(path.join(staticDir, 'app'), { recursive: true });
  pattern = Buffer.alloc(SIZE);
  for (let i = 0; i < SIZE; i++) pattern[i] = i % 251;
  fs.writeFileSync(path.join(dataDir, 'file.parquet'), pattern);
  fs.writeFileSync(path.join(dataDir, 'empty.bin'), Buffer.alloc(0));
  fs.writeFileSync(path.join(dataDir, 'sub', 'nested.arrow'), 'nested');
  fs.writeFileSync(path.join(dataDir, 'with space.json'), '{"ok":true}');
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>root</title>');
  fs.writeFileSync(path.join(staticDir, 'app', 'index.html'), '<!doctype html><title>app</title>');
  fs.writeFileSync(path.join(staticDir, 'data', 'shadow.txt'), 'shadowed by the /data/ mount');
  for (const name of ['a.js', 'b.mjs', 'c.wasm', 'd.css', 'e.json', 'f.svg', 'g.png', 'h.arrow', 'i.unknownext']) {
    fs.writeFileSync(path.join(staticDir, name), name);
  }
  fs.writeFileSync(path.join(tmp, 'secret.txt'), 'top secret');
  const big = fs.openSync(path.join(dataDir, 'big.bin'), 'w');
  fs.ftruncateSync(big, BIG_SIZE);
  fs.writeSync(big, BIG_MARK, 0, BIG_MARK.length, BIG_OFFSET);
  fs.closeSync(big);
  server = await startRangeServer({
    mounts: { '/': staticDir, '/data/': dataDir },
    headers: { 'X-Served-By': 'range-server' },
  });
});

afterAll(async () => {
  await server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => server.resetLog());

describe('startRangeServer', () => {
  it('reports its URL on 127.0.0.1 with the chosen port', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves a full GET with the file headers, CORS and isolation headers', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`);
    expect(res.status).toBe(200);
    expect((await bytesOf(res)).equals(pattern)).toBe(true);
    const h = res.headers;
    expect(h.get('content-length')).toBe(String(SIZE));
    expect(h.get('content-type')).toBe('application/octet-stream');
    expect(h.get('accept-ranges')).toBe('bytes');
    expect(h.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    const stat = fs.statSync(path.join(dataDir, 'file.parquet'));
    expect(h.get('last-modified')).toBe(stat.mtime.toUTCString());
    expect(h.get('cache-control')).toBe('no-store');
    expect(h.get('access-control-allow-origin')).toBe('*');
    expect(h.get('access-control-expose-headers')).toBe(
      'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges',
    );
    expect(h.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(h.get('cross-origin-embedder-policy')).toBe('require-corp');
    expect(h.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(h.get('x-served-by')).toBe('range-server');
    expect(h.get('content-range')).toBeNull();
  });

  it('changes the ETag when the file changes size', async () => {
    const file = path.join(dataDir, 'changing.bin');
    fs.writeFileSync(file, 'abc');
    const first = (await fetch(`${server.url}/data/changing.bin`)).headers.get('etag');
    fs.writeFileSync(file, 'abcd');
    const second = (await fetch(`${server.url}/data/changing.bin`)).headers.get('etag');
    expect(first).not.toBeNull();
    expect(second).not.toBe(first);
  });

  it('serves bytes=a-b as 206 with Content-Range', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=10-19' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 10-19/${SIZE}`);
    expect(res.headers.get('content-length')).toBe('10');
    expect((await bytesOf(res)).equals(pattern.subarray(10, 20))).toBe(true);
  });

  it('clamps the end of bytes=a-b to size-1', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=990-5000' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 990-999/${SIZE}`);
    expect(res.headers.get('content-length')).toBe('10');
    expect((await bytesOf(res)).equals(pattern.subarray(990))).toBe(true);
  });

  it('serves an open-ended bytes=a- to the end of the file', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=900-' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 900-999/${SIZE}`);
    expect((await bytesOf(res)).equals(pattern.subarray(900))).toBe(true);
  });

  it('serves a suffix bytes=-n as the last n bytes', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=-8' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 992-999/${SIZE}`);
    expect(res.headers.get('content-length')).toBe('8');
    expect((await bytesOf(res)).equals(pattern.subarray(992))).toBe(true);
  });

  it('serves a suffix longer than the file as the whole file, still 206', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=-5000' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 0-999/${SIZE}`);
    expect((await bytesOf(res)).equals(pattern)).toBe(true);
  });

  it('answers unsatisfiable ranges with 416 and bytes */total', async () => {
    for (const range of ['bytes=1000-', 'bytes=1000-1010', 'bytes=-0']) {
      const res = await fetch(`${server.url}/data/file.parquet`, {
        headers: { Range: range },
      });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range'), range).toBe(`bytes */${SIZE}`);
      expect((await bytesOf(res)).length).toBe(0);
    }
    const empty = await fetch(`${server.url}/data/empty.bin`, {
      headers: { Range: 'bytes=0-' },
    });
    expect(empty.status).toBe(416);
    expect(empty.headers.get('content-range')).toBe('bytes */0');
  });

  it('answers several ranges with the parts of a multipart/byteranges body, as nginx does', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: 'bytes=0-1, 5-6,900-903' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBeNull();
    const boundary = byterangesBoundary(res.headers.get('content-type'));
    expect(boundary).toBeDefined();
    const body = await bytesOf(res);
    expect(res.headers.get('content-length')).toBe(String(body.length));
    const parts = parseByteranges(new Uint8Array(body), boundary ?? '');
    expect(parts.map((p) => [p.start, p.end, p.total])).toEqual([
      [0, 2, SIZE],
      [5, 7, SIZE],
      [900, 904, SIZE],
    ]);
    for (const part of parts) expect(Buffer.from(part.data).equals(pattern.subarray(part.start, part.end))).toBe(true);
    // The ranges past the end are dropped; none left is 416.
    const past = await fetch(`${server.url}/data/file.parquet`, {
      headers: { Range: `bytes=0-1,${SIZE}-${SIZE + 5}` },
    });
    expect([past.status, past.headers.get('content-range')]).toEqual([206, `bytes 0-1/${SIZE}`]);
    await bytesOf(past);
    const none = await fetch(`${server.url}/data/file.parquet`, { headers: { Range: `bytes=${SIZE}-,${SIZE + 5}-` } });
    expect(none.status).toBe(416);
    await bytesOf(none);
  });

  it('answers several ranges as servers without multipart do, in the hostile modes', async () => {
    const ask = (modes: string) =>
      fetch(`${server.url}/hostile/${modes}/data/file.parquet`, { headers: { Range: 'bytes=0-1,5-6' } });
    const whole = await ask('multi-whole');
    expect(whole.status).toBe(200);
    expect((await bytesOf(whole)).equals(pattern)).toBe(true);
    const first = await ask('multi-first');
    expect([first.status, first.headers.get('content-range')]).toEqual([206, `bytes 0-1/${SIZE}`]);
    expect((await bytesOf(first)).equals(pattern.subarray(0, 2))).toBe(true);
    const bad = await ask('multi-bad');
    const badBody = await bytesOf(bad);
    expect(() =>
      parseByteranges(new Uint8Array(badBody), byterangesBoundary(bad.headers.get('content-type')) ?? ''),
    ).toThrow(/promised|expected/);
    // One range is answered as ever.
    const one = await fetch(`${server.url}/hostile/multi-whole/data/file.parquet`, { headers: { Range: 'bytes=5-6' } });
    expect(one.status).toBe(206);
    await bytesOf(one);
  });

  it('ignores a syntactically invalid Range header', async () => {
    for (const range of ['bytes=20-10', 'items=0-5', 'bytes=abc', 'bytes=-']) {
      const res = await fetch(`${server.url}/data/file.parquet`, {
        headers: { Range: range },
      });
      expect(res.status, range).toBe(200);
      expect((await bytesOf(res)).length, range).toBe(SIZE);
    }
  });

  it('serves ranges beyond 4 GiB exactly', async () => {
    const end = BIG_OFFSET + BIG_MARK.length - 1;
    const res = await fetch(`${server.url}/data/big.bin`, {
      headers: { Range: `bytes=${BIG_OFFSET}-${end}` },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${BIG_OFFSET}-${end}/${BIG_SIZE}`);
    expect((await bytesOf(res)).equals(BIG_MARK)).toBe(true);
    const head = await fetch(`${server.url}/data/big.bin`, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(BIG_SIZE));
    const tail = await fetch(`${server.url}/data/big.bin`, {
      headers: { Range: 'bytes=-4' },
    });
    expect(tail.headers.get('content-range')).toBe(`bytes ${BIG_SIZE - 4}-${BIG_SIZE - 1}/${BIG_SIZE}`);
    expect((await bytesOf(tail)).equals(Buffer.alloc(4))).toBe(true);
  });

  it('answers HEAD with the GET headers and no body', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      method: 'HEAD',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(SIZE));
    expect(res.headers.get('etag')).toMatch(/^"/);
    expect((await bytesOf(res)).length).toBe(0);
    const ranged = await fetch(`${server.url}/data/file.parquet`, {
      method: 'HEAD',
      headers: { Range: 'bytes=0-99' },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-99/${SIZE}`);
    expect(ranged.headers.get('content-length')).toBe('100');
    const entries = server.log.filter((e) => e.method === 'HEAD');
    expect(entries.map((e) => [e.status, e.bytes])).toEqual([
      [200, 0],
      [206, 0],
    ]);
  });

  it('answers an OPTIONS preflight with 204 and logs it', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://example.test',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'range',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'Range, If-Match, If-None-Match, Authorization, Content-Type, X-Test',
    );
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    expect(res.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    expect(server.log).toEqual([
      expect.objectContaining({
        method: 'OPTIONS',
        path: '/data/file.parquet',
        status: 204,
        bytes: 0,
      }),
    ]);
  });

  it('rejects other methods with 405', async () => {
    const res = await fetch(`${server.url}/data/file.parquet`, {
      method: 'POST',
      body: 'x',
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('rejects path traversal with 403', async () => {
    const targets = [
      '/data/../secret.txt',
      '/data/%2e%2e/secret.txt',
      '/data/..%2fsecret.txt',
      '/data/sub/..%2f..%2fsecret.txt',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/data/..%5csecret.txt',
      '/data/%00file.parquet',
    ];
    for (const target of targets) {
      const res = await rawRequest(server.url, target);
      expect(res.status, target).toBe(403);
      expect(res.body).not.toContain('top secret');
    }
  });

  it('picks the longest matching mount prefix', async () => {
    const shadow = await fetch(`${server.url}/data/shadow.txt`);
    expect(shadow.status).toBe(404);
    const nested = await fetch(`${server.url}/data/sub/nested.arrow`);
    expect(await nested.text()).toBe('nested');
    const spaced = await fetch(`${server.url}/data/with%20space.json`);
    expect(await spaced.json()).toEqual({ ok: true });
  });

  it('serves index.html for directories and redirects a directory without a slash', async () => {
    const root = await fetch(`${server.url}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await root.text()).toContain('<title>root</title>');
    const app = await fetch(`${server.url}/app/?x=1`);
    expect(await app.text()).toContain('<title>app</title>');
    const redirect = await fetch(`${server.url}/app?x=1`, {
      redirect: 'manual',
    });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/app/?x=1');
    const missing = await fetch(`${server.url}/nope.html`);
    expect(missing.status).toBe(404);
    const noIndex = await fetch(`${server.url}/data/sub/`);
    expect(noIndex.status).toBe(404);
  });

  it('sends the Content-Type for each known extension', async () => {
    const expected: Record<string, string> = {
      'a.js': 'text/javascript; charset=utf-8',
      'b.mjs': 'text/javascript; charset=utf-8',
      'c.wasm': 'application/wasm',
      'd.css': 'text/css; charset=utf-8',
      'e.json': 'application/json; charset=utf-8',
      'f.svg': 'image/svg+xml',
      'g.png': 'image/png',
      'h.arrow': 'application/octet-stream',
      'i.unknownext': 'application/octet-stream',
    };
    for (const [name, type] of Object.entries(expected)) {
      const res = await fetch(`${server.url}/${name}`);
      expect(res.headers.get('content-type'), name).toBe(type);
      expect(await res.text()).toBe(name);
    }
  });

  it('honours If-Match, If-None-Match and If-Range', async () => {
    const url = `${server.url}/data/file.parquet`;
    const etag = (await fetch(url, { method: 'HEAD' })).headers.get('etag') ?? '';
    expect(
      (
        await fetch(url, {
          headers: { 'If-Match': '"other"', Range: 'bytes=0-1' },
        })
      ).status,
    ).toBe(412);
    expect((await fetch(url, { headers: { 'If-Match': etag, Range: 'bytes=0-1' } })).status).toBe(206);
    expect((await fetch(url, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect((await fetch(url, { headers: { 'If-Range': etag, Range: 'bytes=0-1' } })).status).toBe(206);
    const stale = await fetch(url, {
      headers: { 'If-Range': '"stale"', Range: 'bytes=0-1' },
    });
    expect(stale.status).toBe(200);
    expect((await bytesOf(stale)).length).toBe(SIZE);
  });

  it('logs each request with method, path, range, status, bytes and ms', async () => {
    await bytesOf(
      await fetch(`${server.url}/data/file.parquet?v=1`, {
        headers: { Range: 'bytes=100-149' },
      }),
    );
    await bytesOf(await fetch(`${server.url}/data/file.parquet`));
    await bytesOf(
      await fetch(`${server.url}/data/file.parquet`, {
        headers: { Range: 'bytes=5000-' },
      }),
    );
    await bytesOf(await fetch(`${server.url}/missing.bin`));
    expect(server.log.map(({ ms, ifMatch, ...rest }) => rest)).toEqual([
      {
        method: 'GET',
        path: '/data/file.parquet?v=1',
        range: 'bytes=100-149',
        authorization: null,
        status: 206,
        bytes: 50,
      },
      {
        method: 'GET',
        path: '/data/file.parquet',
        range: null,
        authorization: null,
        status: 200,
        bytes: SIZE,
      },
      {
        method: 'GET',
        path: '/data/file.parquet',
        range: 'bytes=5000-',
        authorization: null,
        status: 416,
        bytes: 0,
      },
      {
        method: 'GET',
        path: '/missing.bin',
        range: null,
        authorization: null,
        status: 404,
        bytes: 10,
      },
    ]);
    for (const entry of server.log) {
      expect(entry.ms).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(entry.ms)).toBe(true);
    }
    server.resetLog();
    expect(server.log).toHaveLength(0);
  });

  it('delays each response by latencyMs', async () => {
    const latencyMs = 120;
    const slow = await startRangeServer({
      mounts: { '/': dataDir },
      latencyMs,
    });
    try {
      const t0 = performance.now();
      const res = await fetch(`${slow.url}/file.parquet`, {
        headers: { Range: 'bytes=0-0' },
      });
      await res.arrayBuffer();
      expect(performance.now() - t0).toBeGreaterThanOrEqual(latencyMs);
      const t1 = performance.now();
      await fetch(`${slow.url}/file.parquet`, { method: 'OPTIONS' });
      expect(performance.now() - t1).toBeGreaterThanOrEqual(latencyMs);
      // Timers may fire up to 1 ms early against performance.now().
      expect(slow.log[0]?.ms).toBeGreaterThanOrEqual(latencyMs - 1);
    } finally {
      await slow.close();
    }
  });

  it('caps the bytes per second of all responses together at bandwidthMbps', async () => {
    // 16 Mbit/s = 2,000 bytes per ms: two concurrent 200,000-byte bodies (several chunks each)
    // share the link, so the pair takes at least 200 ms (a lower bound: timers never fire before
    // their time is due), and each body arrives whole and exact.
    const body = Buffer.alloc(400_000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 256;
    const dir = fs.mkdtempSync(path.join(tmp, 'link-'));
    fs.writeFileSync(path.join(dir, 'big.bin'), body);
    const capped = await startRangeServer({ mounts: { '/': dir }, bandwidthMbps: 16 });
    try {
      const t0 = performance.now();
      const [a, b] = await Promise.all(
        [0, 200_000].map(async (start) => {
          const res = await fetch(`${capped.url}/big.bin`, {
            headers: { Range: `bytes=${start}-${start + 199_999}` },
          });
          expect(res.status).toBe(206);
          return bytesOf(res);
        }),
      );
      expect(performance.now() - t0).toBeGreaterThanOrEqual(199);
      expect(a.equals(body.subarray(0, 200_000))).toBe(true);
      expect(b.equals(body.subarray(200_000, 400_000))).toBe(true);
    } finally {
      await capped.close();
    }
    expect(() => new Link(0)).toThrow(/bandwidth must be > 0/);
    expect(parseCliArgs(['--mount', `/=${dataDir}`, '--bandwidth', '50']).bandwidthMbps).toBe(50);
    expect(() => parseCliArgs(['--mount', `/=${dataDir}`, '--bandwidth', '-1'])).toThrow(/--bandwidth/);
  });

  it('refuses to start without mounts or with a missing directory', async () => {
    await expect(startRangeServer({ mounts: {} })).rejects.toThrow(/at least one mount/);
    await expect(startRangeServer({ mounts: { '/': path.join(tmp, 'no-such-dir') } })).rejects.toThrow();
  });
});

describe('parseRange', () => {
  it('handles offsets past 2^32 and 2^53-safe sizes', () => {
    expect(parseRange('bytes=4294967296-4294967305', BIG_SIZE)).toEqual({
      kind: 'range',
      start: 4294967296,
      end: 4294967305,
    });
    expect(parseRange('bytes=-10', 2 ** 40)).toEqual({
      kind: 'range',
      start: 2 ** 40 - 10,
      end: 2 ** 40 - 1,
    });
    expect(parseRange('bytes=0-99999999999999999999', 2 ** 33)).toEqual({
      kind: 'range',
      start: 0,
      end: 2 ** 33 - 1,
    });
  });

  it('classifies the header forms', () => {
    expect(parseRange(null, 10)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=0-0', 10)).toEqual({
      kind: 'range',
      start: 0,
      end: 0,
    });
    expect(parseRange('bytes=9-', 10)).toEqual({
      kind: 'range',
      start: 9,
      end: 9,
    });
    expect(parseRange('bytes=10-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=1-2,4-5', 10)).toEqual({
      kind: 'multi',
      ranges: [
        { kind: 'range', start: 1, end: 2 },
        { kind: 'range', start: 4, end: 5 },
      ],
    });
    expect(parseRange('bytes=1-2,20-30', 10)).toEqual({ kind: 'range', start: 1, end: 2 });
    expect(parseRange('bytes=20-30,40-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=1-2,abc', 10)).toEqual({ kind: 'full' });
  });
});

describe('CLI', () => {
  it('prints the URL, serves the mounts and exits cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [SERVER_SCRIPT, '--mount', `/=${staticDir}`, '--mount', `/data/=${dataDir}`, '--port', '0', '--latency', '5'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m?.[1]) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`server exited early with ${code}`)));
      });
      const res = await fetch(`${url}/data/file.parquet`, {
        headers: { Range: 'bytes=1-3' },
      });
      expect(res.status).toBe(206);
      expect((await bytesOf(res)).equals(pattern.subarray(1, 4))).toBe(true);
      expect(await (await fetch(`${url}/`)).text()).toContain('<title>root</title>');
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('exits with status 2 on a bad argument', async () => {
    const child = spawn(process.execPath, [SERVER_SCRIPT, '--bogus'], {
      stdio: 'ignore',
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(2);
  });
});
