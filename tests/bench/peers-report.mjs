/**
 * The peers benchmark's report: Markdown tables and an SVG chart (plain strings, no browser) from
 * the result of tests/bench/peers.mjs. Run alone, it redraws them from a saved result:
 *
 *   node tests/bench/peers-report.mjs bench/results/<date>-peers.json
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MB = 1e6;
const COLORS = {
  'parquet-skim': '#d62728',
  'parquet-skim-mem': '#ff9896',
  'parquet-skim-warm': '#8c564b',
  'parquet-skim-1range': '#bcbd22',
  'parquet-skim-union': '#e377c2',
  'parquet-skim-file0': '#ffbb78',
  'parquet-wasm': '#1f77b4',
  hyparquet: '#2ca02c',
  'duckdb-wasm': '#9467bd',
  floor: '#7f7f7f',
};
const LABELS = {
  'parquet-skim': 'parquet-skim',
  'parquet-skim-mem': 'parquet-skim (in memory, warm)',
  'parquet-skim-warm': 'parquet-skim (warm)',
  'parquet-skim-1range': 'parquet-skim, a range per request',
  'parquet-skim-union': "parquet-skim, schema 'union'",
  'parquet-skim-file0': 'parquet-skim, its first file alone',
  'parquet-wasm': 'parquet-wasm 0.8.0',
  hyparquet: 'hyparquet 1.31.5',
  'duckdb-wasm': 'DuckDB-WASM 1.28.0',
  floor: 'I/O floor',
};
const SHORT_QUERIES = {
  q6: 'Q6',
  lookup: 'lookup',
  contains: 'contains',
  first100: 'first 100',
  scan3: 'scan 3 cols',
  part: 'partition filter',
  count: 'count(*)',
};

/** How each system answers each query (the table notes). */
const NOTES = [
  '**parquet-skim**: `createReader()` defaults (a Web Worker per core, 64 MiB cache), `reader.open(url)`; filters and `limit` pushed down in `file.scan` (row groups by statistics, pages by the column index, output columns fetched only for pages with matches); Q6 is `file.aggregate` (filter + sum inside the workers). Batches as Arrow JS.',
  '**parquet-skim (in memory, warm)**: the same on the file’s bytes (fetched before the clock starts), after the same query ran twice on the same reader (on the page’s instance while the workers start, then on the workers; the bytes are opened again each time, a new file identity, so the cross-scan cache serves nothing); only for the WebAssembly/native ratio. **parquet-skim (warm)** (opt-in) is the same over HTTP: the cost of a cold page.',
  '**parquet-wasm**: `ParquetFile.fromUrl`, then `file.stream({ columns, concurrency: 4, batchSize: 8192 })` or `file.read({ rowGroups, offset, limit })`, each batch to Arrow JS by IPC. No filter API and no statistics: Q6 and `LIKE` are JS loops over the streamed columns (Q6 on unscaled decimals; `LIKE` as a RegExp on each decoded string); the lookup streams `l_orderkey`, finds the rows, then reads all columns of that row group with `offset`/`limit`; the first 100 rows are `read({ limit: 100 })`.',
  '**hyparquet** (+ hyparquet-compressors): `asyncBufferFromUrl` (a HEAD, then range GETs) and `parquetMetadataAsync`. The lookup is `parquetReadObjects` with `filter: { l_orderkey: { $eq } }`, `usePageIndex` and `useOffsetIndex`; the first 100 rows `rowStart`/`rowEnd` + `useOffsetIndex`. Q6, `LIKE` and the scan read column arrays (`parquetRead` + `onChunk`) and filter in JS: its filter has no `LIKE`, and compares decimals as floats (`7 × 0.01 > 0.07`: `$lte: 0.07` would miss rows), so Q6 compares cents. Dates as day numbers (`parsers.dateFromDays`); rows as JS objects.',
  '**DuckDB-WASM 1.28.0**: the `eh` bundle (one thread: the pthread `coi` bundle of 1.28 fails with "startWorker is not defined", duckdb-wasm#939), one SQL query over `read_parquet(url)` (its HTTP file system: a HEAD, then range reads; row groups pruned by statistics); the result as an Arrow table.',
  '**I/O floor**: the byte ranges of parquet-skim’s median run of the same cell (the server’s log), moved with bare `fetch` (`cache: no-store`) in two rounds — its first request (the footer), then all the others at once — and not decoded: what the transport costs for the bytes parquet-skim chose.',
  '**Datasets** (hive, files64): parquet-skim `reader.openDataset(urls)` (the first file’s footer at open, the others as the scan reaches them, never those its partition filter prunes — as DuckDB’s default, without `union_by_name`) and one scan, aggregate or `count()` over it; parquet-skim, schema “union”: `openDataset(urls, { schema: "union" })` — every footer at open (the first, then the rest at once) and the union of their schemas; parquet-skim, its first file alone (first rows only): `reader.open(url)` of the dataset’s first file — the one-file reference for the dataset’s first rows (its rows lack the partition columns: its answer is not compared); DuckDB-WASM `read_parquet([urls…], hive_partitioning = true|false)`; hyparquet and parquet-wasm loop over the files one after another, as an app without a dataset API would (the partition-filtered query skips files by their path on the hive dataset). The partition query filters `year = 1995 AND month BETWEEN 3 AND 5` on the hive dataset and the same ship months by `l_shipdate` on the other. The I/O floor moves the first request of every file at once, then the rest.',
  'Time: from opening the file (footer) to the whole result in JS, in a fresh page per run after the library’s JS and WebAssembly loaded (not timed). Requests and MB: every request to the data file in the server’s log during the timed run (HEAD and CORS preflights included).',
];

