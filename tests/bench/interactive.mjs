/**
 * Interactive speed: the first 100 rows, and a selective lookup, of TPC-H lineitem SF1 written by
 * three writers — on a fresh page (the cold path: page load + init + open + query) and on a warm
 * reader (the query again in the same page) — against the physical floor measured in the same run,
 * and against the peers.
 *
 * - Every system runs in its own page, built by Vite like an app (tests/bench/interactive-page):
 *   its modules imported statically, apache-arrow bundled the same way for every system that uses
 *   it. One fresh browser context per run; the page starts the query as soon as its module runs.
 * - The floor page loads, compiles parquet-skim's `.wasm` with `compileStreaming` and moves, with
 *   bare `fetch` in two rounds (what opening read, then all of the scan's ranges at once), exactly
 *   the byte ranges parquet-skim read in that cell (taken from its request log). Its warm runs
 *   are the I/O floor of a warm reader.
 * - Peers: parquet-wasm, hyparquet and DuckDB-WASM, through the same modules as the peers
 *   benchmark (tests/bench/peers-page/system-*.mjs). Every answer is checked equal to
 *   parquet-skim's before a time is kept.
 * - Networks: the range server as it is, and with 20 ms added to every request.
 * - parquet-skim's cold path is broken down: module requests and bytes, `.wasm` fetch and
 *   compile, `createReader()`, worker start, footer fetch and decode, planning, first request,
 *   first task, first result, IPC → Arrow, answer (reader.stats(), file.openStats, scan.stats
 *   .timeline and the Resource Timing API).
 *
 * - Engines: Chromium, Firefox ESR and WebKit (tests/support/engines.mjs), a fresh context — for
 *   WebKit a fresh session — per run.
 *
 * Output: bench/results/<date>-interactive.{json,md}; medians of BENCH_RUNS (default 5) after one
 * warm-up run. Subsets (comma lists): BENCH_ENGINES (chromium, firefox, webkit; default all),
 * BENCH_DATA (a, c, tpchgen, pyarrow, duckdb), BENCH_QUERIES (first100, lookup), BENCH_SYSTEMS
 * (parquet-skim, parquet-wasm, hyparquet, duckdb-wasm), BENCH_LATENCIES (0, 20). Firefox and
 * WebKit run layouts a and tpchgen only unless BENCH_DATA names others (to keep the run under an
 * hour). A subset writes no result files unless BENCH_WRITE=1 (BENCH_SUFFIX: appended to their
 * names). BENCH_SKIM_PARAMS (e.g. `&io=16&workers=0`) is appended to parquet-skim's page URL, to
 * try reader options. BENCH_WARM (default 3): warm runs per page, after its first query;
 * BENCH_WARM_GAP (ms, default 0): idle time before each of them on every page (a user's pause
 * between queries; back to back, a warm run shares the cores with what the engine does after the
 * first query: its optimizing compiles, and parquet-skim's workers starting once the page is idle). BENCH_REPORT=<a results .json>
 * prints (and rewrites next to it) the Markdown of an earlier run, without running anything.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'vite';
import { startRangeServer } from '../server/range-server.mjs';
import { ENGINES, launchEngine } from '../support/engines.mjs';
import { median, RUNS, repo, today } from './lib.mjs';

const DATA_DIR = path.join(repo, 'tests/.cache/data');
const PAGE_DIR = path.join(repo, 'tests/.cache/interactive-page');
const RUN_TIMEOUT_MS = 60_000;
/** Warm runs per page (the same query again on the page's reader, each under a new URL). */
const WARM_RUNS = Number(process.env.BENCH_WARM ?? 3);
/** Idle ms before each warm run, on every page alike (BENCH_WARM_GAP; default 0: back to back). */
const WARM_GAP_MS = Number(process.env.BENCH_WARM_GAP ?? 0);

