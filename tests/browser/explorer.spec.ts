/**
 * The explorer, as `npm start` serves it: built with Vite, opened on the generated sample file,
 * a local file through the file chooser, and a bad URL. Screenshots go to the test output folder.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test as base, type Page } from '@playwright/test';
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

/** The open file's value of `column` at `row`, read by the page's reader (what a grid cell should show). */
async function valueAt(page: Page, column: string, row: number): Promise<string> {
  return page.evaluate(
    async ([column, row]) => {
      type Handles = { explorer: { file?: ParquetFile } };
      const { file } = (window as unknown as Handles).explorer;
      const table = await file?.scan({ columns: [column], offset: row, limit: 1 }).toTable();
      return String(table?.getChild(column)?.get(0));
    },
    [column, row] as const,
  );
}

test('opens the sample file from ?url= and shows its rows first, then its schema', async ({
  page,
  explorerUrl,
}, info) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  // The grid's first block: 200 rows read, the first of them shown.
  await expect(page.locator('#row-count')).toHaveText('200 rows');
  await expect(page.locator('#grid-rows tr[data-row="0"]:not(.loading)')).toBeVisible();
  // Data first: the filter and the grid's first rows are on the first screen.
  const [filter, firstRow] = await Promise.all([
    page.locator('#filter-input').boundingBox(),
    page.locator('#grid-rows tr[data-row="0"]').boundingBox(),
  ]);
  expect(filter?.y ?? 9999).toBeLessThan(900);
  expect((firstRow?.y ?? 9999) + (firstRow?.height ?? 0)).toBeLessThan(900);
  await expect(page.locator('#schema')).toContainText('l_orderkey');
  await expect(page.locator('#summary')).toContainText(/6,001,215|6001215/);
  await page.screenshot({ path: info.outputPath('explorer-sample.png'), fullPage: true });
});

test('copies a link that opens the same file', async ({ page, context, explorerUrl }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto(`${explorerUrl}/`);
  await expect(page.locator('#copy-link')).toBeHidden();
  await page.fill('#url-input', '/data/lineitem-sf1.parquet');
  await page.click('#open-button');
  await page.waitForSelector('body[data-state=ready]');
  await page.click('#copy-link');
  await expect(page.locator('#status')).toHaveText('Link copied.');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(new URL(link).searchParams.get('url')).toBe('/data/lineitem-sf1.parquet');
  // The link opens the file.
  const other = await context.newPage();
  await other.goto(link);
  await other.waitForSelector('body[data-state=ready]');
  await expect(other.locator('#row-count')).toHaveText('200 rows');
  await expect(other.locator('#copy-link')).toBeVisible();
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

test('a file on another origin whose server hides Content-Range: the page says which CORS headers it must send', async ({
  page,
  explorerUrl,
}, info) => {
  const other = await startRangeServer({ mounts: { '/data/': path.join(cacheDir, 'data') } });
  try {
    // 127.0.0.1 and localhost are two origins; the server sends no Access-Control-Expose-Headers.
    const url = `${other.url.replace('127.0.0.1', 'localhost')}/hostile/no-expose/data/lineitem-sf1.parquet`;
    await page.goto(`${explorerUrl}/?url=${encodeURIComponent(url)}`);
    await page.waitForSelector('body[data-state=error]', { timeout: 30_000 });
    await expect(page.locator('#error')).toContainText('Access-Control-Expose-Headers');
    await expect(page.locator('#error')).toContainText('Content-Range');
    await page.screenshot({ path: info.outputPath('explorer-cors.png'), fullPage: true });
  } finally {
    await other.close();
  }
});

test('filters the open file and shows the count the scan reports', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  await page.fill('#filter-input', "l_orderkey < 10 AND l_shipmode = 'AIR'");
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=ready]');
  const expected = await page.evaluate(async () => {
    const { file } = (window as unknown as { explorer: { file?: ParquetFile } }).explorer;
    const scan = file?.scan({ filter: "l_orderkey < 10 AND l_shipmode = 'AIR'", limit: 200 });
    await scan?.toTable();
    return scan?.stats.rowsOut ?? -1;
  });
  expect(expected).toBeGreaterThan(0);
  await expect(page.locator('#row-count')).toHaveText(`${expected} row${expected === 1 ? '' : 's'}`);
  // The grid shows the matches, and only them.
  await expect(page.locator('#grid-rows tbody tr[data-row]:not(.loading)')).toHaveCount(expected);
  await expect(page.locator('#grid')).toHaveAttribute('data-rows', String(expected));
  await expect(page.locator('#scan-stats')).toContainText('skipped 5 of 6 row groups');
  await page.screenshot({ path: info.outputPath('explorer-filter.png'), fullPage: true });
  // A syntax error is shown under the box, with a caret at the position.
  await page.fill('#filter-input', 'l_quantity < AND');
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=error]');
  await expect(page.locator('#filter-error')).toContainText('INVALID_FILTER: expected a value');
  // The code is said once, not again as the message's first words ("invalid filter: …").
  await expect(page.locator('#filter-error')).not.toContainText('invalid filter:');
  await expect(page.locator('#filter-error')).toContainText('l_quantity < AND\n             ^');
  // The error replaces the results: no rows, count or query panel of the last filter stay.
  await expect(page.locator('#grid-rows tbody tr[data-row]')).toHaveCount(0);
  await expect(page.locator('#match-bar')).toBeHidden();
  await expect(page.locator('#query-card')).toBeHidden();
  await page.screenshot({ path: info.outputPath('explorer-filter-error.png'), fullPage: true });
});

