/**
 * parquet-skim against its peers — parquet-wasm, hyparquet (+ hyparquet-compressors) and
 * DuckDB-WASM 1.28 — in headless Debian Chromium, over HTTP from the real range server (which
 * serves the page, every peer's JS and WebAssembly, and the data), on TPC-H lineitem SF1 in three
 * layouts of crate/datagen, as tpchgen-cli, pyarrow and DuckDB write it with their defaults
 * (tests/bench/write-others.py, at bench time), and the ClickBench-hits-like table; and as datasets
 * of many files (pyarrow's hive-partitioned `write_to_dataset`, and 64 plain files):
 *
 * - TPC-H Q6; a selective lookup (`l_orderkey = 3000323`, all columns); a string-contains filter
 *   whose column is also returned; the first 100 rows; a full scan of three columns;
 * - each system doing its best with its own API (see tests/bench/peers-page/system-*.mjs, and the
 *   notes in the Markdown): pushdown where it has it, otherwise what its users would do — read
 *   the columns and filter in JS;
 * - one fresh page per run: the system's JS and WebAssembly load first (not timed), then the
 *   clock covers opening the file (footer) and the query, until the result is in JS (Arrow
 *   batches, a table, row objects or column arrays, as the system returns it). One warm-up run,
 *   then `RUNS` runs; medians.
 * - requests and bytes per run come from the range server's log (GET/HEAD/OPTIONS to the data
 *   file, between the start and the end of the timed run), counting every system the same way;
 * - the I/O floor beside them: the byte ranges parquet-skim's median run read, moved with bare
 *   `fetch` in two rounds (system-floor.mjs), in the same browser and run;
 * - on three networks, the range server shaping the traffic (latency per request, one shared
 *   link's bandwidth): none, 20 ms / 200 Mbit/s and 80 ms / 50 Mbit/s; the shaped ones run the
 *   bulk queries (Q6, `LIKE`, 3-column scan) only, with `BENCH_SHAPED_RUNS` runs (default 3);
 * - every run's answer (Q6 revenue rounded to cents; row count + order-independent hash of the
 *   canonical row values; sums for the scan) must equal the answer of every other system and of
 *   the native run before its time is reported.
 *
 * Native: the same parquet-skim queries through `crate/core/examples/peers_native.rs` (the same
 * plans and task decoders, OS threads instead of workers, the file read from disk, timed after a
 * warm-up run), against parquet-skim in Chromium with the file in memory (fetched before the
 * clock starts) and the same query run once before on the same reader: the
 * WebAssembly-over-native ratio, without HTTP and without cold start.
 *
 * Results: bench/results/<date>-peers.json, .md (tables) and .svg (chart; drawn by
 * tests/bench/peers-report.mjs, which can also redraw them from the JSON).
 *
 * Usage: node tests/bench/peers.mjs   (after `npm run build`; generates the data layouts itself)
 * - BENCH_RUNS=N: timed runs per cell (default 5, after one warm-up run);
 * - comma-separated subsets: BENCH_SYSTEMS (parquet-skim, parquet-skim-mem, parquet-wasm,
 *   hyparquet, duckdb-wasm, parquet-skim-union, parquet-skim-file0; and, not run by default,
 *   parquet-skim-warm and parquet-skim-1range, one range per request), BENCH_DATA (a, b, c,
 *   hits, tpchgen, pyarrow, pyarrow1rg, duckdb; the datasets hive, files64), BENCH_QUERIES (q6, lookup,
 *   contains, first100, scan3; part, count on the datasets); a subset run prints its tables
 *   but writes no result files;
 * - BENCH_NATIVE=0 skips the native runs; BENCH_RUN_TIMEOUT_MS (default 120000) per run;
 * - BENCH_NETWORKS: `latency/Mbit` pairs (default `0/0,20/200,80/50`; 0 Mbit/s: no cap);
 * - BENCH_WRITE=1 writes the result files of a subset run too (BENCH_SUFFIX: appended to their
 *   name, e.g. `-shaped`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, readOffsetIndex } from 'hyparquet';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { startRangeServer } from '../server/range-server.mjs';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';
import { median, RUNS, repo, today } from './lib.mjs';
import { QUERY_LABELS } from './peers-page/queries.mjs';
import { writeReport } from './peers-report.mjs';

const DATA_DIR = path.join(repo, 'tests/.cache/data');
const PAGE_DIR = path.join(repo, 'tests/.cache/peers-page');
/** A run taking longer than this is recorded as a timeout, and its cell gets no more runs. */
const RUN_TIMEOUT_MS = Number(process.env.BENCH_RUN_TIMEOUT_MS ?? 120_000);

