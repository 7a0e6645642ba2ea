/**
 * parquet-skim's bulk queries in any of the three engines (the peers bench runs in Chromium only):
 * TPC-H Q6, `l_comment LIKE '%special%requests%'` and a 3-column full scan, over HTTP from the
 * range server at 0 ms, a fresh page (WebKit: a fresh session) and a fresh reader per run, cold —
 * page loaded, then `createReader()` + open + scan timed — or warm (`BENCH_WARM=1`: the same scan
 * again on that reader, timed). Medians of `BENCH_RUNS` after one discarded run; each run's
 * scan's requests (`scan.stats.requests`) beside them.
 *
 * To compare builds of the package, name copies of the test harness (`tests/.cache/harness`, as
 * `npm run build` leaves it) in `BENCH_HARNESSES` (comma list of directories under tests/.cache):
 * each pass serves each in turn, `BENCH_PASSES` times, so a machine's drift falls on both
 * (2026-11-28: the SIMD build against the one without, in Firefox — bench/results/
 * 2026-11-28-firefox-two-builds.md). The harness is put back as it was at the end.
 *
 * Usage: node tests/bench/bulk-engines.mjs [engine]   (default firefox; after `npm run build`)
 * BENCH_FILES (default lineitem-sf1.parquet,lineitem-sf1-tpchgen.parquet, under
 * tests/.cache/data), BENCH_QUERIES (q6, like, scan3), BENCH_WORKERS (the reader's `workers`;
 * default: the engine's `hardwareConcurrency`). Prints one line per cell and pass.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRangeServer } from '../server/range-server.mjs';
import { launchEngine } from '../support/engines.mjs';
import { median, RUNS, repo } from './lib.mjs';
import { CONTAINS, Q6_WHERE, SCAN3 } from './peers-page/queries.mjs';

const engineName = process.argv[2] ?? 'firefox';
const list = (name, fallback) => (process.env[name] ?? fallback).split(',').filter((s) => s !== '');
const files = list('BENCH_FILES', 'lineitem-sf1.parquet,lineitem-sf1-tpchgen.parquet');
const queries = list('BENCH_QUERIES', 'q6,like,scan3');
const harnesses = list('BENCH_HARNESSES', '');
const passes = Number(process.env.BENCH_PASSES ?? 1);
const warm = process.env.BENCH_WARM === '1';
const workers = process.env.BENCH_WORKERS === undefined ? null : Number(process.env.BENCH_WORKERS);

const cache = path.join(repo, 'tests/.cache');
const harness = path.join(cache, 'harness');

/** The scan options of each query: the peers bench's queries (peers-page/queries.mjs). */
const SCANS = {
  q6: { filter: Q6_WHERE, columns: ['l_extendedprice', 'l_discount'] },
  like: {
    filter: `${CONTAINS.lineitem.column} LIKE '${CONTAINS.lineitem.like}'`,
    columns: CONTAINS.lineitem.columns,
  },
  scan3: { columns: SCAN3.lineitem },
};
for (const query of queries) {
  if (!(query in SCANS)) throw new Error(`unknown query ${query}; expected one of ${Object.keys(SCANS).join(', ')}`);
}

/** Page side: a reader, then the scan (twice when warm); the timed run's ms, rows and build. */
async function runQuery({ url, options, warm, workers }) {
  const started = performance.now();
  const reader = await window.harness.skim.createReader(workers === null ? {} : { workers });
  const once = async (t0) => {
    const file = await reader.open(`${url}?r=${Math.random()}`);
    const scan = file.scan(options);
    let rows = 0;
    for await (const batch of scan) rows += batch.numRows;
    return { ms: performance.now() - t0, rows, decodeMs: scan.stats.decodeMs, requests: scan.stats.requests };
  };
  const first = await once(started);
  const timed = warm ? await once(performance.now()) : first;
  const build = reader.stats().startup.wasmBuild;
  reader.dispose();
  return { ...timed, build };
}

// Put back whatever harness was there, whatever happens.
const saved = harnesses.length > 0 ? mkdtempSync(path.join(tmpdir(), 'harness-')) : undefined;
if (saved !== undefined) cpSync(harness, saved, { recursive: true });
const server = await startRangeServer({
  mounts: { '/': harness, '/sample/': path.join(cache, 'data') },
});
const engine = await launchEngine(engineName);
console.log(`${engine.version}; ${warm ? 'warm' : 'cold'}; workers ${workers ?? 'default'}; medians of ${RUNS}`);
try {
  for (let pass = 1; pass <= passes; pass++) {
    for (const build of harnesses.length > 0 ? harnesses : ['harness']) {
      if (harnesses.length > 0) {
        const from = path.join(cache, build);
        if (!existsSync(from)) throw new Error(`no harness copy at ${from}`);
        rmSync(harness, { recursive: true, force: true });
        cpSync(from, harness, { recursive: true });
      }
      for (const file of files) {
        for (const query of queries) {
          const ms = [];
          const decode = [];
          const requests = [];
          let answer = '';
          for (let i = 0; i <= RUNS; i++) {
            const page = await engine.open(`${server.url}/`);
            try {
              await page.waitFor('body[data-ready=true]');
              const r = await page.evaluate(runQuery, { url: `/sample/${file}`, options: SCANS[query], warm, workers });
              const said = `${r.rows} rows`;
              if (answer !== '' && said !== answer) throw new Error(`${file} ${query}: ${said}, earlier ${answer}`);
              answer = said;
              if (i > 0) {
                ms.push(r.ms);
                decode.push(r.decodeMs);
                requests.push(r.requests);
              }
            } finally {
              await page.close();
            }
          }
          const runs = JSON.stringify(ms.map(Math.round).sort((a, b) => a - b));
          console.log(
            `pass ${pass} ${build} ${file} ${query}: ${Math.round(median(ms))} ms ${runs}, decode ${Math.round(median(decode))} ms, requests ${JSON.stringify(requests)}, ${answer}`,
          );
        }
      }
    }
  }
} finally {
  if (saved !== undefined) {
    rmSync(harness, { recursive: true, force: true });
    cpSync(saved, harness, { recursive: true });
    rmSync(saved, { recursive: true, force: true });
  }
  await engine.close();
  await server.close();
}