test('counts a filter’s matches, draws the query panel, and an edited filter takes its column from the cache', async ({
  page,
  explorerUrl,
}, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  type Handles = { explorer: { lastStats?: import('parquet-skim').ScanStats; file?: ParquetFile } };
  const runFilter = async (filter: string) => {
    await page.fill('#filter-input', filter);
    await page.click('#filter-button');
    await page.waitForSelector('#match-count[data-count]');
    await page.waitForSelector('body[data-state=ready]');
    return page.evaluate(() => (window as unknown as Handles).explorer.lastStats);
  };
  const first = await runFilter("l_comment LIKE '%special%requests%'");
  if (first === undefined) throw new Error('no stats');
  const firstRows = await page.locator('#grid tbody').innerText();
  // The count shown is the count the library computes.
  const expected = await page.evaluate(async () => {
    const { file } = (window as unknown as Handles).explorer;
    const n = await file?.aggregate({
      filter: "l_comment LIKE '%special%requests%'",
      aggregates: { n: { fn: 'count' } },
    });
    return Number(n?.values.n);
  });
  await expect(page.locator('#match-count')).toHaveAttribute('data-count', String(expected));
  expect(expected).toBe(18655);
  // The panel's numbers are the scan's stats; it lists the view's scans: the grid's first rows, the count.
  await expect(page.locator('#query-scans tbody tr')).toHaveCount(2);
  await expect(page.locator('#query-scans tbody tr').nth(1)).toHaveAttribute('data-bytes', String(first.bytesFetched));
  await expect(page.locator('#query-bytes')).toHaveAttribute('data-bytes', String(first.bytesFetched));
  await expect(page.locator('#query-bytes')).toHaveAttribute('data-requests', String(first.requests));
  // Why that many requests: the gaps read through, the gap's size and the link's measure.
  await expect(page.locator('#query-gaps')).toHaveAttribute('data-read-through', String(first.bytesReadThrough));
  await expect(page.locator('#query-gaps')).toHaveAttribute('data-gap', String(first.gapBytes));
  expect(first.gapBytes).toBeGreaterThanOrEqual(64 * 1024);
  // Footer and pages of SF1 came from 127.0.0.1 by now: the link is measured.
  expect(first.linkBytesPerMs).toBeGreaterThan(0);
  await expect(page.locator('#query-gaps')).toHaveAttribute('data-link', String(first.linkBytesPerMs));
  await expect(page.locator('#query-cache')).toHaveAttribute('data-hits', String(first.columnCache.hits));
  // Where the time went, step by step, as the scan's timeline says.
  await expect(page.locator('#query-timeline')).toHaveAttribute('data-done', String(first.timeline.done));
  await expect(page.locator('#query-timeline')).toContainText('planned');
  await expect(page.locator('#query-timeline')).toContainText('first result');
  // The map: 6 row groups × 16 columns; only l_comment is read (count(*) reads no other column).
  await expect(page.locator('#row-group-map tbody tr')).toHaveCount(6);
  await expect(page.locator('#row-group-map tbody td')).toHaveCount(6 * 16);
  await expect(page.locator('#row-group-map td[data-fate=read]')).toHaveCount(6);
  await expect(page.locator('#row-group-map td[data-fate=notNeeded]')).toHaveCount(6 * 15);
  await expect(page.locator('#cache-chart canvas')).toHaveCount(1);
  await page.screenshot({ path: info.outputPath('explorer-query-panel.png'), fullPage: true });

  // An edited filter on the same column: the row groups come from the workers' caches and their
  // l_comment is not fetched again. Each worker's cache holds its share of the explorer's 256 MiB
  // (112 MiB with CI's two workers, an eighth kept for the page): three of SF1's l_comment row
  // groups (~36 MiB each decoded). Which worker decodes which row group depends on timing, so a
  // worker that got four of the first count's six keeps three: then one row group is read again
  // (seen in one CI run of ~10).
  const second = await runFilter("l_comment LIKE '%furiously%'");
  if (second === undefined) throw new Error('no stats');
  const hits = second.columnCache.hits;
  expect(hits).toBeGreaterThanOrEqual(5);
  expect(hits + second.columnCache.misses).toBe(6);
  if (hits === 6) expect(second.bytesFetchedFilter).toBe(0);
  else expect(second.bytesFetchedFilter).toBeLessThan(first.bytesFetchedFilter / 3);
  // The grid's first rows of the edited filter came from the cache too.
  expect(Number(await page.locator('#query-scans tbody tr').first().getAttribute('data-hits'))).toBeGreaterThan(0);
  await expect(page.locator('#query-cache')).toHaveAttribute('data-hits', String(hits));
  await expect(page.locator('#row-group-map td[data-fate=cached]')).toHaveCount(hits);
  await page.screenshot({ path: info.outputPath('explorer-refilter-cached.png'), fullPage: true });

  // Back to the first filter: its rows and count come back as the first run read them, and
  // nothing is read (the edited filter above did read, so the counter sees the reads).
  let reads = 0;
  page.on('request', (request) => {
    if (request.url().includes('/data/lineitem-sf1.parquet')) reads += 1;
  });
  await runFilter("l_comment LIKE '%carefully%'");
  expect(reads).toBeGreaterThan(0);
  const readsBefore = reads;
  const again = await runFilter("l_comment LIKE '%special%requests%'");
  expect(reads).toBe(readsBefore);
  expect(again).toEqual(first);
  await expect(page.locator('#match-count')).toHaveAttribute('data-count', '18655');
  await expect(page.locator('#scan-stats')).toHaveAttribute('data-kept', 'true');
  await expect(page.locator('#scan-stats')).toContainText('nothing read now');
  await expect(page.locator('#query-scans tbody tr').first()).toContainText('nothing read now');
  await expect(page.locator('#query-scans tbody tr').nth(1)).toContainText('nothing read now');
  expect(await page.locator('#grid tbody').innerText()).toBe(firstRows);
  // The same filter run twice in a row: the second run reads nothing either.
  await runFilter("l_comment LIKE '%special%requests%'");
  expect(reads).toBe(readsBefore);
  await page.screenshot({ path: info.outputPath('explorer-filter-again.png'), fullPage: true });
});

