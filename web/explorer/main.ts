/**
 * The parquet-skim explorer: open a Parquet file (URL, file picker, drag and drop, or `?url=`) or
 * a folder of them, and scroll through its rows; filter them; see what its footer says.
 *
 * Design note: one reader (worker pool + WebAssembly) is created when the page loads and serves
 * every file opened afterwards. Opening is a sequence — open (footer only) → render the metadata
 * panels → the grid's first block of rows — and `body[data-state]` follows it (`loading` →
 * `ready`, or `error`) so tests and people can tell where it is. A new open supersedes the one
 * in flight: its scan is aborted and any late result is dropped (the `generation` check), so a
 * slow file can never overwrite a newer one. Every failure, the library's (`ParquetSkimError`,
 * with its `code`) or the page's own, ends in the `#error` box.
 * The data comes first: the filter bar and the one grid (grid-view.ts) — every row, or a filter's
 * matches — fill the first screen; the footer's panels are tabs below it. Filtering shows the
 * first matching rows in the grid at once, then counts all of them (`count(*)`: only the filter
 * columns are read, and they stay in the workers' cache, which then serves the grid's blocks and
 * an edited filter) with a progress bar and a Cancel button, and draws the query panel from that
 * scan's stats. The views live in their own modules; this one only wires the page.
 */
import {
  count,
  createReader,
  type Dataset,
  type DatasetScanStats,
  type DatasetSources,
  type FilterAst,
  type OpenOptions,
  type ParquetFile,
  type ParquetSource,
  type Reader,
  type ScanProgress,
  type ScanStats,
} from 'parquet-skim';
import { filesFromDrop, filesFromFolder, renderDatasetSummary, renderFiles } from './dataset-view.js';
import { byId, el } from './dom.js';
import { DataGrid } from './grid-view.js';
import { renderColumnChunks, renderKeyValueMetadata, renderRowGroups, renderSummary } from './metadata-view.js';
import { renderQueryPanel } from './query-view.js';
import { renderScanStats } from './scan-stats-view.js';
import { renderSchema } from './schema-view.js';

/**
 * The reader's cache budget: an explorer re-runs edited filters over the same columns, so it
 * keeps more decoded filter columns than the library's default (64 MiB) — on SF1 lineitem,
 * `l_comment` of every row group.
 */
const CACHE_BYTES = 256 * 2 ** 20;

/**
 * Counts kept per open file or dataset, by filter text: running a filter again (or going back to
 * one before an edit) shows its count at once, with the grid's kept view (grid-view.ts). They
 * belong to the file as opened; opening it again reads afresh.
 */
const KEEP_COUNTS = 16;
const keptCounts = new WeakMap<Target, Map<string, { matches: number; stats: ScanStats }>>();

/** The counts kept for `target`. */
function countsOf(target: Target): Map<string, { matches: number; stats: ScanStats }> {
  let counts = keptCounts.get(target);
  if (counts === undefined) {
    counts = new Map();
    keptCounts.set(target, counts);
  }
  return counts;
}

/** What tests can reach: the current reader and file (or dataset), the grid, and the query panel's stats. */
interface ExplorerHandles {
  reader: Reader | undefined;
  file: ParquetFile | undefined;
  dataset?: Dataset | undefined;
  lastStats?: ScanStats;
  grid?: DataGrid;
}

declare global {
  interface Window {
    explorer: ExplorerHandles;
  }
}

type PageState = 'idle' | 'loading' | 'ready' | 'error';

/** An error of the page itself (not of the library), shown like the library's. */
class PageError extends Error {
  override readonly name = 'PageError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const page = {
  form: byId<HTMLFormElement>('open-form'),
  urlInput: byId<HTMLInputElement>('url-input'),
  headersInput: byId<HTMLTextAreaElement>('headers-input'),
  fileInput: byId<HTMLInputElement>('file-input'),
  status: byId('status'),
  error: byId('error'),
  results: byId('results'),
  summary: byId('summary'),
  schema: byId('schema'),
  rowGroups: byId<HTMLTableElement>('row-groups'),
  kvMetadata: byId('kv-metadata'),
  scanStats: byId('scan-stats'),
  filterForm: byId<HTMLFormElement>('filter-form'),
  filterInput: byId<HTMLInputElement>('filter-input'),
  filterError: byId<HTMLPreElement>('filter-error'),
  matchBar: byId('match-bar'),
  matchCount: byId('match-count'),
  progress: byId<HTMLProgressElement>('scan-progress'),
  cancelButton: byId<HTMLButtonElement>('cancel-button'),
  queryCard: byId('query-card'),
  queryPanel: byId('query-panel'),
  columnChunks: byId<HTMLTableElement>('column-chunks'),
  grid: byId('grid'),
  picker: byId('column-picker'),
  gotoForm: byId<HTMLFormElement>('goto-form'),
  gotoInput: byId<HTMLInputElement>('goto-input'),
  copyLink: byId<HTMLButtonElement>('copy-link'),
  folderInput: byId<HTMLInputElement>('folder-input'),
  datasetForm: byId<HTMLFormElement>('dataset-form'),
  datasetUrls: byId<HTMLTextAreaElement>('dataset-urls'),
  summaryTitle: byId('summary-title'),
  filesCard: byId('files-card'),
  filesTable: byId<HTMLTableElement>('files-table'),
};