const LAYOUTS = [
  {
    id: 'a',
    writer: 'arrow-rs (crate/datagen)',
    file: 'lineitem-sf1.parquet',
    layout: '1M-row groups, pages ≤ 20k rows, snappy, page index',
    datagen: ['lineitem', '--sf', '1'],
  },
  {
    id: 'c',
    writer: 'arrow-rs (crate/datagen)',
    file: 'lineitem-sf1-rg128k-zstd.parquet',
    layout: '128k-row groups, 64 KiB pages, zstd, page index',
    datagen: ['lineitem', '--sf', '1', '--row-group-rows', '131072', '--page-bytes', '65536', '--compression', 'zstd'],
  },
  {
    id: 'tpchgen',
    writer: 'tpchgen-cli 4, its defaults',
    file: 'lineitem-sf1-tpchgen.parquet',
    layout: '~114k-row groups (53), snappy, string views, no page index',
  },
  {
    id: 'pyarrow',
    writer: 'pyarrow 26, its defaults',
    file: 'lineitem-sf1-pyarrow.parquet',
    layout: 'pyarrow defaults',
  },
  { id: 'duckdb', writer: 'DuckDB 2.0, its defaults', file: 'lineitem-sf1-duckdb.parquet', layout: 'DuckDB defaults' },
];
const QUERIES = { first100: 'first 100 rows, all columns', lookup: 'l_orderkey = 3000323, all columns' };
const PEERS = { 'parquet-wasm': 'parquet-wasm', hyparquet: 'hyparquet', 'duckdb-wasm': 'duckdb' };

const subset = (name, all) => {
  const only = process.env[name]?.split(',').filter((s) => s !== '');
  return { list: only === undefined ? all : all.filter((x) => only.includes(String(x))), partial: only !== undefined };
};
const data = subset(
  'BENCH_DATA',
  LAYOUTS.map((l) => l.id),
);
const queries = subset('BENCH_QUERIES', Object.keys(QUERIES));
const systems = subset('BENCH_SYSTEMS', ['parquet-skim', ...Object.keys(PEERS)]);
const latencies = subset('BENCH_LATENCIES', [0, 20]);
const engines = subset('BENCH_ENGINES', ENGINES);
const partial = [data, queries, systems, latencies, engines].some((s) => s.partial) && process.env.BENCH_WRITE !== '1';
/** The layouts an engine runs (all of them in Chromium). */
const layoutsFor = (engine) =>
  engine === 'chromium' || data.partial ? layouts : layouts.filter((l) => ['a', 'tpchgen'].includes(l.id));
const layouts = LAYOUTS.filter((l) => data.list.includes(l.id));

function generateData() {
  for (const l of layouts.filter((x) => x.datagen !== undefined)) {
    const out = path.join(DATA_DIR, l.file);
    if (existsSync(out)) continue;
    console.log(`generating ${l.file}`);
    const args = ['run', '--quiet', '--release', '--locked', '-p', 'parquet-skim-datagen', '--', ...l.datagen];
    if (spawnSync('cargo', [...args, '--out', out], { cwd: repo, stdio: 'inherit' }).status !== 0) {
      throw new Error(`datagen failed for ${l.file}`);
    }
  }
  if (layouts.some((l) => l.datagen === undefined)) {
    const python = path.join(repo, 'tests/.venv/bin/python');
    const script = path.join(repo, 'tests/bench/write-others.py');
    const source = path.join(DATA_DIR, 'lineitem-sf1.parquet');
    if (spawnSync(python, [script, source, DATA_DIR], { stdio: 'inherit' }).status !== 0) {
      throw new Error('writing the pyarrow/DuckDB files failed');
    }
  }
}

async function buildPages() {
  const root = path.join(repo, 'tests/bench/interactive-page');
  const input = Object.fromEntries(
    (await readdir(root)).filter((f) => f.endsWith('.html')).map((f) => [f.replace('.html', ''), path.join(root, f)]),
  );
  await build({
    root,
    base: './',
    logLevel: 'warn',
    configFile: false,
    build: {
      outDir: PAGE_DIR,
      emptyOutDir: true,
      target: 'es2022',
      chunkSizeWarningLimit: 100_000,
      assetsInlineLimit: 0,
      rollupOptions: { input },
    },
    worker: { format: 'es' },
  });
}

