/**
 * The open's tail read against servers that answer the suffix form the ways real ones do (the
 * real servers themselves are in tests/browser/servers.spec.ts): what was requested, in order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
