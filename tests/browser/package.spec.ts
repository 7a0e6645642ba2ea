/**
 * The npm package as users get it: `npm pack` of `web/`, installed from the tarball into a fresh
 * app in tests/.cache/pack, then used with no configuration
 * - in a Vite app (built by Vite, loaded in Chromium): workers and `.wasm` resolve through
 *   `new URL(…, import.meta.url)` and are emitted as assets;
 * - in a plain static page with `<script type="module">` and no bundler (an import map names
 *   apache-arrow, the package's one dependency, and the three it imports);
 * - in Node ≥ 20: inline decoding, a URL through `fetch`, a local file as a buffer.
 * Each runs TPC-H Q6 on the SF1 sample and must return DuckDB's answer.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { test as base } from '@playwright/test';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect, repoRoot } from './fixtures.ts';

const packDir = path.join(cacheDir, 'pack');
const appDir = path.join(packDir, 'app');
const Q6 =
  "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/** The query every setting runs: Q6 fused, and the first 5 rows. Returns what it found. */
const QUERY = `
export async function runQuery(skim, source) {
  const reader = await skim.createReader();
  const file = await reader.open(source);
  const { values } = await file.aggregate({
    filter: ${JSON.stringify(Q6)},
    aggregates: { revenue: skim.sum(skim.expr(skim.col('l_extendedprice')).mul(skim.col('l_discount'))) },
  });
  const first = await file.scan({ columns: ['l_orderkey'], limit: 5 }).toTable();
  const workers = reader.workerCount;
  reader.dispose();
  return { revenue: String(values.revenue), rows: first.numRows, workers };
}
`;

const test = base.extend<object, { app: { tarball: string; sizeBytes: number } }>({
  app: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature.
    async ({}, use) => {
      await rm(packDir, { recursive: true, force: true });
      await mkdir(appDir, { recursive: true });
      const packed = JSON.parse(
        execFileSync('npm', ['pack', '--json', '--pack-destination', packDir], {
          cwd: path.join(repoRoot, 'web'),
          encoding: 'utf8',
        }),
      ) as Array<{ filename: string; size: number }>;
      const tarball = path.join(packDir, packed[0]?.filename ?? '');
      await writeFile(
        path.join(appDir, 'package.json'),
        JSON.stringify({ name: 'app', private: true, type: 'module' }),
      );
      await writeFile(path.join(appDir, 'query.js'), QUERY);
      // The Vite app.
      await writeFile(
        path.join(appDir, 'index.html'),
        '<!doctype html><meta charset="utf-8"><title>app</title><script type="module" src="./main.js"></script>',
      );
      await writeFile(
        path.join(appDir, 'main.js'),
        `import * as skim from 'parquet-skim';
import { runQuery } from './query.js';
runQuery(skim, '/data/lineitem-sf1.parquet').then(
  (r) => { document.body.dataset.result = JSON.stringify(r); },
  (e) => { document.body.dataset.error = String(e && e.code) + ': ' + String(e && e.message); },
);
`,
      );
      // The static page: no bundler, an import map for the one dependency.
      await writeFile(
        path.join(appDir, 'static.html'),
        `<!doctype html><meta charset="utf-8"><title>static</title>
<script type="importmap">{ "imports": {
  "apache-arrow": "./node_modules/apache-arrow/Arrow.dom.mjs",
  "flatbuffers": "./node_modules/flatbuffers/mjs/flatbuffers.js",
  "json-with-bigint": "./node_modules/json-with-bigint/json-with-bigint.js",
  "tslib": "./node_modules/tslib/tslib.es6.mjs"
} }</script>
<script type="module">
import * as skim from './node_modules/parquet-skim/dist/index.js';
import { runQuery } from './query.js';
runQuery(skim, '/data/lineitem-sf1.parquet').then(
  (r) => { document.body.dataset.result = JSON.stringify(r); },
  (e) => { document.body.dataset.error = String(e && e.code) + ': ' + String(e && e.message); },
);
</script>`,
      );
      execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
        cwd: appDir,
        stdio: 'inherit',
      });
      execFileSync('npx', ['vite', 'build', appDir, '--logLevel', 'warn'], {
        cwd: repoRoot,
        stdio: 'inherit',
      });
      await use({ tarball, sizeBytes: packed[0]?.size ?? 0 });
    },
    { scope: 'worker', timeout: 300_000 },
  ],
});

const reference = async () =>
  (JSON.parse(await readFile(path.join(cacheDir, 'tpch-reference.json'), 'utf8')) as { q6: { revenue: string } }).q6
    .revenue;

for (const [name, root, pagePath] of [
  ['a Vite app', 'dist', '/'],
  ['a static page without a bundler', '', '/static.html'],
] as const) {
  test(`the packed package works in ${name}`, async ({ app, page }) => {
    const server = await startRangeServer({
      mounts: { '/': path.join(appDir, root), '/data/': path.join(cacheDir, 'data') },
    });
    const messages: string[] = [];
    page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => messages.push(`failed: ${r.url()}`));
    try {
      await page.goto(`${server.url}${pagePath}`);
      await page.waitForFunction(() => document.body.dataset.result ?? document.body.dataset.error, null, {
        timeout: 20_000,
      });
      const error = await page.evaluate(() => document.body.dataset.error);
      expect(error).toBeUndefined();
      const result = JSON.parse((await page.evaluate(() => document.body.dataset.result)) ?? '{}');
      console.log(`\n${name} (${path.basename(app.tarball)}, ${app.sizeBytes} B packed): ${JSON.stringify(result)}`);
      expect(result).toEqual({ revenue: await reference(), rows: 5, workers: expect.any(Number) });
      expect(result.workers).toBeGreaterThan(0);
    } catch (error) {
      console.log(messages.join('\n'));
      throw error;
    } finally {
      await server.close();
    }
  });
}

test('the packed package works in Node: inline decoding, a URL through fetch, a file as a buffer', async ({ app }) => {
  const server = await startRangeServer({ mounts: { '/data/': path.join(cacheDir, 'data') } });
  try {
    const script = `
import * as skim from 'parquet-skim';
import { readFile } from 'node:fs/promises';
import { runQuery } from './query.js';
const url = await runQuery(skim, ${JSON.stringify(`${server.url}/data/lineitem-sf1.parquet`)});
const buffer = await runQuery(skim, await readFile(${JSON.stringify(path.join(cacheDir, 'data/lineitem-sf1.parquet'))}));
console.log(JSON.stringify({ url, buffer }));
`;
    await writeFile(path.join(appDir, 'node-check.mjs'), script);
    // Asynchronously: the range server runs in this process and must keep answering.
    const { stdout: out } = await promisify(execFile)('node', ['node-check.mjs'], { cwd: appDir, encoding: 'utf8' });
    const result = JSON.parse(out.trim().split('\n').pop() ?? '{}');
    console.log(`\nNode (${path.basename(app.tarball)}): ${JSON.stringify(result)}`);
    const revenue = await reference();
    expect(result.url).toEqual({ revenue, rows: 5, workers: 0 });
    expect(result.buffer).toEqual({ revenue, rows: 5, workers: 0 });
  } finally {
    await server.close();
  }
});
