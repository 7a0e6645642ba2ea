/**
 * The explorer, as `npm start` serves it: built with Vite, opened on the generated sample file,
 * a local file through the file chooser, and a bad URL. Screenshots go to the test output folder.
 */
import path from 'node:path';
import { test as base } from '@playwright/test';
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