test('a rare filter shows its first matches as their row group is read, not when the last one is', async ({
  page,
}, info) => {
  // 150 ms per request: the matches of '%special%requests%deposits%' lie in every row group of
  // SF1, and reading the pages that hold them takes several rounds per row group.
  const slow = await startRangeServer({
    mounts: { '/': path.join(repoRoot, 'web/explorer/dist'), '/data/': path.join(cacheDir, 'data') },
    latencyMs: 150,
  });
  try {
    await page.goto(`${slow.url}/?url=/data/lineitem-sf1.parquet`);
    await page.waitForSelector('body[data-state=ready]', { timeout: 30_000 });
    await page.fill('#filter-input', "l_comment LIKE '%special%requests%deposits%'");
    const started = Date.now();
    await page.click('#filter-button');
    // Rows of the new filter on screen while its first block is still being read (the match
    // count still says "Filtering…", and rows below are loading).
    await page.waitForFunction(
      () =>
        document.querySelector('#match-count')?.textContent === 'Filtering…' &&
        document.querySelectorAll('#grid-rows tr[data-row]:not(.loading)').length > 0 &&
        document.querySelectorAll('#grid-rows tr.loading').length > 0,
      undefined,
      { timeout: 60_000 },
    );
    const firstShown = Date.now() - started;
    await page.screenshot({ path: info.outputPath('explorer-rare-filter-first-matches.png') });
    const shownRows = await page.locator('#grid-rows tr[data-row]:not(.loading)').allInnerTexts();
    await page.waitForSelector('#match-count[data-count]', { timeout: 60_000 });
    console.log(
      `\nrare filter at 150 ms per request: first matches shown after ${firstShown} ms, counted after ${Date.now() - started} ms`,
    );
    await expect(page.locator('#match-count')).toHaveAttribute('data-count', '82');
    // The rows shown early are the first matches, in order: the whole block starts with them.
    const allRows = await page.locator('#grid-rows tr[data-row]').allInnerTexts();
    expect(allRows.slice(0, shownRows.length)).toEqual(shownRows);
  } finally {
    await slow.close();
  }
});