/** One page load in a fresh context (session): the page's `window.result`. */
async function runPage(engine, pageUrl) {
  let page;
  try {
    page = await engine.open(pageUrl);
    await page.waitFor('body[data-done=true]');
    const result = await page.evaluate(() => window.result);
    if (result.error !== undefined) throw new Error(result.error);
    return result;
  } catch (error) {
    throw new Error(`${engine.name} ${pageUrl}: ${String(error.message).split('\n')[0]}`);
  } finally {
    await page?.close();
  }
}

/** Each step's median over `breakdowns` (steps a run did not reach are left out of that step's median). */
function medianBreakdown(breakdowns) {
  const keys = [...new Set(breakdowns.flatMap((b) => Object.keys(b)))];
  return Object.fromEntries(
    keys.map((k) => {
      const values = breakdowns.map((b) => b[k]).filter((v) => typeof v === 'number');
      return [k, values.length === 0 ? null : median(values)];
    }),
  );
}

/** A warm-up load, then RUNS loads; the run with the median cold time, and the medians. */
async function measure(engine, pageUrl) {
  await runPage(engine, pageUrl);
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runPage(engine, pageUrl));
  const cold = median(runs.map((r) => r.coldMs));
  const middle = runs.find((r) => r.coldMs === cold);
  return {
    coldMs: cold,
    coldQueryMs: runs[0].coldQueryMs === undefined ? null : median(runs.map((r) => r.coldQueryMs)),
    warmMs: median(runs.map((r) => median(r.warm))),
    // The median of each warm run's position over the pages: the first after the page's first
    // query, then the later ones.
    warmByRun: Array.from({ length: runs[0].warm?.length ?? 0 }, (_, i) => median(runs.map((r) => r.warm[i]))),
    answer: middle.answer,
    ...(runs[0].warmBreakdowns === undefined
      ? {}
      : { warmBreakdown: medianBreakdown(runs.flatMap((r) => r.warmBreakdowns)) }),
    ...(runs[0].warmRoundMs === undefined
      ? {}
      : { warmRoundMs: medianBreakdown(runs.flatMap((r) => r.warmRoundMs.map((ms) => ({ ...ms })))) }),
    middle,
    // Each run's cold scan decode (parquet-skim): what a build change moves, with less of the
    // page load's noise than the cold total.
    runs: runs.map((r) => ({
      coldMs: r.coldMs,
      coldQueryMs: r.coldQueryMs ?? null,
      warm: r.warm,
      ...(r.breakdown?.decodeMs === undefined ? {} : { coldDecodeMs: r.breakdown.decodeMs }),
    })),
    // parquet-skim's decodes that failed, ran again and passed (web/src/recheck.ts), over the runs.
    ...(runs[0].rechecks === undefined ? {} : { rechecksPassed: runs.reduce((n, r) => n + r.rechecks.passed, 0) }),
  };
}

/** One cell: parquet-skim, the floor page over the ranges it read, then each peer (answers checked). */
async function measureCell(engine, server, layout, query, latencyMs) {
  const base = `?url=/sample/${layout.file}&query=${query}&table=lineitem&warm=${WARM_RUNS}&gap=${WARM_GAP_MS}`;
  const cell = { engine: engine.name, data: layout.id, query, latencyMs, systems: {} };
  const skim = await measure(engine, `${server.url}/skim.html${base}${process.env.BENCH_SKIM_PARAMS ?? ''}`);
  cell.systems['parquet-skim'] = skim;
  const rounds = encodeURIComponent(JSON.stringify(skim.middle.rounds));
  cell.floor = await measure(engine, `${server.url}/floor.html${base}&rounds=${rounds}`);
  for (const [name, page] of Object.entries(PEERS)) {
    if (!systems.list.includes(name)) continue;
    try {
      const peer = await measure(engine, `${server.url}/${page}.html${base}`);
      if (peer.answer !== skim.answer) throw new Error(`answer ${peer.answer}, parquet-skim's ${skim.answer}`);
      cell.systems[name] = peer;
    } catch (error) {
      cell.systems[name] = { error: error.message };
    }
  }
  return cell;
}

