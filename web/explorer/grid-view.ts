/**
 * The data grid: one grid for every row of the file or dataset, and for a filter's matches,
 * scrolled through a viewport that renders only the visible rows and fetches only the pages that
 * hold them.
 *
 * Design note:
 * - Rows are read in blocks of {@link BLOCK_ROWS} with `scan({ columns, filter, offset, limit })`;
 *   the planner turns offset/limit into each row group's row selection and, with an offset index,
 *   into the byte ranges of just the pages holding those rows. With a filter, offset and limit
 *   count matches, and once the filter's columns are in the workers' cross-scan cache (a count
 *   put them there) a block reads only its output pages. Blocks are kept in a small LRU
 *   ({@link KEEP_BLOCKS}); a block's read starts when it comes into view, and is aborted if it
 *   is scrolled away before it is read. While the scrollbar is dragged, a block that comes into
 *   view is read only once the view has rested {@link SETTLE_MS}: a drag across the file plans
 *   the few blocks it ends on, not a scan for every block it passes (planning is synchronous on
 *   the page, and each of those scans would be aborted at once). A block's rows show as its
 *   scan's batches arrive, in file order: a rare filter's first matches are on screen once their
 *   row group is read, not once the last row group holding one of the block's 200 is.
 * - {@link DataGrid.show} starts a view (all rows, or a filter's matches): the last view's rows
 *   go at once (its reads are aborted, the rows show as loading), and it resolves with the first
 *   block's scan stats, or rejects with its error: the page shows either. The read blocks of the
 *   last {@link KEEP_VIEWS} views are kept: a view shown again (a filter run again, the one before
 *   an edit) comes back at once with them, and says it read nothing now. How many matches
 *   a filter has is not known until it is counted ({@link DataGrid.setMatchCount}); until then the
 *   grid scrolls as far as the blocks read so far reach, one block ahead.
 * - Browsers cap an element's height (~33 M px in Chromium), below 6 M rows × 24 px, so the
 *   scroll range is mapped linearly onto the row range: the spacer is at most
 *   {@link MAX_SPACER_PX} tall. A wheel notch and the arrow keys move by rows — the grid takes
 *   them over rather than let a pixel of scroll range stand for 1.3 rows — and the row they
 *   moved to is kept exactly ({@link DataGrid.pinned}) until the scrollbar is dragged. How many
 *   rows are visible is measured (header and row heights as rendered), so the layer never
 *   outgrows the viewport and the last row shows whole.
 * - A click selects a cell (a click on the row number: the row); Ctrl/Cmd+C copies it — a cell's
 *   whole value, a row as tab-separated values — and the inspector under the grid shows the
 *   selected value in full (cells are cut at {@link MAX_CELL_CHARS} characters); a cell clicked
 *   while its row is still loading says so there, and its value follows when the block is read.
 *   The cell is taken as the primary button goes down, not at the `click`: each render replaces
 *   the rows, and while blocks load or the grid scrolls a render can fall between the press and
 *   the release — the browser then sends the `click` to no cell, and the click was lost.
 * - A header's right edge drags its column's width (a double click fits it to its content again).
 * - The column picker chooses which top-level columns are read: changing it drops the blocks.
 * - A block whose read failed for a reason that may pass — the network, a timeout, a server
 *   error the reader's own retries did not outlast, a worker lost — says so in its rows and is
 *   read again once it is in view and {@link RETRY_MS} have passed, up to {@link RETRIES} times
 *   (the first block's failure is the view's: the page shows it). Other failures stay shown.
 * - `data-first-row` on the grid and `data-row` on each rendered row say what is shown (tests).
 */
import { type DataType, type RecordBatch, type Schema, Type } from 'apache-arrow';
import { formatValue, type ScanStats, valueAt } from 'parquet-skim';
import { el, formatBytes, formatCount, plural, truncate } from './dom.js';
import { isNumeric } from './scan-stats-view.js';
import { typeLabel } from './values.js';

const ROW_PX = 24;
const BLOCK_ROWS = 200;
const KEEP_BLOCKS = 32;
/** Views (a filter and the columns read) whose read blocks are kept for when they are shown again. */
const KEEP_VIEWS = 4;
const MAX_SPACER_PX = 8_000_000;
const MAX_CELL_CHARS = 60;
/** The viewport's least height when it is not fitted to few rows. */
const MIN_VIEWPORT_PX = 280;
/** A drag of the scrollbar reads the blocks in view once it has not moved for this long. */
const SETTLE_MS = 80;
/** A block that failed for a passing reason is read again after this long… */
const RETRY_MS = 1000;
/** …at most this many times. */
const RETRIES = 3;
/** Error codes of failures that may pass (see `ErrorCode`). */
const PASSING = new Set(['NETWORK', 'TIMEOUT', 'HTTP_STATUS', 'WORKER_CRASHED']);

