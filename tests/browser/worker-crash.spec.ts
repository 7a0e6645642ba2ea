/**
 * A worker that traps is replaced, its task retried once, and then the scan fails with a typed
 * error while the pool stays whole. No known input panics any more (crate/patches/parquet fixed
 * the last arrow-rs panics the fuzzers found), so the panic is injected: the page rewrites the
 * first task's spec on its way to the worker to set `panicForTest`, and the core — the build with
 * test hooks (`wasmUrl`; the package's own build refuses the field) — panics as that task starts. Everything after that is real: the panic hook, the WebAssembly trap
 * (`unreachable`), the worker's death, its replacement and the retry.
 */
import { recordCase } from '../support/robustness.ts';
import { expect, test } from './fixtures.ts';

test('a trapping worker is replaced and retried once, then the scan fails with WORKER_CRASHED', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim, describeError, rewriteTaskSpecs } = window.harness;
    // Every task to a worker (none decoded on the page), even this small file's.
    const reader = await skim.createReader({
      workers: 2,
      inlineTaskBytes: 0,
      wasmUrl: '/test-hooks/parquet_skim_wasm_bg.wasm',
    });
    const file = await reader.open('/data/alltypes_tiny_pages.parquet');
    let injected = 0;
    const restore = rewriteTaskSpecs((spec) => {
      if (spec.taskIdx !== 0) return undefined;
      injected += 1;
      return { ...spec, panicForTest: 'injected by worker-crash.spec' };
    });
    // The workers start with the first task.
    const startedBefore = 2;
    let error: ReturnType<typeof describeError> | null = null;
    try {
      await file.scan().toTable();
    } catch (e) {
      error = describeError(e);
    } finally {
      restore();
    }
    const startedAfter = reader.stats().workers.started;
    // The pool is whole and the next scan (of an intact file) works.
    const good = await reader.open('/data/alltypes_tiny_pages.parquet');
    const rows = (await good.scan({ columns: ['id'] }).toTable()).numRows;
    const out = { error, injected, replaced: startedAfter - startedBefore, workers: reader.workerCount, rows };
    reader.dispose();
    return out;
  });
  console.log(
    `\ninjected ${result.injected}; trapping task: ${result.error?.code}: ${result.error?.message}; workers replaced: ${result.replaced}`,
  );
  recordCase('lifecycle', {
    area: 'lifecycle',
    case: 'a panic traps a worker: replaced, retried once, WORKER_CRASHED with the panic message',
    ok:
      result.error?.code === 'WORKER_CRASHED' &&
      (result.error?.message.includes('panicked at') ?? false) &&
      result.injected === 2 &&
      result.replaced === 2 &&
      result.workers === 2 &&
      result.rows === 7300,
    detail: result.error?.message.slice(0, 120) ?? 'no error',
  });
  expect(result.error).toMatchObject({ name: 'ParquetSkimError', code: 'WORKER_CRASHED', isSkimError: true });
  // The panic hook's message says what broke: where in which crate, and the assertion.
  expect(result.error?.message).toContain('panicked at');
  expect(result.error?.message).toContain('injected by worker-crash.spec');
  // The task ran twice (first try and one retry), each time on a new worker.
  expect(result.injected).toBe(2);
  expect(result.replaced).toBe(2);
  expect(result.workers).toBe(2);
  expect(result.rows).toBe(7300);
});

test('the package’s own core has no test hooks: an injected panicForTest is refused, nothing traps', async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim, describeError, rewriteTaskSpecs } = window.harness;
    const reader = await skim.createReader({ workers: 2, inlineTaskBytes: 0 });
    const file = await reader.open('/data/alltypes_tiny_pages.parquet');
    const restore = rewriteTaskSpecs((spec) => ({ ...spec, panicForTest: 'must not run' }));
    let error: ReturnType<typeof describeError> | null = null;
    try {
      await file.scan().toTable();
    } catch (e) {
      error = describeError(e);
    } finally {
      restore();
    }
    const started = reader.stats().workers.started;
    reader.dispose();
    return { error, started };
  });
  // A typed refusal of the unknown field, not a trap: no worker was replaced.
  expect(result.error).toMatchObject({ code: 'INVALID_ARGUMENT', isSkimError: true });
  expect(result.error?.message).toContain('panicForTest');
  expect(result.started).toBe(2);
});

