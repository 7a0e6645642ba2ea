/**
 * The npm package as users get it (tests/browser/packed-app.ts: `npm pack` of `web/`, installed
 * from the tarball into a fresh app), used with no configuration
 * - in a Vite app (built by Vite, loaded in Chromium): workers and `.wasm` resolve through
 *   `new URL(…, import.meta.url)` and are emitted as assets;
 * - in a plain static page with `<script type="module">` and no bundler (an import map names
 *   apache-arrow, the package's one dependency, and the three it imports);
 * - in Node ≥ 20: inline decoding, a URL through `fetch`, a local file as a buffer.
 * Each runs TPC-H Q6 on the SF1 sample and must return DuckDB's answer.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect } from './fixtures.ts';
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