/** What the grid reads from: a file or a dataset (both scan with columns, filter, offset and limit). */
export interface GridSource {
  readonly schema: Schema;
  scan(options: {
    columns: string[];
    filter?: string;
    offset: number;
    limit: number;
    signal: AbortSignal;
  }): AsyncIterable<RecordBatch> & {
    readonly stats: ScanStats;
  };
}

interface Block {
  /** Cell texts by row then column (whole values); `undefined` while loading. */
  rows?: Array<Array<string | null>>;
  /**
   * The rows read so far while the block loads: a scan yields its batches in file order, so a
   * rare filter's first matches show as their row group is read, not when the last one is.
   */
  partial?: Array<Array<string | null>>;
  controller: AbortController;
  /** Why its read failed: an error code, or `cancelled`. */
  failed?: string;
  /** Reads of this block before this one. */
  attempt: number;
  /** When a failed read is tried again (`performance.now()`), if it will be. */
  retryAt?: number;
}

/** The caller of {@link DataGrid.show} waiting for its view's first rows. */
interface Waiting {
  resolve(shown: Shown): void;
  reject(error: unknown): void;
}

/**
 * A view's first rows shown: the stats of the scan that read them, and whether that scan ran for
 * an earlier showing of the same view (its blocks were kept: nothing was read now).
 */
export interface Shown {
  stats: ScanStats;
  kept: boolean;
}

/** A view's blocks that were read, kept for when it is shown again. */
interface KeptView {
  blocks: Map<number, Block>;
  rows: number;
  rowsKnown: boolean;
  first: ScanStats;
}

/** The selected cell (`column` null: the whole row). */
interface Selection {
  row: number;
  column: number | null;
}

/** A virtual grid over one file or dataset; `dispose()` aborts what is in flight. */
export class DataGrid {
  private readonly viewport: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly layer: HTMLTableElement;
  private readonly inspector: HTMLDivElement;
  /** The selected row's block was not loaded when the inspector was last filled. */
  private inspectorWaits = false;
  private readonly blocks = new Map<number, Block>();
  private columns: string[];
  private numeric: boolean[] = [];
  /** Columns whose values are nested (shown as JSON; a tree in the inspector). */
  private nested: boolean[] = [];
  private readonly costLine: HTMLParagraphElement;
  private frame = 0;
  private disposed = false;
  /** The filter of the view (undefined: every row). */
  private filter: string | undefined;
  /** Rows the view scrolls through: the source's, or a filter's matches (so far, until counted). */
  private rows: number;
  /** Whether {@link rows} is final. */
  private rowsKnown = true;
  /** The spacer's height: the scroll range, whatever the layer does. */
  private spacerPx = 0;
  /** Heights of the header and of a row as last rendered. */
  private headPx = ROW_PX * 2;
  private rowPx = ROW_PX;
  /** The first row the wheel, a key or "go to row" moved to, and the scrollTop that showed it. */
  private pinned: { row: number; top: number } | null = null;
  /** Rows of wheel movement not yet applied (a trackpad moves by fractions of a row). */
  private wheelRest = 0;
  /** When the scrollbar was last dragged (not a wheel, key or "go to row" move), and the timer that renders once it rests. */
  private draggedAt = Number.NEGATIVE_INFINITY;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  private selection: Selection | null = null;
  /** The stats of the scan that read the current view's first block, once it is read. */
  private first: ScanStats | undefined;
  /** Earlier views' read blocks, by {@link viewKey}, least recently shown first. */
  private readonly kept = new Map<string, KeptView>();
  /** The current view's caller, until its first block is read (or fails, or is given up). */
  private waiting: Waiting | null = null;
  /** Widths the user dragged columns to, by column name (the others size to their content). */
  private readonly widths = new Map<string, number>();
  /**
   * What the grid's reads cost: rows, bytes, requests, blocks read, and tasks served by the
   * workers' cache; `started`: block reads started (read, failed or aborted).
   */
  readonly cost = { rows: 0, bytes: 0, requests: 0, blocks: 0, tasks: 0, cacheHits: 0, started: 0 };

