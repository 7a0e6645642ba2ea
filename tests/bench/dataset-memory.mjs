/**
 * A dataset of thousands of files in one page: what its open files hold, and whether a scan
 * over all of them finishes. The 84 files of the hive-partitioned lineitem SF1 (pyarrow's
 * `write_to_dataset`: ~180 row groups of 16 columns per file, a 292 KB footer, ~1.3 MB decoded)
 * listed `BENCH_COPIES` times (default 36: 3,024 files; each copy a distinct URL, `?copy=N`,
 * so a distinct file to the reader), then a `count` with a filter (`l_quantity < 2`: every
 * file's footer, and one column of the row groups its statistics keep), and the same count again
 * on the same dataset (the files the bound kept open are not opened again). Twice, each on a
 * fresh page: with the default `footerMemoryBytes`, and with no bound (every file kept open, as
 * before the bound existed) — a page's WebAssembly memory ends at 4 GiB.
 *
 * Writes bench/results/<date>-dataset-memory.{json,md}. Usage (after `npm run build` and the
 * bench data: tests/bench/write-others.py): node tests/bench/dataset-memory.mjs
 */
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repo, startBench, today } from './lib.mjs';

const DIR = 'lineitem-sf1-hive';
const COPIES = Number(process.env.BENCH_COPIES ?? 36);
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** In the page: opens the dataset, counts, and reports what the scan and the open files cost. */
async function countAll({ urls, footerMemoryBytes }) {
  const { skim } = window.harness;
  const reader = await skim.createReader();
  const dataset = await reader.openDataset(urls, footerMemoryBytes === undefined ? {} : { footerMemoryBytes });
  const count = async () => {
    const started = performance.now();
    const { values, stats } = await dataset.aggregate({ aggregates: { n: skim.count() }, filter: 'l_quantity < 2' });
    return {
      rows: Number(values.n),
      ms: performance.now() - started,
      filesClosed: stats.filesClosed,
      heldMiB: dataset.memoryBytes / 2 ** 20,
      pageWasmMiB: stats.wasmMemoryPeakBytes / 2 ** 20,
    };
  };
  const started = performance.now();
  try {
    const first = await count();
    return { ...first, again: await count() };
  } catch (error) {
    return { failed: `${error.code}: ${error.message}`, ms: performance.now() - started };
  } finally {
    reader.dispose();
  }
}

const files = readdirSync(path.join(repo, 'tests/.cache/data', DIR), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.parquet'))
  .sort();
const bench = await startBench();
const urls = [];
for (let copy = 0; copy < COPIES; copy++) {
  for (const f of files) urls.push(`${bench.server.url}/sample/${DIR}/${f}?copy=${copy}`);
}
const results = [];
for (const [label, footerMemoryBytes] of [
  ['default footerMemoryBytes (256 MiB)', undefined],
  ['no bound', UNBOUNDED],
]) {
  const page = await bench.browser.newPage();
  await page.goto(`${bench.server.url}/`);
  await page.waitForSelector('body[data-ready=true]', { state: 'attached' });
  const result = await page.evaluate(countAll, { urls, footerMemoryBytes });
  await page.close();
  results.push({ label, files: urls.length, ...result });
  console.log(label, JSON.stringify(result));
}
const browserVersion = bench.browser.version();
await bench.close();

const counted = (r) =>
  `${r.rows.toLocaleString('en-US')} rows in ${(r.ms / 1000).toFixed(1)} s · ${r.filesClosed} files closed · open files hold ${r.heldMiB.toFixed(0)} MiB · page memory ${r.pageWasmMiB.toFixed(0)} MiB`;
const cell = (r) =>
  r.failed !== undefined
    ? `failed after ${(r.ms / 1000).toFixed(1)} s: ${r.failed.slice(0, 120)} | –`
    : `${counted(r)} | ${counted(r.again)}`;
const md = [
  `# A dataset of ${urls.length.toLocaleString('en-US')} files in one page, ${today()}`,
  '',
  `Headless Chromium ${browserVersion}, 2 cores, the range server on localhost, one run each on a fresh page. The ${files.length} files of \`${DIR}/\` (pyarrow \`write_to_dataset\`, ~180 row groups each) listed ${COPIES} times as distinct URLs; \`dataset.aggregate({ count, filter: 'l_quantity < 2' })\` over all of them (tests/bench/dataset-memory.mjs).`,
  '',
  '| footerMemoryBytes | count | the same count again |',
  '|---|---|---|',
  ...results.map((r) => `| ${r.label} | ${cell(r)} |`),
  '',
].join('\n');
await mkdir(path.join(repo, 'bench/results'), { recursive: true });
const base = path.join(repo, 'bench/results', `${today()}-dataset-memory`);
await writeFile(`${base}.json`, `${JSON.stringify({ browser: browserVersion, copies: COPIES, results }, null, 2)}\n`);
await writeFile(`${base}.md`, md);
console.log(md);
