/**
 * The rows panel: the first rows of the file as a table, and what reading them cost.
 *
 * Design note: the table is built cell by cell from the Arrow `Table` the scan returned — one
 * header cell per top-level field (name over type), one body row per row. Cell text comes from
 * {@link cellText} (type-driven, see values.ts) and is set with `textContent`; long text is cut
 * with an ellipsis, the whole value (up to a cap) is in the tooltip. Nulls get their own style so
 * they never look like the string "null". Numbers are right-aligned.
 */
import { DataType, type Table } from 'apache-arrow';
import { formatValue, type ScanStats, valueAt } from 'parquet-skim';
import { el, formatBytes, formatMs, plural, truncate } from './dom.js';
import { typeLabel } from './values.js';

/** Characters shown in a cell before cutting. */
const MAX_CELL_CHARS = 80;
/** Characters kept in a cell's tooltip. */
const MAX_TITLE_CHARS = 4000;

/** Replaces the contents of `target` with the rows of `table`. */
export function renderRows(target: HTMLTableElement, table: Table): void {
  const fields = table.schema.fields;
  const head = el(
    'thead',
    {},
    el(
      'tr',
      {},
      ...fields.map((field) => {
        const type = field.type.toString();
        return el(
          'th',
          { title: `${field.name}: ${type}` },
          el('div', { className: 'col-name', text: field.name }),
          el('div', { className: 'col-type', text: truncate(typeLabel(field.type), 32) }),
        );
      }),
    ),
  );
  const body = el('tbody');
  const columns = fields.map((field, index) => ({
    type: field.type,
    vector: table.getChildAt(index),
    numeric: isNumeric(field.type),
  }));
  for (let row = 0; row < table.numRows; row++) {
    const tr = el('tr');
    for (const column of columns)
      tr.append(cell(formatValue(valueAt(column.vector, row), column.type), column.numeric));
    body.append(tr);
  }
  if (table.numRows === 0) {
    const empty = el('td', { className: 'muted', text: 'no rows' });
    empty.colSpan = Math.max(1, fields.length);
    body.append(el('tr', {}, empty));
  }
  target.replaceChildren(head, body);
}

/** Fills `target` with "N rows in X ms, Y KB fetched in Z requests"; the count goes in `#row-count`. */
export function renderScanStats(target: HTMLElement, stats: ScanStats): void {
  target.replaceChildren(
    el('span', { id: 'row-count', text: plural(stats.rowsOut, 'row') }),
    ` in ${formatMs(stats.elapsedMs)}, ${formatBytes(stats.bytesFetched)} fetched in ${plural(stats.requests, 'request')}`,
    ...pruning(stats),
  );
}

/** What a filter skipped, when it skipped anything. */
function pruning(stats: ScanStats): string[] {
  const groups = stats.rowGroupsPrunedByStats + stats.rowGroupsPrunedByBloom + stats.rowGroupsPrunedByPageIndex;
  if (groups === 0 && stats.pagesPruned === 0) return [];
  return [
    `; skipped ${groups} of ${plural(stats.rowGroupsTotal, 'row group')} and ${stats.pagesPruned} of ${plural(stats.pagesTotal, 'page')}`,
  ];
}

function cell(text: string | null, numeric: boolean): HTMLTableCellElement {
  if (text === null) return el('td', {}, el('span', { className: 'null', text: 'null' }));
  const td = el('td', { text: truncate(text, MAX_CELL_CHARS) });
  if (text.length > MAX_CELL_CHARS) td.title = truncate(text, MAX_TITLE_CHARS);
  if (numeric) td.className = 'num';
  return td;
}

export function isNumeric(type: DataType): boolean {
  const valueType = DataType.isDictionary(type) ? type.dictionary : type;
  return DataType.isInt(valueType) || DataType.isFloat(valueType) || DataType.isDecimal(valueType);
}
