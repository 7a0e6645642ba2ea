/**
 * What the benchmarks share: the servers (the real range server, with and without simulated
 * latency, serving the harness page and the generated data), headless Debian Chromium, and the
 * measuring loop — each run in a fresh page, one warm-up run discarded, medians reported.
 *
 * A page-side case sets up a reader and leaves `window.bench = { run, reader, warmUp? }`;
 * `run()` does the timed work and returns the answer (and may leave `window.bench.stats`).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startRangeServer } from '../server/range-server.mjs';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../..');
/** Timed runs per case (after one warm-up run). */
export const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Today's date (UTC), as results files are named: `2026-11-25`. */
export const today = () => new Date().toISOString().slice(0, 10);

const mounts = {
  '/': path.join(repo, 'tests/.cache/harness'),
  '/sample/': path.join(repo, 'tests/.cache/data'),
};

/** Starts the servers and the browser; `close()` stops them. */
export async function startBench() {
  const server = await startRangeServer({ mounts });
  const slow = await startRangeServer({ mounts, latencyMs: 20 });
  const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  return {
    server,
    slow,
    browser,
    async close() {
      await browser.close();
      await server.close();
      await slow.close();
    },
  };
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Times `window.bench.run()` in the page. Warm: `warmUp()` (default: `run()`) first, untimed, on
 * the same reader, so the workers are up and V8 has tiered the WebAssembly up to optimized code;
 * cold: the page's first scan.
 */
async function timeRun(warm) {
  const { run, reader, warmUp } = window.bench;
  if (warm) await (warmUp ?? run)();
  const started = performance.now();
  const answer = await run();
  const ms = performance.now() - started;
  const stats = window.bench.stats;
  reader.dispose();
  return { ms, answer, stats };
}

/**
 * `run(page)` on a fresh harness page (its own start-up over) `RUNS + 1` times: every result, the
 * first being the browser's warm-up (callers time the other `RUNS`).
 */
export async function onFreshPages(bench, run) {
  const results = [];
  for (let i = 0; i <= RUNS; i++) {
    const page = await bench.browser.newPage();
    try {
      await page.goto(`${bench.server.url}/`);
      await page.waitForSelector('body[data-ready=true]');
      results.push(await run(page));
    } finally {
      await page.close();
    }
  }
  return results;
}

/** Runs `pageCase(args)` + a timed run on fresh pages ({@link onFreshPages}); answers must agree between runs. */
export async function measure(bench, name, pageCase, args) {
  const all = await onFreshPages(bench, async (page) => {
    await page.evaluate(pageCase, args);
    return page.evaluate(timeRun, args.warm === true);
  });
  const answers = new Set(all.map((r) => String(r.answer)));
  if (answers.size > 1) throw new Error(`${name}: answers differ between runs (${[...answers].join(' vs ')})`);
  const answer = all[0]?.answer;
  const runs = all.slice(1);
  const times = runs.map((r) => r.ms);
  const middle = runs.find((r) => r.ms === median(times));
  return {
    name,
    args,
    medianMs: median(times),
    runsMs: times,
    answer: String(answer),
    ...(middle?.stats !== undefined ? { stats: middle.stats } : {}),
  };
}
