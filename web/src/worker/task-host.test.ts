import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it, vi } from 'vitest';
import { col } from '../filter.js';
import { createReader } from '../reader.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const tinyPages = path.resolve(here, '../../../../shared/parquet-testing/data/alltypes_tiny_pages.parquet');

afterEach(() => {
  vi.restoreAllMocks();
});

it('decodeMs counts every call of a two-phase task, the filter phase included', async () => {
  // Output pages always after the filter's (not fetched with them): a two-phase task.
  const reader = await createReader({ prefetchOutputBytes: 0 });
  const file = await reader.open(new Uint8Array(await readFile(tinyPages)));
  // A clock that advances one unit per reading: each call of a task into the core spans one unit.
  let now = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => {
    now += 1;
    return now;
  });
  // Output columns outside the filter: the filter phase returns `needs` (phase 2) first.
  const scan = file.scan({ columns: ['id', 'string_col'], filter: col('int_col').gt(5) });
  await scan.toTable();
  const { tasksDone, bytesFetchedOutput, decodeMs } = scan.stats;
  vi.restoreAllMocks();
  reader.dispose();
  expect(bytesFetchedOutput).toBeGreaterThan(0);
  expect(tasksDone).toBeGreaterThan(0);
  // Two calls (filter phase, then output phase) of one unit each per task, at least.
  expect(decodeMs).toBeGreaterThanOrEqual(2 * tasksDone);
});
