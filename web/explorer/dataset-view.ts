/**
 * The explorer's dataset views: the summary of a dataset (many files read as one table), its
 * files with their partition values, sizes and row counts — and, after a filter, what the query
 * did with each file (pruned by its partitions, by statistics, read: bytes and requests) — and
 * the walk of a dropped folder into `{ path, file }` pairs.
 */
import type { Dataset, DatasetScanStats, PartitionValue } from 'parquet-skim';
import { el, formatBytes, formatCount, plural } from './dom.js';

/** One line: files, rows, bytes, partitions, and what opening cost. */
export function renderDatasetSummary(target: HTMLElement, dataset: Dataset, label: string): void {
  const rows = dataset.files.reduce((sum, f) => sum + (f.rows ?? 0), 0);
  const bytes = dataset.files.reduce((sum, f) => sum + (f.size ?? 0), 0);
  const failed = dataset.files.filter((f) => f.error !== null).length;
  const partitions =
    dataset.partitions.length === 0
      ? 'no partitions'
      : `partitioned by ${dataset.partitions.map((p) => `${p.name} (${p.type})`).join(', ')}`;
  const { requests, bytes: openBytes, ms } = dataset.stats;
  target.replaceChildren(
    el('strong', { text: label }),
    ' — a dataset of ',
    plural(dataset.files.length, 'file'),
    `, ${formatCount(rows)} rows, ${formatBytes(bytes)}; ${partitions}; opened with ${plural(requests, 'request')}, `,
    `${formatBytes(openBytes)} in ${ms.toFixed(0)} ms`,
    ...(failed > 0
      ? [el('span', { className: 'warn', text: ` (${plural(failed, 'file')} could not be opened)` })]
      : []),
  );
}

const FATES: Record<string, string> = {
  partition: 'pruned by partition',
  stats: 'pruned by statistics',
  read: 'read',
  unread: 'not needed',
  failed: 'failed',
};

/**
 * The files table: path, partition values, size, rows; with `stats` (the last filter's scan), what
 * the scan did with each file, as a row of the pruning map.
 */
export function renderFiles(table: HTMLTableElement, dataset: Dataset, stats?: DatasetScanStats): void {
  const head = el(
    'tr',
    {},
    el('th', { text: '#' }),
    el('th', { text: 'path' }),
    ...dataset.partitions.map((p) => el('th', { text: p.name })),
    el('th', { className: 'num', text: 'size' }),
    el('th', { className: 'num', text: 'rows' }),
    ...(stats === undefined
      ? []
      : [
          el('th', { text: 'last query' }),
          el('th', { className: 'num', text: 'fetched' }),
          el('th', { text: 'row groups' }),
        ]),
  );
  const body = dataset.files.map((file, i) => {
    const fileStats = stats?.files[i];
    const fate = fileStats?.fate ?? 'unread';
    const scan = fileStats?.scan ?? null;
    return el(
      'tr',
      { className: stats === undefined ? '' : `fate-${fate}` },
      el('td', { className: 'num', text: String(i) }),
      el('td', { className: 'path', text: file.path, title: file.error?.message ?? file.path }),
      ...dataset.partitions.map((p) => el('td', { text: partitionText(file.partitions[p.name] ?? null) })),
      el('td', { className: 'num', text: file.size === null ? '—' : formatBytes(file.size) }),
      el('td', {
        className: 'num',
        text: file.rows === null ? (file.error === null ? '…' : '✗') : formatCount(file.rows),
      }),
      ...(stats === undefined
        ? []
        : [
            el('td', { text: FATES[fate] ?? fate, title: fileStats?.error ?? '' }),
            el('td', {
              className: 'num',
              text: scan === null ? '0 B' : `${formatBytes(scan.bytesFetched)} · ${plural(scan.requests, 'request')}`,
            }),
            el('td', { text: scan === null ? '' : rowGroupText(scan.rowGroupFates) }),
          ]),
    );
  });
  table.replaceChildren(el('thead', {}, head), el('tbody', {}, ...body));
}

function partitionText(value: PartitionValue): string {
  return value === null ? 'null' : String(value);
}

/** `3 read, 5 pruned` of a file's row groups in one scan. */
function rowGroupText(fates: readonly string[]): string {
  const read = fates.filter((f) => f === 'read' || f === 'cached').length;
  const pruned = fates.filter((f) => f === 'stats' || f === 'bloom' || f === 'pageIndex').length;
  return `${read} read, ${pruned} pruned of ${fates.length}`;
}

/**
 * The Parquet files of a drop, with their paths relative to what was dropped (`folder/year=1994/
 * part-0.parquet`): a dataset when it holds a folder or several files, else null (one file).
 */
export async function filesFromDrop(transfer: DataTransfer): Promise<Array<{ path: string; file: File }> | null> {
  const entries = [...transfer.items]
    .map((item) => item.webkitGetAsEntry())
    .filter((e): e is FileSystemEntry => e !== null);
  if (entries.length === 0 || (entries.length === 1 && entries[0]?.isFile === true)) return null;
  const found: Array<{ path: string; file: File }> = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isFile && entry.name.endsWith('.parquet')) {
      const fileEntry = entry as FileSystemFileEntry;
      found.push({ path, file: await new Promise<File>((ok, fail) => fileEntry.file(ok, fail)) });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      // readEntries answers in batches until it answers none.
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((ok, fail) => reader.readEntries(ok, fail));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, path);
      }
    }
  };
  for (const entry of entries) await walk(entry, '');
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The Parquet files of a folder chosen with `<input webkitdirectory>`, in path order. */
export function filesFromFolder(files: FileList): File[] {
  return [...files]
    .filter((f) => f.name.endsWith('.parquet'))
    .sort((a, b) =>
      a.webkitRelativePath < b.webkitRelativePath ? -1 : a.webkitRelativePath > b.webkitRelativePath ? 1 : 0,
    );
}