const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
const fmtMb = (bytes) => (bytes / MB >= 10 ? (bytes / MB).toFixed(0) : (bytes / MB).toFixed(1));
const escapeXml = (s) =>
  String(s).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]);

function cellText(cell) {
  if (cell === undefined) return '—';
  if (cell.error !== undefined) return `✗ ${cell.error.slice(0, 60)}`;
  return `${fmtMs(cell.medianMs)} ms · ${fmtMb(cell.bytes)} MB · ${cell.requests}`;
}

/** The networks of a result (older results: one, unshaped). */
const networksOf = (result) => result.networks ?? [{ id: '0/0', latencyMs: 0, bandwidthMbps: 0 }];
const netOf = (cell) => cell.net ?? '0/0';
const netLabel = (n) =>
  n.latencyMs === 0 && n.bandwidthMbps === 0
    ? 'localhost, no added latency, no bandwidth cap'
    : `${n.latencyMs} ms per request, ${n.bandwidthMbps > 0 ? `${n.bandwidthMbps} Mbit/s shared` : 'no bandwidth cap'}`;
const ratioText = (x, y) =>
  x !== undefined && y !== undefined && Number.isFinite(x / y) ? `${(x / y).toFixed(2)}×` : '—';

/** The Markdown report. */
export function markdown(result) {
  const lines = [];
  const { layouts, systems, cells, native } = result;
  const networks = networksOf(result);
  const first = networks[0].id;
  const find = (data, query, system, net = first) =>
    cells.find((c) => c.data === data && c.query === query && c.system === system && netOf(c) === net);
  lines.push(`# parquet-skim and its peers, ${result.date}`);
  lines.push('');
  lines.push(
    `Headless Chromium ${result.chromium}, ${result.cores} cores, the range server on localhost; ` +
      `median of ${result.runs} runs after a warm-up${networks.length > 1 ? ` (${result.shapedRuns} on the shaped networks)` : ''}, fresh page per run. ` +
      'Cells: median ms · MB fetched · requests. ' +
      `Every answer was checked equal across systems (and the native run) before its time was kept.`,
  );
  lines.push('');
  lines.push('| data | writer | file | MB | rows | row groups | codec | pages per column chunk | page index |');
  lines.push('|---|---|---|---:|---:|---|---|---|---|');
  for (const l of layouts) {
    const pages = l.pagesPerChunk === null ? '—' : `${l.pagesPerChunk[0]}–${l.pagesPerChunk[1]}`;
    lines.push(
      `| ${l.id}: ${l.layout} | ${l.writer ?? 'arrow-rs (crate/datagen)'} | \`${l.file}\` | ${fmtMb(l.bytes)} | ${l.rows.toLocaleString('en')} | ` +
        `${l.rowGroups} × ${l.rowGroupRows.toLocaleString('en')} | ${l.codec} | ${pages} | ${l.pageIndex ? 'yes' : 'no'} |`,
    );
  }
  const peers = systems.filter((s) => !s.startsWith('parquet-skim') && s !== 'floor');
  const shown = systems.filter((s) => s !== 'parquet-skim-mem' && s !== 'floor');
  const withFloor = systems.includes('floor');
  for (const net of networks) {
    lines.push('');
    lines.push(`## Network: ${netLabel(net)}`);
    for (const l of layouts) {
      const here = (q) => cells.some((c) => c.data === l.id && c.query === q && netOf(c) === net.id);
      const queries = Object.keys(result.queries).filter(here);
      if (queries.length === 0) continue;
      lines.push('');
      lines.push(
        `### ${l.id} (${l.writer ?? 'arrow-rs (crate/datagen)'}): ${l.table === 'hits' ? 'hits' : 'lineitem SF1'}, ${l.layout}`,
      );
      lines.push('');
      const ratio = shown.includes('parquet-skim') && peers.length > 0;
      const head = [
        'query',
        ...shown.map((s) => LABELS[s]),
        ...(withFloor ? ['I/O floor'] : []),
        ...(ratio ? ['fastest peer / skim'] : []),
        ...(withFloor ? ['skim / floor'] : []),
      ];
      lines.push(`| ${head.join(' | ')} |`);
      lines.push(
        `|---|${head
          .slice(1)
          .map(() => '---:')
          .join('|')}|`,
      );
      for (const q of queries) {
        const row = shown.map((s) => cellText(find(l.id, q, s, net.id)));
        const skim = find(l.id, q, 'parquet-skim', net.id);
        const floor = find(l.id, q, 'floor', net.id);
        if (withFloor) row.push(cellText(floor));
        if (ratio) {
          const best = Math.min(...peers.map((s) => find(l.id, q, s, net.id)?.medianMs ?? Number.POSITIVE_INFINITY));
          row.push(ratioText(best, skim?.medianMs));
        }
        if (withFloor) row.push(ratioText(skim?.medianMs, floor?.medianMs));
        lines.push(`| ${result.queries[q]} | ${row.join(' | ')} |`);
      }
    }
  }
  if (peers.length > 0 && systems.includes('parquet-skim')) {
    lines.push('');
    lines.push('### Requests and bytes: parquet-skim against the fewest any peer makes and fetches');
    lines.push('');
    lines.push(`On the run's first network, ${netLabel(networks[0])} (requests and bytes hardly depend on it).`);
    lines.push('');
    lines.push('| data | query | skim requests | fewest peer requests | skim MB | fewest peer MB | skim MB / fewest |');
    lines.push('|---|---|---:|---:|---:|---:|---:|');
    for (const l of layouts) {
      for (const q of Object.keys(result.queries)) {
        const skim = find(l.id, q, 'parquet-skim');
        if (skim?.requests === undefined) continue;
        const done = peers.map((s) => find(l.id, q, s)).filter((c) => c?.requests !== undefined);
        if (done.length === 0) continue;
        const fewest = done.reduce((a, b) => (b.requests < a.requests ? b : a));
        const least = done.reduce((a, b) => (b.bytes < a.bytes ? b : a));
        lines.push(
          `| ${l.id} | ${SHORT_QUERIES[q]} | ${skim.requests} | ${fewest.requests} (${LABELS[fewest.system]}) | ` +
            `${fmtMb(skim.bytes)} | ${fmtMb(least.bytes)} (${LABELS[least.system]}) | ${ratioText(skim.bytes, least.bytes)} |`,
        );
      }
    }
  }
  if (native.length > 0) {
    lines.push('');
    lines.push('### parquet-skim: WebAssembly in Chromium vs native');
    lines.push('');
    lines.push(
      'The same plans and task decoders natively (`crate/core/examples/peers_native.rs`: OS threads, the file read from disk, warm page cache) ' +
        'against parquet-skim in Chromium on the file’s bytes in memory (2 workers; no HTTP), both timed after a warm-up run of the same query. ' +
        'The cold, over-HTTP parquet-skim time is repeated for scale.',
    );
    lines.push('');
    lines.push(
      '| data | query | native, 1 thread | native, 2 threads | WASM in memory, warm, 2 workers | WASM / native (2) | WASM over HTTP, cold |',
    );
    lines.push('|---|---|---:|---:|---:|---:|---:|');
    for (const l of layouts) {
      for (const q of Object.keys(result.queries)) {
        const n1 = native.find((n) => n.data === l.id && n.query === q && n.threads === 1);
        const n2 = native.find((n) => n.data === l.id && n.query === q && n.threads === 2);
        if (n1 === undefined && n2 === undefined) continue;
        const mem = find(l.id, q, 'parquet-skim-mem');
        const http = find(l.id, q, 'parquet-skim');
        const ratio =
          mem?.medianMs !== undefined && n2 !== undefined ? `${(mem.medianMs / n2.medianMs).toFixed(2)}×` : '—';
        lines.push(
          `| ${l.id} | ${SHORT_QUERIES[q]} | ${n1 ? fmtMs(n1.medianMs) : '—'} ms | ${n2 ? fmtMs(n2.medianMs) : '—'} ms | ` +
            `${mem?.medianMs !== undefined ? `${fmtMs(mem.medianMs)} ms` : cellText(mem)} | ${ratio} | ` +
            `${http?.medianMs !== undefined ? `${fmtMs(http.medianMs)} ms` : '—'} |`,
        );
      }
    }
  }
  lines.push('');
  lines.push('Answers:');
  lines.push('');
  for (const [key, answer] of Object.entries(result.expected)) lines.push(`- ${key}: ${answer}`);
  lines.push('');
  lines.push('Notes:');
  lines.push('');
  for (const note of NOTES) lines.push(`- ${note}`);
  const failed = cells.filter((c) => c.error !== undefined);
  if (failed.length > 0) {
    lines.push('');
    lines.push('Failures:');
    lines.push('');
    for (const c of failed) lines.push(`- ${c.data} ${c.query} ${c.system}: ${c.error}`);
  }
  return `${lines.join('\n')}\n`;
}

