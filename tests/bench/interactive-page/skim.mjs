/**
 * parquet-skim in a fresh page, as an app uses it: imported statically, `createReader()` at once,
 * then `open(url)` and the query — the cold path — and the same query again on the same reader
 * under another identity of the file (`?warm=i`, so no cache serves it): the warm runs. Records
 * where the cold path's time went, and the byte ranges it read (the floor page moves the same).
 */
import { createReader } from 'parquet-skim';
import { LOOKUP_KEY } from '../peers-page/queries.mjs';
import { beforeWarmRun, failure, finish, loadTimeline, params, query, table, url, warmRuns } from './common.mjs';

function scanOf(file) {
  if (query === 'first100') return file.scan({ limit: 100 });
  if (query === 'lookup') return file.scan({ filter: `l_orderkey = ${LOOKUP_KEY}` });
  throw new Error(`unknown query ${query}`);
}

// `multiRange=0|1`: the open's multiRange option (default: the reader's, on for this same-origin page).
const multiRange = params.get('multiRange');
const openOptions = multiRange === null ? {} : { multiRange: multiRange === '1' };

async function run(reader, source) {
  const started = performance.now();
  const file = await reader.open(source, openOptions);
  const scan = scanOf(file);
  const batches = [];
  for await (const batch of scan) batches.push(batch);
  return { started, ended: performance.now(), file, scan, batches };
}

/** A request log entry's span in this page's clock. */
const span = (e) => {
  const start = e.at - performance.timeOrigin;
  return { start, end: start + e.ms };
};

/**
 * Where a warm run's time went, in ms from its start (`open()` called): the open's fetch and
 * decode, then the scan's timeline, the last page's bytes, the answer; and the time in the task
 * hosts (decode, IPC) and waiting for one.
 */
function warmBreakdown({ started, ended, file, scan }) {
  const log = file.requestLog();
  const scanning = log.slice(file.openStats.requests);
  const s = scan.stats;
  const at = (t) => (t === null || t === undefined ? null : t - started);
  return {
    openEnd: at(file.openStats.startedAt + file.openStats.ms),
    ...Object.fromEntries(
      Object.entries(s.timeline)
        .filter(([k]) => k !== 'startedAt')
        .map(([k, v]) => [k, v === null ? null : at(s.timeline.startedAt + v)]),
    ),
    lastRequest: scanning.length > 0 ? at(Math.max(...scanning.map((e) => span(e).start))) : null,
    pagesFetchEnd: scanning.length > 0 ? at(Math.max(...scanning.map((e) => span(e).end))) : null,
    answeredAt: ended - started,
    decodeMs: s.decodeMs,
    ipcMs: s.ipcMs,
    queueMs: s.queueMs,
    requests: log.length,
  };
}

try {
  // `warmUp=1`: the reader's warm-up passes (ReaderOptions.warmUp), to measure what they do.
  // `workers=N`: that many workers (0: decode on the page), to measure what they cost.
  // `io=N`: that many requests in flight (ReaderOptions.ioConcurrency).
  const workerCount = params.get('workers');
  const io = params.get('io');
  // `inlineScan=N`: the reader's inlineScanBytes (a query that small decodes on the page).
  const inlineScan = params.get('inlineScan');
  const reader = await createReader({
    warmUp: params.get('warmUp') === '1',
    ...(workerCount === null ? {} : { workers: Number(workerCount) }),
    ...(io === null ? {} : { ioConcurrency: Number(io) }),
    ...(inlineScan === null ? {} : { inlineScanBytes: Number(inlineScan) }),
  });
  const cold = await run(reader, url);
  const answeredAt = cold.ended;
  const { startup, workers } = reader.stats();
  const log = cold.file.requestLog();
  const opening = log.slice(0, cold.file.openStats.requests);
  const scanning = log.slice(cold.file.openStats.requests);
  const s = cold.scan.stats;
  const scanStart = s.timeline.startedAt;
  const breakdown = {
    ...loadTimeline(),
    evaluatedAt: startup.evaluatedAt,
    compiledAt: startup.compiledAt,
    createdAt: startup.createdAt,
    workersReadyAt: workers.readyAt,
    openStart: cold.file.openStats.startedAt,
    footerFetchEnd: opening.length > 0 ? Math.max(...opening.map((e) => span(e).end)) : null,
    openEnd: cold.file.openStats.startedAt + cold.file.openStats.ms,
    scanStart,
    ...Object.fromEntries(
      Object.entries(s.timeline)
        .filter(([k]) => k !== 'startedAt')
        .map(([k, v]) => [`scan.${k}`, v === null ? null : scanStart + v]),
    ),
    lastRequest: scanning.length > 0 ? Math.max(...scanning.map((e) => span(e).start)) : null,
    pagesFetchEnd: scanning.length > 0 ? Math.max(...scanning.map((e) => span(e).end)) : null,
    answeredAt,
    decodeMs: s.decodeMs,
    ipcMs: s.ipcMs,
    queueMs: s.queueMs,
    requests: log.length,
    bytes: log.reduce((n, e) => n + e.bytes, 0),
  };
  // Two rounds at best: what opening read, then everything the scan read.
  // A request for several ranges keeps its header: the floor moves the same parts, not the span.
  const ranges = (entries) =>
    entries
      .filter((e) => e.bytes > 0)
      .map((e) => (e.parts > 1 ? { start: e.start, end: e.end, range: e.range } : { start: e.start, end: e.end }));
  const rounds = [ranges(opening), ranges(scanning)].filter((r) => r.length > 0);
  // The answer check (and the apache-arrow it uses) loads after the timed query: it is the bench's,
  // not the app's (see peer.mjs).
  const { answerOf } = await import('../peers-page/answers.mjs');
  const answer = answerOf(query, table, { batches: cold.batches });
  const warm = [];
  const warmBreakdowns = [];
  const settle = params.get('settle');
  if (settle !== null) {
    // Wait (up to 2 s) for the workers the first query started to be ready before the warm runs
    // (`settle=N`: then N ms more; `settle=1`: 100).
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      const w = reader.stats().workers;
      if (w.started > 0 && w.ready >= w.started) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, settle === '1' ? 100 : Number(settle)));
  }
  for (let i = 0; i < warmRuns; i++) {
    await beforeWarmRun();
    const before = reader.stats().workers;
    const again = await run(reader, `${url}${url.includes('?') ? '&' : '?'}warm=${i}`);
    warm.push(again.ended - again.started);
    const after = reader.stats().workers;
    warmBreakdowns.push({
      ...warmBreakdown(again),
      // Where its tasks ran: on the page (the rest on workers), and the page's slices.
      tasksOnPage: after.tasksOnPage - before.tasksOnPage,
      pageSlices: after.pageSlices - before.pageSlices,
      workersReady: after.ready,
    });
  }
  finish({
    coldMs: answeredAt,
    coldQueryMs: cold.ended - cold.started,
    warm,
    warmBreakdowns,
    answer,
    breakdown,
    rounds,
    // Decodes the engine may have failed that ran again (and passed): see web/src/recheck.ts.
    rechecks: reader.stats().rechecks,
  });
  reader.dispose();
} catch (error) {
  finish(failure(error));
}
