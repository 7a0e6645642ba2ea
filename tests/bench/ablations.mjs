/**
 * Ablations of the read-task design, in headless Debian Chromium against the real range server:
 *
 * - fused vs unfused TPC-H Q6: decode + filter + sum in one pass per batch inside the worker
 *   (`file.aggregate`), against decoding the four columns in the workers, shipping them to the
 *   page as Arrow, and filtering and summing there (a second stage on the main thread);
 * - 1 vs 2 workers on a CPU-bound scan (decode `l_comment` and `l_extendedprice` of SF1);
 * - I/O concurrency 1 vs 4 vs 8 under 20 ms of simulated latency per request, against none.
 *
 * Each case runs once to warm up, then `RUNS` times, each in a fresh page; medians are reported.
 * Results go to bench/results/<date>-ablations.json and a Markdown table on stdout.
 *
 * Usage: node tests/bench/ablations.mjs   (after `npm run build` and the sample data)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startRangeServer } from '../server/range-server.mjs';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const Q6 =
  "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

const mounts = {
  '/': path.join(repo, 'tests/.cache/harness'),
  '/sample/': path.join(repo, 'tests/.cache/data'),
};

/** The page-side cases; each returns `{ ms, answer }`. */
const CASES = {
  fusedQ6: async ({ filter, workers, inMemory }) => {
    const { skim } = window.harness;
    const { col, expr, sum } = skim;
    const reader = await skim.createReader({ workers });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const started = performance.now();
    const { values } = await file.aggregate({
      filter,
      aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))) },
    });
    const ms = performance.now() - started;
    reader.dispose();
    return { ms, answer: values.revenue };
  },
  unfusedQ6: async ({ workers, inMemory }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const started = performance.now();
    const lo = Date.UTC(1994, 0, 1) / 86_400_000;
    const hi = Date.UTC(1995, 0, 1) / 86_400_000;
    let total = 0; // unscaled cents × cents, exact below 2^53
    const scan = file.scan({ columns: ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'] });
    for await (const batch of scan) {
      const [price, discount, shipdate, quantity] = ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'].map(
        (name) => batch.getChild(name).data[0],
      );
      const pw = price.values;
      const dw = discount.values;
      const qw = quantity.values;
      const days = shipdate.values;
      for (let i = 0; i < batch.numRows; i++) {
        const d = days[shipdate.offset + i];
        if (d < lo || d >= hi) continue;
        const disc = dw[(discount.offset + i) * 4];
        if (disc < 5 || disc > 7) continue;
        if (qw[(quantity.offset + i) * 4] >= 2400) continue;
        total += pw[(price.offset + i) * 4] * disc + pw[(price.offset + i) * 4 + 1] * 4294967296 * disc;
      }
    }
    const ms = performance.now() - started;
    reader.dispose();
    const digits = String(total);
    return { ms, answer: `${digits.slice(0, -4)}.${digits.slice(-4)}` };
  },
  cpuScan: async ({ workers, inMemory }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const started = performance.now();
    let rows = 0;
    for await (const batch of file.scan({ columns: ['l_comment', 'l_extendedprice'] })) rows += batch.numRows;
    const ms = performance.now() - started;
    reader.dispose();
    return { ms, answer: rows };
  },
  ioScan: async ({ workers, ioConcurrency, base }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers, ioConcurrency });
    const file = await reader.open(`${base}/sample/lineitem-sf1.parquet`);
    const started = performance.now();
    let rows = 0;
    for await (const batch of file.scan({ columns: ['l_quantity', 'l_shipdate', 'l_returnflag'] })) {
      rows += batch.numRows;
    }
    const ms = performance.now() - started;
    reader.dispose();
    return { ms, answer: rows };
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(browser, server, name, args) {
  const times = [];
  let answer;
  for (let run = 0; run <= RUNS; run++) {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForSelector('body[data-ready=true]');
    const result = await page.evaluate(CASES[name], args);
    await page.close();
    if (run > 0) times.push(result.ms);
    if (answer !== undefined && String(answer) !== String(result.answer)) {
      throw new Error(`${name}: answers differ between runs (${answer} vs ${result.answer})`);
    }
    answer = result.answer;
  }
  return { name, args, medianMs: median(times), runsMs: times, answer: String(answer) };
}