/** One log-scale bar panel: `value(cell)` for each group × system. */
function panel({ groups, systems, value, title, unit, top, height, left, groupWidth, barWidth }) {
  const values = groups.flatMap((g) => systems.map((s) => value(g.cells[s]))).filter((v) => v !== undefined && v > 0);
  const min = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
  const max = 10 ** Math.ceil(Math.log10(Math.max(...values, 10)));
  const y = (v) => top + height - (Math.log10(v / min) / Math.log10(max / min)) * height;
  const out = [];
  out.push(`<text x="${left}" y="${top - 8}" font-weight="bold">${escapeXml(title)}</text>`);
  for (let tick = min; tick <= max; tick *= 10) {
    out.push(
      `<line x1="${left}" x2="${left + groups.length * groupWidth}" y1="${y(tick)}" y2="${y(tick)}" stroke="#ddd"/>`,
    );
    out.push(
      `<text x="${left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick >= 1 ? tick : tick.toPrecision(1)} ${unit}</text>`,
    );
  }
  groups.forEach((g, gi) => {
    systems.forEach((s, si) => {
      const cell = g.cells[s];
      if (cell === undefined) return; // not run on this data set
      const v = value(cell);
      const x = left + gi * groupWidth + 6 + si * barWidth;
      if (cell.error !== undefined) {
        out.push(`<text x="${x + barWidth / 2}" y="${top + height - 3}" text-anchor="middle" fill="#999">×</text>`);
        return;
      }
      if (v === undefined || v <= 0) return;
      const h = top + height - y(v);
      out.push(
        `<rect x="${x}" y="${y(v)}" width="${barWidth - 1}" height="${Math.max(h, 1)}" fill="${COLORS[s]}"><title>${escapeXml(
          `${LABELS[s]}, ${g.label}: ${fmtMs(v)} ${unit}`,
        )}</title></rect>`,
      );
    });
  });
  out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + height}" stroke="#333"/>`);
  return out.join('\n');
}