/** What a filter runs over: the open file, or the open dataset (the same scan and aggregate API). */
type Target = ParquetFile | Dataset;

/** The data grid of the open file. */
let grid: DataGrid | undefined;

window.explorer = { reader: undefined, file: undefined };

let readerPromise: Promise<Reader> | undefined;
/** Bumped by every open; results of an older open are dropped. */
let generation = 0;
let inFlight: AbortController | undefined;

/** The page's reader, created on first use (and again after a failed creation). */
function getReader(): Promise<Reader> {
  if (readerPromise === undefined) {
    readerPromise = createReader({ cacheBytes: CACHE_BYTES }).then(
      (reader) => {
        window.explorer.reader = reader;
        return reader;
      },
      (error: unknown) => {
        readerPromise = undefined;
        throw error;
      },
    );
  }
  return readerPromise;
}

/** Starts a new unit of work: aborts the one in flight; `isCurrent()` turns false once superseded. */
function beginWork(): { signal: AbortSignal; isCurrent: () => boolean } {
  const current = ++generation;
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  setState('loading');
  return { signal: controller.signal, isCurrent: () => current === generation };
}

/**
 * Shows `target`'s rows in a new grid: its first block read, the read's stats under it; the page
 * is then `ready`.
 */
async function showRows(target: Target, rows: number, signal: AbortSignal, isCurrent: () => boolean): Promise<void> {
  grid = new DataGrid(page.grid, page.picker, target, rows);
  window.explorer.grid = grid;
  setStatus('Reading the first rows…');
  const { stats, kept } = await grid.show(undefined, signal);
  if (!isCurrent()) return;
  renderScanStats(page.scanStats, stats, kept);
  setStatus('');
  setState('ready');
}

/** Opens `source` (shown as `label`) and renders it. */
async function openSource(source: ParquetSource, label: string, options: OpenOptions = {}): Promise<void> {
  const { signal, isCurrent } = beginWork();
  hideError();
  clearResults();
  window.explorer.file = undefined;
  window.explorer.dataset = undefined;
  document.body.classList.remove('dataset');
  setStatus(`Opening ${label}…`);
  try {
    const reader = await getReader();
    const file = await reader.open(source, options);
    if (!isCurrent()) return;
    window.explorer.file = file;
    renderSummary(page.summary, file, label);
    renderSchema(page.schema, file.schema);
    renderRowGroups(page.rowGroups, file);
    renderKeyValueMetadata(page.kvMetadata, file);
    renderColumnChunks(page.columnChunks, file);
    page.results.hidden = false;
    await showRows(file, file.numRows, signal, isCurrent);
  } catch (error) {
    if (!isCurrent()) return;
    showError(error);
  }
}

/** Opens many files as one table (`label`: what to call it) and renders it: summary, files, schema, first rows. */
async function openDatasetSources(sources: DatasetSources, label: string, options: OpenOptions = {}): Promise<void> {
  const { signal, isCurrent } = beginWork();
  hideError();
  clearResults();
  window.explorer.file = undefined;
  window.explorer.dataset = undefined;
  setStatus(`Opening ${label}…`);
  try {
    const reader = await getReader();
    // Every footer at open: the files table shows each file's rows and size at once.
    const dataset = await reader.openDataset(sources, { ...options, onFileError: 'skip', schema: 'union' });
    if (!isCurrent()) {
      dataset.close();
      return;
    }
    window.explorer.dataset = dataset;
    document.body.classList.add('dataset');
    page.summaryTitle.textContent = 'Dataset';
    renderDatasetSummary(page.summary, dataset, label);
    renderFiles(page.filesTable, dataset);
    page.filesCard.hidden = false;
    renderSchema(page.schema, dataset.schema);
    page.results.hidden = false;
    const rows = dataset.files.reduce((sum, f) => sum + (f.rows ?? 0), 0);
    await showRows(dataset, rows, signal, isCurrent);
  } catch (error) {
    if (!isCurrent()) return;
    showError(error);
  }
}

