/**
 * Shared fixtures of the browser tests: one real range server per worker process, serving the
 * harness page, the parquet-testing files, the generated sample data and the pyarrow references;
 * and a page with the harness loaded.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as base, type Page } from '@playwright/test';
import { startRangeServer } from '../server/range-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../..');
export const cacheDir = path.join(repoRoot, 'tests/.cache');
export const parquetTestingDir = path.resolve(repoRoot, '../shared/parquet-testing/data');

type Server = Awaited<ReturnType<typeof startRangeServer>>;

export const test = base.extend<{ harness: Page }, { server: Server }>({
  server: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature.
    async ({}, use) => {
      const server = await startRangeServer({
        mounts: {
          '/': path.join(cacheDir, 'harness'),
          '/data/': parquetTestingDir,
          '/sample/': path.join(cacheDir, 'data'),
          '/ref/': path.join(cacheDir, 'conformance'),
          // The core built with test hooks (.ci/build.sh): for `wasmUrl` in the tests that inject faults.
          '/test-hooks/': path.join(cacheDir, 'wasm-test-hooks'),
        },
      });
      await use(server);
      await server.close();
    },
    { scope: 'worker' },
  ],
  harness: async ({ page, server }, use) => {
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${server.url}/`);
    await page.waitForSelector('body[data-ready=true]');
    await use(page);
    if (errors.length > 0) throw new Error(`uncaught errors in the page: ${errors.join('; ')}`);
  },
});

export { expect } from '@playwright/test';
