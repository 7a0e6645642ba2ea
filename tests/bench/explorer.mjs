/**
 * Explorer bench: an edited filter where the user waits (issue 19 point 4). The explorer, as built
 * (`web/explorer/dist`), in headless Chromium against the range server, opened on TPC-H SF1
 * lineitem (`tests/.cache/data/lineitem-sf1.parquet`, the sample it offers). Each run is a fresh
 * page: a first `LIKE` on `l_comment` is run and counted (the count leaves `l_comment` in the
 * workers' cache), then the edited filter is typed and run, and timed from its click:
 * - `firstShownMs`: its first matching rows on screen (the grid shows a block's rows as they arrive);
 * - `screenMs`: every row on the first screen shown (none left loading);
 * - `blockMs`: the grid's first block (200 matches, or all of them) read;
 * - `countMs`: the count shown;
 * - the same filter run once more (`againMs`: its rows and count on screen; the explorer keeps them).
 * The I/O floor is the byte ranges the edited filter fetched (the range server's log), fetched again
 * by the same page with bare `fetch`, all at once (one round: every range is known).
 * The first screen's I/O floor: the ranges of the row groups its rows lie in (their keys, by the
 * footer's l_orderkey statistics: lineitem is sorted by it). Medians of
 * BENCH_RUNS (default 5) after one warm-up run, at 0 and 20 ms per request (BENCH_LATENCIES).
 *
 * Output: bench/results/<date>-explorer.{json,md} (BENCH_WRITE=0: print only).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startRangeServer } from '../server/range-server.mjs';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';
import { median, RUNS, repo, today } from './lib.mjs';

const FILE = 'lineitem-sf1.parquet';
/** [first filter, edited filter]: a rare edit (82 matches in every row group) and a common one. */
const CASES = [
  {
    name: 'rare edit',
    first: "l_comment LIKE '%special%requests%'",
    edited: "l_comment LIKE '%special%requests%deposits%'",
  },
  { name: 'common edit', first: "l_comment LIKE '%requests%'", edited: "l_comment LIKE '%special%requests%'" },
];
const LATENCIES = (process.env.BENCH_LATENCIES ?? '0,20').split(',').map(Number);