/**
 * Runs the filter box's SQL over the open file: the grid shows the matching rows, then they are
 * counted. Syntax errors are shown under the box with a caret at the offending position (the
 * core's parser reports it); type errors and unknown columns show their code and message there too.
 */
async function runFilter(): Promise<void> {
  const file: Target | undefined = window.explorer.file ?? window.explorer.dataset;
  const reader = window.explorer.reader;
  const view = grid;
  if (file === undefined || reader === undefined || view === undefined) return;
  const text = page.filterInput.value.trim();
  page.filterError.hidden = true;
  const { signal, isCurrent } = beginWork();
  setStatus(text === '' ? 'Reading the first rows…' : 'Filtering…');
  // From now until this filter's rows are in, what is shown belongs to the last one: say so, next
  // to the filter, with Cancel (and Escape) working in every phase.
  markStale(true);
  page.queryCard.hidden = true;
  page.matchBar.hidden = false;
  page.matchCount.textContent = text === '' ? 'Reading the first rows…' : 'Filtering…';
  delete page.matchCount.dataset.count;
  page.progress.removeAttribute('value'); // indeterminate until the count reports progress
  page.cancelButton.disabled = false;
  try {
    const { stats, kept } = await view.show(text === '' ? undefined : text, signal);
    if (!isCurrent()) return;
    renderScanStats(page.scanStats, stats, kept);
    markStale(false);
    if (text === '') {
      page.matchBar.hidden = true;
      page.cancelButton.disabled = true;
      setStatus('');
      setState('ready');
      return;
    }
    await countMatches(file, reader, text, signal, isCurrent, { stats, kept });
  } catch (error) {
    if (!isCurrent()) return;
    page.cancelButton.disabled = true;
    if (signal.aborted) {
      setStatus('Cancelled.');
      page.matchCount.textContent = 'Cancelled.';
      page.progress.value = 0;
      setState('ready');
      return;
    }
    // An error replaces the results: nothing of the last filter's stays on screen.
    clearFilterResults();
    const { code, message } = describeError(error);
    const position = (error as { position?: unknown }).position;
    const caret = typeof position === 'number' ? `\n${text}\n${' '.repeat(position)}^` : '';
    page.filterError.textContent = `${code}: ${message.split('\n')[0]}${caret}`;
    page.filterError.hidden = false;
    setStatus('');
    setState('error');
  }
}

/** Dims the last read's stats while a new one runs (the grid drops the last view's rows itself). */
function markStale(stale: boolean): void {
  page.scanStats.classList.toggle('stale', stale);
}

/** Empties the data: rows, stats, count and the query panel. */
function clearFilterResults(): void {
  markStale(false);
  grid?.clear();
  page.scanStats.replaceChildren();
  page.matchBar.hidden = true;
  page.matchCount.textContent = '';
  page.queryCard.hidden = true;
}

/**
 * Counts every row the filter keeps — a full scan of its columns only (`count(*)` reads no
 * other), with a progress bar and a cancel button — then draws the query panel from its stats.
 */
async function countMatches(
  file: Target,
  reader: Reader,
  filter: string,
  signal: AbortSignal,
  isCurrent: () => boolean,
  firstRows: { stats: ScanStats; kept: boolean },
): Promise<void> {
  setStatus('Counting the matching rows…');
  setState('loading');
  page.matchBar.hidden = false;
  page.matchCount.textContent = 'Counting the matching rows…';
  page.progress.value = 0;
  page.cancelButton.disabled = false;
  const onProgress = (p: ScanProgress) => {
    if (!isCurrent()) return;
    page.progress.max = Math.max(1, p.tasksTotal);
    page.progress.value = p.tasksDone;
  };
  try {
    const counts = countsOf(file);
    const known = counts.get(filter);
    let counted = known;
    if (counted === undefined) {
      const { values, stats } = await file.aggregate({ filter, aggregates: { n: count() }, signal, onProgress });
      counted = { matches: Number(values.n), stats };
    }
    const { matches, stats } = counted;
    if (!isCurrent()) return;
    counts.delete(filter);
    counts.set(filter, { matches, stats });
    while (counts.size > KEEP_COUNTS) counts.delete(counts.keys().next().value as string);
    window.explorer.lastStats = stats;
    page.matchCount.textContent = `${matches.toLocaleString('en-US')} matching rows`;
    page.matchCount.dataset.count = String(matches);
    page.progress.value = page.progress.max;
    // The grid scrolls through every match now (its blocks come from the cache the count filled).
    grid?.setMatchCount(matches);
    if ('files' in stats && window.explorer.dataset !== undefined) {
      renderFiles(page.filesTable, window.explorer.dataset, stats as DatasetScanStats);
    }
    renderQueryPanel(page.queryPanel, stats, {
      fileBytes: 'byteLength' in file ? file.byteLength : file.files.reduce((sum, f) => sum + (f.size ?? 0), 0),
      columns: file.schema.fields.map((f) => f.name),
      read: filterColumns(reader.parseFilter(filter)),
      scans: [
        {
          label: `first rows (the grid${firstRows.kept ? ', read by an earlier run: nothing read now' : ''})`,
          stats: firstRows.stats,
        },
        { label: `count${known === undefined ? '' : ' (by an earlier run: nothing read now)'}`, stats },
      ],
    });
    page.queryCard.hidden = false;
    setStatus('');
    setState('ready');
  } finally {
    if (isCurrent()) page.cancelButton.disabled = true;
  }
}