test('cancels a long scan: the count stops, the page stays usable, no request is left open', async ({ page }, info) => {
  // 400 ms per request: counting over SF1 takes seconds, longer than the screenshot below even on
  // a slow machine (the Cancel button is disabled again once the count is done).
  const slow = await startRangeServer({
    mounts: { '/': path.join(repoRoot, 'web/explorer/dist'), '/data/': path.join(cacheDir, 'data') },
    latencyMs: 400,
  });
  try {
    await page.goto(`${slow.url}/?url=/data/lineitem-sf1.parquet`);
    await page.waitForSelector('body[data-state=ready]', { timeout: 30_000 });
    await page.fill('#filter-input', "l_comment LIKE '%special%'");
    await page.click('#filter-button');
    // At once, before any row of the new filter: the old rows are gone (loading in their place),
    // the old stats are marked stale, the filter says it is running, and Cancel works.
    await expect(page.locator('#grid-rows tr[data-row="0"].loading')).toHaveCount(1);
    await expect(page.locator('#scan-stats')).toHaveClass(/stale/);
    await expect(page.locator('#match-count')).toHaveText('Filtering…');
    await page.waitForSelector('#cancel-button:not([disabled])', { timeout: 30_000 });
    await page.screenshot({ path: info.outputPath('explorer-long-scan.png') });
    await page.click('#cancel-button', { timeout: 10_000 });
    await page.waitForSelector('body[data-state=ready]');
    await expect(page.locator('#status')).toHaveText('Cancelled.');
    await expect(page.locator('#match-count')).toHaveText('Cancelled.');
    await page.screenshot({ path: info.outputPath('explorer-cancelled.png'), fullPage: true });
    await expect.poll(() => slow.openRequests, { timeout: 5_000 }).toBe(0);
    // The page still works.
    await page.fill('#filter-input', 'l_orderkey < 10');
    await page.click('#filter-button');
    await page.waitForSelector('#match-count[data-count]', { timeout: 30_000 });
    await expect(page.locator('#match-count')).toHaveAttribute('data-count', '25');
    // Escape cancels as the button does.
    await page.fill('#filter-input', "l_comment LIKE '%quickly%'");
    await page.click('#filter-button');
    await page.waitForSelector('#cancel-button:not([disabled])', { timeout: 30_000 });
    await page.keyboard.press('Escape');
    await page.waitForSelector('body[data-state=ready]');
    await expect(page.locator('#status')).toHaveText('Cancelled.');
    await expect.poll(() => slow.openRequests, { timeout: 5_000 }).toBe(0);
  } finally {
    await slow.close();
  }
});

test('the data grid scrolls to row 5,000,000 fetching only the pages it shows; the column picker narrows it', async ({
  page,
  explorerUrl,
}, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  type Handles = {
    explorer: { file?: ParquetFile; grid?: { scrollToRow(row: number): void; cost: { bytes: number } } };
  };
  await page.waitForSelector('#grid-rows tr[data-row="0"]:not(.loading)');
  await page.click('#tab-column-chunks');
  await expect(page.locator('#column-chunks tbody tr')).toHaveCount(6);
  await expect(page.locator('#column-chunks tbody tr').first().locator('td')).toHaveCount(16);
  // Wheel-scroll a little, then jump far down.
  await page.hover('#grid-viewport');
  await page.mouse.wheel(0, 2000);
  await expect.poll(async () => Number(await page.locator('#grid').getAttribute('data-first-row'))).toBeGreaterThan(0);
  // "Go to row".
  await page.fill('#goto-input', '5000000');
  await page.press('#goto-input', 'Enter');
  const row = page.locator('#grid-rows tr[data-row="5000000"]:not(.loading)');
  await row.waitFor();
  const expected = await page.evaluate(async () => {
    const { file } = (window as unknown as Handles).explorer;
    const table = await file?.scan({ columns: ['l_orderkey', 'l_comment'], offset: 5_000_000, limit: 1 }).toTable();
    return {
      key: String(table?.getChild('l_orderkey')?.get(0)),
      comment: String(table?.getChild('l_comment')?.get(0)),
    };
  });
  await expect(row.locator('td').nth(1)).toHaveText(expected.key);
  await expect(row).toContainText(expected.comment.slice(0, 20));
  const cost = await page.evaluate(() => (window as unknown as Handles).explorer.grid?.cost.bytes ?? -1);
  const fileBytes = await page.evaluate(() => (window as unknown as Handles).explorer.file?.byteLength ?? 0);
  console.log(
    `\ngrid: scrolled to row 5,000,000 having fetched ${cost} B of ${fileBytes} (${((100 * cost) / fileBytes).toFixed(2)}%)`,
  );
  expect(cost).toBeGreaterThan(0);
  expect(cost).toBeLessThan(fileBytes * 0.05);
  await page.screenshot({ path: info.outputPath('explorer-grid-far-down.png'), fullPage: true });
  // The last row can be reached, and shows whole.
  await page.fill('#goto-input', '6001214');
  await page.press('#goto-input', 'Enter');
  const last = page.locator('#grid-rows tr[data-row="6001214"]:not(.loading)');
  await last.waitFor();
  // Whole, vertically, inside the grid's viewport (rows are wider than it: it scrolls sideways).
  const [rowBox, viewBox] = await Promise.all([last.boundingBox(), page.locator('#grid-viewport').boundingBox()]);
  expect(rowBox).not.toBeNull();
  expect(viewBox).not.toBeNull();
  if (rowBox !== null && viewBox !== null) {
    expect(rowBox.y).toBeGreaterThanOrEqual(viewBox.y);
    expect(rowBox.y + rowBox.height).toBeLessThanOrEqual(viewBox.y + viewBox.height);
  }
  await page.fill('#goto-input', '5000000');
  await page.press('#goto-input', 'Enter');
  await row.waitFor();
  // The column picker: keep l_orderkey and l_shipdate only.
  await page.click('.picker-details summary');
  for (const name of [
    'l_partkey',
    'l_suppkey',
    'l_linenumber',
    'l_quantity',
    'l_extendedprice',
    'l_discount',
    'l_tax',
  ]) {
    await page.uncheck(`#column-picker input[value="${name}"]`);
  }
  for (const name of [
    'l_returnflag',
    'l_linestatus',
    'l_commitdate',
    'l_receiptdate',
    'l_shipinstruct',
    'l_shipmode',
    'l_comment',
  ]) {
    await page.uncheck(`#column-picker input[value="${name}"]`);
  }
  await expect(page.locator('#grid-rows thead th')).toHaveCount(3);
  await page.waitForSelector('#grid-rows tr[data-row="5000000"]:not(.loading)');
  await expect(page.locator('#grid-rows tr[data-row="5000000"] td').nth(1)).toHaveText(expected.key);
  await page.screenshot({ path: info.outputPath('explorer-grid-columns.png'), fullPage: true });
});