test('workers that cannot start make scans fail with WORKER_CRASHED instead of respawning forever', async ({
  harness,
  server,
}) => {
  server.resetLog();
  const result = await harness.evaluate(async () => {
    const { skim, describeError } = window.harness;
    const reader = await skim.createReader({ workers: 2, workerUrl: '/no-such-worker.js', inlineTaskBytes: 0 });
    const file = await reader.open('/data/alltypes_tiny_pages.parquet');
    let error: ReturnType<typeof describeError> | null = null;
    try {
      await file.scan().toTable();
    } catch (e) {
      error = describeError(e);
    }
    reader.dispose();
    return error;
  });
  expect(result).toMatchObject({ code: 'WORKER_CRASHED', isSkimError: true });
  expect(result?.message).toContain('failed to start');
  // A handful of attempts to load the script, not an endless loop.
  const attempts = server.log.filter((e) => e.path.startsWith('/no-such-worker.js')).length;
  recordCase('lifecycle', {
    area: 'lifecycle',
    case: 'workers that cannot start: WORKER_CRASHED after a bounded number of attempts',
    ok: result?.code === 'WORKER_CRASHED' && attempts > 0 && attempts <= 4,
    detail: `${attempts} attempts`,
  });
  expect(attempts).toBeGreaterThan(0);
  expect(attempts).toBeLessThanOrEqual(4);
});

test('a task that runs a worker out of memory fails with OUT_OF_MEMORY after one retry on a fresh worker; the pool stays whole', async ({
  harness,
}) => {
  // Nothing injected: the workers' memory is bounded (memoryLimitBytes) below what a task of a
  // 1M-row group of every column needs, so the allocator really fails, Rust aborts, and the
  // worker traps with a bare `unreachable` — which must read as what it was.
  const result = await harness.evaluate(async () => {
    const { skim, describeError } = window.harness;
    const reader = await skim.createReader({ workers: 2, inlineTaskBytes: 0, memoryLimitBytes: 32 * 2 ** 20 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    let error: ReturnType<typeof describeError> | null = null;
    try {
      // Every row: a task per 1M-row group (~140 MB of output). With `limit: 300_000` the scan is
      // split into tasks of 75k rows, whose ~10 MB of output fit once the IPC stream stopped
      // doubling its buffer (crate/core/src/ipc.rs).
      await file.scan().toTable();
    } catch (e) {
      error = describeError(e);
    }
    // A task within the limit still runs, on the replaced workers.
    const rows = (await file.scan({ columns: ['l_orderkey'], limit: 1000 }).toTable()).numRows;
    const { started, alive } = reader.stats().workers;
    reader.dispose();
    return { error, rows, started, alive };
  });
  console.log(`\n${result.error?.code}: ${result.error?.message}; workers started ${result.started}`);
  recordCase('lifecycle', {
    area: 'lifecycle',
    case: 'a worker out of memory (memoryLimitBytes): replaced, retried once, OUT_OF_MEMORY saying so',
    ok: result.error?.code === 'OUT_OF_MEMORY' && result.rows === 1000 && result.alive === 2,
    detail: result.error?.message.slice(0, 120) ?? 'no error',
  });
  expect(result.error).toMatchObject({ name: 'ParquetSkimError', code: 'OUT_OF_MEMORY', isSkimError: true });
  // Whose memory, how much was asked and held, the limit, and what to do.
  expect(result.error?.message).toMatch(
    /a worker's WebAssembly core could not allocate [\d.]+ (bytes|KiB|MiB): it has [\d.]+ MiB, and its limit is memoryLimitBytes, 32 MiB/,
  );
  expect(result.error?.message).toContain('on a fresh worker as well');
  expect(result.rows).toBe(1000);
  expect(result.alive).toBe(2);
  // The two that trapped were replaced (started: the first two, then their replacements).
  expect(result.started).toBeGreaterThanOrEqual(4);
});

test("the page's core out of memory (no workers) fails with OUT_OF_MEMORY, and the reader still answers", async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim, describeError } = window.harness;
    const reader = await skim.createReader({ workers: 0, memoryLimitBytes: 32 * 2 ** 20 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    let error: ReturnType<typeof describeError> | null = null;
    try {
      await file.scan({ limit: 300_000 }).toTable();
    } catch (e) {
      error = describeError(e);
    }
    const rows = (await file.scan({ columns: ['l_orderkey'], limit: 1000 }).toTable()).numRows;
    reader.dispose();
    return { error, rows };
  });
  expect(result.error).toMatchObject({ code: 'OUT_OF_MEMORY', isSkimError: true });
  expect(result.error?.message).toMatch(/the page's WebAssembly core could not allocate [\d.]+ (bytes|KiB|MiB)/);
  expect(result.rows).toBe(1000);
});