/**
 * The data sets: how to generate each (deterministic; skipped when the file exists), and which
 * queries run on it. To keep the whole run under ~25 minutes on 2 cores, the CPU-bound lineitem
 * `LIKE` (minutes for the JS-side peers) and the in-memory/native comparison run on layout (a)
 * and the hits table only: layouts (b) and (c) are about what pruning and page sizes do.
 */
const DATASETS = [
  {
    id: 'a',
    table: 'lineitem',
    writer: 'arrow-rs (crate/datagen)',
    file: 'lineitem-sf1.parquet',
    layout: 'as generated (.ci/sample-data.sh): 1M-row groups, pages ≤ 20k rows, snappy',
    datagen: ['lineitem', '--sf', '1'],
    inMemory: true,
  },
  {
    id: 'b',
    table: 'lineitem',
    writer: 'arrow-rs (crate/datagen)',
    file: 'lineitem-sf1-p1m.parquet',
    layout: '1M-row groups, 1 MiB pages (no row cap), snappy',
    datagen: ['lineitem', '--sf', '1', '--page-rows', '100000000'],
    queries: ['q6', 'lookup', 'first100', 'scan3'],
  },
  {
    id: 'c',
    table: 'lineitem',
    writer: 'arrow-rs (crate/datagen)',
    file: 'lineitem-sf1-rg128k-zstd.parquet',
    layout: '128k-row groups, 64 KiB pages, zstd',
    datagen: ['lineitem', '--sf', '1', '--row-group-rows', '131072', '--page-bytes', '65536', '--compression', 'zstd'],
    queries: ['q6', 'lookup', 'first100', 'scan3'],
  },
  {
    id: 'hits',
    table: 'hits',
    writer: 'arrow-rs (crate/datagen)',
    file: 'hits-2m.parquet',
    layout: '256k-row groups, snappy',
    datagen: ['hits', '--rows', '2000000', '--row-group-rows', '262144'],
    queries: ['contains', 'first100'],
    inMemory: true,
  },
  // Other writers, with their defaults (tests/bench/write-others.py writes them from layout a's
  // rows). The CPU-bound `LIKE` stays on a and hits, as above.
  {
    id: 'tpchgen',
    table: 'lineitem',
    writer: 'tpchgen-cli',
    file: 'lineitem-sf1-tpchgen.parquet',
    layout: 'tpchgen-cli’s own output: ~114k-row groups, snappy, string views',
    other: true,
    queries: ['q6', 'lookup', 'first100', 'scan3'],
  },
  {
    id: 'pyarrow',
    table: 'lineitem',
    writer: 'pyarrow',
    file: 'lineitem-sf1-pyarrow.parquet',
    layout: 'pyarrow `write_table` defaults: 1Mi-row groups, snappy, dictionaries',
    other: true,
    queries: ['q6', 'lookup', 'first100', 'scan3'],
  },
  {
    id: 'pyarrow1rg',
    table: 'lineitem',
    writer: 'pyarrow',
    file: 'lineitem-1m-pyarrow.parquet',
    layout:
      'the first 1M rows, pyarrow `write_table` defaults: one row group, no page index (pandas’ `to_parquet` of a ≤ 1M-row table)',
    other: true,
    queries: ['q6', 'first100', 'scan3'],
  },
  {
    id: 'duckdb',
    table: 'lineitem',
    writer: 'DuckDB',
    file: 'lineitem-sf1-duckdb.parquet',
    layout: 'DuckDB `COPY … (FORMAT parquet)` defaults: 122,880-row groups, snappy',
    other: true,
    queries: ['q6', 'lookup', 'first100', 'scan3'],
  },
  // Datasets (many files as one table; written by tests/bench/write-others.py from layout a's rows).
  {
    id: 'hive',
    table: 'lineitem',
    writer: 'pyarrow write_to_dataset',
    dir: 'lineitem-sf1-hive',
    hive: true,
    layout: 'a dataset: hive-partitioned by ship year and month (`year=1994/month=3/part-0.parquet`), pyarrow defaults',
    other: true,
    queries: ['first100', 'q6', 'part', 'count'],
  },
  {
    id: 'files64',
    table: 'lineitem',
    writer: 'pyarrow write_table ×64',
    dir: 'lineitem-sf1-64',
    layout: 'a dataset: the rows in order in 64 files, pyarrow defaults',
    other: true,
    queries: ['first100', 'q6', 'part', 'count'],
  },
];
const QUERIES = ['q6', 'lookup', 'contains', 'first100', 'scan3'];
/** The bulk queries: the only ones run on the shaped networks. */
const BULK = ['q6', 'contains', 'scan3'];
/** Networks: `{ id, latencyMs, bandwidthMbps }`; the first unshaped one runs every query. */
const NETWORKS = (process.env.BENCH_NETWORKS ?? '0/0,20/200,80/50').split(',').map((pair) => {
  const [latencyMs, bandwidthMbps] = pair.split('/').map(Number);
  if (!(latencyMs >= 0 && bandwidthMbps >= 0)) throw new Error(`BENCH_NETWORKS: expected latency/Mbit, got ${pair}`);
  return { id: pair, latencyMs, bandwidthMbps };
});
const shaped = (net) => net.latencyMs > 0 || net.bandwidthMbps > 0;
const SHAPED_RUNS = Number(process.env.BENCH_SHAPED_RUNS ?? 3);
/**
 * Systems as the driver knows them → what the page loads. `parquet-skim-mem` (the file's bytes
 * in memory, a warm-up query first on the same reader) runs only on the data sets marked
 * `inMemory`: it is the counterpart of the native runs.
 */
