/**
 * A valid file must never read as invalid: 1,000 consecutive opens and scans in one engine
 * (default WebKit, where an earlier bench saw 2 of ~110 runs of the tpchgen file fail with
 * `INVALID_FILE: … Integer overflow`), a fresh reader each time and a fresh page (WebKit: a fresh
 * session) every 50, each answer compared with the one Node reads from the same bytes.
 *
 * The page is the interactive bench's parquet-skim page, built here; each open reads the first 100
 * rows or the lookup, in turn, of TPC-H lineitem as tpchgen-cli writes it (tests/bench/
 * write-others.py makes it). Prints every failure with its message, and the totals; exits 1 on any.
 * A full run (1,000 opens or more) also writes bench/results/<date>-stress-<engine>.json.
 *
 * Usage: node tests/bench/engine-stress.mjs [engine] [opens] [opens per page]   (after `npm run
 * build`; opens per page defaults to 50 — 1 makes every open a page's first, cold one); JSC_*
 * environment variables are passed to WebKit's JavaScriptCore (e.g. JSC_useOMGJIT=0).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createReader } from 'parquet-skim';
import { build } from 'vite';
import { startRangeServer } from '../server/range-server.mjs';
import { launchEngine } from '../support/engines.mjs';
import { repo, today } from './lib.mjs';
import { answerOf } from './peers-page/answers.mjs';
import { LOOKUP_KEY } from './peers-page/queries.mjs';

const engineName = process.argv[2] ?? 'webkit';
const OPENS = Number(process.argv[3] ?? 1000);
const PER_PAGE = Number(process.argv[4] ?? 50);
const FILE = 'lineitem-sf1-tpchgen.parquet';
const DATA_DIR = path.join(repo, 'tests/.cache/data');
const PAGE_DIR = path.join(repo, 'tests/.cache/stress-page');

const queries = { first100: { limit: 100 }, lookup: { filter: `l_orderkey = ${LOOKUP_KEY}` } };

/** The expected answers: the same scans in Node, from the file's bytes. */
async function expectedAnswers() {
  const reader = await createReader();
  const file = await reader.open(new Uint8Array(await readFile(path.join(DATA_DIR, FILE))));
  const answers = {};
  for (const [name, options] of Object.entries(queries)) {
    const batches = [];
    for await (const batch of file.scan(options)) batches.push(batch);
    answers[name] = answerOf(name, 'lineitem', { batches });
  }
  reader.dispose();
  return answers;
}

/** Runs in the page: `n` opens, each with a fresh reader; returns the answers or errors. */
async function opensInPage({ url, n, first, lookupKey }) {
  const { createReader } = window.stress;
  const out = [];
  let rechecksSeen = 0;
  for (let i = 0; i < n; i++) {
    const query = (first + i) % 2 === 0 ? 'first100' : 'lookup';
    const reader = await createReader();
    try {
      const file = await reader.open(`${url}?open=${first + i}`);
      const scan =
        query === 'first100' ? file.scan({ limit: 100 }) : file.scan({ filter: `l_orderkey = ${lookupKey}` });
      const batches = [];
      for await (const batch of scan) batches.push(batch);
      const { trapsOnPage } = reader.stats().workers;
      // The page's count (all its readers): this open's share.
      const rechecked = reader.stats().rechecks.passed - rechecksSeen;
      rechecksSeen += rechecked;
      out.push({ query, answer: window.stress.answerOf(query, 'lineitem', { batches }), trapsOnPage, rechecked });
    } catch (error) {
      out.push({ query, error: `${error?.code ?? error?.name}: ${error?.message ?? error}` });
    } finally {
      reader.dispose();
    }
  }
  return out;
}

/** A fresh page; a browser that fails to start is tried again (twice), not counted as a wrong read. */
async function openPage(engine, url) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await engine.open(url);
    } catch (error) {
      if (attempt === 3) throw error;
      console.log(`\n${error.message}; trying again`);
    }
  }
}

async function buildPage() {
  const root = path.join(repo, 'tests/bench/stress-page');
  await build({
    root,
    base: './',
    logLevel: 'warn',
    configFile: false,
    build: { outDir: PAGE_DIR, emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0 },
    worker: { format: 'es' },
  });
}

const expected = await expectedAnswers();
await buildPage();
const server = await startRangeServer({ mounts: { '/': PAGE_DIR, '/sample/': DATA_DIR } });
// JSC_* variables of this process go to WebKit's JavaScriptCore (e.g. JSC_useOMGJIT=0).
const jsc = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('JSC_')));
const engine = await launchEngine(engineName, { timeoutMs: 600_000, jsc });
const started = performance.now();
const failures = [];
let done = 0;
let traps = 0;
let rechecked = 0;
try {
  while (done < OPENS) {
    const n = Math.min(PER_PAGE, OPENS - done);
    const page = await openPage(engine, `${server.url}/`);
    try {
      await page.waitFor('body[data-ready=true]');
      const results = await page.evaluate(opensInPage, {
        url: `${server.url}/sample/${FILE}`,
        n,
        first: done,
        lookupKey: String(LOOKUP_KEY),
      });
      results.forEach((r, i) => {
        traps += r.trapsOnPage ?? 0;
        rechecked += r.rechecked ?? 0;
        const ok = r.error === undefined && r.answer === expected[r.query];
        if (!ok) failures.push({ open: done + i, ...r, expected: expected[r.query] });
      });
    } finally {
      await page.close();
    }
    done += n;
    process.stdout.write(`\r${engine.version}: ${done}/${OPENS} opens, ${failures.length} wrong`);
  }
} finally {
  await engine.close();
  await server.close();
}
const seconds = ((performance.now() - started) / 1000).toFixed(0);
console.log(
  `\n${engine.version}: ${done} opens and scans of ${FILE} in ${seconds} s, ${failures.length} wrong; ${traps} tasks trapped on the page and ran again in a worker; ${rechecked} decodes failed, ran again and passed (web/src/recheck.ts)`,
);
for (const f of failures) console.log(JSON.stringify(f));
if (OPENS >= 1000) {
  const date = today();
  const out = path.join(repo, `bench/results/${date}-stress-${engineName}.json`);
  const env = Object.keys(jsc).length > 0 ? jsc : undefined;
  const result = {
    date,
    engine: engine.version,
    env,
    file: FILE,
    opens: done,
    perPage: PER_PAGE,
    seconds: Number(seconds),
    wrong: failures.length,
    trapsOnPage: traps,
    rechecksPassed: rechecked,
    failures,
  };
  await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${path.relative(repo, out)}`);
}
process.exit(failures.length === 0 ? 0 : 1);
