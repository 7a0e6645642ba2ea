/**
 * The servers a developer tries first, each started for real (tests/server/dev-servers.mjs), with
 * the packed package in a real app (tests/browser/packed-app.ts) and `reader.open(url)` with its
 * default options:
 * - Vite dev and preview answer `bytes=-n` with `bytes 0-n/size`; http-server with 416; Azurite
 *   with 500: the reader recovers with one size probe and explicit ranges, and remembers the
 *   origin, so a second open there skips the suffix form;
 * - serve, nginx and S3 (moto) answer suffix ranges correctly: the open stays one request;
 * - `python3 -m http.server` ignores Range: a file up to `maxFullBodyBytes` is read from the whole
 *   body, a larger one fails with RANGE_NOT_SUPPORTED, its download aborted;
 * - several ranges in one request (lineitem's first pages): nginx answers with parts; every
 *   other server answers its first such request another way, which the reader keeps and then
 *   reads a range per request, never asking that origin again.
 * The page is served by the server under test (same origin), except for the object stores, which
 * a browser reads cross-origin: their page comes from the project's range server, and the
 * bucket/container has the CORS rules their documentation gives.
 *
 * Every read is compared value by value with the same rows read in Node from the file's bytes,
 * and the matrix (server × result × requests to open) is printed and written to
 * tests/.cache/servers.md, the README's table.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Table, tableFromIPC } from 'apache-arrow';
import * as skim from 'parquet-skim';
import {
  type DevServer,
  startAzurite,
  startHttpServer,
  startNginx,
  startPythonHttpServer,
  startS3,
  startServe,
  startViteDev,
  startVitePreview,
} from '../server/dev-servers.mjs';
import { startRangeServer } from '../server/range-server.mjs';
import { compareTables } from '../support/canonical.ts';
import { recordCase } from '../support/robustness.ts';
import { cacheDir, expect, parquetTestingDir } from './fixtures.ts';
import { type ExactRead, LINEITEM, type PackedApp, SMALL_FILE, test } from './packed-app.ts';

/** Rows of lineitem read through each server (its first pages; enough to cross the suffix read). */
const LINEITEM_ROWS = 2000;

interface Case {
  name: string;
  start(app: PackedApp): Promise<DevServer>;
  /** The server sends a whole body for any Range: files past maxFullBodyBytes fail, typed. */
  ignoresRange?: boolean;
  /** Read cross-origin from a page of the project's range server (object stores). */
  crossOrigin?: boolean;
  /** Requests of the first open, and of a later one on the same origin. */
  opens: [number, number];
  /** Answers several ranges in one request with parts (`multipart/byteranges`). */
  multipart?: boolean;
  /** A note for the README's table. */
  behaviour: string;
}

const CASES: Case[] = [
  {
    name: 'vite (dev)',
    start: (app) => startViteDev(app.dir),
    opens: [2, 2],
    behaviour: '`bytes=-n` → 206 `bytes 0-n/size`',
  },
  {
    name: 'vite preview',
    start: (app) => startVitePreview(app.dir),
    opens: [2, 2],
    behaviour: '`bytes=-n` → 206 `bytes 0-n/size`',
  },
  {
    name: 'http-server',
    start: (app) => startHttpServer(app.dist),
    opens: [3, 2],
    behaviour: '`bytes=-n` → 416',
  },
  { name: 'serve', start: (app) => startServe(app.dist), opens: [1, 1], behaviour: 'correct' },
  { name: 'nginx', start: (app) => startNginx(app.dist), opens: [1, 1], multipart: true, behaviour: 'correct' },
  {
    name: 'python3 -m http.server',
    start: (app) => startPythonHttpServer(app.dist),
    ignoresRange: true,
    opens: [1, 1],
    behaviour: 'ignores Range: 200 and the whole file',
  },
  {
    name: 'S3 (moto)',
    start: (app) => startS3(path.join(app.dir, 'public'), [SMALL_FILE]),
    crossOrigin: true,
    opens: [1, 1],
    behaviour: 'correct (CORS: bucket rules)',
  },
  {
    name: 'Azure Blob (Azurite)',
    start: (app) => startAzurite(path.join(app.dir, 'public'), [SMALL_FILE]),
    crossOrigin: true,
    opens: [3, 2],
    behaviour: '`bytes=-n` → 500 (CORS: service rules)',
  },
];

/** The rows read in Node from the file's bytes (no HTTP): what every server must deliver. */
async function referenceOf(file: string, limit?: number): Promise<Table> {
  const bytes = await readFile(file);
  const parquet = await skim.openParquet(bytes);
  return parquet.scan(limit === undefined ? {} : { limit }).toTable();
}

/** Checks one read against the reference; returns what the README's table says of it. */
function check(read: ExactRead, reference: Table, what: string): { ok: boolean; detail: string } {
  if (read.error !== undefined) return { ok: false, detail: `${read.error.code}: ${read.error.message}` };
  const table = tableFromIPC(Buffer.from(read.ipc, 'base64'));
  const comparison = compareTables(table, reference);
  if (!comparison.equal) return { ok: false, detail: `${what}: ${comparison.reason}` };
  return { ok: true, detail: `${what}: ${table.numRows} rows, exact` };
}

const rows: string[] = [];