/** The top-level columns a filter reads. */
function filterColumns(ast: FilterAst): Set<string> {
  const columns = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'column' && typeof value === 'string') columns.add(value.split('.')[0] as string);
        else visit(value);
      }
    }
  };
  visit(ast);
  return columns;
}

/** Opens the URL in the input, with the headers in the textarea. */
function openFromInputs(): void {
  const url = page.urlInput.value.trim();
  if (url === '') {
    showError(new PageError('NO_URL', 'enter the URL of a Parquet file, or choose a file'));
    return;
  }
  const headers = headersFromInput();
  if (headers === null) return;
  rememberUrl(url);
  void openSource(url, url, { headers });
}

/** The headers textarea, parsed; null (the error shown) when it is malformed. */
function headersFromInput(): Record<string, string> | null {
  try {
    return parseHeaders(page.headersInput.value);
  } catch (error) {
    showError(error);
    return null;
  }
}

/** Opens the URLs of the dataset box (one a line), with the headers in the textarea. */
function openDatasetFromInputs(): void {
  const urls = page.datasetUrls.value
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (urls.length === 0) {
    showError(new PageError('NO_URL', 'enter the URLs of the Parquet files of the dataset, one a line'));
    return;
  }
  const headers = headersFromInput();
  if (headers === null) return;
  rememberUrl(null);
  void openDatasetSources(urls, `${urls.length} URLs`, { headers });
}

/** Opens a local file (picker or drop). */
function openLocalFile(file: File): void {
  rememberUrl(null);
  void openSource(file, file.name);
}

/** `Name: value` lines → headers. Blank lines are skipped; anything else malformed is an error. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new PageError('INVALID_HEADERS', `header line ${index + 1}: expected "Name: value", got "${line}"`);
    }
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** Keeps the page's `?url=` in step with what is open, so the address can be shared. */
function rememberUrl(url: string | null): void {
  const query = url === null ? '' : `?url=${encodeURIComponent(url).replace(/%2F/gi, '/').replace(/%3A/gi, ':')}`;
  history.replaceState(null, '', `${location.pathname}${query}`);
  // A URL makes a link that opens the file again; a local file does not.
  page.copyLink.hidden = url === null;
}

/** Hides and empties the panels of the previous file. */
function clearResults(): void {
  grid?.dispose();
  grid = undefined;
  window.explorer.grid = undefined;
  if (tabs[0] !== undefined) selectTab(tabs[0]);
  document.body.classList.remove('dataset');
  page.summaryTitle.textContent = 'File';
  page.filesCard.hidden = true;
  page.filesTable.replaceChildren();
  page.results.hidden = true;
  page.queryCard.hidden = true;
  page.matchBar.hidden = true;
  for (const panel of [
    page.summary,
    page.schema,
    page.rowGroups,
    page.kvMetadata,
    page.scanStats,
    page.columnChunks,
    page.grid,
    page.picker,
  ]) {
    panel.replaceChildren();
  }
}

function setState(state: PageState): void {
  document.body.dataset.state = state;
}

function setStatus(text: string): void {
  page.status.textContent = text;
}

function hideError(): void {
  page.error.hidden = true;
}

/** Shows `error` (code and message) in the error box and enters the `error` state. */
function showError(error: unknown): void {
  const { code, message } = describeError(error);
  page.error.replaceChildren(
    el('strong', { className: 'error-code', text: code }),
    ' ',
    el('span', { className: 'error-message', text: message }),
  );
  page.error.hidden = false;
  setStatus('');
  setState('error');
}

