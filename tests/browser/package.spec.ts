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
import { cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect, repoRoot } from './fixtures.ts';
import { appDir, packDir, test } from './packed-app.ts';

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
    // This page imports only the package, and the package's entry does not import apache-arrow:
    // the entry runs, and requests the `.wasm`, before apache-arrow is even asked for.
    const wasm = fromCdn.findIndex((p) => p.endsWith('.wasm'));
    expect(wasm).toBeGreaterThan(0);
    expect(wasm).toBeLessThan(fromCdn.indexOf('/parquet-skim/apache-arrow.js'));
  } finally {
    await site.close();
    await cdn.close();
  }
});

test('a page that does not map apache-arrow: the package still loads and requests its .wasm, and opening a file says what is missing', async ({
  page,
}) => {
  // apache-arrow is loaded beside the core, not imported by the entry (web/src/arrow.ts): the
  // entry runs, and the `.wasm` is requested, whether or not apache-arrow can be resolved.
  const site = await startRangeServer({
    mounts: {
      '/parquet-skim/': path.join(appDir, 'node_modules/parquet-skim/dist'),
      '/data/': path.join(cacheDir, 'data'),
    },
  });
  const requested: string[] = [];
  page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  try {
    const html = `<!doctype html><meta charset="utf-8"><title>no apache-arrow</title>
<script type="importmap">{ "imports": { "parquet-skim": "/parquet-skim/index.js" } }</script>
<script type="module">
import { createReader } from 'parquet-skim';
window.noArrow = {
  open: async (url) => {
    const reader = await createReader();
    try {
      await reader.open(url);
      return { opened: true };
    } catch (error) {
      return { code: error.code, message: error.message };
    } finally {
      reader.dispose();
    }
  },
};
document.body.dataset.ready = 'true';
</script>`;
    await writeFile(path.join(appDir, 'node_modules/parquet-skim/dist/no-arrow.html'), html);
    await page.goto(`${site.url}/parquet-skim/no-arrow.html`);
    await page.waitForSelector('body[data-ready=true]', { state: 'attached', timeout: 20_000 });
    type NoArrow = { open(url: string): Promise<{ opened?: true; code?: string; message?: string }> };
    const result = await page.evaluate(
      (url) => (window as unknown as { noArrow: NoArrow }).noArrow.open(url),
      '/data/lineitem-sf1.parquet',
    );
    console.log(`\nwithout apache-arrow mapped: ${JSON.stringify(result)}; requested: ${requested.join(', ')}`);
    expect(requested.some((p) => p.endsWith('.wasm'))).toBe(true);
    expect(result).toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining('apache-arrow') });
    expect(result.message).toContain('import map');
  } finally {
    await site.close();
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

test('apache-arrow is a peer dependency: the packed package works with the oldest (13.0.0) and the newest of its range; string views come as plain strings where apache-arrow has none', async ({
  app,
}) => {
  // A file whose Arrow schema has a string view, written by pyarrow (the conformance venv).
  const views = path.join(packDir, 'views.parquet');
  await promisify(execFile)(path.join(repoRoot, 'tests/.venv/bin/python'), [
    '-c',
    `import pyarrow as pa, pyarrow.parquet as pq
pq.write_table(pa.table({'id': pa.array([1, 2, 3], pa.int64()), 's': pa.array(['short', 'a string longer than twelve bytes', None], pa.string_view())}), ${JSON.stringify(views)})`,
  ]);
  const range = (
    JSON.parse(await readFile(path.join(appDir, 'node_modules/parquet-skim/package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    }
  ).peerDependencies['apache-arrow'];
  expect(range).toBe('>=13.0.0 <22');
  const script = `
import * as arrow from 'apache-arrow';
import * as skim from 'parquet-skim';
import { readFile } from 'node:fs/promises';
import { runQuery } from '../app/query.js';
const q6 = await runQuery(skim, await readFile(${JSON.stringify(path.join(cacheDir, 'data/lineitem-sf1.parquet'))}));
const reader = await skim.createReader();
const file = await reader.open(await readFile(${JSON.stringify(views)}));
const table = await file.scan({}).toTable();
const lineitem = await reader.open(await readFile(${JSON.stringify(path.join(cacheDir, 'data/lineitem-sf1.parquet'))}));
const rows = skim.formatRows(await lineitem.scan({ limit: 2 }).toTable());
reader.dispose();
console.log(JSON.stringify({
  arrow: JSON.parse(await readFile('node_modules/apache-arrow/package.json', 'utf8')).version,
  q6,
  viewType: String(table.schema.fields[1].type),
  strings: table.getChild('s').toArray(),
  isTable: table instanceof arrow.Table,
  firstRow: rows[0],
}));
`;
  const reference = JSON.parse(await readFile(path.join(cacheDir, 'tpch-reference.json'), 'utf8')) as {
    q6: { revenue: string };
  };
  const results: Record<string, Record<string, unknown>> = {};
  for (const [label, arrowDir] of [
    ['oldest', path.join(repoRoot, 'node_modules/apache-arrow-13')],
    ['newest', path.join(appDir, 'node_modules/apache-arrow')],
  ] as const) {
    // The installed package, beside the apache-arrow under test (resolved from there).
    const dir = path.join(packDir, `arrow-${label}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(path.join(dir, 'node_modules'), { recursive: true });
    await cp(path.join(appDir, 'node_modules/parquet-skim'), path.join(dir, 'node_modules/parquet-skim'), {
      recursive: true,
    });
    await symlink(arrowDir, path.join(dir, 'node_modules/apache-arrow'), 'dir');
    await writeFile(path.join(dir, 'check.mjs'), script);
    const { stdout } = await promisify(execFile)('node', ['check.mjs'], { cwd: dir, encoding: 'utf8' });
    results[label] = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  }
  console.log(`\napache-arrow peer range: ${JSON.stringify(results)}`);
  const { oldest, newest } = results;
  expect(oldest?.arrow).toBe('13.0.0');
  expect(newest?.arrow).toMatch(/^21\./);
  for (const result of [oldest, newest]) {
    expect(result?.q6).toEqual({ revenue: reference.q6.revenue, rows: 5, workers: 0 });
    expect(result?.strings).toEqual(['short', 'a string longer than twelve bytes', null]);
    expect(result?.isTable).toBe(true);
  }
  expect(oldest?.viewType).toBe('Utf8');
  expect(newest?.viewType).toBe('Utf8View');
  expect(oldest?.firstRow).toEqual(newest?.firstRow);
});