test.describe('the servers developers try first', () => {
  test.describe.configure({ timeout: 300_000 });

  for (const c of CASES) {
    test(`reader.open(url) with default options on ${c.name}`, async ({ app, page }) => {
      const server = await c.start(app);
      const pageServer = c.crossOrigin ? await startRangeServer({ mounts: { '/': app.dist } }) : undefined;
      try {
        await page.goto(`${pageServer?.url ?? server.origin}/`);
        await page.waitForSelector('body[data-ready=true]', { state: 'attached', timeout: 30_000 });
        const read = (url: string, limit?: number) =>
          page.evaluate(({ url, limit }) => window.app.readExact(url, limit === undefined ? {} : { limit }), {
            url,
            limit,
          });

        // A Parquet file nobody here wrote, past the open's 512 KiB tail read.
        const small = await read(server.fileUrl(SMALL_FILE));
        const smallCheck = check(small, await referenceOf(path.join(parquetTestingDir, SMALL_FILE)), SMALL_FILE);
        const openLog = small.error === undefined ? small.openLog : [];
        const againLog = small.error === undefined ? small.againLog : [];
        const opens = [openLog.length, againLog.length];
        console.log(`\n${c.name}: ${smallCheck.detail}; open requests ${JSON.stringify(openLog)}; again ${opens[1]}`);
        expect(smallCheck.ok, smallCheck.detail).toBe(true);
        expect(opens, JSON.stringify({ openLog, againLog })).toEqual(c.opens);

        // lineitem SF1 (214 MB): its first rows, or a typed error where Range is ignored.
        let big = 'not served (uploads only the small file)';
        let multi = c.crossOrigin ? 'not asked (off cross-origin by default)' : 'not reached';
        if (!c.crossOrigin) {
          const lineitem = await read(server.fileUrl(LINEITEM), LINEITEM_ROWS);
          if (c.ignoresRange) {
            expect(lineitem.error?.code, JSON.stringify(lineitem.error)).toBe('RANGE_NOT_SUPPORTED');
            expect(lineitem.error?.message).toContain('maxFullBodyBytes');
            big = `RANGE_NOT_SUPPORTED (typed; download aborted)`;
          } else {
            const bigCheck = check(
              lineitem,
              await referenceOf(path.join(cacheDir, 'data', LINEITEM), LINEITEM_ROWS),
              LINEITEM,
            );
            expect(bigCheck.ok, bigCheck.detail).toBe(true);
            big = `first ${LINEITEM_ROWS} rows exact`;
            // Its first pages of 16 columns, far apart: several ranges in one request, where the
            // server answers so; elsewhere the first such request tells, and is the last.
            const scanLog = lineitem.error === undefined ? lineitem.scanLog : [];
            const asked = scanLog.filter((e) => (e.parts ?? 0) > 1);
            const declined = asked.filter((e) => e.note !== undefined);
            console.log(`${c.name}: ${scanLog.length} scan requests; several ranges: ${JSON.stringify(asked)}`);
            expect(asked.length, JSON.stringify(scanLog)).toBeGreaterThan(0);
            expect(declined, JSON.stringify(asked)).toHaveLength(c.multipart ? 0 : 1);
            if (!c.multipart) expect(asked).toHaveLength(1);
            multi = c.multipart
              ? `parts: ${asked.length} request${asked.length === 1 ? '' : 's'} for ${asked.reduce((n, e) => n + (e.parts ?? 0), 0)} ranges`
              : (declined[0]?.note ?? '').replace(/^the server /, '');
          }
        }
        // The package's source maps carry their sources: Vite has nothing to warn about.
        expect(server.output()).not.toContain('missing source');
        recordCase('server', {
          area: 'server',
          case: `${c.name}: default options read ${SMALL_FILE} exactly, opens in ${opens.join(' then ')} requests`,
          ok: true,
          detail: big,
        });
        rows.push(`| ${c.name} | ${c.behaviour} | exact | ${big} | ${opens[0]} | ${opens[1]} | ${multi} |`);
      } finally {
        await pageServer?.close();
        await server.close();
      }
    });
  }

  test('a mistyped URL on a dev server says the server sent an HTML page', async ({ app, page }) => {
    const server = await startViteDev(app.dir);
    try {
      await page.goto(`${server.origin}/`);
      await page.waitForSelector('body[data-ready=true]', { state: 'attached', timeout: 30_000 });
      const read = await page.evaluate((url) => window.app.readExact(url), server.fileUrl('lineitem-sf1.parquett'));
      expect(read.error?.code).toBe('INVALID_FILE');
      expect(read.error?.message).toContain('the server sent an HTML page');
      expect(read.error?.message).toContain('is the URL right?');
      recordCase('server', {
        area: 'server',
        case: 'vite (dev): a mistyped URL (index.html, 200) is INVALID_FILE naming the HTML page',
        ok: true,
        detail: read.error?.message.slice(0, 160) ?? '',
      });
    } finally {
      await server.close();
    }
  });

  test.afterAll(async () => {
    if (rows.length === 0) return;
    const table = [
      '| server | its answer to `Range: bytes=-524288` | 0.8 MB parquet-testing file | lineitem SF1, 214 MB | requests to open (first) | (later, same origin) | several ranges in one request |',
      '|---|---|---|---|---:|---:|---|',
      ...rows,
    ].join('\n');
    console.log(`\n${table}`);
    await mkdir(cacheDir, { recursive: true });
    await writeFile(path.join(cacheDir, 'servers.md'), `${table}\n`);
  });
});