function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof Error) {
    const raw = (error as { code?: unknown }).code;
    const code = typeof raw === 'string' ? raw : error.name;
    // Shown after its code, a message that opens by restating it ("invalid filter: …" after
    // INVALID_FILTER) says it once.
    const lead = `${code.toLowerCase().replaceAll('_', ' ')}: `;
    const message = error.message.toLowerCase().startsWith(lead) ? error.message.slice(lead.length) : error.message;
    return { code, message };
  }
  return { code: 'ERROR', message: String(error) };
}

// Wiring.

page.cancelButton.addEventListener('click', () => {
  inFlight?.abort();
  page.cancelButton.disabled = true;
});

// The footer's panels are tabs: a click or the arrow keys choose one (the WAI-ARIA tabs pattern).
const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role=tab]')];
function selectTab(chosen: HTMLButtonElement): void {
  for (const tab of tabs) {
    const selected = tab === chosen;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    const panel = document.getElementById(tab.getAttribute('aria-controls') ?? '');
    if (panel !== null) panel.hidden = !selected;
  }
}
for (const tab of tabs) {
  tab.addEventListener('click', () => selectTab(tab));
  tab.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const shown = tabs.filter((t) => t.offsetParent !== null);
    const next = shown[(shown.indexOf(tab) + (event.key === 'ArrowRight' ? 1 : shown.length - 1)) % shown.length];
    if (next === undefined) return;
    selectTab(next);
    next.focus();
  });
}

// Scrollable regions take keyboard focus, so that arrow keys scroll them.
for (const region of document.querySelectorAll<HTMLElement>('.scroll-x')) region.tabIndex = 0;

// "Go to row N": the grid scrolls so that row N (as numbered in the grid) is in view.
page.gotoForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const row = Number(page.gotoInput.value);
  if (grid === undefined || !Number.isSafeInteger(row) || row < 0) return;
  grid.scrollToRow(Math.min(row, grid.totalRows - 1));
});

// A link to this page with this file open (`?url=`), for sharing.
page.copyLink.addEventListener('click', () => {
  navigator.clipboard.writeText(location.href).then(
    () => setStatus('Link copied.'),
    () => setStatus(`Copy this link: ${location.href}`),
  );
});

// Escape cancels a running scan, as the Cancel button does.
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !page.cancelButton.disabled) page.cancelButton.click();
});

page.filterForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void runFilter();
});

page.form.addEventListener('submit', (event) => {
  event.preventDefault();
  openFromInputs();
});

page.fileInput.addEventListener('change', () => {
  const file = page.fileInput.files?.[0];
  if (file !== undefined) openLocalFile(file);
  // Let the same file be chosen again later.
  page.fileInput.value = '';
});

const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes('Files') ?? false;
window.addEventListener('dragover', (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  if (event.dataTransfer !== null) event.dataTransfer.dropEffect = 'copy';
  document.body.classList.add('dragging');
});
window.addEventListener('dragleave', (event) => {
  if (event.relatedTarget === null) document.body.classList.remove('dragging');
});
window.addEventListener('drop', (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  document.body.classList.remove('dragging');
  const transfer = event.dataTransfer;
  if (transfer === null) return;
  // The entries must be taken before this handler returns: the drop's data is gone after it.
  const file = transfer.files[0];
  filesFromDrop(transfer).then(
    (files) => {
      if (files === null) {
        if (file !== undefined) openLocalFile(file);
      } else if (files.length === 0) {
        showError(new PageError('NO_PARQUET', 'the dropped folder holds no .parquet file'));
      } else {
        rememberUrl(null);
        void openDatasetSources(files, files[0]?.path.split('/')[0] ?? 'the dropped files');
      }
    },
    (error: unknown) => showError(error),
  );
});

page.folderInput.addEventListener('change', () => {
  const files = filesFromFolder(page.folderInput.files ?? new DataTransfer().files);
  page.folderInput.value = '';
  if (files.length === 0) {
    showError(new PageError('NO_PARQUET', 'the chosen folder holds no .parquet file'));
    return;
  }
  rememberUrl(null);
  void openDatasetSources(files, files[0]?.webkitRelativePath.split('/')[0] ?? 'the chosen folder');
});

page.datasetForm.addEventListener('submit', (event) => {
  event.preventDefault();
  openDatasetFromInputs();
});

// Start: warm up the reader, then open `?url=` if there is one.
const initialUrl = new URLSearchParams(location.search).get('url');
if (initialUrl !== null && initialUrl !== '') {
  page.urlInput.value = initialUrl;
  openFromInputs();
} else {
  getReader().catch(showError);
}