  constructor(
    private readonly target: HTMLElement,
    private readonly picker: HTMLElement,
    private readonly source: GridSource,
    private readonly sourceRows: number,
  ) {
    this.columns = source.schema.fields.map((f) => f.name);
    this.rows = sourceRows;
    this.viewport = el('div', { id: 'grid-viewport', className: 'grid-viewport' });
    // A keyboard user scrolls it too (arrow keys, Page Up/Down, Home/End).
    this.viewport.tabIndex = 0;
    this.viewport.setAttribute('role', 'region');
    this.viewport.setAttribute('aria-label', 'Rows');
    this.spacer = el('div', { className: 'grid-spacer' });
    this.layer = el('table', { id: 'grid-rows', className: 'grid data grid-layer' });
    this.inspector = el('div', { id: 'cell-inspector', className: 'cell-inspector' });
    this.inspector.setAttribute('aria-live', 'polite');
    this.costLine = el('p', { id: 'grid-cost', className: 'grid-cost hint' });
    this.viewport.append(this.layer, this.spacer);
    this.viewport.addEventListener('scroll', () => this.onScroll());
    this.viewport.addEventListener('wheel', (event) => this.onWheel(event), { passive: false });
    this.viewport.addEventListener('keydown', (event) => this.onKey(event));
    this.viewport.addEventListener('mousedown', (event) => this.onPress(event));
    this.viewport.addEventListener('copy', (event) => this.onCopy(event));
    target.replaceChildren(this.viewport, this.inspector, this.costLine);
    this.renderPicker();
    this.setColumns(this.columns);
  }

  /** Rows the grid scrolls through now: the source's, or the filter's matches found so far. */
  get totalRows(): number {
    return this.rows;
  }

  /**
   * Shows every row (`filter` undefined) or a filter's matches from the top; resolves once its
   * first rows are shown, rejects with its error, or with `signal`'s reason. A column change while
   * it loads reads the block again (the promise waits for that); a newer `show()` gives it up (an
   * `AbortError`). A view shown before (the same filter and columns, one of the last
   * {@link KEEP_VIEWS}) comes back with the blocks it had read, at once: running a filter again, or
   * going back to the one before an edit, reads nothing the grid already holds.
   */
  show(filter: string | undefined, signal: AbortSignal): Promise<Shown> {
    this.waiting?.reject(new DOMException('a newer view replaced this one', 'AbortError'));
    this.keepView();
    this.filter = filter;
    this.rows = filter === undefined ? this.sourceRows : BLOCK_ROWS;
    this.rowsKnown = filter === undefined;
    this.unselect();
    this.dropBlocks();
    const key = this.viewKey();
    const kept = this.kept.get(key);
    this.kept.delete(key);
    if (kept !== undefined) {
      for (const [index, block] of kept.blocks) this.blocks.set(index, block);
      this.rows = kept.rows;
      this.rowsKnown = kept.rowsKnown;
      this.first = kept.first;
    }
    this.updateSpacer();
    this.scrollToRow(0);
    if (kept !== undefined) return Promise.resolve({ stats: kept.first, kept: true });
    const done = new Promise<Shown>((resolve, reject) => {
      const waiting: Waiting = {
        resolve: (stats) => {
          if (this.waiting === waiting) this.waiting = null;
          resolve(stats);
        },
        reject: (error) => {
          if (this.waiting === waiting) this.waiting = null;
          reject(error);
        },
      };
      this.waiting = waiting;
      if (signal.aborted) waiting.reject(signal.reason);
      signal.addEventListener('abort', () => waiting.reject(signal.reason), { once: true });
    });
    this.load(0, signal);
    return done;
  }

  /** The filter's matches, once counted: the grid scrolls through all of them. */
  setMatchCount(matches: number): void {
    if (this.filter === undefined) return;
    this.rows = matches;
    this.rowsKnown = true;
    this.updateSpacer();
    this.schedule();
  }

  /** Shows no rows (after an error, nothing of the last view stays). */
  clear(): void {
    this.dropBlocks();
    this.rows = 0;
    this.rowsKnown = true;
    this.unselect();
    this.updateSpacer();
    this.schedule();
  }

  /** Scrolls so that `row` is the first visible row. */
  scrollToRow(row: number): void {
    const span = this.span();
    const first = Math.max(0, Math.min(Math.round(row), span));
    this.viewport.scrollTop = span === 0 ? 0 : Math.round((first / span) * this.scrollRange());
    this.pinned = { row: first, top: this.viewport.scrollTop };
    this.schedule();
  }