/** Every cell of the run: each engine, network, layout and query. */
async function runCells() {
  generateData();
  await buildPages();
  const mounts = {
    '/': PAGE_DIR,
    '/sample/': DATA_DIR,
    '/duckdb/': path.join(repo, 'node_modules/duckdb-wasm-1-28/dist'),
  };
  const cells = [];
  const versions = {};
  for (const engineName of engines.list) {
    const engine = await launchEngine(engineName, { timeoutMs: RUN_TIMEOUT_MS });
    versions[engineName] = engine.version;
    try {
      for (const latencyMs of latencies.list) {
        const server = await startRangeServer({ mounts, latencyMs });
        try {
          for (const layout of layoutsFor(engineName)) {
            for (const query of queries.list) {
              const cell = await measureCell(engine, server, layout, query, latencyMs);
              cells.push(cell);
              console.log(summaryLine(cell));
            }
          }
        } finally {
          await server.close();
        }
      }
    } finally {
      await engine.close();
    }
  }
  return { cells, versions };
}

function summaryLine(cell) {
  const parts = Object.entries(cell.systems).map(([name, r]) =>
    r.error === undefined
      ? `${name} ${r.coldMs.toFixed(0)}/${r.warmMs.toFixed(0)}${r.rechecksPassed > 0 ? ` (${r.rechecksPassed} decodes rechecked and passed)` : ''}`
      : `${name} error`,
  );
  return `${cell.engine} ${cell.data} ${cell.query} +${cell.latencyMs}ms: cold/warm ms: ${parts.join(', ')}; floor ${cell.floor.coldMs.toFixed(0)}/${cell.floor.warmMs.toFixed(0)}`;
}

const fmt = (ms) => (ms === null || ms === undefined ? '–' : ms.toFixed(0));

