/**
 * The predicate cache and the workers' cross-scan cache, on a generated ClickBench-hits-like
 * table (2M rows, `URL`/`Title`/`Referer` strings, rows clustered by site; crate/datagen
 * `hits`), over HTTP with 2 workers, in headless Chromium:
 *
 * - first query `URL LIKE '%google%'` projecting `URL` and `Title`, with the cache off
 *   (`cacheBytes: 0`: the filter column is decoded again for the output) and on at several
 *   budgets — peak cache bytes and bytes rejected are recorded for each;
 * - re-filter: the same reader then runs an edited filter on the same column — as broad
 *   (`URL LIKE '%avito%'`, 7% of rows) or narrowed (`'%avito.ru/item/%'`, 0.7%) — against that
 *   query cold (a reader whose cache does not hold `URL`);
 * - the same for a dense filter (issue 16: ≥ 30% of rows pass, its column projected): first
 *   query `URL LIKE '%?%'` (36% of rows: URLs with a query string), edited to `'%?page=%'` (30%);
 * - the dense first query again once the workers' memory has grown: after the same query on
 *   another opening of the file (nothing of it serves the timed scan), with the cache off and at
 *   256 MiB (the timed run then grows the workers' memory less; the code is warm too); and the
 *   floor of what a cache keeps, the same run: two workers touching, in fresh WebAssembly
 *   memory, as many bytes as that query's cache kept (page faults the engine charges once per
 *   page, which a scan that reuses a few buffers does not pay).
 *
 * The same table as other writers write it (tests/bench/write-others.py, at bench time): pyarrow's
 * `write_table` with its defaults (two 1Mi-row groups, dictionaries on every column, no page
 * index) and DuckDB's `COPY … (FORMAT parquet)` (17 groups of 122,880 rows). For them a subset:
 * first queries cache off and at 256 MiB, and the three re-filters against their cold queries at
 * 256 MiB, over HTTP and in memory. `BENCH_WRITERS` (datagen, pyarrow, duckdb) picks the writers;
 * a subset writes `<date>-cache-<writers>.json` instead.
 *
 * Every variant's answer (rows, and the bytes of the returned strings) must match the cache-off
 * answer before a time is recorded. Both timed scans run on warm WebAssembly, so the ratio is the
 * cache's, not V8's tier-up: before a cold or first query, an untimed `LIKE` on another string
 * column (the same kind of code, nothing cached for `URL`); before a re-filter, the first query
 * (which fills the cache) and an untimed re-filter with a third pattern, so that the cache's hit
 * path has run too (until 2026-11-26 it had not: the timed re-filter ran it for the first time,
 * 71–78 ms against 49–50 ms warm, in memory, 256 MiB). Medians of `RUNS` runs,
 * fresh page each; results in bench/results/<date>-cache.json and a Markdown table on stdout.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { measure, median, onFreshPages, RUNS, repo, startBench, today } from './lib.mjs';

const FIRST = "URL LIKE '%google%'";
/** A dense first query: 36% of the rows pass. */
const DENSE = "URL LIKE '%?%'";
/** Edited filters on the same column: one as broad as the first, one narrowed, one dense. */
const EDITED = { broad: "URL LIKE '%avito%'", narrow: "URL LIKE '%avito.ru/item/%'", dense: "URL LIKE '%?page=%'" };
/** The first query each edit follows. */
const EDITED_FROM = { broad: FIRST, narrow: FIRST, dense: DENSE };
/** Untimed, before a cold or first query: the same kind of scan over another column. */
const WARM_OTHER = ["SearchPhrase LIKE '%no such phrase%'"];
/** Untimed, before a re-filter: the first query, then a re-filter of the cached column (the hit path). */
const warmCached = (first) => [first, "URL LIKE '%yandex%'"];
const MiB = 2 ** 20;
/** The hits table as each writer wrote it (in tests/.cache/data, served under /sample/). */
const FILES = { datagen: 'hits-2m.parquet', pyarrow: 'hits-2m-pyarrow.parquet', duckdb: 'hits-2m-duckdb.parquet' };
const WRITERS = (process.env.BENCH_WRITERS ?? Object.keys(FILES).join(',')).split(',').filter((w) => w !== '');
for (const w of WRITERS)
  if (!(w in FILES)) throw new Error(`BENCH_WRITERS: unknown writer ${w} (expected ${Object.keys(FILES)})`);
const DATA_DIR = path.join(repo, 'tests/.cache/data');
/**
 * The cache budgets (MiB) each kind of cell runs at: every cell for datagen's table, a subset for
 * the other writers'. `first` and `dense` include 0 (cache off, the ratios' numerator).
 */
const BUDGETS = {
  datagen: { first: [0, 16, 64, 256], dense: [0, 64, 256], grown: [0, 256], refilter: [64, 256] },
  other: { first: [0, 256], dense: [0, 256], grown: [], refilter: [256] },
};
const budgetsOf = (writer) => BUDGETS[writer === 'datagen' ? 'datagen' : 'other'];
/** The budgets of a kind of cell with the cache on: what its ratios compare with cache off. */
const onlyOn = (budgets) => budgets.filter((b) => b > 0);

