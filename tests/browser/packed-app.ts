/**
 * The npm package as users get it: `npm pack` of `web/`, installed from the tarball into a fresh
 * app in tests/.cache/pack/app, with no configuration. One worker-scoped fixture (`app`) builds it
 * once for every spec that uses this module's `test`:
 * - `index.html` + `main.js`: a Vite app (built into `dist/` by `vite build`, or served as it is by
 *   `vite` dev), exposing `window.app` once `body[data-ready]`;
 * - `static.html`: the same without a bundler (`<script type="module">` and an import map onto the
 *   package's entry and its single-file apache-arrow);
 * - `public/`: a Parquet file nobody here wrote, larger than the open's 512 KiB tail read (so a
 *   server that mishandles suffix ranges shows it), copied into `dist/` by the build; after the
 *   build, `lineitem-sf1.parquet` is hard-linked into `public/` and `dist/` (not copied: 214 MB).
 *
 * `window.app.readExact(url, { limit })` opens `url` with default options, reads it (or its first
 * `limit` rows), opens it again, and returns the rows as Arrow IPC (base64), both opens'
 * request logs and the scan's — or the error's code and message. Nothing in it knows which server it runs on.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, link, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test as base } from '@playwright/test';
import { cacheDir, parquetTestingDir, repoRoot } from './fixtures.ts';

export const packDir = path.join(cacheDir, 'pack');
export const appDir = path.join(packDir, 'app');
/** The parquet-testing file every server serves (811 KB, written by parquet-mr). */
export const SMALL_FILE = 'alltypes_tiny_pages_plain.parquet';
export const LINEITEM = 'lineitem-sf1.parquet';

const Q6 =
  "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/** TPC-H Q6 fused, and the first 5 rows. */
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

export async function readExact(skim, tableToIPC, url, options = {}) {
  const reader = await skim.createReader();
  try {
    const file = await reader.open(url);
    const openLog = file.requestLog();
    const scan = options.limit === undefined ? {} : { limit: options.limit };
    const table = await file.scan(scan).toTable();
    const scanLog = file.requestLog().slice(openLog.length);
    const again = await reader.open(url);
    const bytes = tableToIPC(table);
    let text = '';
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { rows: table.numRows, ipc: btoa(text), openLog, scanLog, againLog: again.requestLog() };
  } catch (error) {
    return { error: { code: error?.code ?? null, message: String(error?.message ?? error) } };
  } finally {
    reader.dispose();
  }
}
`;

const MAIN = `import * as skim from 'parquet-skim';
import { tableToIPC } from 'apache-arrow';
import { readExact, runQuery } from './query.js';
window.app = {
  runQuery: (source) => runQuery(skim, source),
  readExact: (url, options) => readExact(skim, tableToIPC, url, options),
};
document.body.dataset.ready = 'true';
`;

/**
 * The no-bundler page, as the README shows it: an import map onto the package's entry and its
 * single-file apache-arrow build.
 */
const STATIC_PAGE = `<!doctype html><meta charset="utf-8"><title>static</title>
<script type="importmap">{ "imports": {
  "parquet-skim": "./node_modules/parquet-skim/dist/index.js",
  "apache-arrow": "./node_modules/parquet-skim/dist/apache-arrow.js"
} }</script>
<script type="module">
import * as skim from 'parquet-skim';
import { tableToIPC } from 'apache-arrow';
import { readExact, runQuery } from './query.js';
window.app = {
  runQuery: (source) => runQuery(skim, source),
  readExact: (url, options) => readExact(skim, tableToIPC, url, options),
};
document.body.dataset.ready = 'true';
</script>`;

/** What a page's `window.app` offers. */
export interface AppApi {
  runQuery(source: string): Promise<{ revenue: string; rows: number; workers: number }>;
  readExact(url: string, options?: { limit?: number }): Promise<ExactRead>;
}

export interface LogEntry {
  range: string | null;
  status: number | null;
  bytes: number;
  /** Ranges asked in one request, when more than one. */
  parts?: number;
  note?: string;
}

export type ExactRead =
  | { rows: number; ipc: string; openLog: LogEntry[]; scanLog: LogEntry[]; againLog: LogEntry[]; error?: undefined }
  | { error: { code: string | null; message: string } };

declare global {
  interface Window {
    app: AppApi;
  }
}

export interface PackedApp {
  tarball: string;
  sizeBytes: number;
  /** The app's sources (the root `vite` dev serves). */
  dir: string;
  /** Its build (`vite build`): what static servers serve. */
  dist: string;
}

export const test = base.extend<object, { app: PackedApp }>({
  app: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature.
    async ({}, use) => {
      await rm(packDir, { recursive: true, force: true });
      await mkdir(path.join(appDir, 'public'), { recursive: true });
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
      await writeFile(
        path.join(appDir, 'index.html'),
        '<!doctype html><meta charset="utf-8"><title>app</title><script type="module" src="./main.js"></script>',
      );
      await writeFile(path.join(appDir, 'main.js'), MAIN);
      await writeFile(path.join(appDir, 'static.html'), STATIC_PAGE);
      await copyFile(path.join(parquetTestingDir, SMALL_FILE), path.join(appDir, 'public', SMALL_FILE));
      execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
        cwd: appDir,
        stdio: 'inherit',
      });
      execFileSync('npx', ['vite', 'build', appDir, '--logLevel', 'warn'], { cwd: repoRoot, stdio: 'inherit' });
      const dist = path.join(appDir, 'dist');
      for (const dir of [path.join(appDir, 'public'), dist]) {
        // A hard link: servers such as `serve` do not follow symbolic links by default.
        await link(path.join(cacheDir, 'data', LINEITEM), path.join(dir, LINEITEM));
      }
      await use({ tarball, sizeBytes: packed[0]?.size ?? 0, dir: appDir, dist });
    },
    { scope: 'worker', timeout: 300_000 },
  ],
});