/** The SVG chart: time and MB fetched per data set × query × system (log scales). */
export function svg(result) {
  const systems = result.systems.filter((s) => COLORS[s] !== undefined);
  const first = networksOf(result)[0].id;
  const groups = [];
  for (const l of result.layouts) {
    for (const q of Object.keys(result.queries)) {
      const cells = Object.fromEntries(
        result.cells.filter((c) => c.data === l.id && c.query === q && netOf(c) === first).map((c) => [c.system, c]),
      );
      if (Object.keys(cells).length > 0) groups.push({ label: `${l.id} ${SHORT_QUERIES[q]}`, cells });
    }
  }
  const barWidth = 9;
  const groupWidth = systems.length * barWidth + 14;
  const left = 80;
  const legendWidth = 200;
  const width = Math.max(left + groups.length * groupWidth + 20, left + systems.length * legendWidth);
  const height = 200;
  const top1 = 70;
  const top2 = top1 + height + 50;
  const labelsY = top2 + height + 12;
  const total = labelsY + 70;
  const ok = (cell) => (cell !== undefined && cell.error === undefined ? cell : undefined);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">${escapeXml(
      `parquet-skim and its peers, ${result.date}: median of ${result.runs} runs, headless Chromium, localhost HTTP`,
    )}</text>`,
  ];
  systems.forEach((s, i) => {
    const x = left + i * legendWidth;
    parts.push(`<rect x="${x}" y="32" width="12" height="12" fill="${COLORS[s]}"/>`);
    parts.push(`<text x="${x + 16}" y="42">${escapeXml(LABELS[s])}</text>`);
  });
  const common = { groups, systems, left, groupWidth, barWidth, height };
  parts.push(panel({ ...common, top: top1, title: 'time (ms, log scale)', unit: 'ms', value: (c) => ok(c)?.medianMs }));
  parts.push(
    panel({
      ...common,
      top: top2,
      title: 'MB fetched (log scale)',
      unit: 'MB',
      // In-memory runs fetch nothing during the query.
      value: (c) => (ok(c) && c.system !== 'parquet-skim-mem' ? ok(c).bytes / MB : undefined),
    }),
  );
  groups.forEach((g, gi) => {
    const x = left + gi * groupWidth + groupWidth / 2;
    parts.push(
      `<text transform="translate(${x},${labelsY}) rotate(40)" text-anchor="start">${escapeXml(g.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Writes `<base>.md` and `<base>.svg` (when `base` is given) and returns the Markdown. */
export async function writeReport(result, base) {
  const text = markdown(result);
  if (base !== null) {
    await writeFile(`${base}.md`, text);
    await writeFile(`${base}.svg`, svg(result));
  }
  return text;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const input = process.argv[2];
  if (input === undefined) {
    console.error('usage: node tests/bench/peers-report.mjs bench/results/<date>-peers.json');
    process.exit(2);
  }
  const result = JSON.parse(await readFile(input, 'utf8'));
  const text = await writeReport(result, input.replace(/\.json$/, ''));
  console.log(text);
}
