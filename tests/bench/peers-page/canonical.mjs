/**
 * Canonical answers, so that every system's result can be checked equal before its time counts.
 *
 * Values are normalised by kind, whatever form a system returns them in (Arrow data of any
 * apache-arrow version, or plain JS values): integers as decimal text, decimals as unscaled
 * integers at scale 2 (cents), dates as days since the epoch, timestamps as seconds, booleans as
 * `true`/`false`, strings as themselves. A row is its values joined by U+001F; a set of rows is
 * its count and the sum (mod 2^32) of FNV-1a hashes of each row's UTF-8 bytes, so row order does
 * not matter (DuckDB may return matches in any order). crate/core/examples/peers_native.rs
 * computes the same answers.
 */

import { makeVector } from 'apache-arrow';

/** Column kinds of the two tables, in file order. */
export const SCHEMAS = {
  lineitem: {
    l_orderkey: 'int',
    l_partkey: 'int',
    l_suppkey: 'int',
    l_linenumber: 'int',
    l_quantity: 'dec2',
    l_extendedprice: 'dec2',
    l_discount: 'dec2',
    l_tax: 'dec2',
    l_returnflag: 'str',
    l_linestatus: 'str',
    l_shipdate: 'date',
    l_commitdate: 'date',
    l_receiptdate: 'date',
    l_shipinstruct: 'str',
    l_shipmode: 'str',
    l_comment: 'str',
  },
  hits: {
    WatchID: 'int',
    CounterID: 'int',
    EventDate: 'date',
    EventTime: 'ts',
    UserID: 'int',
    RegionID: 'int',
    IsMobile: 'bool',
    ResolutionWidth: 'int',
    URL: 'str',
    Title: 'str',
    Referer: 'str',
    SearchPhrase: 'str',
  },
};

const DAY_MS = 86_400_000;
const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** A plain JS value (hyparquet's output) as canonical text. */
export function canonValue(value, kind) {
  if (value === null || value === undefined) return 'null';
  switch (kind) {
    case 'dec2':
      return typeof value === 'number' ? String(Math.round(value * 100)) : String(value);
    case 'date':
      return value instanceof Date ? String(Math.round(value.getTime() / DAY_MS)) : String(value);
    case 'ts':
      return value instanceof Date ? String(Math.floor(value.getTime() / 1000)) : String(value);
    default:
      return String(value);
  }
}

/** A 64-bit slot of `values` (BigInt64Array, or an Int32Array/Uint32Array pair as older Arrow JS keeps). */
function int64At(values, index) {
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) return BigInt(values[index]);
  const lo = BigInt(values[2 * index] >>> 0);
  const hi = BigInt(values[2 * index + 1] | 0);
  return (hi << 32n) | lo;
}

/** Unscaled value of a 128-bit decimal (Arrow JS keeps them as 4 × uint32), when it fits 64 bits. */
function decimalAt(values, index) {
  const lo = BigInt(values[4 * index] >>> 0) | (BigInt(values[4 * index + 1] >>> 0) << 32n);
  return BigInt.asIntN(64, lo);
}

/** Rescales an unscaled decimal from `scale` to 2 (exact for scales ≤ 2; rounds half away from zero above). */
function toCents(unscaled, scale) {
  if (scale <= 2) return unscaled * 10n ** BigInt(2 - scale);
  const div = 10n ** BigInt(scale - 2);
  const half = div / 2n;
  return unscaled >= 0n ? (unscaled + half) / div : -((-unscaled + half) / div);
}

/** Row `i` of an Arrow `Data` (apache-arrow 13 or 21) as canonical text. */
export function canonArrow(data, i) {
  const at = data.offset + i;
  if (data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0) {
    if (((data.nullBitmap[at >> 3] >> (at & 7)) & 1) === 0) return 'null';
  }
  const type = data.type;
  switch (type.typeId) {
    case -1: {
      // Dictionary: the index, then the value in the dictionary.
      const dictionary = data.dictionary.data[0];
      return canonArrow(dictionary, Number(data.values[at]));
    }
    case 2: // Int
      return type.bitWidth === 64 ? String(int64At(data.values, at)) : String(data.values[at]);
    case 6: // Bool
      return ((data.values[at >> 3] >> (at & 7)) & 1) === 1 ? 'true' : 'false';
    case 7: // Decimal
      return String(toCents(decimalAt(data.values, at), type.scale));
    case 8: // Date: DAY or MILLISECOND
      return type.unit === 0 ? String(data.values[at]) : String(int64At(data.values, at) / BigInt(DAY_MS));
    case 10: {
      // Timestamp, to seconds
      const ticks = int64At(data.values, at);
      const perSecond = [1n, 1000n, 1_000_000n, 1_000_000_000n][type.unit];
      return String(ticks >= 0n ? ticks / perSecond : -((-ticks + perSecond - 1n) / perSecond));
    }
    case 24: // Utf8View (tpchgen-cli's strings): apache-arrow resolves the views
      return makeVector(data).get(i);
    case 5: // Utf8
    case 20: {
      // LargeUtf8
      const offsets = data.valueOffsets;
      return utf8.decode(data.values.subarray(Number(offsets[at]), Number(offsets[at + 1])));
    }
    default:
      throw new Error(`canonArrow: unsupported Arrow type ${String(type)}`);
  }
}

/** FNV-1a (32-bit) of the UTF-8 bytes of `text`. */
export function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Accumulates rows into `N rows, hash H`. */
export class RowHasher {
  rows = 0;
  sum = 0;
  add(values) {
    this.rows += 1;
    this.sum = (this.sum + fnv1a(values.join('\x1f'))) >>> 0;
  }
  toString() {
    return `${this.rows} rows, hash ${this.sum}`;
  }
}

/** `N rows, hash H` of Arrow record batches (any apache-arrow version) over `columns`. */
export function hashArrowBatches(batches, columns) {
  const hasher = new RowHasher();
  for (const batch of batches) {
    const datas = columns.map((name) => {
      const child = batch.getChild(name);
      if (child === null || child === undefined) throw new Error(`no column ${name} in the result`);
      return child.data;
    });
    // A column vector may hold several Data chunks; walk them in step.
    const cursors = datas.map((chunks) => ({ chunks, chunk: 0, row: 0 }));
    for (let r = 0; r < batch.numRows; r++) {
      const values = cursors.map((c) => {
        while (c.row >= c.chunks[c.chunk].length) {
          c.chunk += 1;
          c.row = 0;
        }
        return canonArrow(c.chunks[c.chunk], c.row++);
      });
      hasher.add(values);
    }
  }
  return hasher.toString();
}

/** `N rows, hash H` of plain JS row objects over `columns` with `kinds`. */
export function hashObjects(rows, columns, kinds) {
  const hasher = new RowHasher();
  for (const row of rows) hasher.add(columns.map((name) => canonValue(row[name], kinds[name])));
  return hasher.toString();
}

/** An exact decimal string (`'123.4567'`), a number, or a bigint of unscaled units at `scale` → text with 2 decimals. */
export function roundMoney(value, scale = 0) {
  if (typeof value === 'number') return value.toFixed(2);
  let unscaled;
  if (typeof value === 'bigint') unscaled = value;
  else {
    const [whole, fraction = ''] = String(value).split('.');
    scale = fraction.length;
    unscaled = BigInt(`${whole}${fraction}`);
  }
  const cents = toCents(unscaled, scale);
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Decimal cents of row `i` of an Arrow decimal `Data` (as a Number; exact below 2^53). */
export function centsAt(data, i) {
  return Number(toCents(decimalAt(data.values, data.offset + i), data.type.scale));
}
