/**
 * Hostile servers, in Chromium through the package and its workers: every way the range server's
 * hostile modes (tests/server/hostile.mjs) misbehave ends either in the right rows or in the right
 * typed error — promptly, with no request left open. Each case is written to the robustness
 * ledger (area `server`).
 *
 * The reference is the same read from the well-behaved server: the first 2000 rows of
 * `l_orderkey, l_comment` of TPC-H SF1 (pages past the 512 KiB footer read, so the scan's own
 * requests meet the modes), summarized as row count + checksum.
 */
import path from 'node:path';
import type { OpenOptions } from 'parquet-skim';
import { type RangeServerLogEntry, startRangeServer } from '../server/range-server.mjs';
import { recordCase } from '../support/robustness.ts';
import { cacheDir, expect, parquetTestingDir, test } from './fixtures.ts';

type Outcome = {
  rows: number;
  checksum: number;
  error: { name: string; code: string | null; message: string; isSkimError: boolean } | null;
  ms: number;
};

/** Opens `url` with `options`, reads the first `limit` rows of `columns`; never throws. */
async function readIn(
  page: import('@playwright/test').Page,
  url: string,
  options: OpenOptions,
  columns: string[],
  limit = 2000,
  abortAfterMs?: number,
): Promise<Outcome> {
  return page.evaluate(
    async ({ url, options, columns, limit, abortAfterMs }) => {
      const { skim, describeError } = window.harness;
      const reader = await skim.createReader({ workers: 1 });
      const started = performance.now();
      let rows = 0;
      let checksum = 0;
      const controller = new AbortController();
      if (abortAfterMs !== undefined) setTimeout(() => controller.abort(), abortAfterMs);
      try {
        const file = await reader.open(url, { ...options });
        for await (const batch of file.scan({ columns, limit, signal: controller.signal })) {
          for (let c = 0; c < batch.numCols; c++) {
            const column = batch.getChildAt(c);
            for (let i = 0; i < batch.numRows; i++) {
              const value = String(column?.get(i));
              for (let k = 0; k < value.length; k++) checksum = (checksum * 31 + value.charCodeAt(k)) % 2147483647;
            }
          }
          rows += batch.numRows;
        }
        return { rows, checksum, error: null, ms: performance.now() - started };
      } catch (error) {
        return { rows, checksum, error: describeError(error), ms: performance.now() - started };
      } finally {
        reader.dispose();
      }
    },
    { url, options, columns, limit, abortAfterMs },
  );
}

const LINEITEM = '/sample/lineitem-sf1.parquet';
const COLUMNS = ['l_orderkey', 'l_comment'];
let run = 0;
/** A URL of the harness server with `modes` and fresh counters. */
const hostile = (base: string, modes: string, file = LINEITEM) => `${base}/hostile/${modes}${file}?run=${++run}`;

/** The GETs of hostile URLs (not the worker scripts and wasm a new reader loads). */
const fileGets = (server: { log: RangeServerLogEntry[] }) =>
  server.log.filter((e) => e.method === 'GET' && e.path.includes('/hostile/'));

function ledger(name: string, ok: boolean, outcome: Outcome | string): void {
  const detail =
    typeof outcome === 'string'
      ? outcome
      : outcome.error
        ? `${outcome.error.code}: ${outcome.error.message.slice(0, 160)}`
        : `${outcome.rows} rows`;
  expect(recordCase('server', { area: 'server', case: name, ok, detail }), `${name}: ${detail}`).toBe(true);
}

