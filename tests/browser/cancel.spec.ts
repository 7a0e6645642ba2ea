/**
 * Cancellation and lifecycle in Chromium: 100 scans aborted at random points, then a scan that
 * succeeds; every abort rejects promptly with AbortError, no request is left open at the server,
 * and the pool has exactly its workers.
 */
import path from 'node:path';
import type { ParquetFile, Reader } from 'parquet-skim';
import { startRangeServer } from '../server/range-server.mjs';
import { recordCase } from '../support/robustness.ts';
import { cacheDir, expect, test } from './fixtures.ts';

test('100 scans aborted at random points leak nothing, and the next scan works', async ({ harness }) => {
  // A slow server (200 ms before each response): aborted requests are really in flight.
  const slow = await startRangeServer({ mounts: { '/sample/': path.join(cacheDir, 'data') }, latencyMs: 200 });
  const result = await harness.evaluate(async (base) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2, ioConcurrency: 4 });
    const file = await reader.open(`${base}/sample/lineitem-sf1.parquet`);
    // A deterministic sequence of abort points (ms after the scan starts).
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const rejections: string[] = [];
    const delays: number[] = [];
    let completed = 0;
    for (let i = 0; i < 100; i++) {
      const controller = new AbortController();
      const columns = i % 2 === 0 ? ['l_orderkey', 'l_comment'] : ['l_quantity', 'l_shipdate'];
      const filter = i % 3 === 0 ? 'l_quantity < 10' : undefined;
      const scan = file.scan({ columns, signal: controller.signal, ...(filter ? { filter } : {}) });
      const abortAfter = 150 + random() * 300;
      let abortedAt = 0;
      const timer = setTimeout(() => {
        abortedAt = performance.now();
        controller.abort();
      }, abortAfter);
      try {
        for await (const _batch of scan) {
          // keep pulling
        }
        completed += 1;
        clearTimeout(timer);
      } catch (error) {
        clearTimeout(timer);
        const name = (error as Error).name;
        rejections.push(name);
        if (abortedAt > 0) delays.push(performance.now() - abortedAt);
      }
    }
    const out = {
      rejections,
      completed,
      maxDelay: Math.max(0, ...delays),
      medianDelay: delays.sort((a, b) => a - b)[Math.floor(delays.length / 2)] ?? 0,
    };
    (window as unknown as { cancelTest: unknown }).cancelTest = { reader, file };
    return out;
  }, slow.url);
  // Aborted requests close at once: none is still waiting out the server's 200 ms.
  await expect.poll(() => slow.openRequests, { timeout: 150, intervals: [5] }).toBe(0);
  const after = await harness.evaluate(async () => {
    const { reader, file } = (window as unknown as { cancelTest: { reader: Reader; file: ParquetFile } }).cancelTest;
    const workers = reader.workerCount;
    const table = await file.scan({ columns: ['l_orderkey'], filter: 'l_orderkey < 1000' }).toTable();
    reader.dispose();
    return { workers, rows: table.numRows };
  });
  await slow.close();
  console.log(
    `\n100 scans: ${result.rejections.length} aborted, ${result.completed} finished first; ` +
      `abort → rejection median ${result.medianDelay.toFixed(1)} ms, max ${result.maxDelay.toFixed(1)} ms`,
  );
  const ok =
    result.rejections.length + result.completed === 100 &&
    result.rejections.length > 50 &&
    result.rejections.every((name) => name === 'AbortError') &&
    result.maxDelay < 100 &&
    after.workers === 2 &&
    after.rows > 0;
  recordCase('lifecycle', {
    area: 'lifecycle',
    case: '100 scans aborted at random points, then a scan',
    ok,
    detail: `${result.rejections.length} aborted, max ${result.maxDelay.toFixed(0)} ms to reject`,
    inputs: 100,
  });
  expect(result.rejections.length + result.completed).toBe(100);
  expect(result.rejections.length).toBeGreaterThan(50);
  expect(new Set(result.rejections)).toEqual(new Set(['AbortError']));
  expect(result.maxDelay).toBeLessThan(100);
  expect(after.workers).toBe(2);
  expect(after.rows).toBeGreaterThan(0);
});

test('dispose() during scans rejects them with DISPOSED, closes every request, and a new reader works', async ({
  harness,
}) => {
  const slow = await startRangeServer({ mounts: { '/sample/': path.join(cacheDir, 'data') }, latencyMs: 150 });
  const result = await harness.evaluate(async (base) => {
    const { skim, describeError } = window.harness;
    const url = `${base}/sample/lineitem-sf1.parquet`;
    const reader = await skim.createReader({ workers: 2, ioConcurrency: 4 });
    const file = await reader.open(url);
    // Three scans in flight: one reading batches, one filtered, one aggregate.
    const consume = async (scan: AsyncIterable<unknown>) => {
      for await (const _ of scan) {
        // keep pulling
      }
    };
    const pending = [
      consume(file.scan({ columns: ['l_comment'] })),
      consume(file.scan({ columns: ['l_orderkey'], filter: 'l_quantity < 10' })),
      file.scan({ columns: ['l_orderkey', 'l_partkey'] }).toTable(),
    ].map((p) =>
      p.then(
        () => ({ name: 'none', code: null as string | null }),
        (error) => describeError(error),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    const disposedAt = performance.now();
    reader.dispose();
    const outcomes = await Promise.all(pending);
    const rejectMs = performance.now() - disposedAt;
    const workersAfter = reader.workerCount;
    let reopen = 'none';
    try {
      await reader.open(url);
    } catch (error) {
      reopen = describeError(error).code ?? 'no code';
    }
    // Every task to a worker, so that the new reader's workers are seen to work.
    const fresh = await skim.createReader({ workers: 2, inlineTaskBytes: 0 });
    const again = await (await fresh.open(url)).scan({ columns: ['l_orderkey'], limit: 5000 }).toTable();
    const freshWorkers = fresh.workerCount;
    fresh.dispose();
    return { codes: outcomes.map((o) => o.code), rejectMs, workersAfter, reopen, rows: again.numRows, freshWorkers };
  }, slow.url);
  await expect.poll(() => slow.openRequests, { timeout: 1000 }).toBe(0);
  await slow.close();
  const ok =
    result.codes.every((code) => code === 'DISPOSED') &&
    result.rejectMs < 200 &&
    result.workersAfter === 0 &&
    result.reopen === 'DISPOSED' &&
    result.rows === 5000 &&
    result.freshWorkers === 2;
  recordCase('lifecycle', {
    area: 'lifecycle',
    case: 'dispose() during 3 scans',
    ok,
    detail: `${result.codes.join(',')} in ${result.rejectMs.toFixed(0)} ms; workers after ${result.workersAfter}`,
  });
  expect(result).toMatchObject({ workersAfter: 0, reopen: 'DISPOSED', rows: 5000, freshWorkers: 2 });
  expect(result.codes).toEqual(['DISPOSED', 'DISPOSED', 'DISPOSED']);
  expect(result.rejectMs).toBeLessThan(200);
});
