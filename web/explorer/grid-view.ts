/**
 * The data grid: every row of the file, scrolled through a fixed-height viewport that renders only
 * the visible rows and fetches only the pages that hold them.
 *
 * Design note:
 * - Rows are read in blocks of {@link BLOCK_ROWS} with `scan({ columns, offset, limit })`; the
 *   planner turns offset/limit into each row group's row selection and, with an offset index,
 *   into the byte ranges of just the pages holding those rows. Blocks are kept in a small LRU
 *   ({@link KEEP_BLOCKS}); a block no longer visible when its turn comes is not fetched, and a
 *   fetch in flight for a block scrolled away is aborted.
 * - Browsers cap an element's height (~33 M px in Chromium), below 6 M rows × 24 px, so the
 *   scroll range is mapped linearly onto the row range: the spacer is at most
 *   {@link MAX_SPACER_PX} tall and the first visible row is `scrollTop / (spacer − clientHeight)
 *   × (rows − visible)`. The rendered rows sit in a layer placed at `scrollTop`. How many rows
 *   are visible is measured (header and row heights as rendered), so that the layer never
 *   outgrows the viewport: a taller layer stretched the scroll range at the bottom, cut the
 *   last row in half and left the last rows of SF1 out of reach.
 * - The column picker chooses which top-level columns are read: changing it drops the blocks.
 * - `data-first-row` on the grid and `data-row` on each rendered row say what is shown (tests).
 */
import type { Table } from 'apache-arrow';
import { formatValue, type ParquetFile, valueAt } from 'parquet-skim';
import { el, formatCount, truncate } from './dom.js';
import { isNumeric } from './rows-view.js';
import { typeLabel } from './values.js';

const ROW_PX = 24;
const VIEWPORT_PX = 480;
const BLOCK_ROWS = 200;
const KEEP_BLOCKS = 32;
const MAX_SPACER_PX = 8_000_000;
const MAX_CELL_CHARS = 60;

interface Block {
  /** Cell texts by row then column; `undefined` while loading. */
  rows?: Array<Array<string | null>>;
  controller: AbortController;
  failed?: string;
}

/** A virtual grid over one file; `dispose()` aborts what is in flight. */
export class DataGrid {
  private readonly viewport: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly layer: HTMLTableElement;
  private readonly blocks = new Map<number, Block>();
  private columns: string[];
  private numeric: boolean[] = [];
  private frame = 0;
  private disposed = false;
  /** The spacer's height: the scroll range, whatever the layer does. */
  private spacerPx = 0;
  /** Heights of the header and of a row as last rendered. */
  private headPx = ROW_PX * 2;
  private rowPx = ROW_PX;
  /** Rows fetched and range requests made by the grid (what scrolling cost). */
  readonly cost = { rows: 0, bytes: 0, requests: 0 };

  constructor(
    private readonly target: HTMLElement,
    private readonly picker: HTMLElement,
    private readonly file: ParquetFile,
  ) {
    this.columns = file.schema.fields.map((f) => f.name);
    this.viewport = el('div', { id: 'grid-viewport', className: 'grid-viewport' });
    // A keyboard user scrolls it too (arrow keys, Page Up/Down).
    this.viewport.tabIndex = 0;
    this.viewport.setAttribute('role', 'region');
    this.viewport.setAttribute('aria-label', 'All rows');
    this.viewport.style.height = `${VIEWPORT_PX}px`;
    this.spacer = el('div', { className: 'grid-spacer' });
    this.layer = el('table', { id: 'grid-rows', className: 'grid data grid-layer' });
    this.viewport.append(this.layer, this.spacer);
    this.viewport.addEventListener('scroll', () => this.schedule());
    target.replaceChildren(this.viewport);
    this.renderPicker();
    this.setColumns(this.columns);
  }

  /** Rows in the file. */
  get totalRows(): number {
    return this.file.metadata.numRows;
  }

  /** Scrolls so that `row` is the first visible row. */
  scrollToRow(row: number): void {
    const span = Math.max(1, this.totalRows - this.visibleRows());
    this.viewport.scrollTop = Math.round((Math.min(row, span) / span) * this.scrollRange());
    this.schedule();
  }

  /** Pixels the viewport scrolls through, from the spacer alone. */
  private scrollRange(): number {
    return Math.max(0, this.spacerPx - this.viewport.clientHeight);
  }

  dispose(): void {
    this.disposed = true;
    for (const block of this.blocks.values()) block.controller.abort();
    this.blocks.clear();
    cancelAnimationFrame(this.frame);
  }