test('a drag of the scrollbar across the file reads the blocks it ends on, not one per block it passes', async ({
  page,
  explorerUrl,
}) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('#grid-rows tr[data-row="0"]:not(.loading)');
  const started = async () => Number(await page.locator('#grid').getAttribute('data-blocks-started'));
  const before = await started();
  // 40 scroll positions a frame apart, ~120,000 rows each: a drag from the top to 80% down.
  await page.evaluate(async () => {
    const viewport = document.querySelector('#grid-viewport') as HTMLElement;
    for (let i = 1; i <= 40; i++) {
      viewport.scrollTop = ((viewport.scrollHeight - viewport.clientHeight) * i) / 50;
      await new Promise((resolve) => setTimeout(resolve, 16));
    }
  });
  const first = Number(await page.locator('#grid').getAttribute('data-first-row'));
  expect(first).toBeGreaterThan(4_000_000);
  // Once it rests, the rows it ended on are read.
  await page.waitForSelector(`#grid-rows tr[data-row="${first}"]:not(.loading)`);
  const reads = (await started()) - before;
  console.log(`\ndrag over 40 positions: ${reads} block reads started`);
  expect(reads).toBeGreaterThanOrEqual(1);
  expect(reads).toBeLessThanOrEqual(3);
});

test('a grid block whose reads failed says why, and is read again when the network is back', async ({
  page,
  explorerUrl,
}) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('#grid-rows tr[data-row="0"]:not(.loading)');
  // The network goes: every read of the file fails (the reader's own retries included).
  let down = true;
  await page.route('**/data/lineitem-sf1.parquet*', (route) => (down ? route.abort('failed') : route.continue()));
  await page.fill('#goto-input', '1000');
  await page.press('#goto-input', 'Enter');
  const row = page.locator('#grid-rows tr[data-row="1000"]');
  await expect(row.locator('td').nth(1)).toHaveText('NETWORK: trying again', { timeout: 15_000 });
  // It comes back: the block is read again without the user doing anything.
  down = false;
  await expect(page.locator('#grid-rows tr[data-row="1000"]:not(.loading)')).toBeVisible({ timeout: 15_000 });
  await expect(row.locator('td').nth(1)).toHaveText(await valueAt(page, 'l_orderkey', 1000));
});

test('a cell clicked while its row loads shows in the inspector once the block is read', async ({
  page,
  explorerUrl,
}) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('#grid-rows tr[data-row="0"]:not(.loading)');
  // The file's reads wait until the test lets them go.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route('**/data/lineitem-sf1.parquet*', async (route) => {
    await held;
    await route.continue();
  });
  await page.fill('#goto-input', '1000');
  await page.press('#goto-input', 'Enter');
  const row = page.locator('#grid-rows tr[data-row="1000"]');
  await expect(row).toHaveClass(/loading/);
  await row.locator('td').nth(16).click();
  const inspector = page.locator('#cell-inspector');
  await expect(inspector).toContainText('l_comment · row 1,000');
  await expect(inspector).toContainText('loading');
  release();
  await expect(page.locator('#grid-rows tr[data-row="1000"]:not(.loading)')).toBeVisible({ timeout: 15_000 });
  await page.unroute('**/data/lineitem-sf1.parquet*');
  await expect(inspector.locator('.inspector-value')).toHaveText(await valueAt(page, 'l_comment', 1000));
  await expect(inspector).not.toContainText('loading');
});

