/**
 * The explorer, as `npm start` serves it: built with Vite, opened on the generated sample file,
 * a local file through the file chooser, and a bad URL. Screenshots go to the test output folder.
 */
import path from 'node:path';
import { test as base } from '@playwright/test';
import type { ParquetFile } from 'parquet-skim';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect, parquetTestingDir, repoRoot } from './fixtures.ts';

const test = base.extend<{ explorerUrl: string }>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature.
  explorerUrl: async ({}, use) => {
    const server = await startRangeServer({
      mounts: { '/': path.join(repoRoot, 'web/explorer/dist'), '/data/': path.join(cacheDir, 'data') },
    });
    await use(server.url);
    await server.close();
  },
});

test('opens the sample file from ?url= and shows its schema and first rows', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#row-count')).toHaveText('100 rows');
  await expect(page.locator('#rows tbody tr')).toHaveCount(100);
  await expect(page.locator('#schema')).toContainText('l_orderkey');
  await expect(page.locator('#summary')).toContainText(/6,001,215|6001215/);
  await page.screenshot({ path: info.outputPath('explorer-sample.png'), fullPage: true });
});

test('opens a local file through the file chooser', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/`);
  await page.setInputFiles('#file-input', path.join(parquetTestingDir, 'alltypes_plain.parquet'));
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#row-count')).toHaveText('8 rows');
  await page.screenshot({ path: info.outputPath('explorer-local-file.png'), fullPage: true });
});

test('shows a typed error for a missing file', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/?url=/data/no-such-file.parquet`);
  await page.waitForSelector('body[data-state=error]');
  await expect(page.locator('#error')).toContainText('HTTP_STATUS');
  await page.screenshot({ path: info.outputPath('explorer-error.png'), fullPage: true });
});

test('filters the open file and shows the count the scan reports', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  await page.fill('#filter-input', "l_orderkey < 10 AND l_shipmode = 'AIR'");
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=ready]');
  const expected = await page.evaluate(async () => {
    const { file } = (window as unknown as { explorer: { file?: ParquetFile } }).explorer;
    const scan = file?.scan({ filter: "l_orderkey < 10 AND l_shipmode = 'AIR'", limit: 100 });
    await scan?.toTable();
    return scan?.stats.rowsOut ?? -1;
  });
  expect(expected).toBeGreaterThan(0);
  await expect(page.locator('#row-count')).toHaveText(`${expected} row${expected === 1 ? '' : 's'}`);
  await expect(page.locator('#rows tbody tr')).toHaveCount(expected);
  await expect(page.locator('#scan-stats')).toContainText('skipped 5 of 6 row groups');
  await page.screenshot({ path: info.outputPath('explorer-filter.png'), fullPage: true });
  // A syntax error is shown under the box, with a caret at the position.
  await page.fill('#filter-input', 'l_quantity < AND');
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=error]');
  await expect(page.locator('#filter-error')).toContainText('INVALID_FILTER');
  await expect(page.locator('#filter-error')).toContainText('l_quantity < AND\n             ^');
  await page.screenshot({ path: info.outputPath('explorer-filter-error.png'), fullPage: true });
});
