/**
 * A system's output → the canonical answer checked across systems. Outputs come in four shapes:
 * `{ revenue, scale? }` (Q6: exact decimal text, a number, unscaled bigint at `scale`, or an Arrow
 * decimal `Data`), `{ batches }`
 * (Arrow record batches of any apache-arrow version), `{ rows }` (plain JS objects), and
 * `{ chunks }` (hyparquet's `onChunk` column chunks: `{ column: [{ rowStart, columnData }] }`).
 */
import { canonArrow, canonValue, centsAt, hashArrowBatches, hashObjects, roundMoney, SCHEMAS } from './canonical.mjs';
import { CONTAINS, SCAN3 } from './queries.mjs';

/** A reader of one column's hyparquet chunks in row order: `at(row)` for ascending rows. */
export function chunkCursor(chunks) {
  const sorted = [...chunks].sort((a, b) => a.rowStart - b.rowStart);
  let k = 0;
  let base = sorted[0]?.rowStart ?? 0;
  let data = sorted[0]?.columnData ?? [];
  return (row) => {
    while (row >= base + data.length) {
      k += 1;
      base = sorted[k].rowStart;
      data = sorted[k].columnData;
    }
    return data[row - base];
  };
}

/** Rows held by one column's chunks. */
export const chunkRows = (chunks) => chunks.reduce((n, c) => n + c.columnData.length, 0);

function revenueText(revenue, scale) {
  if (typeof revenue === 'object' && revenue !== null && 'type' in revenue) {
    // An Arrow Data of one value: a decimal (exact) or a float.
    const data = revenue;
    if (data.type.typeId === 7) return roundMoney(BigInt(canonArrow(data, 0)) * 100n, 4);
    return roundMoney(Number(data.values[data.offset]));
  }
  return roundMoney(revenue, scale);
}

/** `N rows, quantity Σcents, shipdate Σdays, R n` of a 3-column scan. */
function scan3Text(output) {
  let rows = 0;
  let quantity = 0;
  let days = 0;
  let returned = 0;
  if (output.batches !== undefined) {
    for (const batch of output.batches) {
      const [q, d, f] = SCAN3.lineitem.map((name) => batch.getChild(name).data[0]);
      for (let i = 0; i < batch.numRows; i++) {
        quantity += centsAt(q, i);
        days += Number(canonArrow(d, i));
        const at = f.offset + i;
        if (f.type.typeId === 5) {
          const o = f.valueOffsets;
          if (o[at + 1] - o[at] === 1 && f.values[o[at]] === 82) returned += 1;
        } else if (canonArrow(f, i) === 'R') returned += 1;
      }
      rows += batch.numRows;
    }
  } else {
    const [q, d, f] = SCAN3.lineitem.map((name) => chunkCursor(output.chunks[name]));
    rows = chunkRows(output.chunks[SCAN3.lineitem[0]]);
    for (let i = 0; i < rows; i++) {
      quantity += Number(canonValue(q(i), 'dec2'));
      days += Number(canonValue(d(i), 'date'));
      if (f(i) === 'R') returned += 1;
    }
  }
  return `${rows} rows, quantity ${quantity}, shipdate ${days}, R ${returned}`;
}

/** The canonical answer of `query` on `table` from `output`. */
export function answerOf(query, table, output) {
  // `{ count }`; `{ rows, quantity }` (Σ l_quantity as exact decimal text, cents, or a float).
  if (query === 'count') return `${Number(output.count)} rows`;
  if (query === 'part')
    return `${Number(output.rows)} rows, quantity ${roundMoney(output.quantity, output.scale ?? 0)}`;
  if (query === 'q6') return `revenue ${revenueText(output.revenue, output.scale)}`;
  if (query === 'scan3') return scan3Text(output);
  const kinds = SCHEMAS[table];
  const columns = query === 'contains' ? CONTAINS[table].columns : Object.keys(kinds);
  if (output.batches !== undefined) return hashArrowBatches(output.batches, columns);
  return hashObjects(output.rows, columns, kinds);
}