  private setColumns(columns: string[]): void {
    for (const block of this.blocks.values()) block.controller.abort();
    this.blocks.clear();
    this.columns = columns;
    const fields = this.file.schema.fields.filter((f) => columns.includes(f.name));
    this.numeric = fields.map((f) => isNumeric(f.type));
    const head = el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { className: 'row-number', text: '#' }),
        ...fields.map((f) =>
          el(
            'th',
            { title: `${f.name}: ${f.type}` },
            el('div', { className: 'col-name', text: f.name }),
            el('div', { className: 'col-type', text: truncate(typeLabel(f.type), 32) }),
          ),
        ),
      ),
    );
    this.layer.replaceChildren(head, el('tbody'));
    this.spacerPx = Math.min(MAX_SPACER_PX, this.totalRows * ROW_PX);
    this.spacer.style.height = `${this.spacerPx}px`;
    this.schedule();
  }

  private renderPicker(): void {
    const boxes = this.file.schema.fields.map((f) => {
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
    const height = this.viewport.clientHeight || VIEWPORT_PX;
    return Math.max(1, Math.floor((height - this.headPx) / this.rowPx));
  }

  private firstVisibleRow(): number {
    const range = this.scrollRange();
    const span = Math.max(0, this.totalRows - this.visibleRows());
    if (range <= 0) return 0;
    return Math.min(span, Math.round((this.viewport.scrollTop / range) * span));
  }

  /** Measures the header and a row as rendered; true if either changed (then render again). */
  private measure(): boolean {
    const head = this.layer.tHead?.getBoundingClientRect().height ?? 0;
    const row = this.layer.tBodies[0]?.rows[0]?.getBoundingClientRect().height ?? 0;
    const changed = (head > 0 && head !== this.headPx) || (row > 0 && row !== this.rowPx);
    if (head > 0) this.headPx = head;
    if (row > 0) this.rowPx = row;
    return changed;
  }

  private schedule(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.render());
  }

  private render(): void {
    if (this.disposed) return;
    const first = this.firstVisibleRow();
    const last = Math.min(this.totalRows, first + this.visibleRows());
    const wanted = new Set<number>();
    for (let b = Math.floor(first / BLOCK_ROWS); b * BLOCK_ROWS < last; b++) wanted.add(b);
    // Abort fetches of blocks scrolled away; keep loaded ones (LRU below).
    for (const [index, block] of this.blocks) {
      if (block.rows === undefined && !wanted.has(index)) {
        block.controller.abort();
        this.blocks.delete(index);
      }
    }
    for (const index of wanted) if (!this.blocks.has(index)) this.load(index);
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
    const body = el('tbody');
    for (let row = first; row < last; row++) {
      const block = this.blocks.get(Math.floor(row / BLOCK_ROWS));
      const cells = block?.rows?.[row % BLOCK_ROWS];
      const tr = el('tr', { className: cells === undefined ? 'loading' : '' });
      tr.dataset.row = String(row);
      tr.append(el('td', { className: 'row-number num', text: formatCount(row) }));
      this.columns.forEach((_, c) => {
        const text = cells?.[c];
        const td =
          cells === undefined
            ? el('td', { className: 'muted', text: block?.failed ?? '…' })
            : text === null
              ? el('td', {}, el('span', { className: 'null', text: 'null' }))
              : el('td', { className: this.numeric[c] ? 'num' : '', text: truncate(text ?? '', MAX_CELL_CHARS) });
        tr.append(td);
      });
      body.append(tr);
    }
    this.layer.tBodies[0]?.replaceWith(body);
    this.layer.style.top = `${this.viewport.scrollTop}px`;
    if (this.measure()) this.schedule();
    this.target.dataset.firstRow = String(first);
  }

  private load(index: number): void {
    const controller = new AbortController();
    const block: Block = { controller };
    this.blocks.set(index, block);
    const columns = this.columns;
    const fail = (error: unknown) => {
      block.failed = (error as { code?: string }).code ?? 'error';
      this.schedule();
    };
    let scan: ReturnType<ParquetFile['scan']>;
    try {
      // Planning can refuse at once (a chunk over a limit): the block says so, the page goes on.
      scan = this.file.scan({ columns, offset: index * BLOCK_ROWS, limit: BLOCK_ROWS, signal: controller.signal });
    } catch (error) {
      fail(error);
      return;
    }
    scan.toTable().then(
      (table) => {
        if (this.blocks.get(index) !== block || columns !== this.columns) return;
        try {
          block.rows = textRows(table);
        } catch (error) {
          fail(error);
          return;
        }
        this.cost.rows += table.numRows;
        this.cost.bytes += scan.stats.bytesFetched;
        this.cost.requests += scan.stats.requests;
        this.target.dataset.fetchedBytes = String(this.cost.bytes);
        this.schedule();
      },
      (error: unknown) => {
        if (controller.signal.aborted || this.blocks.get(index) !== block) return;
        fail(error);
      },
    );
  }
}

function textRows(table: Table): Array<Array<string | null>> {
  const fields = table.schema.fields;
  const vectors = fields.map((_, i) => table.getChildAt(i));
  const rows: Array<Array<string | null>> = [];
  for (let r = 0; r < table.numRows; r++) {
    rows.push(fields.map((f, c) => formatValue(valueAt(vectors[c], r), f.type)));
  }
  return rows;
}