test('one grid for a filter: it scrolls through every match, read in blocks from the cache the count filled', async ({
  page,
  explorerUrl,
}, info) => {
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  type Handles = { explorer: { file?: ParquetFile } };
  const filter = 'l_quantity < 10';
  await page.fill('#filter-input', filter);
  await page.click('#filter-button');
  await page.waitForSelector('#match-count[data-count]');
  await page.waitForSelector('body[data-state=ready]');
  const matches = Number(await page.getAttribute('#match-count', 'data-count'));
  expect(matches).toBeGreaterThan(1_000_000);
  // The grid scrolls through all of them, not the first 100.
  await expect(page.locator('#grid')).toHaveAttribute('data-rows', String(matches));
  /** The grid's match `n` is the library's: l_orderkey and l_comment of scan({ filter, offset: n, limit: 1 }). */
  const checkMatch = async (n: number) => {
    await page.fill('#goto-input', String(n));
    await page.press('#goto-input', 'Enter');
    const row = page.locator(`#grid-rows tr[data-row="${n}"]:not(.loading)`);
    await row.waitFor({ timeout: 30_000 });
    const expected = await page.evaluate(
      async ({ filter, offset }) => {
        const { file } = (window as unknown as Handles).explorer;
        const table = await file?.scan({ columns: ['l_orderkey', 'l_comment'], filter, offset, limit: 1 }).toTable();
        return {
          key: String(table?.getChild('l_orderkey')?.get(0)),
          comment: String(table?.getChild('l_comment')?.get(0)),
        };
      },
      { filter, offset: n },
    );
    await expect(row.locator('td').nth(1)).toHaveText(expected.key);
    await expect(row).toContainText(expected.comment.slice(0, 20));
  };
  await checkMatch(50_000);
  await page.screenshot({ path: info.outputPath('explorer-filter-grid-match-50000.png'), fullPage: true });
  await checkMatch(matches - 1);
  // Nothing past the last match.
  await expect(page.locator(`#grid-rows tr[data-row="${matches}"]`)).toHaveCount(0);
  await expect(page.locator('#grid-cost')).toContainText('The grid has read');
  await expect(page.locator('#grid-cost')).toContainText('from the cache');
  // Clearing the filter shows every row again.
  await page.fill('#filter-input', '');
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#grid')).toHaveAttribute('data-rows', '6001215');
  await expect(page.locator('#match-bar')).toBeHidden();
});

test('the inspector shows a nested value as a tree', async ({ page, explorerUrl }, info) => {
  await page.goto(`${explorerUrl}/`);
  await page.setInputFiles('#file-input', path.join(parquetTestingDir, 'nested_lists.snappy.parquet'));
  await page.waitForSelector('body[data-state=ready]');
  const cell = page.locator('#grid-rows tr[data-row="0"]:not(.loading) td').nth(1);
  await cell.click();
  const tree = page.locator('#cell-inspector .json-tree');
  await expect(tree).toBeVisible();
  // The first two levels are open; deeper ones open on a click.
  await expect(tree.locator('details').first()).toHaveAttribute('open', '');
  const firstClosed = await tree.evaluate((t) => [...t.querySelectorAll('details')].findIndex((d) => !d.open));
  expect(firstClosed).toBeGreaterThan(0);
  const deeper = tree.locator('details').nth(firstClosed);
  await deeper.locator('summary').first().click();
  await expect(deeper).toHaveAttribute('open', '');
  await expect(tree).toContainText('"a"');
  await page.screenshot({ path: info.outputPath('explorer-inspector-nested.png'), fullPage: true });
});

test('the explorer works 800 px wide: nothing but the grid scrolls sideways', async ({ page, explorerUrl }, info) => {
  await page.setViewportSize({ width: 800, height: 900 });
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#grid-rows tr[data-row="0"]:not(.loading)')).toBeVisible();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(800);
  const filter = await page.locator('#filter-button').boundingBox();
  expect((filter?.x ?? 9999) + (filter?.width ?? 0)).toBeLessThanOrEqual(800);
  await page.screenshot({ path: info.outputPath('explorer-800px.png'), fullPage: true });
});