test.describe('hostile servers', () => {
  test('errors that will not go away fail at once with their status and a typed error', async ({ harness, server }) => {
    for (const status of [403, 404]) {
      server.resetLog();
      const outcome = await readIn(harness, hostile(server.url, `status-${status}`), {}, COLUMNS);
      const gets = fileGets(server).length;
      const ok =
        outcome.error?.code === 'HTTP_STATUS' &&
        outcome.error.isSkimError &&
        outcome.error.message.includes(`answered ${status}`) &&
        gets === 1;
      ledger(`${status} at open: HTTP_STATUS, no retry`, ok, outcome);
    }
    // 416 is how http-server refuses the suffix form of the open: the size is asked for with
    // bytes=0-3 once, and when that is refused too, the error says both. The origin is then known
    // to refuse suffixes: the next open there (500, Azure's refusal) starts with bytes=0-3.
    server.resetLog();
    const refused = await readIn(harness, hostile(server.url, 'status-416'), {}, COLUMNS);
    const refusedRanges = fileGets(server).map((e) => e.range);
    ledger(
      '416 to the suffix at open: a size probe, then HTTP_STATUS naming both, no retry',
      refused.error?.code === 'HTTP_STATUS' &&
        refused.error.message.includes('does not support suffix ranges (it answered bytes=-524288 with 416)') &&
        refused.error.message.includes(
          "so the reader read the file's size and tail with explicit ranges; then expected 206 Partial Content for bytes=0-3 of",
        ) &&
        JSON.stringify(refusedRanges) === JSON.stringify(['bytes=-524288', 'bytes=0-3']),
      refused,
    );
    server.resetLog();
    const failing = await readIn(harness, hostile(server.url, 'status-500'), {}, COLUMNS);
    const failingRanges = fileGets(server).map((e) => e.range);
    ledger(
      '500 at open on an origin known to refuse suffixes: bytes=0-3 only, HTTP_STATUS',
      failing.error?.code === 'HTTP_STATUS' &&
        failing.error.message.includes('for bytes=0-3 of') &&
        failing.error.message.includes('answered 500') &&
        JSON.stringify(failingRanges) === JSON.stringify(['bytes=0-3']),
      failing,
    );
    // The file disappears after the open: the scan's read fails the same way.
    const gone = await readIn(harness, hostile(server.url, 'after-1+status-404'), {}, COLUMNS);
    ledger('404 mid-scan: HTTP_STATUS', gone.error?.code === 'HTTP_STATUS' && gone.rows === 0, gone);
  });

  test('transient failures are retried with backoff and the rows come out right', async ({ harness, server }) => {
    const reference = await readIn(harness, `${server.url}${LINEITEM}`, {}, COLUMNS);
    expect(reference.error).toBeNull();
    expect(reference.rows).toBe(2000);
    const same = (o: Outcome) => o.error === null && o.rows === reference.rows && o.checksum === reference.checksum;

    server.resetLog();
    const unavailable = await readIn(harness, hostile(server.url, 'fail-503-2'), { retryDelayMs: 20 }, COLUMNS);
    const statuses = fileGets(server).map((e) => e.status);
    ledger(
      '503 twice at open (Retry-After: 0), then 206: retried',
      same(unavailable) && statuses[0] === 503 && statuses[1] === 503 && statuses[2] === 206,
      unavailable,
    );

    const midScan = await readIn(harness, hostile(server.url, 'after-1+fail-503-2'), { retryDelayMs: 20 }, COLUMNS);
    ledger('503 twice mid-scan: retried', same(midScan), midScan);

    server.resetLog();
    const dropped = await readIn(harness, hostile(server.url, 'after-1+drop-2'), { retryDelayMs: 20 }, COLUMNS);
    const cut = fileGets(server).filter((e) => e.aborted).length;
    ledger('connection cut mid-body twice mid-scan: retried', same(dropped) && cut >= 2, dropped);

    const droppedOpen = await readIn(harness, hostile(server.url, 'drop-1'), { retryDelayMs: 20 }, COLUMNS);
    ledger('connection cut mid-body at open: retried', same(droppedOpen), droppedOpen);

    server.resetLog();
    const always = await readIn(harness, hostile(server.url, 'status-503'), { retries: 2, retryDelayMs: 10 }, COLUMNS);
    const attempts = fileGets(server).length;
    ledger(
      '503 on every attempt: HTTP_STATUS after retries + 1 attempts',
      always.error?.code === 'HTTP_STATUS' && always.error.message.includes('3 times in a row') && attempts === 3,
      always,
    );

    // Cancelling while waiting out a backoff rejects at once, not after the wait.
    const waiting = await readIn(
      harness,
      hostile(server.url, 'after-1+status-503'),
      { retries: 5, retryDelayMs: 5000 },
      COLUMNS,
      2000,
      300,
    );
    ledger(
      'abort during a 5 s backoff: AbortError within 1 s',
      waiting.error?.name === 'AbortError' && waiting.ms < 1500,
      waiting.error ? `${waiting.error.name} after ${Math.round(waiting.ms)} ms` : 'no error',
    );
  });

  test('a slow or stalled server times out with TIMEOUT and leaves no request open', async ({ harness, server }) => {
    const slow = await readIn(harness, hostile(server.url, 'slow-5000'), { timeoutMs: 300, retries: 1 }, COLUMNS);
    ledger(
      'headers slower than timeoutMs: TIMEOUT after 2 attempts',
      slow.error?.code === 'TIMEOUT' && slow.error.message.includes('2 attempts') && slow.ms < 3000,
      slow,
    );
    const stalled = await readIn(
      harness,
      hostile(server.url, 'after-1+stall'),
      { timeoutMs: 400, retries: 1, retryDelayMs: 10 },
      COLUMNS,
    );
    ledger('body stalls mid-scan: TIMEOUT', stalled.error?.code === 'TIMEOUT' && stalled.ms < 3000, stalled);
    await expect.poll(() => server.openRequests, { timeout: 3000 }).toBe(0);
  });

  test('Range ignored: small files are taken whole, large downloads are aborted', async ({ harness, server }) => {
    const small = '/data/alltypes_tiny_pages_plain.parquet';
    const plain = await readIn(harness, `${server.url}${small}`, {}, ['id', 'string_col'], 10_000);
    server.resetLog();
    const whole = await readIn(harness, hostile(server.url, 'no-range', small), {}, ['id', 'string_col'], 10_000);
    const gets = fileGets(server);
    ledger(
      'Range ignored, 0.8 MB file: read from the one whole-body answer',
      whole.error === null && whole.rows === plain.rows && whole.checksum === plain.checksum && gets.length === 1,
      whole,
    );

    server.resetLog();
    const big = await readIn(harness, hostile(server.url, 'no-range'), {}, COLUMNS);
    // The body is abandoned: the server saw the connection close long before 214 MB were sent.
    await expect.poll(() => fileGets(server).length, { timeout: 5000 }).toBe(1);
    const sent = fileGets(server)[0];
    ledger(
      'Range ignored, 214 MB file: RANGE_NOT_SUPPORTED, download aborted',
      big.error?.code === 'RANGE_NOT_SUPPORTED' &&
        big.error.message.includes('maxFullBodyBytes') &&
        sent?.aborted === true &&
        (sent?.bytes ?? 0) < 64 * 1024 * 1024,
      big.error ? `${big.error.code}; server sent ${sent?.bytes} of 213906474 B before the abort` : 'no error',
    );

    const allowed = await readIn(harness, hostile(server.url, 'no-range', small), { maxFullBodyBytes: 100_000 }, [
      'id',
    ]);
    ledger(
      'Range ignored over maxFullBodyBytes: RANGE_NOT_SUPPORTED',
      allowed.error?.code === 'RANGE_NOT_SUPPORTED',
      allowed,
    );
  });

  test('HEAD refused: never needed', async ({ harness, server }) => {
    server.resetLog();
    const outcome = await readIn(harness, hostile(server.url, 'no-head'), {}, COLUMNS);
    const heads = server.log.filter((e) => e.method === 'HEAD' && e.path.includes('/hostile/')).length;
    ledger(
      'HEAD answers 405: open and scan work, no HEAD sent',
      outcome.error === null && outcome.rows === 2000 && heads === 0,
      outcome,
    );
  });

  test('Content-Encoding on a range: Chromium refuses the response; the error says so after bounded retries', async ({
    harness,
    server,
  }) => {
    // Range requests go out with Accept-Encoding: identity (Fetch standard), and Chromium fails a
    // response that comes back gzipped anyway (net::ERR_CONTENT_DECODING_FAILED) before any header
    // reaches script, so the cause can only be named among the possible ones. Node's fetch hands
    // the headers over instead: web/src/reader.test.ts checks CONTENT_ENCODING there.
    for (const mode of ['gzip-fly', 'gzip-range']) {
      const small = '/data/alltypes_tiny_pages_plain.parquet';
      const outcome = await readIn(harness, hostile(server.url, mode, small), { retries: 1, retryDelayMs: 10 }, ['id']);
      ledger(
        `${mode}: NETWORK naming Content-Encoding, 2 attempts`,
        outcome.error?.code === 'NETWORK' &&
          outcome.error.message.includes('Content-Encoding') &&
          outcome.error.message.includes('2 attempts'),
        outcome,
      );
    }
  });

  test('a file replaced mid-read fails with FILE_CHANGED, by If-Match same-origin and by ETag cross-origin', async ({
    harness,
    server,
  }) => {
    server.resetLog();
    const same = await readIn(harness, hostile(server.url, 'change-after-1'), {}, COLUMNS);
    // The scan fails at the first 412; its other requests may still be on their way (a log
    // entry's status is 0 until the server answers): read the log once they are all answered.
    await expect.poll(() => server.openRequests, { timeout: 10_000 }).toBe(0);
    // Those the scan gave up on before the server answered them (logged `aborted`, with no
    // status of the server's) are not answers: every answered If-Match must be a 412.
    const conditional = fileGets(server).filter((e) => e.ifMatch !== null && e.aborted !== true);
    ledger(
      'same origin: If-Match sent, 412, FILE_CHANGED',
      same.error?.code === 'FILE_CHANGED' &&
        same.error.message.includes('refused the precondition') &&
        conditional.length > 0 &&
        conditional.every((e) => e.status === 412),
      same,
    );

    const other = await startRangeServer({
      mounts: { '/sample/': path.join(cacheDir, 'data'), '/data/': parquetTestingDir },
    });
    try {
      other.resetLog();
      const cross = await readIn(harness, hostile(other.url, 'change-after-1'), {}, COLUMNS);
      const sentIfMatch = other.log.some((e) => e.ifMatch !== null);
      ledger(
        'cross origin: no preflight-costing If-Match, the new ETag is caught: FILE_CHANGED',
        cross.error?.code === 'FILE_CHANGED' && !sentIfMatch,
        cross,
      );

      const unexposed = await readIn(harness, hostile(other.url, 'no-expose'), {}, COLUMNS);
      ledger(
        'cross origin without Access-Control-Expose-Headers: BAD_CONTENT_RANGE naming the header',
        unexposed.error?.code === 'BAD_CONTENT_RANGE' &&
          unexposed.error.message.includes('Access-Control-Expose-Headers') &&
          unexposed.error.message.includes('Content-Range'),
        unexposed,
      );
    } finally {
      await other.close();
    }
  });
});
