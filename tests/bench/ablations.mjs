/**
 * Ablations of the read-task design, in headless Debian Chromium against the real range server:
 *
 * - fused vs unfused TPC-H Q6: decode + filter + sum in one pass per batch inside the worker
 *   (`file.aggregate`), against decoding the four columns in the workers, shipping them to the
 *   page as Arrow, and filtering and summing there (a second stage on the main thread);
 * - 1 vs 2 workers on a scan whose output crosses to the page (`cpuScan`: `l_comment` and
 *   `l_extendedprice` of SF1 as Arrow) and on a CPU-bound one (`cpuFilter`: count the rows whose
 *   `l_comment` matches two `LIKE` patterns — decoding and matching strings in the workers, a
 *   number out);
 * - I/O concurrency 1 vs 4 vs 8 under 20 ms of simulated latency per request, against none.
 *
 * Every reader here has `cacheBytes: 0`: these measure the task design, and a warm run must not
 * be served by the workers' cross-scan cache (tests/bench/cache.mjs measures that).
 * Cold: the first scan in a fresh page (the WebAssembly still runs in V8's baseline tier until
 * its background compiler catches up, and that compiler shares the cores with the workers).
 * Warm: the second scan of the same reader — what an app that keeps its reader sees.
 * Each case runs once to warm the browser up, then `RUNS` times, each in a fresh page; medians are
 * reported. Ratios come from medians of the same run.
 * Results go to bench/results/<date>-ablations.json and a Markdown table on stdout.
 *
 * Usage: node tests/bench/ablations.mjs   (after `npm run build` and the sample data)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { measure as measureCase, RUNS, repo, startBench, today } from './lib.mjs';

const Q6 =
  "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/**
 * The page-side cases. Each sets up a reader and file, then leaves `window.bench = { run, reader }`:
 * `run()` does the timed work and returns the answer. Timing is done by {@link timeRun}.
 */
const CASES = {
  fusedQ6: async ({ filter, workers, inMemory }) => {
    const { skim } = window.harness;
    const { col, expr, sum } = skim;
    const reader = await skim.createReader({ workers, cacheBytes: 0 });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const run = async () => {
      const { values } = await file.aggregate({
        filter,
        aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))) },
      });
      return values.revenue;
    };
    window.bench = { run, reader };
  },
  unfusedQ6: async ({ workers, inMemory }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers, cacheBytes: 0 });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const lo = Date.UTC(1994, 0, 1) / 86_400_000;
    const hi = Date.UTC(1995, 0, 1) / 86_400_000;
    const run = async () => {
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
      const digits = String(total);
      return `${digits.slice(0, -4)}.${digits.slice(-4)}`;
    };
    window.bench = { run, reader };
  },
  cpuScan: async ({ workers, inMemory }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers, cacheBytes: 0 });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const run = async () => {
      let rows = 0;
      for await (const batch of file.scan({ columns: ['l_comment', 'l_extendedprice'] })) rows += batch.numRows;
      return rows;
    };
    window.bench = { run, reader };
  },
  cpuFilter: async ({ workers, inMemory }) => {
    const { skim } = window.harness;
    const { count } = skim;
    const reader = await skim.createReader({ workers, cacheBytes: 0 });
    const url = '/sample/lineitem-sf1.parquet';
    const file = await reader.open(inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url);
    const run = async () => {
      const { values } = await file.aggregate({
        filter: "l_comment LIKE '%special%requests%' OR l_comment LIKE '%furiously%'",
        aggregates: { n: count() },
      });
      return values.n;
    };
    window.bench = { run, reader };
  },
  ioScan: async ({ workers, ioConcurrency, base }) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers, ioConcurrency, cacheBytes: 0 });
    const file = await reader.open(`${base}/sample/lineitem-sf1.parquet`);
    const run = async () => {
      let rows = 0;
      for await (const batch of file.scan({ columns: ['l_quantity', 'l_shipdate', 'l_returnflag'] })) {
        rows += batch.numRows;
      }
      return rows;
    };
    window.bench = { run, reader };
  },
};

