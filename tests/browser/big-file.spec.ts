/**
 * Files larger than 4 GiB, in Chromium through the package and its workers: offsets above 2^31
 * and 2^32 must be right everywhere — `u64` in Rust, numbers in JS, `Blob.slice` with numbers,
 * and no 32-bit `usize` on wasm32.
 *
 * The file is virtual: `crate/datagen big-template` writes one real row group (~64 MiB: `k`, the
 * row's index in its row group, and `pad`, 8 zero bytes a row) and a footer for 80 copies of it
 * (5.0 GiB, 671 M rows), ~70 KB on disk. tests/server/virtual-file.mjs serves it over HTTP (its
 * own origin, so reads are cross-origin); the page also builds it as a `Blob`/`File` of parts
 * (Blob composition shares the parts), and as a 5 GiB `ArrayBuffer` whose untouched zero pages
 * are never committed. Copies are byte-identical, so rows alone cannot tell copies apart: each
 * case checks the rows (`k = row % rowsPerGroup`, `pad` all zeros) *and* the byte ranges read —
 * the page straddling 2^31 or 2^32 must be among them.
 *
 * A full scan of `k` decodes 5 GiB (every value checked in the page) while fetching under 1 MB;
 * it reports the peak JS heap (`performance.memory`, precise with `--enable-precise-memory-info`),
 * the workers' peak WebAssembly memory (`scan.stats.wasmMemoryPeakBytes`), and page + workers
 * memory from `performance.measureUserAgentSpecificMemory` (the page is cross-origin isolated),
 * and asserts that they stay far below what was decoded. Each case goes to the robustness ledger
 * (area `big-file`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { loadTemplate, startVirtualFileServer, type TemplateManifest } from '../server/virtual-file.mjs';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';
import { recordCase } from '../support/robustness.ts';
import { test as base, cacheDir, expect } from './fixtures.ts';

const TEMPLATE = 'big-template-v1';
const templateDir = path.join(cacheDir, 'data', TEMPLATE);
const GiB = 2 ** 30;

type Big = {
  url: string;
  manifest: TemplateManifest;
  server: Awaited<ReturnType<typeof startVirtualFileServer>>;
};

const test = base.extend<object, { big: Big }>({
  big: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature.
    async ({}, use) => {
      if (!existsSync(path.join(templateDir, 'template.json'))) {
        throw new Error(`no big-file template in ${templateDir}: run bash .ci/sample-data.sh`);
      }
      const { manifest } = await loadTemplate(templateDir);
      const server = await startVirtualFileServer({ files: { '/big.parquet': templateDir } });
      await use({ url: `${server.url}/big.parquet`, manifest, server });
      await server.close();
    },
    { scope: 'worker' },
  ],
});

test.use({
  launchOptions: {
    ...CHROMIUM_LAUNCH_OPTIONS,
    args: [
      ...CHROMIUM_LAUNCH_OPTIONS.args,
      '--enable-precise-memory-info',
      '--enable-blink-features=ForceEagerMeasureMemory',
    ],
  },
});

function record(name: string, ok: boolean, detail: string): void {
  expect(recordCase('big-file', { area: 'big-file', case: name, ok, detail }), `${name}: ${detail}`).toBe(true);
}

/**
 * Resident bytes of the Chromium renderer processes this test process started (the page, its
 * workers, their ArrayBuffers and WebAssembly memories), from /proc (Linux); 0 elsewhere.
 */