test('the grid moves by rows (wheel, arrow keys), copies a cell or a row, and resizes columns', async ({
  page,
  context,
  explorerUrl,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  type Handles = { explorer: { file?: ParquetFile } };
  const firstRow = async () => Number(await page.locator('#grid').getAttribute('data-first-row'));
  await page.waitForSelector('#grid-rows tr[data-row="0"]:not(.loading)');
  // A wheel notch (100 px) moves about four 24 px rows, not 75 of them.
  await page.hover('#grid-viewport');
  await page.mouse.wheel(0, 100);
  await expect.poll(firstRow).toBeGreaterThan(0);
  const afterWheel = await firstRow();
  expect(afterWheel).toBeLessThanOrEqual(5);
  // ArrowDown moves one row; PageDown a screenful; Home back to the top.
  await page.focus('#grid-viewport');
  await page.keyboard.press('ArrowDown');
  await expect.poll(firstRow).toBe(afterWheel + 1);
  await page.keyboard.press('Home');
  await expect.poll(firstRow).toBe(0);
  // Copy: a cell's whole value (l_comment is cut in the grid), then a row as tab-separated values.
  const expected = await page.evaluate(async () => {
    const { file } = (window as unknown as Handles).explorer;
    const table = await file?.scan({ offset: 3, limit: 1 }).toTable();
    return {
      comment: String(table?.getChild('l_comment')?.get(0)),
      key: String(table?.getChild('l_orderkey')?.get(0)),
    };
  });
  const row = page.locator('#grid-rows tr[data-row="3"]:not(.loading)');
  await row.locator('td').nth(16).click();
  await expect(page.locator('#cell-inspector')).toContainText(expected.comment);
  await page.keyboard.press('Control+C');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(expected.comment);
  await row.locator('td.row-number').click();
  await page.keyboard.press('Control+C');
  const tsv = (await page.evaluate(() => navigator.clipboard.readText())).split('\t');
  expect(tsv).toHaveLength(16);
  expect(tsv[0]).toBe(expected.key);
  expect(tsv[15]).toBe(expected.comment);
  // With a row selected, ArrowDown moves the selection.
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('#grid-rows tr[data-row="4"].selected')).toHaveCount(1);
  // Resizing: drag l_partkey's right edge 120 px right, then 60 px left of where it was; its cells
  // follow; a double click fits it again.
  const header = page.locator('#grid-rows th[data-column="l_partkey"]');
  const widthOf = async () => (await header.boundingBox())?.width ?? 0;
  const before = await widthOf();
  const handle = header.locator('.resize-handle');
  const box = await handle.boundingBox();
  if (box === null) throw new Error('no resize handle');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await expect.poll(widthOf).toBeGreaterThan(before + 100);
  const wide = await widthOf();
  const grip = await handle.boundingBox();
  if (grip === null) throw new Error('no resize handle');
  await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
  await page.mouse.down();
  await page.mouse.move(grip.x + grip.width / 2 - 60, grip.y + grip.height / 2, { steps: 5 });
  await page.mouse.up();
  await expect.poll(widthOf).toBeLessThan(wide - 40);
  const cell = page.locator('#grid-rows tr[data-row="4"] td').nth(2);
  await expect.poll(async () => Math.abs(((await cell.boundingBox())?.width ?? 0) - (await widthOf()))).toBeLessThan(2);
  await header.locator('.resize-handle').dblclick();
  await expect.poll(widthOf).toBeLessThan(before + 2);
});

test('the main views have no serious or critical accessibility violations (axe)', async ({ page, explorerUrl }) => {
  const { default: AxeBuilder } = await import('@axe-core/playwright');
  const serious = async (view: string) => {
    const result = await new AxeBuilder({ page }).analyze();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${view}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  };
  const found: string[] = [];
  // The empty page, a file open, a filter's results, and an error.
  await page.goto(`${explorerUrl}/`);
  found.push(...(await serious('start')));
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  found.push(...(await serious('file open')));
  await page.fill('#filter-input', 'l_orderkey < 1000');
  await page.click('#filter-button');
  await page.waitForSelector('body[data-state=ready]');
  found.push(...(await serious('filtered')));
  await page.goto(`${explorerUrl}/?url=/data/missing.parquet`);
  await page.waitForSelector('body[data-state=error]');
  found.push(...(await serious('error')));
  expect(found).toEqual([]);
});

test('types read as a reader names them, and known key-value metadata is decoded', async ({ page, explorerUrl }) => {
  // A Spark file: decimal(4, 2), and its row metadata as indented JSON.
  await page.goto(`${explorerUrl}/`);
  await page.setInputFiles('#file-input', path.join(parquetTestingDir, 'int32_decimal.parquet'));
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#schema .field-type').first()).toHaveText('decimal(4, 2)');
  await page.click('#tab-kv-metadata');
  const spark = page.locator('#kv-metadata details', { hasText: 'org.apache.spark.sql.parquet.row.metadata' });
  await spark.locator('summary').click();
  await expect(spark.locator('.kv-value')).toContainText('"type": "struct",\n');
  // The sample file: ARROW:schema decoded into its fields, not base64.
  await page.goto(`${explorerUrl}/?url=/data/lineitem-sf1.parquet`);
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#schema')).toContainText('decimal(15, 2)');
  await expect(page.locator('#schema')).toContainText('date');
  await page.click('#tab-kv-metadata');
  const arrow = page.locator('#kv-metadata details', { hasText: 'ARROW:schema' });
  await arrow.locator('summary').click();
  await expect(arrow.locator('.kv-value')).toContainText('Arrow schema (decoded from base64 IPC)');
  await expect(arrow.locator('.kv-value')).toContainText('l_extendedprice: decimal(15, 2)');
});

