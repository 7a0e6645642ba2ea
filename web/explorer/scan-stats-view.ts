/**
 * What reading rows cost (the line under the grid), and which columns are numbers (right-aligned).
 */
import { DataType } from 'apache-arrow';
import type { ScanStats } from 'parquet-skim';
import { el, formatBytes, formatMs, plural } from './dom.js';

/**
 * Fills `target` with "N rows in X ms, Y KB fetched in Z requests"; the count goes in `#row-count`.
 * `kept`: the rows were read by an earlier run of the same view, and are shown again as they were.
 */
export function renderScanStats(target: HTMLElement, stats: ScanStats, kept = false): void {
  target.replaceChildren(
    el('span', { id: 'row-count', text: plural(stats.rowsOut, 'row') }),
    kept
      ? ' shown again as an earlier run read them: nothing read now'
      : ` in ${formatMs(stats.elapsedMs)}, ${formatBytes(stats.bytesFetched)} fetched in ${plural(stats.requests, 'request')}`,
    ...(kept ? [] : pruning(stats)),
  );
  target.dataset.kept = String(kept);
}

/** What a filter skipped, when it skipped anything. */
function pruning(stats: ScanStats): string[] {
  const groups = stats.rowGroupsPrunedByStats + stats.rowGroupsPrunedByBloom + stats.rowGroupsPrunedByPageIndex;
  if (groups === 0 && stats.pagesPruned === 0) return [];
  return [
    `; skipped ${groups} of ${plural(stats.rowGroupsTotal, 'row group')} and ${stats.pagesPruned} of ${plural(stats.pagesTotal, 'page')}`,
  ];
}

export function isNumeric(type: DataType): boolean {
  const valueType = DataType.isDictionary(type) ? type.dictionary : type;
  return DataType.isInt(valueType) || DataType.isFloat(valueType) || DataType.isDecimal(valueType);
}