function rendererRssBytes(): number {
  if (!existsSync('/proc/self/status')) return 0;
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const ours = (pid: number) => {
    for (let p = parents.get(pid) ?? 0, hops = 0; p > 1 && hops < 64; p = parents.get(p) ?? 0, hops++) {
      if (p === process.pid) return true;
    }
    return false;
  };
  let total = 0;
  for (const pid of parents.keys()) {
    try {
      if (!ours(pid) || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += Number(rss?.[1] ?? 0) * 1024;
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}

/** Where row group `i`'s chunks of `k` and `pad` lie in the virtual file. */
function chunksOf(m: TemplateManifest, i: number): { k: [number, number]; pad: [number, number] } {
  const base = m.groupStart + i * m.groupLen;
  const padAt = m.pages.pad[0]?.[0] ?? Number.NaN;
  return { k: [base + (m.pages.k[0]?.[0] ?? Number.NaN), base + padAt], pad: [base + padAt, base + m.groupLen] };
}

/** A row range to read, the row group and the `pad` page whose bytes must be among the reads. */
interface RowCase {
  name: string;
  offset: number;
  limit: number;
  /** Rows the scan must return (`limit` clamped at the file's end). */
  rows: number;
  /** A byte range of the file that a read must cover, and one position it must contain. */
  mustRead: { start: number; end: number };
}

/** The pad page of the row group holding byte `position`, and the rows case inside it. */
function pageCase(m: TemplateManifest, name: string, position: number): RowCase {
  const group = Math.floor((position - m.groupStart) / m.groupLen);
  const local = position - m.groupStart - group * m.groupLen;
  const page = m.pages.pad.find(([at, bytes]) => at <= local && local < at + bytes);
  if (page === undefined) throw new Error(`byte ${position} is not in a pad page`);
  const [at, bytes, firstRow] = page;
  const start = m.groupStart + group * m.groupLen + at;
  return {
    name,
    offset: group * m.rowsPerGroup + firstRow + 100,
    limit: 1000,
    rows: 1000,
    mustRead: { start, end: start + bytes },
  };
}

function rowCases(m: TemplateManifest): RowCase[] {
  const total = m.copies * m.rowsPerGroup;
  const last = chunksOf(m, m.copies - 1);
  const past4 = Math.ceil((2 ** 32 - m.groupStart) / m.groupLen);
  const boundary = chunksOf(m, past4);
  return [
    { name: 'first rows', offset: 0, limit: 100, rows: 100, mustRead: { start: 4, end: 104 } },
    pageCase(m, 'rows in the page straddling 2 GiB', 2 ** 31),
    pageCase(m, 'rows in the page straddling 4 GiB', 2 ** 32),
    {
      name: 'rows across the first row group boundary past 4 GiB',
      offset: past4 * m.rowsPerGroup - 500,
      limit: 1000,
      rows: 1000,
      mustRead: { start: boundary.k[0], end: boundary.k[0] + (m.pages.k[0]?.[1] ?? 0) },
    },
    {
      name: 'last rows of the file',
      offset: total - 1000,
      limit: 5000,
      rows: 1000,
      mustRead: { start: last.pad[1] - (m.pages.pad.at(-1)?.[1] ?? 0), end: last.pad[1] },
    },
  ];
}

/** What one rows case read, as the page reports it. */
interface RowResult {
  name: string;
  rows: number;
  /** Index of the first row whose `k` or `pad` is wrong, or -1. */
  firstWrong: number;
  wrong: string;
  reads: Array<{ start: number; end: number }>;
  error: string | null;
}

/** Opens `source` (a URL, or the name of a source the page builds) and reads every case. */
async function readCases(
  page: Page,
  source: { url: string } | { build: 'blob' | 'file' | 'arrayBuffer'; templateUrl: string },
  cases: RowCase[],
  rowsPerGroup: number,
): Promise<{ byteLength: number; lastStart: number; results: RowResult[]; openReads: number; buildMs: number }> {
  return page.evaluate(
    async ({ source, cases, rowsPerGroup }) => {
      const { skim } = window.harness;
      const started = performance.now();
      let input: string | Blob | ArrayBuffer;
      if ('url' in source) input = source.url;
      else {
        const manifest = (await (await fetch(`${source.templateUrl}/template.json`)).json()) as TemplateManifest;
        const bin = new Uint8Array(await (await fetch(`${source.templateUrl}/template.bin`)).arrayBuffer());
        const { head, segments, footer, copies, groupStart, groupLen, footerStart, fileLen } = manifest;
        if (source.build === 'arrayBuffer') {
          // Zero pages are never touched, so only the stored pieces are committed.
          const bytes = new Uint8Array(fileLen);
          bytes.set(bin.subarray(head.bin, head.bin + head.len), 0);
          for (let copy = 0; copy < copies; copy++) {
            for (const s of segments) {
              if (!('zeros' in s)) bytes.set(bin.subarray(s.bin, s.bin + s.len), groupStart + copy * groupLen + s.at);
            }
          }
          bytes.set(bin.subarray(footer.bin, footer.bin + footer.len), footerStart);
          input = bytes.buffer;
        } else {
          const longest = Math.max(...segments.map((s) => ('zeros' in s ? s.len : 0)));
          const zeros = new Blob([new Uint8Array(longest)]);
          const stored = new Blob([bin]);
          const piece = (at: number, len: number) => stored.slice(at, at + len);
          const group = new Blob(segments.map((s) => ('zeros' in s ? zeros.slice(0, s.len) : piece(s.bin, s.len))));
          const parts = [piece(head.bin, head.len), ...Array.from({ length: copies }, () => group)];
          parts.push(piece(footer.bin, footer.len));
          input = source.build === 'file' ? new File(parts, 'big.parquet') : new Blob(parts);
          if (input.size !== fileLen) throw new Error(`the Blob has ${input.size} bytes, expected ${fileLen}`);
        }
      }
      const buildMs = performance.now() - started;
      const reader = await skim.createReader({ workers: 2 });
      try {
        const file = await reader.open(input);
        const openReads = file.requestLog().length;
        const results: RowResult[] = [];
        for (const c of cases) {
          const before = file.requestLog().length;
          const result: RowResult = { name: c.name, rows: 0, firstWrong: -1, wrong: '', reads: [], error: null };
          try {
            for await (const batch of file.scan({ columns: ['k', 'pad'], offset: c.offset, limit: c.limit })) {
              const k = batch.getChildAt(0)?.toArray() as BigInt64Array;
              const pad = batch.getChildAt(1);
              for (let i = 0; i < batch.numRows; i++) {
                const expected = (c.offset + result.rows + i) % rowsPerGroup;
                const value = pad?.get(i) as Uint8Array | null;
                const zeros = value !== null && value.length === 8 && value.every((b) => b === 0);
                if (result.firstWrong < 0 && (Number(k[i]) !== expected || !zeros)) {
                  result.firstWrong = result.rows + i;
                  result.wrong = `k = ${k[i]} (expected ${expected}), pad = ${value}`;
                }
              }
              result.rows += batch.numRows;
            }
          } catch (error) {
            result.error = `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
          }
          result.reads = file
            .requestLog()
            .slice(before)
            .map(({ start, end }) => ({ start, end }));
          results.push(result);
        }
        const last = file.metadata.rowGroups.at(-1)?.columns[0]?.start ?? 0;
        return { byteLength: file.byteLength, lastStart: last, results, openReads, buildMs };
      } finally {
        reader.dispose();
      }
    },
    { source, cases, rowsPerGroup },
  );
}

/** Checks each case's rows and reads; records it in the ledger under `via`. */
function checkCases(via: string, cases: RowCase[], results: RowResult[]): void {
  for (const [i, c] of cases.entries()) {
    const r = results[i] as RowResult;
    const covered = r.reads.some((read) => read.start <= c.mustRead.start && read.end >= c.mustRead.end);
    const fetched = r.reads.reduce((sum, read) => sum + read.end - read.start, 0);
    const top = Math.max(...r.reads.map((read) => read.end));
    const ok = r.error === null && r.rows === c.rows && r.firstWrong < 0 && covered;
    const detail = r.error
      ? `failed: ${r.error}`
      : `${r.rows} rows from row ${c.offset}${r.firstWrong >= 0 ? `, row ${r.firstWrong} wrong: ${r.wrong}` : ''}; ` +
        `${r.reads.length} reads, ${fetched} bytes, up to byte ${top}` +
        (covered ? '' : `; bytes ${c.mustRead.start}-${c.mustRead.end} never read`);
    console.log(`  ${via}: ${c.name}: ${detail}`);
    record(`${c.name} (${via})`, ok, detail);
  }
}

test('a 5 GiB file over HTTP: the footer reports offsets past 4 GiB exactly', async ({ harness, big }) => {
  const m = big.manifest;
  expect(m.fileLen).toBeGreaterThan(4.5 * GiB);
  big.server.resetLog();
  const result = await harness.evaluate(async (url) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    try {
      const file = await reader.open(url);
      const { metadata } = file;
      return {
        byteLength: file.byteLength,
        fileLen: metadata.fileLen,
        numRows: metadata.numRows,
        hasPageIndex: metadata.hasPageIndex,
        footerBytes: metadata.footerBytes,
        chunks: metadata.rowGroups.map((rg) => rg.columns.map((c) => [c.start, c.end])),
        groupRows: metadata.rowGroups.map((rg) => rg.numRows),
        log: file.requestLog(),
      };
    } finally {
      reader.dispose();
    }
  }, big.url);
  const expected = Array.from({ length: m.copies }, (_, i) => {
    const { k, pad } = chunksOf(m, i);
    return [k, pad];
  });
  const exact = JSON.stringify(result.chunks) === JSON.stringify(expected);
  const last = result.chunks.at(-1)?.[1] ?? [0, 0];
  const ok =
    result.byteLength === m.fileLen &&
    result.fileLen === m.fileLen &&
    result.numRows === m.copies * m.rowsPerGroup &&
    result.groupRows.every((n) => n === m.rowsPerGroup) &&
    result.hasPageIndex &&
    exact &&
    result.chunks.flat(2).every(Number.isSafeInteger) &&
    (last[0] ?? 0) > 2 ** 32;
  const detail =
    `${result.byteLength} bytes, ${result.chunks.length} row groups, ${result.numRows} rows; last pad chunk ` +
    `${last[0]}-${last[1]}; footer + page index ${result.footerBytes} bytes in ${result.log.length} read(s)` +
    (exact ? '' : '; chunk offsets differ from the template');
  console.log(`\nbig file metadata: ${detail}`);
  record('metadata of a 5 GiB file over HTTP', ok, detail);
  // One read of the tail, answered from above 4 GiB.
  expect(result.log.map((e) => e.range)).toEqual(['bytes=-524288']);
  const served = big.server.log.filter((e) => e.method === 'GET');
  expect(served.map((e) => e.start)).toEqual([m.fileLen - 524288]);
});

test('rows past 2 GiB and 4 GiB over HTTP are the right rows, read from the right bytes', async ({ harness, big }) => {
  const m = big.manifest;
  const cases = rowCases(m);
  big.server.resetLog();
  const { results } = await readCases(harness, { url: big.url }, cases, m.rowsPerGroup);
  console.log('\nrows past 4 GiB over HTTP:');
  checkCases('HTTP', cases, results);
  // The server agrees: it was asked for bytes above 4 GiB, and for the page straddling 2^32.
  const served = big.server.log.filter((e) => e.method === 'GET' && e.status === 206);
  expect(served.some((e) => (e.start ?? 0) > 2 ** 32)).toBe(true);
  expect(served.some((e) => (e.start ?? 0) < 2 ** 32 && (e.end ?? 0) > 2 ** 32)).toBe(true);
  expect(served.every((e) => (e.end ?? 0) <= m.fileLen)).toBe(true);
});

test('a 5 GiB Blob, File and ArrayBuffer: reads past 4 GiB return the right rows', async ({ harness, server, big }) => {
  const m = big.manifest;
  const cases = rowCases(m);
  const templateUrl = `${server.url}/sample/${TEMPLATE}`;
  for (const build of ['blob', 'file', 'arrayBuffer'] as const) {
    const out = await readCases(harness, { build, templateUrl }, cases, m.rowsPerGroup);
    console.log(`\n${build} of ${out.byteLength} bytes (built in ${out.buildMs.toFixed(0)} ms):`);
    expect(out.byteLength).toBe(m.fileLen);
    expect(out.lastStart).toBe(chunksOf(m, m.copies - 1).k[0]);
    checkCases(build, cases, out.results);
  }
});

test('a scan decoding 5 GiB keeps JS heap and WebAssembly memory bounded', async ({ harness, big }) => {
  const m = big.manifest;
  big.server.resetLog();
  const rssBefore = rendererRssBytes();
  let rssPeak = rssBefore;
  const rssTimer = setInterval(() => {
    rssPeak = Math.max(rssPeak, rendererRssBytes());
  }, 100);
  const result = await harness.evaluate(
    async ({ url, rowsPerGroup }) => {
      const { skim } = window.harness;
      type Measured = {
        bytes: number;
        breakdown: Array<{ bytes: number; types: string[]; attribution: Array<{ scope: string }> }>;
      };
      const perf = performance as unknown as {
        memory?: { usedJSHeapSize: number };
        measureUserAgentSpecificMemory?: () => Promise<Measured>;
      };
      const heap = () => perf.memory?.usedJSHeapSize ?? 0;
      let heapPeak = heap();
      const heapBefore = heapPeak;
      // Page + workers, ArrayBuffers included, measured over and over while the scan runs.
      let uaPeak = 0;
      let uaWorkersPeak = 0;
      let uaSamples = 0;
      let lastBreakdown: string[] = [];
      let scanning = true;
      const measureLoop = (async () => {
        if (!crossOriginIsolated || perf.measureUserAgentSpecificMemory === undefined) return;
        while (scanning) {
          const measured = await perf.measureUserAgentSpecificMemory();
          uaSamples += 1;
          uaPeak = Math.max(uaPeak, measured.bytes);
          const workers = measured.breakdown
            .filter((b) => b.attribution.some((a) => a.scope === 'DedicatedWorkerGlobalScope'))
            .reduce((sum, b) => sum + b.bytes, 0);
          lastBreakdown = measured.breakdown.map(
            (b) => `${b.attribution.map((a) => a.scope).join('+') || 'other'} ${b.types.join('+')} ${b.bytes}`,
          );
          uaWorkersPeak = Math.max(uaWorkersPeak, workers);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      const timer = setInterval(() => {
        heapPeak = Math.max(heapPeak, heap());
      }, 20);
      const reader = await skim.createReader({ workers: 2 });
      try {
        const file = await reader.open(url);
        const started = performance.now();
        const scan = file.scan({ columns: ['k'] });
        let rows = 0;
        let batches = 0;
        let wrong = -1;
        for await (const batch of scan) {
          const values = batch.getChildAt(0)?.toArray() as BigInt64Array;
          // Every value is below 2^31: check each one as its two 32-bit halves.
          const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
          const first = rows % rowsPerGroup;
          for (let i = 0; i < values.length; i++) {
            if (words[2 * i] !== first + i || words[2 * i + 1] !== 0) {
              if (wrong < 0) wrong = rows + i;
              break;
            }
          }
          rows += batch.numRows;
          batches += 1;
          heapPeak = Math.max(heapPeak, heap());
        }
        const ms = performance.now() - started;
        scanning = false;
        clearInterval(timer);
        await measureLoop;
        return {
          rows,
          batches,
          wrong,
          ms,
          heapBefore,
          heapPeak,
          uaPeak,
          uaWorkersPeak,
          uaSamples,
          lastBreakdown,
          isolated: crossOriginIsolated,
          stats: { ...scan.stats, columnCache: undefined, rowGroupFates: undefined },
        };
      } finally {
        scanning = false;
        clearInterval(timer);
        reader.dispose();
      }
    },
    { url: big.url, rowsPerGroup: m.rowsPerGroup },
  );
  clearInterval(rssTimer);
  const decodedBytes = result.rows * 8;
  const served = big.server.log.filter((e) => e.method === 'GET').reduce((sum, e) => sum + e.bytes, 0);
  const MiB = 2 ** 20;
  const detail =
    `${result.rows} rows, ${(decodedBytes / GiB).toFixed(2)} GiB decoded in ${result.batches} batches, ` +
    `${(result.ms / 1000).toFixed(1)} s; fetched ${result.stats.bytesFetched} bytes in ${result.stats.requests} ` +
    `requests (server sent ${served}); peak JS heap ${(result.heapPeak / MiB).toFixed(1)} MiB ` +
    `(${(result.heapBefore / MiB).toFixed(1)} before); peak worker wasm memory ` +
    `${(result.stats.wasmMemoryPeakBytes / MiB).toFixed(1)} MiB; measureUserAgentSpecificMemory peak ` +
    `${(result.uaPeak / MiB).toFixed(1)} MiB (workers ${(result.uaWorkersPeak / MiB).toFixed(1)} MiB, ` +
    `${result.uaSamples} samples); renderer RSS peak ${(rssPeak / MiB).toFixed(0)} MiB ` +
    `(${(rssBefore / MiB).toFixed(0)} before)`;
  console.log(`\nfull scan of k: ${detail}`);
  console.log(`  last measureUserAgentSpecificMemory breakdown: ${result.lastBreakdown.join('; ')}`);
  const ok =
    result.rows === m.copies * m.rowsPerGroup &&
    result.wrong < 0 &&
    decodedBytes > 4 * GiB &&
    result.stats.bytesFetched < 0.001 * m.fileLen &&
    result.heapPeak < 1 * GiB &&
    result.stats.wasmMemoryPeakBytes > 0 &&
    result.stats.wasmMemoryPeakBytes < 512 * MiB &&
    (!result.isolated || result.uaSamples === 0 || result.uaPeak < 512 * MiB) &&
    rssPeak < 2.5 * GiB;
  record('a scan decoding 5 GiB with bounded memory (HTTP)', ok, detail);
});