const SYSTEMS = {
  'parquet-skim': { page: 'parquet-skim' },
  'parquet-wasm': { page: 'parquet-wasm' },
  hyparquet: { page: 'hyparquet' },
  'duckdb-wasm': { page: 'duckdb-wasm' },
  /** The I/O floor: parquet-skim's ranges by bare `fetch` (needs parquet-skim's cell first). */
  floor: { page: 'floor', floor: true },
  'parquet-skim-mem': { page: 'parquet-skim', inMemory: true, warm: true },
  /** Datasets only: `openDataset(urls, { schema: 'union' })` (every footer read at open). */
  'parquet-skim-union': { page: 'parquet-skim', union: true, datasetsOnly: true },
  /**
   * Datasets' first rows only: the dataset's first file opened alone (`reader.open(url)`), the
   * reference of "first rows of a dataset ≤ 1.2× those of one file". Its rows lack the partition
   * columns, so its answer is not held against the others'.
   */
  'parquet-skim-file0': { page: 'parquet-skim', firstFile: true, datasetsOnly: true, queries: ['first100'] },
  /** Opt-in (BENCH_SYSTEMS): one range per request (`multiRange: false`), beside the default's several. */
  'parquet-skim-1range': { page: 'parquet-skim', openOptions: { multiRange: false }, optional: true },
  /** Opt-in (BENCH_SYSTEMS): over HTTP after a warm-up query on the same reader — the cold-start cost. */
  'parquet-skim-warm': { page: 'parquet-skim', warm: true, optional: true },
};

const subset = (name) => process.env[name]?.split(',').filter((s) => s !== '');
const onlySystems = subset('BENCH_SYSTEMS');
const onlyData = subset('BENCH_DATA');
const onlyQueries = subset('BENCH_QUERIES');
const partial =
  (onlySystems !== undefined || onlyData !== undefined || onlyQueries !== undefined) && process.env.BENCH_WRITE !== '1';
const systems = Object.keys(SYSTEMS).filter((s) =>
  onlySystems === undefined ? SYSTEMS[s].optional !== true : onlySystems.includes(s),
);
const datasets = DATASETS.filter((d) => onlyData === undefined || onlyData.includes(d.id));
const queriesOf = (d) => (d.queries ?? QUERIES).filter((q) => onlyQueries === undefined || onlyQueries.includes(q));

/**
 * Generates the missing data files: crate/datagen's (release build: SF1 in seconds), then the
 * other writers' from layout a's rows (tests/.venv: pyarrow, DuckDB, tpchgen-cli).
 */
function generateData() {
  for (const d of datasets.filter((x) => x.datagen !== undefined)) generate(d);
  if (datasets.some((d) => d.other && !existsSync(path.join(DATA_DIR, d.file ?? d.dir)))) {
    const source = path.join(DATA_DIR, DATASETS[0].file);
    generate(DATASETS[0]);
    const python = path.join(repo, 'tests/.venv/bin/python');
    const script = path.join(repo, 'tests/bench/write-others.py');
    if (spawnSync(python, [script, source, DATA_DIR], { stdio: 'inherit' }).status !== 0) {
      throw new Error('writing the tpchgen-cli/pyarrow/DuckDB files failed (run tests/conformance/setup-venv.sh)');
    }
  }
}

