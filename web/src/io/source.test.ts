/**
 * The open's tail read against servers that answer the suffix form the ways real ones do (the
 * real servers themselves are in tests/browser/servers.spec.ts): what was requested, in order.
 */

import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRangeServer } from '../../../tests/server/range-server.mjs';
import type { HttpOptions } from './http.js';
import { HttpSource, LINK_SAMPLE_BYTES, LINK_WINDOW_BYTES, LinkMeter, looksLikeHtml } from './source.js';

const FILE = new Uint8Array(Array.from({ length: 10_000 }, (_, i) => i % 251));
FILE.set([80, 65, 82, 49], FILE.length - 4); // ends in PAR1
/** Large enough for its reads to measure the link (`LINK_SAMPLE_BYTES`). */
const BIG = new Uint8Array(1 << 20);
BIG.set([80, 65, 82, 49], BIG.length - 4);

type Mode = 'correct' | 'prefix' | 'refuse-416' | 'refuse-500' | 'ignore' | 'html' | 'big';
let server: http.Server;
let base: string;
const seen: string[] = [];

function serve(mode: Mode, req: http.IncomingMessage, res: http.ServerResponse): void {
  const range = req.headers.range ?? '';
  seen.push(range);
  if (mode === 'html') {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': '15' }).end('<!doctype html>');
    return;
  }
  if (mode === 'ignore') {
    res.writeHead(200, { 'Content-Length': String(FILE.length) }).end(FILE);
    return;
  }
  const file = mode === 'big' ? BIG : FILE;
  const suffix = /^bytes=-(\d+)$/.exec(range);
  if (suffix !== null && mode.startsWith('refuse')) {
    res.writeHead(mode === 'refuse-416' ? 416 : 500).end();
    return;
  }
  let start: number;
  let end: number;
  if (suffix !== null) {
    const n = Number(suffix[1]);
    // Vite: `bytes=-n` read as `bytes=0-n`.
    [start, end] =
      mode === 'prefix' ? [0, Math.min(n, file.length - 1)] : [Math.max(0, file.length - n), file.length - 1];
  } else {
    const m = /^bytes=(\d+)-(\d+)$/.exec(range);
    if (m === null) {
      res.writeHead(400).end();
      return;
    }
    [start, end] = [Number(m[1]), Math.min(Number(m[2]), file.length - 1)];
  }
  res
    .writeHead(206, {
      'Content-Range': `bytes ${start}-${end}/${file.length}`,
      'Content-Length': String(end - start + 1),
    })
    .end(file.subarray(start, end + 1));
}