  dispose(): void {
    this.disposed = true;
    this.waiting?.reject(new DOMException('the grid was closed', 'AbortError'));
    this.dropBlocks();
    cancelAnimationFrame(this.frame);
    clearTimeout(this.settleTimer);
  }

  private dropBlocks(): void {
    for (const block of this.blocks.values()) if (block.rows === undefined) block.controller.abort();
    this.blocks.clear();
    this.first = undefined;
  }

  /** Which view the grid shows: its filter and the columns it reads. */
  private viewKey(): string {
    return JSON.stringify([this.filter ?? null, this.columns]);
  }

  /** Keeps the current view's read blocks (if its first block was read) for when it is shown again. */
  private keepView(): void {
    if (this.first === undefined) return;
    const blocks = new Map([...this.blocks].filter(([, block]) => block.rows !== undefined));
    const key = this.viewKey();
    this.kept.delete(key);
    this.kept.set(key, { blocks, rows: this.rows, rowsKnown: this.rowsKnown, first: this.first });
    while (this.kept.size > KEEP_VIEWS) {
      const [oldest] = this.kept.keys();
      if (oldest !== undefined) this.kept.delete(oldest);
    }
  }

  /** The last first-row there is: the rows that do not fit the viewport. */
  private span(): number {
    return Math.max(0, this.rows - this.visibleRows());
  }

  /** Pixels the viewport scrolls through, from the spacer alone. */
  private scrollRange(): number {
    return Math.max(0, this.spacerPx - this.viewport.clientHeight);
  }

  private updateSpacer(): void {
    this.spacerPx = Math.min(MAX_SPACER_PX, Math.max(1, this.rows) * this.rowPx + this.headPx);
    this.spacer.style.height = `${this.spacerPx}px`;
    // Fitted to few rows; else a good part of the window, so the data comes first.
    const fitted = this.headPx + Math.max(1, this.rows) * this.rowPx + 18;
    const tall = Math.max(MIN_VIEWPORT_PX, Math.round(window.innerHeight * 0.62));
    this.viewport.style.height = `${Math.min(fitted, tall)}px`;
  }