/** Writes data set `d` with crate/datagen unless it exists. */
function generate(d) {
  const out = path.join(DATA_DIR, d.file);
  if (existsSync(out)) return;
  console.log(`generating ${d.file}`);
  const args = ['run', '--quiet', '--release', '--locked', '-p', 'parquet-skim-datagen', '--'];
  const result = spawnSync('cargo', [...args, ...d.datagen, '--out', out], { cwd: repo, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`datagen failed for ${d.file}`);
}

/** The Parquet files under `dir` (relative paths, sorted): a dataset's files, in its order. */
async function listFiles(dir, under = '') {
  const found = [];
  for (const entry of await readdir(path.join(dir, under), { withFileTypes: true })) {
    const relative = under === '' ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) found.push(...(await listFiles(dir, relative)));
    else if (entry.name.endsWith('.parquet')) found.push(relative);
  }
  return found.sort();
}

/**
 * Row groups, codec, pages per column chunk and size of a data file (for the report); of a dataset,
 * its first file's, with the files' total size, rows and row groups.
 */
async function describeLayout(d) {
  if (d.dir !== undefined) {
    d.files = await listFiles(path.join(DATA_DIR, d.dir));
    const described = [];
    for (const f of d.files) described.push(await describeLayout({ ...d, dir: undefined, file: path.join(d.dir, f) }));
    const first = described[0];
    const sum = (key) => described.reduce((n, x) => n + x[key], 0);
    return {
      ...first,
      file: `${d.dir}/ (${d.files.length} files)`,
      bytes: sum('bytes'),
      rows: sum('rows'),
      rowGroups: sum('rowGroups'),
    };
  }
  const file = await asyncBufferFromFile(path.join(DATA_DIR, d.file));
  const metadata = await parquetMetadataAsync(file);
  const pages = [];
  let pageIndex = true;
  for (const chunk of metadata.row_groups[0].columns) {
    if (!chunk.offset_index_offset || !chunk.column_index_offset) pageIndex = false;
    if (!chunk.offset_index_offset) continue;
    const start = Number(chunk.offset_index_offset);
    const bytes = await file.slice(start, start + chunk.offset_index_length);
    pages.push(readOffsetIndex({ view: new DataView(bytes), offset: 0 }).page_locations.length);
  }
  const { files: _files, ...described } = d;
  return {
    ...described,
    bytes: file.byteLength,
    rows: Number(metadata.num_rows),
    rowGroups: metadata.row_groups.length,
    rowGroupRows: Number(metadata.row_groups[0].num_rows),
    codec: metadata.row_groups[0].columns[0].meta_data.codec,
    pagesPerChunk: pages.length > 0 ? [Math.min(...pages), Math.max(...pages)] : null,
    pageIndex,
  };
}

/** Builds the page (tests/bench/peers-page) with Vite: every peer from node_modules, offline. */
async function buildPage() {
  await build({
    root: path.join(repo, 'tests/bench/peers-page'),
    base: './',
    logLevel: 'warn',
    configFile: false,
    build: {
      outDir: PAGE_DIR,
      emptyOutDir: true,
      target: 'es2022',
      chunkSizeWarningLimit: 100_000,
      assetsInlineLimit: 0,
    },
    worker: { format: 'es' },
  });
}

/** Waits until the server has no open responses (aborted read-aheads included), at most 2 s. */
async function settle(server) {
  const deadline = Date.now() + 2000;
  while (server.openRequests > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

const withTimeout = (promise, ms, what) =>
  Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms)),
  ]);

