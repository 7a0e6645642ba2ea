/**
 * The npm package as users get it (tests/browser/packed-app.ts: `npm pack` of `web/`, installed
 * from the tarball into a fresh app), used with no configuration
 * - in a Vite app (built by Vite, loaded in Chromium): workers and `.wasm` resolve through
 *   `new URL(…, import.meta.url)` and are emitted as assets;
 * - in a plain static page with `<script type="module">` and no bundler (an import map names the
 *   package's entry and its single-file apache-arrow), loading in a handful of requests;
 * - in Node ≥ 20: inline decoding, a URL through `fetch`, a local file as a buffer.
 * Each runs TPC-H Q6 on the SF1 sample and must return DuckDB's answer.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect, repoRoot } from './fixtures.ts';
import { appDir, test } from './packed-app.ts';

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
    // What loading the package costs: its files and apache-arrow's (workers' scripts included).
    const packageRequests: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/node_modules/')) packageRequests.push(new URL(r.url()).pathname);
    });
    page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => messages.push(`failed: ${r.url()}`));
    try {
      await page.goto(`${server.url}${pagePath}`);
      await page.waitForSelector('body[data-ready=true]', { state: 'attached', timeout: 20_000 });
      const result = await page.evaluate((url) => window.app.runQuery(url), '/data/lineitem-sf1.parquet');
      console.log(`\n${name} (${path.basename(app.tarball)}, ${app.sizeBytes} B packed): ${JSON.stringify(result)}`);
      expect(result).toEqual({ revenue: await reference(), rows: 5, workers: expect.any(Number) });
      expect(result.workers).toBeGreaterThan(0);
      if (pagePath === '/static.html') {
        const modules = packageRequests.filter((p) => p.endsWith('.js'));
        console.log(`no bundler: ${packageRequests.length} requests for the package: ${packageRequests.join(', ')}`);
        // The entry, apache-arrow, and the worker script once per worker.
        expect(modules.length).toBeLessThanOrEqual(2 + result.workers);
        expect(modules.length).toBeLessThanOrEqual(6);
      }
    } catch (error) {
      console.log(messages.join('\n'));
      throw error;
    } finally {
      await server.close();
    }
  });
}

test('the package loads from a CDN: another origin serves its files, its workers start anyway', async ({ page }) => {
  const cdn = await startRangeServer({
    mounts: { '/parquet-skim/': path.join(appDir, 'node_modules/parquet-skim/dist') },
  });
  const site = await startRangeServer({ mounts: { '/': appDir, '/data/': path.join(cacheDir, 'data') } });
  const fromCdn: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(cdn.url)) fromCdn.push(new URL(r.url()).pathname);
  });
  try {
    const html = `<!doctype html><meta charset="utf-8"><title>cdn</title>
<script type="importmap">{ "imports": {
  "parquet-skim": "${cdn.url}/parquet-skim/index.js",
  "apache-arrow": "${cdn.url}/parquet-skim/apache-arrow.js"
} }</script>
<script type="module">
import * as skim from 'parquet-skim';
import { runQuery } from './query.js';
window.app = { runQuery: (source) => runQuery(skim, source) };
document.body.dataset.ready = 'true';
</script>`;
    await writeFile(path.join(appDir, 'cdn.html'), html);
    await page.goto(`${site.url}/cdn.html`);
    await page.waitForSelector('body[data-ready=true]', { state: 'attached', timeout: 20_000 });
    const result = await page.evaluate((url) => window.app.runQuery(url), '/data/lineitem-sf1.parquet');
    console.log(`\nfrom a CDN origin: ${JSON.stringify(result)}; from the CDN: ${fromCdn.join(', ')}`);
    expect(result).toEqual({ revenue: await reference(), rows: 5, workers: expect.any(Number) });
    expect(result.workers).toBeGreaterThan(0);
    expect(fromCdn.filter((p) => p.endsWith('/worker.js')).length).toBe(result.workers);
  } finally {
    await site.close();
    await cdn.close();
  }
});

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

test("the package's types compile in a Node project without the DOM lib, under strict", async ({ app }) => {
  const dir = path.join(appDir, 'node-types');
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022'],
        types: ['node'],
        typeRoots: [path.join(repoRoot, 'node_modules/@types')],
        strict: true,
        noEmit: true,
      },
      include: ['check.ts'],
    }),
  );
  // Everything a Node user touches: reader options, open options, scans, filters, errors, metadata.
  await writeFile(
    path.join(dir, 'check.ts'),
    `import { readFile } from 'node:fs/promises';
import { col, count, createReader, openParquet, ParquetSkimError, type OpenOptions, type ScanOptions } from 'parquet-skim';
const bytes = await readFile('lineitem.parquet');
const file = await openParquet(bytes);
const scan: ScanOptions = { columns: ['l_orderkey'], filter: col('l_orderkey').lt(10), limit: 10 };
const table = await file.scan(scan).toTable();
const { values } = await file.aggregate({ aggregates: { rows: count() } });
const reader = await createReader({ workers: 0, cacheBytes: 0 });
const options: OpenOptions = { credentials: 'include', headers: { Authorization: 'Bearer x' }, retries: 1 };
try {
  await reader.open('https://example.com/x.parquet', options);
} catch (error) {
  if (error instanceof ParquetSkimError) console.log(error.code, error.message);
}
console.log(table.numRows, values.rows, file.metadata.numRows, file.schema.fields.length);
`,
  );
  const tsc = path.join(repoRoot, 'node_modules/.bin/tsc');
  const { stdout } = await promisify(execFile)(tsc, ['-p', dir], { cwd: dir, encoding: 'utf8' }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
  );
  console.log(`\nNode types (${path.basename(app.tarball)}): ${stdout.trim() || 'no errors'}`);
  expect(stdout.trim()).toBe('');
});
