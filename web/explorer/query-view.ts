/**
 * The query panel: what the last full scan of a filter did, drawn from its `ScanStats`.
 *
 * - every scan the view ran for the filter: the grid's first rows and the count, each with rows,
 *   bytes, requests, cache hits and time (what scrolling reads later is under the grid);
 * - bytes fetched against the file's size, requests (with the gaps they read through, and the
 *   link's measure that sized those gaps), and time by phase — summed, and as a timeline
 *   of when each step first happened (planned, first request, first bytes, first task, first
 *   result, first batch, done);
 * - a map of row groups × columns: skipped by footer statistics, bloom filters or the page index,
 *   fetched, taken from the workers' cache, or not needed by the query;
 * - the workers' cache: hits, and its bytes over the scan as a chart (uPlot).
 *
 * Design note: every number shown is read from the stats object as is (tests compare them), and
 * each element that shows one carries a `data-` attribute with the raw value.
 */
import type { RowGroupFate, ScanStats } from 'parquet-skim';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { el, formatBytes, formatMs, plural } from './dom.js';

/** What the panel needs besides the stats. */
export interface QueryContext {
  fileBytes: number;
  /** Top-level column names of the file, in order. */
  columns: string[];
  /** Top-level columns the query reads (its filter's, and its projection's). */
  read: Set<string>;
  /** Every scan the view ran for this filter, in order (the count is `stats`'s). */
  scans: Array<{ label: string; stats: ScanStats }>;
}

const FATE_LABEL: Record<RowGroupFate | 'notNeeded', string> = {
  stats: 'skipped by statistics',
  bloom: 'skipped by bloom filter',
  pageIndex: 'skipped by page index',
  read: 'fetched',
  cached: 'from cache',
  unread: 'not read',
  notNeeded: 'not needed',
};

let chart: uPlot | undefined;

/** Fills `target` with the panel for `stats`. */
export function renderQueryPanel(target: HTMLElement, stats: ScanStats, context: QueryContext): void {
  chart?.destroy();
  chart = undefined;
  const share = context.fileBytes === 0 ? 0 : stats.bytesFetched / context.fileBytes;
  const bar = el('div', { className: 'bytes-bar' }, el('div', { className: 'bytes-fill' }));
  (bar.firstChild as HTMLElement).style.width = `${Math.min(100, share * 100).toFixed(2)}%`;
  const fetched = el('p', {
    id: 'query-bytes',
    text: `${formatBytes(stats.bytesFetched)} of ${formatBytes(context.fileBytes)} fetched (${(share * 100).toFixed(2)}%) in ${plural(stats.requests, 'request')}`,
  });
  fetched.dataset.bytes = String(stats.bytesFetched);
  fetched.dataset.requests = String(stats.requests);
  const gaps = el('p', { id: 'query-gaps', text: gapsText(stats) });
  gaps.dataset.readThrough = String(stats.bytesReadThrough);
  gaps.dataset.gap = String(stats.gapBytes);
  gaps.dataset.link = String(stats.linkBytesPerMs ?? '');
  const phases = el('p', {
    id: 'query-phases',
    text: `${formatMs(stats.elapsedMs)} in all — fetching ${formatMs(stats.fetchMs)}, decoding and filtering ${formatMs(stats.decodeMs)} (summed over requests and workers)`,
  });
  const timeline = el('p', { id: 'query-timeline', text: `timeline: ${timelineText(stats)}` });
  timeline.dataset.done = String(stats.timeline.done ?? '');
  const cache = stats.columnCache;
  const cacheLine = el('p', {
    id: 'query-cache',
    text:
      cache.budgetBytes === 0
        ? 'cache off'
        : `cache: ${cache.hits} of ${cache.hits + cache.misses} tasks hit; peak ${formatBytes(cache.peakBytes)} of ${formatBytes(cache.budgetBytes)}`,
  });
  cacheLine.dataset.hits = String(cache.hits);
  const plot = el('div', { id: 'cache-chart', className: 'cache-chart' });
  target.replaceChildren(
    el('h3', { text: 'Scans' }),
    scansTable(context.scans),
    el('h3', { text: 'Bytes (the count)' }),
    bar,
    fetched,
    gaps,
    phases,
    timeline,
    el('h3', { text: 'Row groups × columns' }),
    rowGroupMap(stats, context),
    legend(),
    el('h3', { text: 'Cache' }),
    cacheLine,
    plot,
  );
  if (cache.budgetBytes > 0) drawCacheChart(plot, stats);
}

/**
 * "48.0 KB read through gaps of up to 1.0 MB between wanted ranges (link measured at 812.3 MB/s)":
 * the bytes fetched only to save requests, and why the gap was what it was.
 */
function gapsText(stats: ScanStats): string {
  const link =
    stats.linkBytesPerMs === null
      ? 'link not measured'
      : `link measured at ${formatBytes(stats.linkBytesPerMs * 1000)}/s`;
  return `${formatBytes(stats.bytesReadThrough)} read through gaps of up to ${formatBytes(stats.gapBytes)} between wanted ranges (${link})`;
}