  private setColumns(columns: string[]): void {
    this.dropBlocks();
    this.columns = columns;
    const fields = this.source.schema.fields.filter((f) => columns.includes(f.name));
    this.numeric = fields.map((f) => isNumeric(f.type));
    this.nested = fields.map((f) => isNested(f.type));
    const head = el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { className: 'row-number', text: '#' }),
        ...fields.map((f) => {
          const th = el(
            'th',
            { title: `${f.name}: ${f.type}` },
            el('div', { className: 'col-name', text: f.name }),
            el('div', { className: 'col-type', text: truncate(typeLabel(f.type), 32) }),
            this.resizeHandle(f.name),
          );
          th.dataset.column = f.name;
          return th;
        }),
      ),
    );
    this.layer.replaceChildren(head, el('tbody'));
    this.unselect();
    this.updateSpacer();
    this.schedule();
  }

  /**
   * The handle on a header's right edge: dragging it sets the column's width (its cells then cut
   * their text to it); a double click gives the column back its content's width.
   */
  private resizeHandle(column: string): HTMLElement {
    const handle = el('div', { className: 'resize-handle', title: `Drag to resize ${column}; double-click to fit` });
    handle.setAttribute('aria-hidden', 'true');
    handle.addEventListener('pointerdown', (event) => {
      event.preventDefault();
      event.stopPropagation();
      const th = handle.parentElement as HTMLElement;
      const startX = event.clientX;
      const startWidth = th.getBoundingClientRect().width;
      handle.setPointerCapture(event.pointerId);
      const move = (e: PointerEvent) => {
        this.widths.set(column, Math.max(40, Math.round(startWidth + e.clientX - startX)));
        this.applyWidths();
      };
      const up = () => {
        handle.removeEventListener('pointermove', move);
        handle.removeEventListener('pointerup', up);
        handle.removeEventListener('pointercancel', up);
        this.schedule();
      };
      handle.addEventListener('pointermove', move);
      handle.addEventListener('pointerup', up);
      handle.addEventListener('pointercancel', up);
    });
    handle.addEventListener('dblclick', (event) => {
      event.stopPropagation();
      this.widths.delete(column);
      this.applyWidths();
      this.schedule();
    });
    return handle;
  }

  /** Sets the dragged widths on the header cells (body cells follow in {@link body}). */
  private applyWidths(): void {
    for (const th of this.layer.tHead?.querySelectorAll<HTMLElement>('th[data-column]') ?? []) {
      sizeCell(th, this.widths.get(th.dataset.column ?? ''));
    }
    for (const tr of this.layer.tBodies[0]?.rows ?? []) {
      this.columns.forEach((column, c) => {
        const td = tr.cells[c + 1];
        if (td !== undefined) sizeCell(td, this.widths.get(column));
      });
    }
  }

  private renderPicker(): void {
    const boxes = this.source.schema.fields.map((f) => {
      const box = el('input');
      box.type = 'checkbox';
      box.checked = true;
      box.value = f.name;
      box.addEventListener('change', () => {
        const chosen = [...this.picker.querySelectorAll<HTMLInputElement>('input:checked')].map((b) => b.value);
        if (chosen.length === 0) {
          box.checked = true;
          return;
        }
        this.setColumns(chosen);
      });
      return el('label', { className: 'picker-item' }, box, ` ${f.name}`);
    });
    this.picker.replaceChildren(...boxes);
  }

  /** Whole rows that fit under the header (the layer must not outgrow the viewport). */
  private visibleRows(): number {
    const height = this.viewport.clientHeight || MIN_VIEWPORT_PX;
    return Math.max(1, Math.floor((height - this.headPx) / this.rowPx));
  }

  private firstVisibleRow(): number {
    const span = this.span();
    if (this.pinned !== null) return Math.min(span, this.pinned.row);
    const range = this.scrollRange();
    if (range <= 0) return 0;
    return Math.min(span, Math.round((this.viewport.scrollTop / range) * span));
  }

  private onScroll(): void {
    // Not where a key or the wheel put it: the scrollbar was dragged (or the page scrolled it).
    if (this.pinned !== null && Math.abs(this.viewport.scrollTop - this.pinned.top) > 1) this.pinned = null;
    if (this.pinned === null) this.draggedAt = performance.now();
    this.schedule();
  }

  private onWheel(event: WheelEvent): void {
    if (event.ctrlKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) return; // zoom, sideways: native
    // At the first row going up, or the last going down, the page scrolls instead.
    const first = this.firstVisibleRow();
    if ((event.deltaY < 0 && first === 0) || (event.deltaY > 0 && first >= this.span())) return;
    event.preventDefault();
    const rows =
      event.deltaMode === WheelEvent.DOM_DELTA_LINE
        ? event.deltaY
        : event.deltaMode === WheelEvent.DOM_DELTA_PAGE
          ? event.deltaY * this.visibleRows()
          : event.deltaY / this.rowPx;
    this.wheelRest += rows;
    const step = Math.trunc(this.wheelRest);
    this.wheelRest -= step;
    if (step !== 0) this.scrollToRow(this.firstVisibleRow() + step);
  }

  private onKey(event: KeyboardEvent): void {
    const page = this.visibleRows();
    const moves: Record<string, number> = {
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: page,
      PageUp: -page,
      Home: Number.NEGATIVE_INFINITY,
      End: Number.POSITIVE_INFINITY,
    };
    const move = moves[event.key];
    if (move === undefined) return;
    event.preventDefault();
    const first = this.firstVisibleRow();
    const selected = this.selection;
    if (selected === null || !Number.isFinite(move)) {
      this.scrollToRow(
        move === Number.NEGATIVE_INFINITY ? 0 : move === Number.POSITIVE_INFINITY ? this.rows : first + move,
      );
      return;
    }
    // With a selection, the selection moves, and the rows follow it.
    const row = Math.max(0, Math.min(this.rows - 1, selected.row + move));
    this.select({ row, column: selected.column });
    if (row < first) this.scrollToRow(row);
    else if (row >= first + page) this.scrollToRow(row - page + 1);
  }

  private onPress(event: MouseEvent): void {
    if (event.button !== 0) return;
    const td = (event.target as Element).closest('td');
    const tr = td?.closest('tr');
    if (td === null || td === undefined || tr === null || tr === undefined || tr.dataset.row === undefined) return;
    const column = td.cellIndex === 0 ? null : td.cellIndex - 1;
    this.select({ row: Number(tr.dataset.row), column });
  }

  /** No cell selected, and the inspector empty. */
  private unselect(): void {
    this.selection = null;
    this.inspectorWaits = false;
    this.inspector.replaceChildren();
    delete this.inspector.dataset.row;
  }

  private select(selection: Selection): void {
    this.selection = selection;
    this.fillInspector(selection);
    this.schedule();
  }

  /**
   * The inspector shows `selection`: the row's label, or the cell's label and whole value. A row
   * still loading says so, and `render` fills the value in once its block is read.
   */
  private fillInspector(selection: Selection): void {
    const cells = this.cellsOf(selection.row);
    const label =
      selection.column === null
        ? `Row ${formatCount(selection.row)}`
        : `${this.columns[selection.column] ?? ''} · row ${formatCount(selection.row)}`;
    const labelled = (...content: Node[]) =>
      this.inspector.replaceChildren(el('span', { className: 'inspector-label', text: label }), ...content);
    this.inspectorWaits = cells === undefined;
    if (cells === undefined) {
      labelled(el('span', { className: 'muted', text: 'loading…' }));
    } else if (selection.column === null) {
      labelled();
    } else {
      const value = cells[selection.column];
      labelled(
        value === null || value === undefined
          ? el('span', { className: 'null', text: 'null' })
          : this.nested[selection.column] === true
            ? jsonTree(value)
            : el('pre', { className: 'inspector-value', text: value }),
      );
    }
    this.inspector.dataset.row = String(selection.row);
  }

  /** Ctrl/Cmd+C in the grid: the selected cell's whole value, or the selected row as TSV. */
  private onCopy(event: ClipboardEvent): void {
    const selected = this.selection;
    if (selected === null || event.clipboardData === null) return;
    const cells = this.cellsOf(selected.row);
    if (cells === undefined) return;
    const text =
      selected.column === null
        ? cells.map((value) => (value ?? '').replace(/[\t\n\r]/g, ' ')).join('\t')
        : (cells[selected.column] ?? '');
    event.clipboardData.setData('text/plain', text);
    event.preventDefault();
  }

  /** The cell texts of `row`, when its block is loaded. */
  private cellsOf(row: number): Array<string | null> | undefined {
    return cellsOf(this.blocks.get(Math.floor(row / BLOCK_ROWS)), row);
  }

  /** Measures the header and a row as rendered; true if either changed (then render again). */
  private measure(): boolean {
    const head = this.layer.tHead?.getBoundingClientRect().height ?? 0;
    const row = this.layer.tBodies[0]?.rows[0]?.getBoundingClientRect().height ?? 0;
    const changed = (head > 0 && head !== this.headPx) || (row > 0 && row !== this.rowPx);
    if (head > 0) this.headPx = head;
    if (row > 0) this.rowPx = row;
    if (changed) this.updateSpacer();
    return changed;
  }

  private schedule(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.render());
  }

  private render(): void {
    if (this.disposed) return;
    const first = this.firstVisibleRow();
    const last = Math.min(this.rows, first + this.visibleRows());
    const wanted = new Set<number>();
    for (let b = Math.floor(first / BLOCK_ROWS); b * BLOCK_ROWS < last; b++) wanted.add(b);
    // Abort fetches of blocks scrolled away; keep loaded ones (LRU below).
    for (const [index, block] of this.blocks) {
      if (block.rows === undefined && block.failed === undefined && !wanted.has(index) && index !== 0) {
        block.controller.abort();
        this.blocks.delete(index);
      }
    }
    const now = performance.now();
    const dragging = this.pinned === null && now - this.draggedAt < SETTLE_MS;
    for (const index of wanted) {
      const block = this.blocks.get(index);
      if (block === undefined && dragging) this.renderWhenRested();
      else if (block === undefined) this.load(index);
      else if (block.retryAt !== undefined && block.retryAt <= now) this.load(index, undefined, block.attempt + 1);
    }
    // Most recently wanted last: Map order is the LRU order.
    for (const index of wanted) {
      const block = this.blocks.get(index);
      if (block !== undefined) {
        this.blocks.delete(index);
        this.blocks.set(index, block);
      }
    }
    while (this.blocks.size > KEEP_BLOCKS) {
      const [oldest] = this.blocks.keys();
      if (oldest === undefined) break;
      this.blocks.get(oldest)?.controller.abort();
      this.blocks.delete(oldest);
    }
    this.layer.tBodies[0]?.replaceWith(this.body(first, last));
    // A cell selected while its row was loading: its value, now that the block is read.
    if (this.inspectorWaits && this.selection !== null && this.cellsOf(this.selection.row) !== undefined) {
      this.fillInspector(this.selection);
    }
    if (this.widths.size > 0) this.applyWidths();
    this.layer.style.top = `${this.viewport.scrollTop}px`;
    if (this.measure()) this.schedule();
    this.target.dataset.firstRow = String(first);
    this.target.dataset.rows = String(this.rows);
  }

  private body(first: number, last: number): HTMLTableSectionElement {
    const body = el('tbody');
    if (this.rows === 0 && this.rowsKnown) {
      const empty = el('td', { className: 'muted', text: this.filter === undefined ? 'no rows' : 'no matching rows' });
      empty.colSpan = this.columns.length + 1;
      body.append(el('tr', { className: 'empty' }, empty));
      return body;
    }
    const selected = this.selection;
    for (let row = first; row < last; row++) {
      const block = this.blocks.get(Math.floor(row / BLOCK_ROWS));
      const cells = cellsOf(block, row);
      if (block?.rows !== undefined && cells === undefined) break; // past the last match
      const tr = el('tr', { className: cells === undefined ? 'loading' : '' });
      tr.dataset.row = String(row);
      if (selected?.row === row && selected.column === null) tr.classList.add('selected');
      tr.append(el('td', { className: 'row-number num', text: formatCount(row) }));
      this.columns.forEach((_, c) => {
        const text = cells?.[c];
        const td =
          cells === undefined
            ? el('td', { className: 'muted', text: failureText(block) })
            : text === null
              ? el('td', {}, el('span', { className: 'null', text: 'null' }))
              : el('td', { className: this.numeric[c] ? 'num' : '', text: truncate(text ?? '', MAX_CELL_CHARS) });
        if (selected?.row === row && selected.column === c) td.classList.add('selected');
        tr.append(td);
      });
      body.append(tr);
    }
    return body;
  }

  /**
   * Reads block `index` of the view; `outer` (the page's work) aborts it too. Block 0 answers the
   * caller of {@link show} still waiting, if any.
   */
  /** Renders again (reading the blocks then in view) once the scrollbar has rested. */
  private renderWhenRested(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.schedule(), this.draggedAt + SETTLE_MS - performance.now() + 1);
  }

  private load(index: number, outer?: AbortSignal, attempt = 0): Block {
    this.cost.started += 1;
    this.target.dataset.blocksStarted = String(this.cost.started);
    const controller = new AbortController();
    if (outer?.aborted === true) controller.abort(outer.reason);
    else outer?.addEventListener('abort', () => controller.abort(outer.reason), { once: true });
    const columns = this.columns;
    const filter = this.filter;
    const block: Block = { controller, attempt };
    this.blocks.set(index, block);
    const current = () => this.blocks.get(index) === block && columns === this.columns && filter === this.filter;
    const fail = (error: unknown) => {
      const aborted = controller.signal.aborted;
      block.failed = aborted ? 'cancelled' : ((error as { code?: string }).code ?? 'error');
      if (index === 0 && !aborted) this.waiting?.reject(error);
      if (index > 0 && !aborted && PASSING.has(block.failed) && attempt < RETRIES) {
        block.retryAt = performance.now() + RETRY_MS;
        setTimeout(() => this.schedule(), RETRY_MS);
      }
      this.schedule();
    };
    let scan: ReturnType<GridSource['scan']>;
    try {
      // Planning can refuse at once (a bad filter, a chunk over a limit): the block says so.
      scan = this.source.scan({
        columns,
        ...(filter === undefined ? {} : { filter }),
        offset: index * BLOCK_ROWS,
        limit: BLOCK_ROWS,
        signal: controller.signal,
      });
    } catch (error) {
      fail(error);
      return block;
    }
    void this.read(scan, block, index, current, fail);
    return block;
  }

  /**
   * Reads `scan` into `block`, showing its rows as its batches arrive (in file order) and the
   * whole block once the scan ends.
   */
  private async read(
    scan: ReturnType<GridSource['scan']>,
    block: Block,
    index: number,
    current: () => boolean,
    fail: (error: unknown) => void,
  ): Promise<void> {
    const rows: Array<Array<string | null>> = [];
    try {
      for await (const batch of scan) {
        // Dropped (a column change, a newer view): its replacement answers, if any. Leaving the
        // loop ends the scan (its iterator's return() aborts what it still reads).
        if (!current()) return;
        rows.push(...textRows(batch));
        block.partial = rows;
        this.schedule();
      }
    } catch (error) {
      if (this.blocks.get(index) === block) fail(error);
      return;
    }
    if (!current()) return;
    block.rows = rows;
    block.partial = undefined;
    this.learnRows(index, rows.length);
    this.cost.rows += rows.length;
    this.cost.bytes += scan.stats.bytesFetched;
    this.cost.requests += scan.stats.requests;
    this.cost.blocks += 1;
    this.cost.tasks += scan.stats.tasksTotal;
    this.cost.cacheHits += scan.stats.columnCache.hits;
    this.target.dataset.fetchedBytes = String(this.cost.bytes);
    const { blocks, bytes, requests, tasks, cacheHits } = this.cost;
    const cached = cacheHits > 0 ? `; ${cacheHits} of ${plural(tasks, 'task')} from the cache` : '';
    this.costLine.textContent = `The grid has read ${plural(this.cost.rows, 'row')} in ${plural(blocks, 'block')}: ${formatBytes(bytes)} in ${plural(requests, 'request')}${cached}.`;
    if (index === 0) {
      this.first = scan.stats;
      this.waiting?.resolve({ stats: scan.stats, kept: false });
    }
    if (this.selection !== null && Math.floor(this.selection.row / BLOCK_ROWS) === index) this.select(this.selection);
    this.schedule();
  }

  /** What block `index` holding `n` rows says about a filter's matches while they are not counted. */
  private learnRows(index: number, n: number): void {
    if (this.rowsKnown) return;
    const seen = index * BLOCK_ROWS + n;
    if (n < BLOCK_ROWS) {
      this.rows = seen;
      this.rowsKnown = true;
    } else {
      // At least one more block's worth may follow: let the grid scroll into it.
      this.rows = Math.max(this.rows, seen + BLOCK_ROWS);
    }
    this.updateSpacer();
  }
}