test('every parquet-testing file opens in the explorer with no page error: its rows render, or it says why it cannot be read', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const server = await startRangeServer({
    mounts: { '/': path.join(repoRoot, 'web/explorer/dist'), '/pt/': parquetTestingDir },
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  const outcomes: Record<string, string> = {};
  try {
    const files = readdirSync(parquetTestingDir).filter((f) => f.endsWith('.parquet'));
    for (const name of files) {
      await page.goto(`${server.url}/?url=/pt/${name}`);
      await page.waitForSelector('body[data-state=ready], body[data-state=error]', { timeout: 30_000 });
      const state = await page.getAttribute('body', 'data-state');
      if (state === 'error') {
        // A typed error with its code, never a raw exception.
        const text = (await page.locator('#error').textContent()) ?? '';
        expect(text, name).toMatch(/[A-Z_]{4,}/);
        outcomes[name] = 'error';
        continue;
      }
      // No row stays a placeholder, and no cell shows a raw exception.
      await expect(page.locator('#grid-rows tr.loading')).toHaveCount(0, { timeout: 5_000 });
      await expect(page.locator('#grid')).not.toContainText('TypeError');
      await expect(page.locator('#grid')).not.toContainText('RangeError');
      if (name === 'int96_from_spark.parquet') {
        // Spark's INT96 timestamps, nanoseconds past 2^53: every digit, as exact text.
        await expect(page.locator('#grid-rows tr[data-row="0"]')).toContainText('2024-01-01');
        await expect(page.locator('#grid-rows tr[data-row="0"]')).toContainText('123456');
        await page.screenshot({ path: test.info().outputPath('explorer-int96.png'), fullPage: true });
      }
      outcomes[name] = 'ok';
    }
  } finally {
    await server.close();
  }
  expect(errors).toEqual([]);
  const ok = Object.values(outcomes).filter((o) => o === 'ok').length;
  expect(ok).toBeGreaterThan(50);
  expect(outcomes['int96_from_spark.parquet']).toBe('ok');
});

test('opens a chosen folder as a dataset: its files with partitions, sizes and rows, and what a filter did with each', async ({
  page,
  explorerUrl,
}, info) => {
  await page.goto(`${explorerUrl}/`);
  await page.setInputFiles('#folder-input', path.join(cacheDir, 'data/datasets/hive'));
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#summary-title')).toHaveText('Dataset');
  await expect(page.locator('#summary')).toContainText('12 files');
  await expect(page.locator('#summary')).toContainText('120,000 rows');
  await expect(page.locator('#summary')).toContainText('year (int64), region (string)');
  await expect(page.locator('#files-table tbody tr')).toHaveCount(12);
  await expect(page.locator('#files-table tbody tr').first()).toContainText('hive/year=2020/region=EU/part-0.parquet');
  await expect(page.locator('#files-table tbody tr').nth(2)).toContainText('null');
  await expect(page.locator('#grid-rows tr[data-row="0"]:not(.loading)')).toBeVisible();
  await expect(page.locator('#grid')).toHaveAttribute('data-rows', '120000');
  // The single file's panels are not shown for a dataset.
  await expect(page.locator('#column-chunks')).toBeHidden();
  await page.fill('#filter-input', "region = 'US' AND value < 0.5");
  await page.click('#filter-button');
  await page.waitForSelector('#match-count[data-count]');
  const matches = Number(await page.getAttribute('#match-count', 'data-count'));
  expect(matches).toBeGreaterThan(0);
  await expect(page.locator('#files-table tbody tr.fate-partition')).toHaveCount(8);
  await expect(page.locator('#files-table tbody tr.fate-read')).toHaveCount(4);
  await expect(page.locator('#files-table tbody tr.fate-partition').first()).toContainText('pruned by partition');
  await page.screenshot({ path: info.outputPath('explorer-dataset.png'), fullPage: true });
});

test('opens a dataset from a list of URLs', async ({ page, explorerUrl }) => {
  const files = readdirSync(path.join(cacheDir, 'data/datasets/hive'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.parquet'))
    .sort();
  await page.goto(`${explorerUrl}/`);
  await page.click('.dataset-open summary');
  await page.fill('#dataset-urls', files.map((f) => `/data/datasets/hive/${f}`).join('\n'));
  await page.click('#dataset-button');
  await page.waitForSelector('body[data-state=ready]');
  await expect(page.locator('#files-table tbody tr')).toHaveCount(12);
  await expect(page.locator('#summary')).toContainText('12 files');
  await expect(page.locator('#grid-rows tr[data-row="0"]:not(.loading)')).toBeVisible();
});