/**
 * `warmUp` runs the untimed scans before `run`: the filters of `before`, in order — with
 * `beforeOnOther`, on another opening of the file (another identity: nothing it caches serves the
 * timed scan, but the workers' memory has grown to hold what it cached).
 */
async function hitsCase({ cacheBytes, filter, before, beforeOnOther, inMemory, fileName }) {
  const { skim } = window.harness;
  const reader = await skim.createReader({ workers: 2, cacheBytes });
  const url = `/sample/${fileName}`;
  const fileBytes = inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : undefined;
  const file = await reader.open(fileBytes ?? url);
  // Bytes opened again are another identity too (one per opening).
  const other = beforeOnOther ? await reader.open(fileBytes ?? `${url}?other`) : file;
  const query = async (where, on = file) => {
    const scan = on.scan({ columns: ['URL', 'Title'], filter: where });
    let rows = 0;
    let bytes = 0;
    for await (const batch of scan) {
      rows += batch.numRows;
      // What a consumer that touches every value's bytes costs, without decoding strings in JS.
      for (const name of ['URL', 'Title']) {
        for (const data of batch.getChild(name)?.data ?? []) {
          bytes += data.valueOffsets[data.offset + data.length] - data.valueOffsets[data.offset];
        }
      }
    }
    window.bench.stats = JSON.parse(JSON.stringify(scan.stats));
    return `${rows} rows, ${bytes} string bytes`;
  };
  const warmUp = async () => {
    for (const where of before) await query(where, other);
  };
  window.bench = { run: () => query(filter), reader, warmUp };
}

/** In the page: two workers at once grow a fresh WebAssembly memory by `bytes / 2` each and touch every 4 KiB page; wall ms. */
async function touchInWorkers(bytes) {
  const source = `onmessage = (e) => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
    memory.grow(Math.ceil(e.data / 65536));
    const view = new Uint8Array(memory.buffer);
    for (let i = 0; i < view.length; i += 4096) view[i] = 1;
    postMessage(0);
  };`;
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  const workers = [new Worker(url), new Worker(url)];
  const all = (bytesEach) =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise((resolve) => {
            w.onmessage = resolve;
            w.postMessage(bytesEach);
          }),
      ),
    );
  await all(0); // both started and idle before the clock starts
  const started = performance.now();
  await all(bytes / 2);
  const ms = performance.now() - started;
  for (const w of workers) w.terminate();
  return ms;
}

/** `touchInWorkers(bytes)` in a fresh page per run: median and runs. */
async function measureTouch(bench, bytes) {
  const times = (await onFreshPages(bench, (page) => page.evaluate(touchInWorkers, bytes))).slice(1);
  return { bytes, medianMs: median(times), runsMs: times };
}

if (WRITERS.some((w) => w !== 'datagen' && !existsSync(path.join(DATA_DIR, FILES[w])))) {
  const python = path.join(repo, 'tests/.venv/bin/python');
  const script = path.join(repo, 'tests/bench/write-others.py');
  const written = spawnSync(python, [script, 'hits', path.join(DATA_DIR, FILES.datagen), DATA_DIR], {
    stdio: 'inherit',
  });
  if (written.status !== 0) throw new Error('write-others.py hits failed (run tests/conformance/setup-venv.sh first)');
}

const bench = await startBench();
const results = [];
let touch;
try {
  for (const writer of WRITERS) {
    const budgets = budgetsOf(writer);
    for (const inMemory of [false, true]) {
      const on = { inMemory, writer, fileName: FILES[writer], warm: true };
      for (const cacheBytes of budgets.first.map((b) => b * MiB)) {
        results.push(await measure(bench, 'first', hitsCase, { ...on, cacheBytes, filter: FIRST, before: WARM_OTHER }));
      }
      for (const cacheBytes of budgets.dense.map((b) => b * MiB)) {
        const args = { ...on, cacheBytes, filter: DENSE, edit: 'dense', before: WARM_OTHER };
        results.push(await measure(bench, 'first', hitsCase, args));
      }
      // The dense first query again, after the same query on another opening of the file: the
      // workers' memory has grown (and been touched) to hold what a cache keeps.
      for (const cacheBytes of budgets.grown.map((b) => b * MiB)) {
        const args = { ...on, cacheBytes, filter: DENSE, edit: 'dense', before: [DENSE], beforeOnOther: true };
        results.push(await measure(bench, 'first, memory grown', hitsCase, args));
      }
      for (const [edit, filter] of Object.entries(EDITED)) {
        for (const cacheBytes of budgets.refilter.map((b) => b * MiB)) {
          const args = { ...on, cacheBytes, filter, edit };
          results.push(await measure(bench, 'cold', hitsCase, { ...args, before: WARM_OTHER }));
          const before = warmCached(EDITED_FROM[edit]);
          results.push(await measure(bench, 'refilter', hitsCase, { ...args, before }));
        }
      }
    }
  }
  // The floor of keeping bytes: a cache that keeps N bytes decoded has the engine hand it N bytes
  // of memory never touched before (its page faults), which a scan without the cache, reusing the
  // same few buffers, does not pay. Two workers each grow a fresh WebAssembly memory by half of
  // what the dense first query's cache kept (inserted: its peak also counts the warm-up's entry),
  // and write a byte in every 4 KiB page.
  const dense = results.find(
    (r) =>
      r.name === 'first' &&
      r.args.writer === 'datagen' &&
      r.args.edit === 'dense' &&
      r.args.cacheBytes === 256 * MiB &&
      r.args.inMemory,
  );
  if (dense !== undefined) touch = await measureTouch(bench, dense.stats.columnCache.bytesInserted);
} finally {
  await bench.close();
}