/** One row per scan: rows out, bytes, requests, cache hits of tasks, time. */
function scansTable(scans: QueryContext['scans']): HTMLTableElement {
  const head = el(
    'tr',
    {},
    ...['scan', 'rows', 'fetched', 'requests', 'cache hits', 'time'].map((text) => el('th', { text })),
  );
  const rows = scans.map(({ label, stats }) => {
    const cache = stats.columnCache;
    const tr = el(
      'tr',
      {},
      el('td', { text: label }),
      el('td', { className: 'num', text: stats.rowsOut.toLocaleString('en-US') }),
      el('td', { className: 'num', text: formatBytes(stats.bytesFetched) }),
      el('td', { className: 'num', text: String(stats.requests) }),
      el('td', { className: 'num', text: `${cache.hits} of ${stats.tasksTotal}` }),
      el('td', { className: 'num', text: formatMs(stats.elapsedMs) }),
    );
    tr.dataset.bytes = String(stats.bytesFetched);
    tr.dataset.hits = String(cache.hits);
    return tr;
  });
  return el('table', { id: 'query-scans', className: 'grid compact' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

/** `planned 2 ms → first request 3 → …` (ms since the scan was asked for; steps not reached left out). */
function timelineText(stats: ScanStats): string {
  const steps: Array<[string, number | null]> = [
    ['planned', stats.timeline.planned],
    ['first request', stats.timeline.firstRequest],
    ['first bytes', stats.timeline.firstBytes],
    ['first task', stats.timeline.firstTask],
    ['first result', stats.timeline.firstResult],
    ['first batch', stats.timeline.firstBatch],
    ['done', stats.timeline.done],
  ];
  const reached = steps.filter((step): step is [string, number] => step[1] !== null);
  const waited = stats.queueMs > 0 ? `; tasks waited ${formatMs(stats.queueMs)} for a worker` : '';
  return `${reached.map(([label, ms]) => `${label} ${formatMs(ms)}`).join(' → ')}${waited}`;
}

function rowGroupMap(stats: ScanStats, context: QueryContext): HTMLTableElement {
  const table = el('table', { id: 'row-group-map', className: 'rg-map' });
  const head = el('tr', {}, el('th', { text: '' }), ...context.columns.map((c) => el('th', { text: c, title: c })));
  const rows = stats.rowGroupFates.map((fate, index) => {
    const cells = context.columns.map((column) => {
      const state = fate === 'read' || fate === 'cached' || fate === 'unread' ? cellState(fate, column, context) : fate;
      const cell = el('td', {
        className: `fate-${state}`,
        title: `row group ${index}, ${column}: ${FATE_LABEL[state]}`,
      });
      cell.dataset.fate = state;
      return cell;
    });
    return el('tr', {}, el('th', { text: String(index) }), ...cells);
  });
  table.append(el('thead', {}, head), el('tbody', {}, ...rows));
  return table;
}

function cellState(fate: 'read' | 'cached' | 'unread', column: string, context: QueryContext) {
  if (fate === 'unread') return 'unread';
  return context.read.has(column) ? fate : 'notNeeded';
}

function legend(): HTMLElement {
  return el(
    'p',
    { className: 'rg-legend' },
    ...(['read', 'cached', 'stats', 'bloom', 'pageIndex', 'notNeeded'] as const).flatMap((fate) => [
      el('span', { className: `swatch fate-${fate}` }),
      ` ${FATE_LABEL[fate]}  `,
    ]),
  );
}

/** The caches' bytes after each task, against milliseconds since the scan started. */
function drawCacheChart(target: HTMLElement, stats: ScanStats): void {
  const { series, budgetBytes } = stats.columnCache;
  const xs = series.map((p) => p.ms);
  const ys = series.map((p) => p.bytes / 2 ** 20);
  const budget = series.map(() => budgetBytes / 2 ** 20);
  chart = new uPlot(
    {
      width: Math.max(320, Math.min(720, target.clientWidth || 640)),
      height: 180,
      // Both axes from 0; the legend names each series with its value, not a cursor's.
      scales: {
        x: { time: false, range: (_u, _min, max) => [0, Math.max(max, 1)] },
        y: { range: (_u, _min, max) => [0, Math.max(max, 1)] },
      },
      legend: { live: false },
      axes: [{ label: 'ms since the scan started' }, { label: 'MiB cached' }],
      series: [
        {},
        {
          label: `cache (peak ${formatBytes(stats.columnCache.peakBytes)})`,
          stroke: '#2563eb',
          width: 2,
          fill: 'rgba(37, 99, 235, 0.12)',
        },
        { label: `budget (${formatBytes(budgetBytes)})`, stroke: '#6b7280', dash: [6, 4], width: 1 },
      ],
    },
    [xs, ys, budget],
    target,
  );
}