/** One timed run in a fresh page: `{ ms, requests, bytes, answer, info }`. */
async function runOnce(browser, server, args) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(error.message));
  try {
    await page.goto(`${server.url}/`);
    await page.waitForSelector('body[data-ready=true]', { state: 'attached' });
    const info = await page.evaluate((a) => window.peers.setup(a), args);
    await settle(server);
    server.resetLog();
    const ms = await withTimeout(
      page.evaluate(() => window.peers.run()),
      RUN_TIMEOUT_MS,
      `${args.system} ${args.query}`,
    );
    await settle(server);
    const reads = server.log.filter((e) => e.path.startsWith('/sample/'));
    const requests = reads.length;
    const bytes = reads.reduce((n, e) => n + e.bytes, 0);
    const ranges = reads.filter((e) => e.method === 'GET' && e.range !== null).map((e) => [e.path, e.range]);
    const answer = await page.evaluate(() => window.peers.answer());
    await page.evaluate(() => window.peers.dispose());
    return { ms, requests, bytes, ranges, answer, info };
  } catch (error) {
    const detail = problems.length > 0 ? ` (page: ${problems.join('; ')})` : '';
    throw new Error(`${error.message.split('\n')[0]}${detail}`);
  } finally {
    await page.close();
  }
}

/**
 * Warm-up + `runs` runs of one system × query × data set on one network. The floor moves the
 * ranges of `skim` (parquet-skim's cell): those of its median run.
 */
async function measureCell(browser, server, net, dataset, query, system, skim) {
  const args = {
    system: SYSTEMS[system].page,
    inMemory: SYSTEMS[system].inMemory === true,
    warm: SYSTEMS[system].warm === true,
    union: SYSTEMS[system].union === true,
    ...(SYSTEMS[system].openOptions === undefined ? {} : { openOptions: SYSTEMS[system].openOptions }),
    ...(dataset.dir === undefined
      ? { url: `/sample/${dataset.file}` }
      : SYSTEMS[system].firstFile
        ? { url: `/sample/${dataset.dir}/${dataset.files[0]}` }
        : { urls: dataset.files.map((f) => `/sample/${dataset.dir}/${f}`), hive: dataset.hive === true }),
    table: dataset.table,
    query,
    ranges: SYSTEMS[system].floor ? skim?.ranges : undefined,
  };
  const cell = { net: net.id, data: dataset.id, query, system, runs: [] };
  const started = performance.now();
  const runs = shaped(net) ? SHAPED_RUNS : RUNS;
  try {
    if (SYSTEMS[system].floor && skim?.ranges === undefined) throw new Error('no parquet-skim run to take ranges from');
    for (let run = 0; run <= runs; run++) {
      const result = await runOnce(browser, server, args);
      if (result.info !== null) cell.info = result.info;
      if (cell.answer !== undefined && cell.answer !== result.answer) {
        throw new Error(`answers differ between runs: ${cell.answer} vs ${result.answer}`);
      }
      cell.answer = result.answer;
      if (run > 0)
        cell.runs.push({ ms: result.ms, requests: result.requests, bytes: result.bytes, ranges: result.ranges });
    }
    const times = cell.runs.map((r) => r.ms);
    const middle = cell.runs.find((r) => r.ms === median(times));
    Object.assign(cell, { medianMs: middle.ms, requests: middle.requests, bytes: middle.bytes });
    if (system === 'parquet-skim') cell.ranges = middle.ranges;
    for (const r of cell.runs) delete r.ranges;
    // A reference over other rows (one file of a dataset): its answer is its own.
    if (SYSTEMS[system].firstFile) cell.answer = null;
  } catch (error) {
    cell.error = error.message;
  }
  const wall = ((performance.now() - started) / 1000).toFixed(0);
  const shown =
    cell.error ??
    `${cell.medianMs.toFixed(0)} ms (runs ${cell.runs.map((r) => r.ms.toFixed(0)).join(' ')}), ${(cell.bytes / 2 ** 20).toFixed(1)} MiB, ${cell.requests} requests`;
  console.log(`${net.id} ${dataset.id} ${query} ${system}: ${shown} [${wall} s]`);
  return cell;
}