for (const filter of [FIRST, DENSE, ...Object.values(EDITED)]) {
  const answers = new Set(results.filter((r) => r.args.filter === filter).map((r) => r.answer));
  if (answers.size !== 1)
    throw new Error(
      `${filter}: answers differ with the cache on and off, or between writers: ${[...answers].join(' / ')}`,
    );
}
for (const r of results) {
  const c = r.stats.columnCache;
  if (c.peakBytes > c.budgetBytes) throw new Error(`${r.name}: peak ${c.peakBytes} over budget ${c.budgetBytes}`);
}

const mb = (b) => (b / MiB).toFixed(1);
const label = (r) =>
  `${r.args.writer}: ${r.name}${r.args.edit ? ` (${r.args.edit})` : ''}, cacheBytes ${mb(r.args.cacheBytes)} MiB, ${r.args.inMemory ? 'in memory' : 'over HTTP'}`;
console.log('\n| case | median ms | MiB fetched | cache hits/tasks | peak MiB | rejected MiB | answer |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const r of results) {
  const s = r.stats;
  const c = s.columnCache;
  console.log(
    `| ${label(r)} | ${r.medianMs.toFixed(0)} | ${mb(s.bytesFetched)} | ${c.hits}/${s.tasksTotal} | ${mb(c.peakBytes)} | ${mb(c.bytesRejected)} | ${r.answer} |`,
  );
}
const ms = (writer, name, cacheBytes, inMemory, edit) =>
  results.find(
    (r) =>
      r.args.writer === writer &&
      r.name === name &&
      r.args.cacheBytes === cacheBytes &&
      r.args.inMemory === inMemory &&
      r.args.edit === edit,
  )?.medianMs;
const ratios = {};
for (const writer of WRITERS) {
  const budgets = budgetsOf(writer);
  for (const inMemory of [false, true]) {
    const where = `${inMemory ? 'in memory' : 'over HTTP'}, ${writer}`;
    for (const budget of onlyOn(budgets.first)) {
      ratios[`first query, cache off / ${budget} MiB, ${where}`] =
        ms(writer, 'first', 0, inMemory) / ms(writer, 'first', budget * MiB, inMemory);
    }
    for (const budget of onlyOn(budgets.dense)) {
      ratios[`first query (dense), cache off / ${budget} MiB, ${where}`] =
        ms(writer, 'first', 0, inMemory, 'dense') / ms(writer, 'first', budget * MiB, inMemory, 'dense');
    }
    for (const budget of onlyOn(budgets.grown)) {
      ratios[`first query (dense, memory grown), cache off / ${budget} MiB, ${where}`] =
        ms(writer, 'first, memory grown', 0, inMemory, 'dense') /
        ms(writer, 'first, memory grown', budget * MiB, inMemory, 'dense');
    }
    for (const edit of Object.keys(EDITED)) {
      for (const budget of budgets.refilter) {
        ratios[`re-filter (${edit}), cold / cached, ${budget} MiB, ${where}`] =
          ms(writer, 'cold', budget * MiB, inMemory, edit) / ms(writer, 'refilter', budget * MiB, inMemory, edit);
      }
    }
  }
}
if (touch !== undefined) {
  console.log(
    `\nFirst touch of what the dense first query's cache kept (${mb(touch.bytes)} MiB, in memory, 256 MiB), split over two workers: ${touch.medianMs.toFixed(0)} ms`,
  );
}
console.log('\n| ratio | value |\n|---|---:|');
for (const [key, value] of Object.entries(ratios)) console.log(`| ${key} | ${value.toFixed(2)}× |`);
const date = today();
await mkdir(path.join(repo, 'bench/results'), { recursive: true });
const subset = WRITERS.join(',') === Object.keys(FILES).join(',') ? '' : `-${WRITERS.join('-')}`;
const out = path.join(repo, `bench/results/${date}-cache${subset}.json`);
const slim = results.map(({ stats, ...r }) => ({ ...r, stats: { ...stats, columnCache: { ...stats.columnCache } } }));
await writeFile(out, `${JSON.stringify({ date, runs: RUNS, results: slim, ratios, firstTouch: touch }, null, 2)}\n`);
console.log(`wrote ${path.relative(repo, out)}`);