/** Row `row`'s cell texts, if its block has read it (whole, or so far). */
function cellsOf(block: Block | undefined, row: number): Array<string | null> | undefined {
  return (block?.rows ?? block?.partial)?.[row % BLOCK_ROWS];
}

/** What the rows of a block show while they are not read: loading, or why not (and whether it is tried again). */
function failureText(block: Block | undefined): string {
  if (block?.failed === undefined) return '…';
  return block.retryAt === undefined ? block.failed : `${block.failed}: trying again`;
}

/** Whether values of `type` are nested (struct, list, map): shown as JSON (see `formatValue`). */
function isNested(type: DataType): boolean {
  return [Type.Struct, Type.List, Type.FixedSizeList, Type.Map, Type.LargeList].includes(type.typeId);
}

/**
 * A nested value's JSON as a tree the user opens level by level (the first two levels open); text
 * that is not JSON is shown as it is.
 */
function jsonTree(text: string): HTMLElement {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return el('pre', { className: 'inspector-value', text });
  }
  const node = (item: unknown, label: string | null, depth: number): HTMLElement => {
    const name = label === null ? '' : `${label}: `;
    if (item === null || typeof item !== 'object') {
      return el('span', { className: 'json-leaf' }, name, el('code', { text: JSON.stringify(item) }));
    }
    const entries: Array<[string, unknown]> = Array.isArray(item)
      ? item.map((v, i) => [String(i), v])
      : Object.entries(item as Record<string, unknown>);
    const details = el('details', { className: 'json-node' });
    details.open = depth < 2;
    const shape = Array.isArray(item) ? `[${entries.length}]` : `{${entries.length}}`;
    details.append(
      el('summary', {}, name, el('span', { className: 'muted', text: shape })),
      el('ul', {}, ...entries.map(([k, v]) => el('li', {}, node(v, k, depth + 1)))),
    );
    return details;
  };
  return el('div', { className: 'json-tree' }, node(value, null, 0));
}

/** Gives a cell a fixed width (its text cut to it), or back its content's width (`px` undefined). */
function sizeCell(cell: HTMLElement, px: number | undefined): void {
  const width = px === undefined ? '' : `${px}px`;
  cell.style.width = width;
  cell.style.minWidth = width;
  cell.style.maxWidth = width;
  cell.classList.toggle('sized', px !== undefined);
}

/** A batch's cell texts by row then column. */
function textRows(batch: RecordBatch): Array<Array<string | null>> {
  const fields = batch.schema.fields;
  const vectors = fields.map((_, i) => batch.getChildAt(i));
  const rows: Array<Array<string | null>> = [];
  for (let r = 0; r < batch.numRows; r++) {
    rows.push(fields.map((f, c) => formatValue(valueAt(vectors[c], r), f.type)));
  }
  return rows;
}
