/**
 * The file panels: the summary line, the row-groups table and the key-value metadata.
 *
 * Design note: everything here comes from `file.metadata` (the footer, already read at open) and
 * `file.requestLog()`, so these panels render before any row is fetched and cost no request.
 * The summary is one dense line of facts separated by dots; the row-groups table is capped in
 * height (a file can have thousands); key-value values sit collapsed in `<details>`, decoded where
 * their key says what they are (`ARROW:schema`: the base64 Arrow IPC schema it holds, as fields
 * and types; `pandas` and other JSON: indented), and are cut to {@link MAX_KV_VALUE_CHARS}.
 */
import { tableFromIPC } from 'apache-arrow';
import type { ParquetFile } from 'parquet-skim';
import { el, formatBytes, formatCount, plural, truncate } from './dom.js';
import { typeName } from './values.js';

/** Most characters of a key-value value shown. */
const MAX_KV_VALUE_CHARS = 2000;

/** Fills `target` with the summary line of `file`, opened from `source` (a URL or file name). */
export function renderSummary(target: HTMLElement, file: ParquetFile, source: string): void {
  const meta = file.metadata;
  const log = file.requestLog();
  const openedBytes = log.reduce((sum, entry) => sum + entry.bytes, 0);
  const topFields = file.schema.fields.length;
  const leafColumns = meta.columns.length;
  const columns =
    topFields === leafColumns ? plural(topFields, 'column') : `${plural(topFields, 'column')} (${leafColumns} leaf)`;
  const facts = [
    formatBytes(meta.fileLen),
    plural(meta.numRows, 'row'),
    plural(meta.rowGroups.length, 'row group'),
    columns,
    `created by ${meta.createdBy ?? 'unknown'}`,
    `page index: ${meta.hasPageIndex ? 'yes' : 'no'}`,
    `opened with ${plural(log.length, 'request')}, ${formatBytes(openedBytes)}`,
  ];
  target.replaceChildren(
    el('span', { className: 'source', text: source, title: source }),
    ...facts.flatMap((fact) => [el('span', { className: 'sep', text: ' · ' }), el('span', { text: fact })]),
  );
}

/** Fills `table` with one line per row group. */
export function renderRowGroups(table: HTMLTableElement, file: ParquetFile): void {
  const head = el(
    'thead',
    {},
    el('tr', {}, ...['#', 'rows', 'compressed', 'uncompressed', 'codec'].map((name) => el('th', { text: name }))),
  );
  const body = el('tbody');
  file.metadata.rowGroups.forEach((group, index) => {
    const uncompressed = group.columns.reduce((sum, column) => sum + column.uncompressedSize, 0);
    const codec = group.columns[0]?.codec ?? '—';
    body.append(
      el(
        'tr',
        {},
        el('td', { className: 'num', text: String(index) }),
        el('td', { className: 'num', text: formatCount(group.numRows) }),
        el('td', { className: 'num', text: formatBytes(group.compressedSize) }),
        el('td', { className: 'num', text: formatBytes(uncompressed) }),
        el('td', { text: codec, title: codec }),
      ),
    );
  });
  table.replaceChildren(head, body);
}

/**
 * Fills `table` with a row groups × leaf columns grid: each cell the chunk's compressed size, with
 * marks for a column index (ci), an offset index (oi) and a bloom filter (bf), and a tooltip with
 * codec, encodings, values, statistics and sizes.
 */
export function renderColumnChunks(table: HTMLTableElement, file: ParquetFile): void {
  const leaves = file.metadata.columns.map((c) => c.path);
  const head = el(
    'thead',
    {},
    el('tr', {}, el('th', { text: 'rg' }), ...leaves.map((path) => el('th', { text: path, title: path }))),
  );
  const body = el('tbody');
  file.metadata.rowGroups.forEach((group, index) => {
    const cells = group.columns.map((chunk) => {
      const stats = chunk.statistics;
      const marks = [
        chunk.hasColumnIndex ? 'ci' : '',
        chunk.hasOffsetIndex ? 'oi' : '',
        chunk.hasBloomFilter ? 'bf' : '',
      ]
        .filter((m) => m !== '')
        .join(' ');
      const tooltip = [
        `${chunk.path}, row group ${index}`,
        `codec ${chunk.codec}; encodings ${chunk.encodings.join(', ')}`,
        `${formatCount(chunk.numValues)} values; ${formatBytes(chunk.compressedSize)} compressed, ${formatBytes(chunk.uncompressedSize)} uncompressed`,
        stats === null
          ? 'no statistics'
          : `min ${truncate(stats.min ?? 'null', 60)}${stats.minIsExact ? '' : ' (inexact)'}, max ${truncate(stats.max ?? 'null', 60)}${stats.maxIsExact ? '' : ' (inexact)'}, nulls ${stats.nullCount ?? 'unknown'}`,
        `column index: ${chunk.hasColumnIndex ? 'yes' : 'no'}; offset index: ${chunk.hasOffsetIndex ? 'yes' : 'no'}; bloom filter: ${chunk.hasBloomFilter ? 'yes' : 'no'}`,
      ].join('\n');
      return el(
        'td',
        { className: 'num chunk', title: tooltip },
        el('div', { text: formatBytes(chunk.compressedSize) }),
        el('div', { className: 'marks', text: marks }),
      );
    });
    body.append(el('tr', {}, el('th', { className: 'num', text: String(index) }), ...cells));
  });
  table.replaceChildren(head, body);
}

/** Fills `target` with the file's key-value metadata, values collapsed. */
export function renderKeyValueMetadata(target: HTMLElement, file: ParquetFile): void {
  const entries = file.metadata.keyValueMetadata;
  if (entries.length === 0) {
    target.replaceChildren(el('p', { className: 'muted', text: 'none' }));
    return;
  }
  target.replaceChildren(
    ...entries.map(({ key, value }) => {
      const length = value === null ? 'null' : `${formatCount(value.length)} chars`;
      return el(
        'details',
        {},
        el(
          'summary',
          {},
          el('span', { className: 'kv-key', text: key }),
          el('span', { className: 'muted', text: ` ${length}` }),
        ),
        value === null
          ? el('p', { className: 'null', text: 'null' })
          : el('pre', { className: 'kv-value', text: truncate(decodedValue(key, value), MAX_KV_VALUE_CHARS) }),
      );
    }),
  );
}

/**
 * A key-value value as a reader wants it: `ARROW:schema` (a base64 Arrow IPC schema message) as
 * its fields, JSON indented; anything else, or what does not decode, as it is.
 */
export function decodedValue(key: string, value: string): string {
  if (key === 'ARROW:schema') {
    try {
      const message = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
      // The message, then an end-of-stream marker: an IPC stream with a schema and no batches.
      const stream = new Uint8Array(message.length + 8);
      stream.set(message);
      stream.set([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], message.length);
      const { schema } = tableFromIPC(stream);
      const fields = schema.fields.map((f) => `${f.name}: ${typeName(f.type)}${f.nullable ? '' : ' not null'}`);
      return `Arrow schema (decoded from base64 IPC):\n${fields.join('\n')}`;
    } catch {
      return value;
    }
  }
  const text = value.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return value;
    }
  }
  return value;
}