const server = await startRangeServer({ mounts });
const slow = await startRangeServer({ mounts, latencyMs: 20 });
const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
const results = [];
// BENCH_ONLY=cpuScan (comma-separated case names) runs a subset.
const only = process.env.BENCH_ONLY?.split(',');
const wanted = (name) => only === undefined || only.includes(name);
try {
  for (const inMemory of [false, true]) {
    if (wanted('fusedQ6'))
      results.push(await measure(browser, server, 'fusedQ6', { filter: Q6, workers: 2, inMemory }));
    if (wanted('unfusedQ6')) results.push(await measure(browser, server, 'unfusedQ6', { workers: 2, inMemory }));
  }
  const [fused, unfused] = [results.find((r) => r.name === 'fusedQ6'), results.find((r) => r.name === 'unfusedQ6')];
  if (fused && unfused && fused.answer !== unfused.answer) {
    throw new Error(`fused and unfused Q6 disagree: ${fused.answer} vs ${unfused.answer}`);
  }
  if (wanted('cpuScan')) {
    for (const inMemory of [false, true]) {
      results.push(await measure(browser, server, 'cpuScan', { workers: 1, inMemory }));
      results.push(await measure(browser, server, 'cpuScan', { workers: 2, inMemory }));
    }
  }
  if (wanted('ioScan')) {
    results.push(await measure(browser, server, 'ioScan', { workers: 2, ioConcurrency: 4, base: server.url }));
    for (const ioConcurrency of [1, 4, 8]) {
      results.push(await measure(browser, server, 'ioScan', { workers: 2, ioConcurrency, base: slow.url }));
    }
  }
} finally {
  await browser.close();
  await server.close();
  await slow.close();
}

const source = (r) => (r.args.inMemory ? 'in memory' : 'over HTTP');
const label = (r) =>
  r.name === 'ioScan'
    ? `ioScan, I/O concurrency ${r.args.ioConcurrency}, ${r.args.base === slow.url ? '20 ms latency' : 'no latency'}`
    : r.name === 'cpuScan'
      ? `cpuScan, ${r.args.workers} worker(s), ${source(r)}`
      : `${r.name}, ${r.args.workers} workers, ${source(r)}`;
const byLabel = Object.fromEntries(results.map((r) => [label(r), r.medianMs]));
const ratios = {
  fusedSpeedup: byLabel['unfusedQ6, 2 workers, over HTTP'] / byLabel['fusedQ6, 2 workers, over HTTP'],
  fusedSpeedupInMemory: byLabel['unfusedQ6, 2 workers, in memory'] / byLabel['fusedQ6, 2 workers, in memory'],
  twoWorkerSpeedup: byLabel['cpuScan, 1 worker(s), over HTTP'] / byLabel['cpuScan, 2 worker(s), over HTTP'],
  twoWorkerSpeedupInMemory: byLabel['cpuScan, 1 worker(s), in memory'] / byLabel['cpuScan, 2 worker(s), in memory'],
  latencyOverheadAt8:
    byLabel['ioScan, I/O concurrency 8, 20 ms latency'] / byLabel['ioScan, I/O concurrency 4, no latency'],
};
const date = new Date().toISOString().slice(0, 10);
await mkdir(path.join(repo, 'bench/results'), { recursive: true });
const out = path.join(repo, `bench/results/${date}-ablations.json`);
if (only === undefined) await writeFile(out, `${JSON.stringify({ date, runs: RUNS, results, ratios }, null, 2)}\n`);
console.log(`\n| case | median ms | runs (ms) | answer |\n|---|---:|---|---|`);
for (const r of results) {
  console.log(
    `| ${label(r)} | ${r.medianMs.toFixed(0)} | ${r.runsMs.map((t) => t.toFixed(0)).join(', ')} | ${r.answer} |`,
  );
}
const x = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
console.log(
  `\nunfused / fused Q6: ${x(ratios.fusedSpeedup)} over HTTP, ${x(ratios.fusedSpeedupInMemory)} in memory; ` +
    `1 worker / 2 workers: ${x(ratios.twoWorkerSpeedup)} over HTTP, ${x(ratios.twoWorkerSpeedupInMemory)} in memory; ` +
    `20 ms latency at I/O concurrency 8 / no latency: ${x(ratios.latencyOverheadAt8)}`,
);
console.log(`wrote ${path.relative(repo, out)}`);