const bench = await startBench();
const { server, slow } = bench;
const measure = (name, args) => measureCase(bench, name, CASES[name], args);
const results = [];
// BENCH_ONLY=cpuScan (comma-separated case names) runs a subset.
const only = process.env.BENCH_ONLY?.split(',');
const wanted = (name) => only === undefined || only.includes(name);
try {
  for (const warm of [false, true]) {
    for (const inMemory of [false, true]) {
      if (wanted('fusedQ6')) results.push(await measure('fusedQ6', { filter: Q6, workers: 2, inMemory, warm }));
      if (wanted('unfusedQ6')) results.push(await measure('unfusedQ6', { workers: 2, inMemory, warm }));
    }
  }
  const answers = new Set(results.filter((r) => r.name.endsWith('Q6')).map((r) => r.answer));
  if (answers.size > 1) throw new Error(`fused and unfused Q6 disagree: ${[...answers].join(' vs ')}`);
  for (const name of ['cpuScan', 'cpuFilter']) {
    if (!wanted(name)) continue;
    for (const warm of name === 'cpuFilter' ? [false, true] : [false]) {
      for (const inMemory of [false, true]) {
        for (const workers of [1, 2]) results.push(await measure(name, { workers, inMemory, warm }));
      }
    }
  }
  if (wanted('ioScan')) {
    results.push(await measure('ioScan', { workers: 2, ioConcurrency: 4, base: server.url }));
    for (const ioConcurrency of [1, 4, 8]) {
      results.push(await measure('ioScan', { workers: 2, ioConcurrency, base: slow.url }));
    }
  }
} finally {
  await bench.close();
}

const source = (r) => `${r.args.inMemory ? 'in memory' : 'over HTTP'}, ${r.args.warm ? 'warm' : 'cold'}`;
const label = (r) =>
  r.name === 'ioScan'
    ? `ioScan, I/O concurrency ${r.args.ioConcurrency}, ${r.args.base === slow.url ? '20 ms latency' : 'no latency'}`
    : `${r.name}, ${r.args.workers} worker${r.args.workers === 1 ? '' : 's'}, ${source(r)}`;
const byLabel = Object.fromEntries(results.map((r) => [label(r), r.medianMs]));
const ratio = (slower, faster) => byLabel[slower] / byLabel[faster];
const ratios = {};
for (const where of ['over HTTP, cold', 'in memory, cold', 'over HTTP, warm', 'in memory, warm']) {
  ratios[`unfused/fused Q6, ${where}`] = ratio(`unfusedQ6, 2 workers, ${where}`, `fusedQ6, 2 workers, ${where}`);
  for (const name of ['cpuScan', 'cpuFilter']) {
    ratios[`1/2 workers ${name}, ${where}`] = ratio(`${name}, 1 worker, ${where}`, `${name}, 2 workers, ${where}`);
  }
}
for (const io of [1, 4, 8]) {
  ratios[`20 ms latency at I/O concurrency ${io} / no latency`] = ratio(
    `ioScan, I/O concurrency ${io}, 20 ms latency`,
    'ioScan, I/O concurrency 4, no latency',
  );
}
for (const [key, value] of Object.entries(ratios)) if (!Number.isFinite(value)) delete ratios[key];
const date = today();
await mkdir(path.join(repo, 'bench/results'), { recursive: true });
const out = path.join(repo, `bench/results/${date}-ablations.json`);
if (only === undefined) await writeFile(out, `${JSON.stringify({ date, runs: RUNS, results, ratios }, null, 2)}\n`);
console.log(`\n| case | median ms | runs (ms) | answer |\n|---|---:|---|---|`);
for (const r of results) {
  console.log(
    `| ${label(r)} | ${r.medianMs.toFixed(0)} | ${r.runsMs.map((t) => t.toFixed(0)).join(', ')} | ${r.answer} |`,
  );
}
console.log('\n| ratio | value |\n|---|---:|');
for (const [key, value] of Object.entries(ratios)) console.log(`| ${key} | ${value.toFixed(2)}× |`);
if (only === undefined) console.log(`wrote ${path.relative(repo, out)}`);