beforeAll(async () => {
  server = http.createServer((req, res) => serve((req.url ?? '').split('/')[1] as Mode, req, res));
  // Every loopback address (127.0.0.N), so each case can be an origin of its own.
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const OPTIONS: HttpOptions = {
  headers: [],
  retries: 0,
  retryDelayMs: 0,
  timeoutMs: 5000,
  maxFullBodyBytes: 8 << 20,
  conditional: false,
  multiRange: true,
};

/** Each origin is remembered once broken: a fresh host name per case keeps them apart. */
let host = 0;
async function tail(mode: Mode, n = 4096) {
  seen.length = 0;
  const url = `${base.replace('127.0.0.1', `127.0.0.${++host + 1}`)}/${mode}/f.parquet`;
  const source = new HttpSource(url, OPTIONS, undefined);
  const read = await source.readTail(n);
  return { source, read, url };
}

describe('the open’s tail read', () => {
  it('is one suffix request on a correct server', async () => {
    const { read, source } = await tail('correct');
    expect(seen).toEqual(['bytes=-4096']);
    expect(read.start).toBe(10_000 - 4096);
    expect(read.data).toEqual(FILE.subarray(10_000 - 4096));
    expect(source.fileLen).toBe(10_000);
  });

  it('takes the size from a prefix answer (Vite), then reads the tail: one request more', async () => {
    const { read, source } = await tail('prefix');
    expect(seen).toEqual(['bytes=-4096', 'bytes=5904-9999']);
    expect(read.data).toEqual(FILE.subarray(5904));
    const log = source.requestLog();
    expect(log[0]).toMatchObject({ status: 206, bytes: 0, note: expect.stringContaining('not the last bytes') });
  });

  it('asks the size with bytes=0-3 after a refusal (http-server 416, Azure 500), then reads the tail', async () => {
    for (const mode of ['refuse-416', 'refuse-500'] as const) {
      const { read } = await tail(mode);
      expect(seen).toEqual(['bytes=-4096', 'bytes=0-3', 'bytes=5904-9999']);
      expect(read.data).toEqual(FILE.subarray(5904));
    }
  });

  it('remembers a broken origin: the next open there starts with bytes=0-3', async () => {
    const first = await tail('refuse-416');
    seen.length = 0;
    const again = new HttpSource(first.url, OPTIONS, undefined);
    await again.readTail(4096);
    expect(seen).toEqual(['bytes=0-3', 'bytes=5904-9999']);
  });

  it('takes a small file from a whole-body answer (Range ignored)', async () => {
    const { read } = await tail('ignore');
    expect(seen).toEqual(['bytes=-4096']);
    expect(read.data).toEqual(FILE.subarray(5904));
  });

  it('names an HTML page', async () => {
    await expect(tail('html')).rejects.toMatchObject({
      code: 'INVALID_FILE',
      message: expect.stringContaining('the server sent an HTML page (200, Content-Type: text/html)'),
    });
    expect(looksLikeHtml('\n  <!DOCTYPE html><html>')).toBe(true);
    expect(looksLikeHtml('<!--\n  Licensed to the Apache Software Foundation')).toBe(false);
    expect(looksLikeHtml('PAR1')).toBe(false);
  });
});

describe('the link’s throughput', () => {
  it('is measured once LINK_SAMPLE_BYTES came in from the origin, and shared by its files', async () => {
    const { source, url } = await tail('big', 4096);
    // The footer's 4 KiB say nothing about the link.
    expect(source.bytesPerMs).toBeUndefined();
    await source.read(0, LINK_SAMPLE_BYTES - 4096 - 1);
    expect(source.bytesPerMs).toBeUndefined();
    await source.read(LINK_SAMPLE_BYTES, LINK_SAMPLE_BYTES + 1);
    const measured = source.bytesPerMs;
    expect(measured).toBeGreaterThan(0);
    // Another file of the same origin knows it before its first read; another origin does not.
    expect(new HttpSource(url.replace('/big/f', '/big/g'), OPTIONS, undefined).bytesPerMs).toBe(measured);
    const other = await tail('big', 4096);
    expect(other.source.bytesPerMs).toBeUndefined();
  });

  it('counts the time any body was in transit, so parallel bodies measure the link', () => {
    const link = new LinkMeter();
    const MB = 1024 * 1024;
    // Six bodies of 1 MiB each, all arriving from 0 to 60 ms: 6 MiB in 60 ms.
    for (let i = 0; i < 6; i++) link.begin(0);
    for (let i = 0; i < 6; i++) link.end(MB, 60);
    expect(link.bytesPerMs(60)).toBeCloseTo((6 * MB) / 60);
    // Idle time between bodies is not counted; a body in transit counts up to now.
    link.begin(1000);
    expect(link.bytesPerMs(1020)).toBeCloseTo((6 * MB) / 80);
    link.end(2 * MB, 1020);
    expect(link.bytesPerMs(5000)).toBeCloseTo((8 * MB) / 80);
    // A failed body adds its time, not bytes.
    link.begin(6000);
    link.end(0, 6020);
    expect(link.bytesPerMs(6020)).toBeCloseTo((8 * MB) / 100);
  });

  it('takes a body reported after the fact: its bytes, and the time no other body covered', () => {
    const MB = 1024 * 1024;
    // A 512 KiB footer arrived from 40 to 60 ms beside a 4 MiB download from 0 to 80 ms: the
    // footer alone says 25.6 KiB/ms, both together 4.5 MiB in 80 ms.
    const link = new LinkMeter();
    link.begin(40);
    link.end(MB / 2, 60);
    expect(link.bytesPerMs(100)).toBeCloseTo(MB / 2 / 20);
    link.addPast(0, 80, 4 * MB, 100);
    expect(link.bytesPerMs(100)).toBeCloseTo((4.5 * MB) / 80);
    // Reported while another body is in transit: the time they share counts once.
    const open = new LinkMeter();
    open.begin(50);
    open.addPast(0, 80, 4 * MB, 90);
    open.end(MB / 2, 100);
    expect(open.bytesPerMs(100)).toBeCloseTo((4.5 * MB) / 100);
    // Nothing from a record with no time or no bytes.
    const empty = new LinkMeter();
    empty.addPast(10, 5, MB);
    empty.addPast(0, 10, 0);
    expect(empty.bytesPerMs()).toBeUndefined();
  });

  it('weighs recent reads most: a slow spell fades once newer bytes come in', () => {
    const link = new LinkMeter();
    // 32 MiB at 1 KiB/ms, then as much again at 1 MiB/ms.
    link.begin(0);
    link.end(LINK_WINDOW_BYTES, LINK_WINDOW_BYTES / 1024);
    const slow = link.bytesPerMs() ?? 0;
    let now = LINK_WINDOW_BYTES / 1024;
    for (let i = 0; i < 32; i++) {
      link.begin(now);
      now += 1;
      link.end(1024 * 1024, now);
    }
    expect(link.bytesPerMs(now)).toBeGreaterThan(2 * slow);
  });
});

describe('several ranges in one request', () => {
  const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../shared/parquet-testing/data');
  const NAME = 'alltypes_plain.parquet';
  const PARTS = [
    { start: 0, end: 4 },
    { start: 300, end: 420 },
    { start: 1200, end: 1300 },
    { start: 1800, end: 1851 },
  ];
  let bytes: Uint8Array;
  const servers: Array<Awaited<ReturnType<typeof startRangeServer>>> = [];
  beforeAll(async () => {
    bytes = new Uint8Array(await readFile(path.join(dataDir, NAME)));
  });
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  /** A range server of its own (an origin of its own: what an origin does is remembered). */
  async function origin(modes = '') {
    const server = await startRangeServer({ mounts: { '/': dataDir } });
    servers.push(server);
    const url = `${server.url}${modes === '' ? '' : `/hostile/${modes}`}/${NAME}`;
    return { server, url };
  }
  const expected = (parts: readonly { start: number; end: number }[]) =>
    parts.map((p) => ({ start: p.start, data: bytes.subarray(p.start, p.end) }));
  const sorted = (chunks: Array<{ start: number; data: Uint8Array }>) =>
    [...chunks].sort((a, b) => a.start - b.start).map((c) => ({ start: c.start, data: new Uint8Array(c.data) }));

  it('are one request and nothing between them where the server answers with parts', async () => {
    const { server, url } = await origin();
    const source = new HttpSource(url, OPTIONS, bytes.length);
    expect(source.multiRange).toBe(true);
    const read = await source.readParts(PARTS);
    expect(sorted(read.chunks)).toEqual(expected(PARTS));
    expect(read.requests).toBe(1);
    expect(read.bytes).toBe(4 + 120 + 100 + 51);
    expect(server.log.map((e) => [e.range, e.status])).toEqual([['bytes=0-3,300-419,1200-1299,1800-1850', 206]]);
    expect(source.requestLog()).toEqual([
      expect.objectContaining({ start: 0, end: 1851, bytes: 275, parts: 4, status: 206, range: server.log[0]?.range }),
    ]);
    expect(source.requestLog()[0]?.note).toBeUndefined();
    // Asked again, and by the origin's other files.
    expect(new HttpSource(url.replace(NAME, 'other.parquet'), OPTIONS, 10).multiRange).toBe(true);
    expect(source.multiRange).toBe(true);
  });

  it('keep what a server answering otherwise sent, read the rest a range at a time, and stop asking', async () => {
    const cases = [
      { modes: 'multi-first', status: 206, note: 'the server answered with one span (bytes 0-3/1851)', requests: 2 },
      { modes: 'multi-whole', status: 200, note: 'the server answered 200 with the whole file', requests: 1 },
      {
        modes: 'multi-bad',
        status: 206,
        note: 'the server answered with a multipart/byteranges body not in the form (part 4',
        requests: 2,
      },
    ];
    for (const c of cases) {
      const { server, url } = await origin(c.modes);
      const source = new HttpSource(url, OPTIONS, bytes.length);
      const read = await source.readParts(PARTS);
      expect(sorted(read.chunks), c.modes).toEqual(expected(PARTS));
      expect(read.requests, c.modes).toBe(c.requests);
      expect(source.requestLog()[0], c.modes).toMatchObject({ parts: 4, status: c.status });
      expect(source.requestLog()[0]?.note, c.modes).toContain(c.note);
      // The origin is not asked so again: a range per request (coalesced), exact.
      expect(source.multiRange, c.modes).toBe(false);
      server.resetLog();
      const again = await source.readParts(PARTS);
      expect(sorted(again.chunks), c.modes).toEqual(expected(PARTS));
      expect(
        server.log.every((e) => !e.range?.includes(',')),
        c.modes,
      ).toBe(true);
    }
  });

  it('asked for at once on a new origin: the first request finds out, the others wait for its headers', async () => {
    const halves = [PARTS.slice(0, 2), PARTS.slice(2)];
    for (const [modes, several] of [
      ['', 2],
      ['multi-first', 1],
    ] as const) {
      const { server, url } = await origin(modes);
      const source = new HttpSource(url, OPTIONS, bytes.length);
      const reads = await Promise.all(halves.map((half) => source.readParts(half)));
      expect(sorted(reads.flatMap((r) => r.chunks)), modes).toEqual(expected(PARTS));
      // Planned meanwhile: one range per request.
      expect(source.multiRange, modes).toBe(modes === '');
      expect(server.log.filter((e) => e.range?.includes(',')).length, modes).toBe(several);
    }
  });

  it('waiting for another request to find out, are cancelled at once with their signal', async () => {
    // The first request's headers take 3 s (no timeout); a second read waits for them, then is cancelled.
    const { url } = await origin('slow-3000');
    const source = new HttpSource(url, { ...OPTIONS, timeoutMs: 0 }, bytes.length);
    const first = new AbortController();
    const probing = source.readParts(PARTS.slice(0, 2), first.signal);
    probing.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = new AbortController();
    const waiting = source.readParts(PARTS.slice(2), second.signal);
    const cancelledAt = performance.now();
    second.abort(new DOMException('the user moved on', 'AbortError'));
    await expect(waiting).rejects.toThrow('the user moved on');
    expect(performance.now() - cancelledAt).toBeLessThan(1000);
    first.abort(new DOMException('done', 'AbortError'));
    await expect(probing).rejects.toThrow('done');
  });

  it('abort a whole file past maxFullBodyBytes and read the ranges with one range per request', async () => {
    const { server, url } = await origin('multi-whole');
    const source = new HttpSource(url, { ...OPTIONS, maxFullBodyBytes: 1000 }, bytes.length);
    const read = await source.readParts(PARTS);
    expect(sorted(read.chunks)).toEqual(expected(PARTS));
    expect(source.requestLog()[0]?.note).toBe('the server answered 200 with the whole file (1851 bytes; aborted)');
    // The rest as one range: the gaps are within what one request reads through.
    expect(server.log.filter((e) => e.range?.includes(',') !== true).map((e) => e.range)).toEqual(['bytes=0-1850']);
  });

  it('fail as one range would when the file was replaced or is gone', async () => {
    const changed = await origin('change-after-1');
    const source = new HttpSource(changed.url, OPTIONS, bytes.length);
    await source.read(0, 4);
    await expect(source.readParts(PARTS)).rejects.toMatchObject({ code: 'FILE_CHANGED' });
    const gone = await origin('status-404');
    await expect(new HttpSource(gone.url, OPTIONS, bytes.length).readParts(PARTS)).rejects.toMatchObject({
      code: 'HTTP_STATUS',
    });
  });

  it('are not asked for when the open says not to', async () => {
    const { server, url } = await origin();
    const source = new HttpSource(url, { ...OPTIONS, multiRange: false }, bytes.length);
    expect(source.multiRange).toBe(false);
    const read = await source.readParts(PARTS);
    expect(sorted(read.chunks)).toEqual(expected(PARTS));
    expect(server.log.map((e) => e.range)).toEqual(['bytes=0-1850']);
  });
});