/** The Markdown tables of a run's `result`: cold path, warm query, first vs repeated, breakdown. */
function report({ date, runs, warmGapMs = 0, engines: versions, cells }) {
  const lines = [`# Interactive speed (${date})`, ''];
  lines.push(
    `${Object.values(versions).join(', ')}; ${runs} runs per cell after a warm-up, medians; range server on 127.0.0.1.`,
    warmGapMs > 0
      ? `Every page idles ${warmGapMs} ms before each warm run.`
      : 'Warm runs follow the first query back to back on every page.',
    'Target: cold ≤ max(0.5 × the fastest peer cold, 1.5 × the floor page cold). First / repeated: the',
    'first query of a fresh page (after createReader) over the same query repeated on that reader. Floor first /',
    'repeated: the floor page’s first move of the same bytes (beside the `.wasm` compile) over its warm moves —',
    'what a fresh page costs with no reader at all, a bound on the first / repeated target.',
    '',
    '| engine | data (writer) | query | +latency | parquet-skim cold | fastest peer cold | floor page cold | target | skim warm | I/O floor warm | warm / floor | first / repeated | floor first / repeated |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const c of cells) {
    const skim = c.systems['parquet-skim'];
    const peers = Object.entries(c.systems).filter(([n, r]) => n !== 'parquet-skim' && r.error === undefined);
    const fastest = peers.sort((x, y) => x[1].coldMs - y[1].coldMs)[0];
    const target = Math.max(0.5 * (fastest?.[1].coldMs ?? 0), 1.5 * c.floor.coldMs);
    const writer = LAYOUTS.find((l) => l.id === c.data)?.writer;
    lines.push(
      `| ${c.engine} | ${c.data} (${writer}) | ${c.query} | ${c.latencyMs} ms | ${fmt(skim.coldMs)} | ${fastest ? `${fmt(fastest[1].coldMs)} (${fastest[0]})` : '–'} | ${fmt(c.floor.coldMs)} | ${fmt(target)} ${skim.coldMs <= target ? '✓' : '✗'} | ${fmt(skim.warmMs)} | ${fmt(c.floor.warmMs)} | ${(skim.warmMs / c.floor.warmMs).toFixed(2)}× | ${(skim.coldQueryMs / skim.warmMs).toFixed(2)}× | ${((c.floor.coldQueryMs ?? c.floor.middle.coldIoMs) / c.floor.warmMs).toFixed(2)}× |`,
    );
  }
  lines.push('', '## Every system, cold page → answer / warm query (ms)', '');
  const names = ['parquet-skim', ...Object.keys(PEERS)];
  lines.push(
    `| engine | data | query | +latency | ${names.join(' | ')} | floor page |`,
    `|---|---|---|---:|${names.map(() => '---:').join('|')}|---:|`,
  );
  for (const c of cells) {
    const row = names.map((n) => {
      const r = c.systems[n];
      if (r === undefined) return '–';
      return r.error === undefined ? `${fmt(r.coldMs)} / ${fmt(r.warmMs)}` : 'error';
    });
    lines.push(
      `| ${c.engine} | ${c.data} | ${c.query} | ${c.latencyMs} ms | ${row.join(' | ')} | ${fmt(c.floor.coldMs)} / ${fmt(c.floor.warmMs)} |`,
    );
  }
  const errors = cells.flatMap((c) =>
    Object.entries(c.systems)
      .filter(([, r]) => r.error !== undefined)
      .map(
        ([n, r]) => `- ${c.engine} ${c.data} ${c.query} +${c.latencyMs} ms, ${n}: ${r.error.replace(/^\S+ \S+: /, '')}`,
      ),
  );
  if (errors.length > 0) lines.push('', 'Errors:', '', ...errors);
  const byRun = cells.filter((c) => c.systems['parquet-skim'].warmByRun?.length > 0 && c.floor.warmByRun?.length > 0);
  if (byRun.length > 0) {
    lines.push(
      '',
      '## Warm runs by position: parquet-skim / I/O floor (ms, medians over the pages)',
      '',
      'The first warm run follows the page’s first query; what the engine does after a first query (its',
      'optimizing compiles; parquet-skim’s workers starting once the page is idle) lands in the early ones.',
      '',
      '| engine | data | query | +latency | warm runs | ratios |',
      '|---|---|---|---:|---|---|',
    );
    for (const c of byRun) {
      const skim = c.systems['parquet-skim'].warmByRun;
      const floor = c.floor.warmByRun;
      lines.push(
        `| ${c.engine} | ${c.data} | ${c.query} | ${c.latencyMs} ms | ${skim.map((ms, i) => `${fmt(ms)} / ${fmt(floor[i])}`).join(', ')} | ${skim.map((ms, i) => `${(ms / floor[i]).toFixed(2)}×`).join(', ')} |`,
      );
    }
  }
  lines.push('', '## Where parquet-skim’s cold path goes (ms since navigation, the median run, no added latency)', '');
  const steps = [
    ['htmlEnd', 'page HTML'],
    ['modulesEnd', 'modules loaded'],
    ['evaluatedAt', 'entry module ran'],
    ['wasmStart', '.wasm requested'],
    ['wasmEnd', '.wasm downloaded'],
    ['compiledAt', '.wasm compiled'],
    ['createdAt', 'createReader() resolved'],
    ['openStart', 'open() called'],
    ['footerFetchEnd', 'footer bytes in'],
    ['openEnd', 'footer decoded (open resolved)'],
    ['scan.planned', 'scan planned'],
    ['scan.firstRequest', 'first page request'],
    ['lastRequest', 'last page request'],
    ['pagesFetchEnd', 'last page bytes in'],
    ['scan.firstTask', 'first task handed over'],
    ['scan.firstResult', 'first result back'],
    ['scan.firstBatch', 'first Arrow batch'],
    ['answeredAt', 'answer'],
  ];
  const shown = cells.filter((c) => c.latencyMs === Math.min(...cells.map((x) => x.latencyMs)));
  lines.push(
    `| step | ${shown.map((c) => `${c.engine} ${c.data} ${c.query}`).join(' | ')} |`,
    `|---|${shown.map(() => '---:').join('|')}|`,
  );
  for (const [key, label] of steps) {
    lines.push(`| ${label} | ${shown.map((c) => fmt(c.systems['parquet-skim'].middle.breakdown[key])).join(' | ')} |`);
  }
  const extra = (label, f) =>
    lines.push(`| ${label} | ${shown.map((c) => f(c.systems['parquet-skim'].middle.breakdown)).join(' | ')} |`);
  extra('workers ready', (b) => b.workersReadyAt.map((t) => t.toFixed(0)).join(', ') || '–');
  extra('module requests / KB', (b) => `${b.moduleRequests} / ${(b.moduleBytes / 1024).toFixed(0)}`);
  extra('decode / IPC / queue (ms)', (b) => `${fmt(b.decodeMs)} / ${fmt(b.ipcMs)} / ${fmt(b.queueMs)}`);
  extra('requests / MB', (b) => `${b.requests} / ${(b.bytes / 2 ** 20).toFixed(2)}`);
  lines.push(
    `| floor page: compile / I/O (ms) | ${shown.map((c) => `${fmt(c.floor.middle.compileMs)} / ${fmt(c.floor.middle.coldIoMs)}`).join(' | ')} |`,
  );
  const warmShown = shown.filter((c) => c.systems['parquet-skim'].warmBreakdown !== undefined);
  if (warmShown.length > 0) {
    lines.push('', '## Where a warm query goes (ms since `open()` was called, medians of every warm run)', '');
    lines.push(
      `| step | ${warmShown.map((c) => `${c.engine} ${c.data} ${c.query}`).join(' | ')} |`,
      `|---|${warmShown.map(() => '---:').join('|')}|`,
    );
    const warmSteps = [
      ['openEnd', 'footer read and decoded (open resolved)'],
      ['planned', 'scan planned'],
      ['firstRequest', 'first page request'],
      ['lastRequest', 'last page request'],
      ['pagesFetchEnd', 'last page bytes in'],
      ['firstTask', 'first task handed over'],
      ['firstResult', 'first result back'],
      ['firstBatch', 'first Arrow batch'],
      ['answeredAt', 'answer'],
      ['decodeMs', 'decode in the task hosts'],
      ['ipcMs', 'IPC → Arrow'],
      ['queueMs', 'waiting for a task host'],
      ['tasksOnPage', 'tasks decoded on the page'],
      ['workersReady', 'workers ready'],
      ['requests', 'requests'],
    ];
    for (const [key, label] of warmSteps) {
      lines.push(
        `| ${label} | ${warmShown.map((c) => fmt(c.systems['parquet-skim'].warmBreakdown[key])).join(' | ')} |`,
      );
    }
    lines.push(`| I/O floor warm | ${warmShown.map((c) => fmt(c.floor.warmMs)).join(' | ')} |`);
    lines.push(
      `| I/O floor warm, by round | ${warmShown
        .map((c) =>
          Object.values(c.floor.warmRoundMs ?? {})
            .map(fmt)
            .join(' + '),
        )
        .join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

const started = performance.now();
if (process.env.BENCH_REPORT !== undefined) {
  const earlier = JSON.parse(await readFile(process.env.BENCH_REPORT, 'utf8'));
  const markdown = report(earlier);
  console.log(markdown);
  await writeFile(process.env.BENCH_REPORT.replace(/\.json$/, '.md'), `${markdown}\n`);
  process.exit(0);
}
const { cells, versions } = await runCells();
const result = { date: today(), runs: RUNS, warmGapMs: WARM_GAP_MS, engines: versions, layouts, cells };
const markdown = report(result);
console.log(`\n${markdown}`);
if (!partial) {
  const base = path.join(repo, `bench/results/${result.date}-interactive${process.env.BENCH_SUFFIX ?? ''}`);
  await mkdir(path.dirname(base), { recursive: true });
  await writeFile(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(`${base}.md`, `${markdown}\n`);
  console.log(`wrote ${path.relative(repo, base)}.{json,md}`);
}
console.log(`interactive bench: ${((performance.now() - started) / 1000).toFixed(0)} s`);