/** The native runs: one `peers_native` invocation per thread count, every case in it. */
function runNative() {
  const cases = datasets
    .filter((d) => d.inMemory)
    .flatMap((d) => queriesOf(d).map((q) => `${path.join(DATA_DIR, d.file)}:${d.table}:${q}`));
  if (cases.length === 0) return [];
  const build = spawnSync(
    'cargo',
    ['build', '--quiet', '--release', '--locked', '-p', 'parquet-skim-core', '--example', 'peers_native'],
    { cwd: repo, stdio: 'inherit' },
  );
  if (build.status !== 0) throw new Error('building peers_native failed');
  const binary = path.join(repo, 'target/release/examples/peers_native');
  const results = [];
  for (const threads of [1, 2]) {
    const out = spawnSync(binary, ['--runs', String(RUNS), '--threads', String(threads), ...cases], {
      cwd: repo,
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (out.status !== 0) throw new Error(`peers_native failed: ${out.stderr}`);
    for (const line of out.stdout.trim().split('\n')) {
      const r = JSON.parse(line);
      const d = datasets.find((x) => path.join(DATA_DIR, x.file) === r.file);
      results.push({ data: d.id, query: r.query, threads, medianMs: r.medianMs, runsMs: r.runsMs, answer: r.answer });
      console.log(`${d.id} ${r.query} native ×${threads}: ${r.medianMs.toFixed(0)} ms`);
    }
  }
  return results;
}

/**
 * Checks every cell's answer against the others of its data set and query (and the native
 * answer): the answer most systems gave is the expected one; a cell that disagrees loses its
 * time and gets an error instead.
 */
function checkAnswers(cells, native) {
  const expected = {};
  for (const d of datasets) {
    for (const q of queriesOf(d)) {
      const answered = (c) => c.data === d.id && c.query === q && c.answer !== undefined && c.answer !== null;
      const answers = [
        ...cells.filter(answered).map((c) => c.answer),
        ...native.filter((n) => n.data === d.id && n.query === q).map((n) => n.answer),
      ];
      const counts = new Map();
      for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
      const [best] = [...counts.entries()].sort((x, y) => y[1] - x[1]);
      if (best === undefined) continue;
      expected[`${d.id}/${q}`] = best[0];
      for (const c of cells.filter(answered)) {
        if (c.answer !== best[0]) {
          c.error = `wrong answer: ${c.answer} (expected ${best[0]})`;
          delete c.medianMs;
        }
      }
      for (const n of native.filter((x) => x.data === d.id && x.query === q)) {
        if (n.answer !== best[0]) throw new Error(`native ${d.id}/${q}: ${n.answer}, browsers: ${best[0]}`);
      }
    }
  }
  return expected;
}

const started = performance.now();
generateData();
const layouts = [];
for (const d of datasets) layouts.push(await describeLayout(d));
await buildPage();
const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
const chromiumVersion = browser.version();
const cells = [];
try {
  for (const net of NETWORKS) {
    const server = await startRangeServer({
      mounts: {
        '/': PAGE_DIR,
        '/sample/': DATA_DIR,
        '/duckdb/': path.join(repo, 'node_modules/duckdb-wasm-1-28/dist'),
      },
      latencyMs: net.latencyMs,
      bandwidthMbps: net.bandwidthMbps,
    });
    try {
      for (const d of datasets) {
        // Datasets run unshaped only (the peers' loops over ~84 files at 80 ms per request take minutes a run).
        if (shaped(net) && d.dir !== undefined) continue;
        for (const q of queriesOf(d).filter((x) => !shaped(net) || BULK.includes(x))) {
          let skim;
          for (const s of systems) {
            // In memory, nothing crosses the network: those runs are made once, unshaped.
            if (SYSTEMS[s].inMemory && (!d.inMemory || shaped(net))) continue;
            if (SYSTEMS[s].datasetsOnly && d.dir === undefined) continue;
            if (SYSTEMS[s].queries !== undefined && !SYSTEMS[s].queries.includes(q)) continue;
            const cell = await measureCell(browser, server, net, d, q, s, skim);
            if (s === 'parquet-skim') skim = cell;
            cells.push(cell);
          }
        }
      }
    } finally {
      await server.close();
    }
  }
} finally {
  await browser.close();
}
for (const c of cells) delete c.ranges;
const native = process.env.BENCH_NATIVE === '0' ? [] : runNative();
const expected = checkAnswers(cells, native);

const date = today();
const result = {
  date,
  runs: RUNS,
  shapedRuns: SHAPED_RUNS,
  chromium: chromiumVersion,
  cores: (await import('node:os')).cpus().length,
  queries: QUERY_LABELS,
  layouts,
  networks: NETWORKS,
  systems,
  cells,
  native,
  expected,
  totalSeconds: (performance.now() - started) / 1000,
};
const base = path.join(repo, `bench/results/${date}-peers${process.env.BENCH_SUFFIX ?? ''}`);
const markdown = await writeReport(result, partial ? null : base);
console.log(`\n${markdown}`);
if (!partial) {
  await mkdir(path.dirname(base), { recursive: true });
  await writeFile(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${path.relative(repo, base)}.{json,md,svg}`);
}
console.log(`peers bench: ${result.totalSeconds.toFixed(0)} s`);