/** Runs `filter` in the page and times, from its click, the first rows shown, the block read and the count. */
async function timeFilter(page, filter) {
  return page.evaluate(async (filter) => {
    const input = document.querySelector('#filter-input');
    const count = document.querySelector('#match-count');
    input.value = filter;
    const started = performance.now();
    document.querySelector('#filter-button').click();
    const times = {};
    let cleared = false;
    await new Promise((resolve) => {
      const tick = () => {
        const now = performance.now() - started;
        const row0 = document.querySelector('#grid-rows tr[data-row="0"]');
        // The old rows go the moment the filter starts; the new view's rows come after.
        if (row0?.classList.contains('loading')) cleared = true;
        if (times.firstShownMs === undefined && cleared && row0 !== null && !row0.classList.contains('loading'))
          times.firstShownMs = now;
        if (
          times.screenMs === undefined &&
          times.firstShownMs !== undefined &&
          document.querySelector('#grid-rows tr.loading') === null
        )
          times.screenMs = now;
        const text = count.textContent ?? '';
        if (times.blockMs === undefined && (text.startsWith('Counting') || count.dataset.count !== undefined))
          times.blockMs = now;
        if (count.dataset.count !== undefined) {
          times.countMs = now;
          times.firstShownMs ??= now; // kept rows come back before a frame shows them loading
          times.screenMs ??= now;
          times.blockMs ??= now;
          resolve();
          return;
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    return { ...times, matches: Number(count.dataset.count) };
  }, filter);
}

/** Fetches `ranges` of the file with bare `fetch`, all at once; ms until every body is read. */
async function ioFloor(page, url, ranges) {
  return page.evaluate(
    async ({ url, ranges }) => {
      const started = performance.now();
      await Promise.all(
        ranges.map(async (range) => {
          // `no-store`, as the reader fetches: past Chromium's HTTP cache, which lets one request
          // per URL at a time use its entry.
          const response = await fetch(url, { headers: { Range: range }, cache: 'no-store' });
          await response.arrayBuffer();
        }),
      );
      return performance.now() - started;
    },
    { url, ranges },
  );
}

async function runCase(browser, server, testCase) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  try {
    await page.goto(`${server.url}/?url=/data/${FILE}`);
    await page.waitForSelector('body[data-state=ready]', { timeout: 60_000 });
    await timeFilter(page, testCase.first);
    await page.waitForSelector('body[data-state=ready]');
    const from = server.log.length;
    const edited = await timeFilter(page, testCase.edited);
    await page.waitForSelector('body[data-state=ready]');
    const fetched = server.log.slice(from).filter((e) => e.path === `/data/${FILE}` && e.method === 'GET');
    const again = await timeFilter(page, testCase.edited);
    const againRequests = server.log.length - from - fetched.length;
    const ranges = fetched.map((e) => e.range);
    const floorMs = await ioFloor(page, `/data/${FILE}`, ranges);
    // The first screen's share: the ranges in the row groups its rows lie in (lineitem is sorted
    // by l_orderkey, so each row's key names its row group by the footer's statistics).
    const screen = await page.evaluate(() => {
      const rows = [...document.querySelectorAll('#grid-rows tr[data-row]')];
      const keys = rows.map((tr) => Number(tr.children[1]?.textContent));
      const groups = window.explorer.file.metadata.rowGroups.map((group) => {
        const key = group.columns.find((c) => c.path === 'l_orderkey');
        return {
          start: Math.min(...group.columns.map((c) => c.start)),
          end: Math.max(...group.columns.map((c) => c.end)),
          min: Number(key.statistics.min),
          max: Number(key.statistics.max),
        };
      });
      const used = [...new Set(keys.map((k) => groups.findIndex((g) => k >= g.min && k <= g.max)))];
      return { rows: rows.length, rowGroups: used.sort((a, b) => a - b), spans: used.map((i) => groups[i]) };
    });
    const offset = (range) => Number(/bytes=(\d+)-/.exec(range)?.[1]);
    const screenRanges = ranges.filter((r) => screen.spans.some((g) => offset(r) >= g.start && offset(r) < g.end));
    const screenFloorMs = await ioFloor(page, `/data/${FILE}`, screenRanges);
    return {
      ...edited,
      requests: fetched.length,
      bytes: fetched.reduce((sum, e) => sum + e.bytes, 0),
      floorMs,
      screen: { rows: screen.rows, rowGroups: screen.rowGroups, requests: screenRanges.length, floorMs: screenFloorMs },
      againMs: again.countMs,
      againMatches: again.matches,
      againRequests,
    };
  } finally {
    await page.close();
  }
}

const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
const cells = [];
try {
  for (const latencyMs of LATENCIES) {
    const server = await startRangeServer({
      mounts: { '/': path.join(repo, 'web/explorer/dist'), '/data/': path.join(repo, 'tests/.cache/data') },
      latencyMs,
    });
    try {
      for (const testCase of CASES) {
        const runs = [];
        for (let i = 0; i <= RUNS; i++) runs.push(await runCase(browser, server, testCase));
        const timed = runs.slice(1);
        const matches = new Set(runs.flatMap((r) => [r.matches, r.againMatches]));
        if (matches.size !== 1) throw new Error(`${testCase.name}: counts differ between runs (${[...matches]})`);
        const med = (key) => median(timed.map((r) => r[key]));
        const cell = {
          case: testCase.name,
          first: testCase.first,
          edited: testCase.edited,
          latencyMs,
          matches: runs[0].matches,
          firstShownMs: med('firstShownMs'),
          screenMs: med('screenMs'),
          blockMs: med('blockMs'),
          countMs: med('countMs'),
          floorMs: med('floorMs'),
          screenFloorMs: median(timed.map((r) => r.screen.floorMs)),
          screen: timed[0].screen,
          requests: med('requests'),
          bytes: med('bytes'),
          againMs: med('againMs'),
          againRequests: Math.max(...timed.map((r) => r.againRequests)),
          runs: timed,
        };
        cells.push(cell);
        console.log(
          `${testCase.name} +${latencyMs} ms: first rows ${cell.firstShownMs.toFixed(0)} ms, first screen ${cell.screenMs.toFixed(0)} ms, block ${cell.blockMs.toFixed(0)}, count ${cell.countMs.toFixed(0)}; ${cell.requests} requests, ${(cell.bytes / 1e6).toFixed(1)} MB, I/O floor ${cell.floorMs.toFixed(0)} ms (the first screen's ${cell.screen.rows} rows, row groups ${cell.screen.rowGroups}: ${cell.screen.requests} requests, ${cell.screenFloorMs.toFixed(0)} ms); again ${cell.againMs.toFixed(0)} ms, ${cell.againRequests} requests`,
        );
      }
    } finally {
      await server.close();
    }
  }
} finally {
  await browser.close();
}

const ms = (x) => x.toFixed(0);
const md = [
  `# Explorer: an edited filter where the user waits (${today()})`,
  '',
  `The explorer on TPC-H SF1 lineitem (\`${FILE}\`, 6 row groups), headless Chromium, range server on 127.0.0.1;`,
  `medians of ${RUNS} fresh pages after a warm-up. The first filter is run and counted (its column stays in the`,
  'workers’ cache); the edited filter is timed from its click. I/O floor: the byte ranges the edited filter',
  'fetched, fetched again by the same page with bare `fetch`, all at once; the first screen’s: those of the row groups',
  'its rows lie in. Again: the edited filter run once more.',
  '',
  '| case | first → edited | +latency | matches | first rows shown | first screen shown | first block read | count shown | requests / MB | I/O floor | first screen: row groups, requests, I/O floor | again (requests) |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|',
  ...cells.map(
    (c) =>
      `| ${c.case} | \`${c.first.replace('l_comment LIKE ', '')}\` → \`${c.edited.replace('l_comment LIKE ', '')}\` | ${c.latencyMs} ms | ${c.matches} | ${ms(c.firstShownMs)} ms | ${ms(c.screenMs)} ms | ${ms(c.blockMs)} ms | ${ms(c.countMs)} ms | ${c.requests} / ${(c.bytes / 1e6).toFixed(1)} | ${ms(c.floorMs)} ms | ${c.screen.rows} rows in ${c.screen.rowGroups.join(', ')}: ${c.screen.requests}, ${ms(c.screenFloorMs)} ms | ${ms(c.againMs)} ms (${c.againRequests}) |`,
  ),
  '',
];
console.log(md.join('\n'));
if (process.env.BENCH_WRITE !== '0') {
  const base = path.join(repo, 'bench/results', `${today()}-explorer${process.env.BENCH_SUFFIX ?? ''}`);
  writeFileSync(`${base}.json`, `${JSON.stringify({ date: today(), runs: RUNS, cells }, null, 2)}\n`);
  writeFileSync(`${base}.md`, md.join('\n'));
  console.log(`wrote ${path.relative(repo, base)}.{json,md}`);
}
