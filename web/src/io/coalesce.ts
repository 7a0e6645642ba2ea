/**
 * Byte-range coalescing: fewer, larger requests when wanted ranges are close.
 *
 * Two ranges merge when the gap between them is small and the merged request stays within
 * `maxRequestBytes` (so one huge request does not serialize what could be fetched in parallel).
 * What "small" means depends on what lies in the gap:
 * - at most {@link MIN_GAP_BYTES}: always read through (a request costs more than moving it);
 * - whole column chunks (both ranges end and start where chunks do: columns the scan skips
 *   between two it reads, or the next row group): read through up to `gapBytes`, so a dense read
 *   of a few columns of many small row groups is a few requests, not one per column and row group;
 * - anything else holds pages the scan does not want inside a chunk it reads (pruned by the page
 *   index, or past the rows it needs): read through up to `gapBytes` only when that costs no more
 *   bytes than the merged request wants. A lookup's dictionary page and its one selected data page,
 *   33 KB of pruned pages apart, are two requests rather than one that moves the 33 KB the index
 *   ruled out; the pages of a dense but patchy selection still merge.
 * Without the file's chunk starts every gap up to `gapBytes` is read through.
 * Ranges are half-open.
 */
import type { ByteRange } from '../wasm/contract.js';

/** A half-open byte range `[start, end)`: the one form ranges have, the core's `ByteRange`. */
export type { ByteRange };

/** Default largest gap read through to merge two ranges. */
export const DEFAULT_GAP_BYTES = 64 * 1024;
/** Default largest merged request. */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
/** A gap this small is read through whatever lies in it (up to `gapBytes`). */
export const MIN_GAP_BYTES = 8 * 1024;

/**
 * Merges `ranges` (any order, may overlap) into sorted requests. Empty ranges are dropped.
 * `chunkStarts`: where the file's column chunks start, sorted ascending; without them every gap
 * up to `gapBytes` is read through.
 */
export function coalesce(
  ranges: readonly ByteRange[],
  gapBytes = DEFAULT_GAP_BYTES,
  maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
  chunkStarts?: readonly number[],
): ByteRange[] {
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: ByteRange[] = [];
  // Bytes the last merged request wants (its ranges, not the gaps read through).
  let wanted = 0;
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (
      last !== undefined &&
      readThrough(last, range, wanted, gapBytes, chunkStarts) &&
      Math.max(last.end, range.end) - last.start <= maxRequestBytes
    ) {
      wanted += Math.max(0, range.end - Math.max(range.start, last.end));
      last.end = Math.max(last.end, range.end);
    } else if (last !== undefined && range.start < last.end) {
      // Overlapping but too large to merge: read only the part not already covered.
      if (range.end > last.end) {
        merged.push({ start: last.end, end: range.end });
        wanted = range.end - last.end;
      }
    } else {
      merged.push({ start: range.start, end: range.end });
      wanted = range.end - range.start;
    }
  }
  return merged;
}

/** Whether the gap between request `last` (wanting `wanted` bytes) and `next` is worth reading. */
function readThrough(
  last: ByteRange,
  next: ByteRange,
  wanted: number,
  gapBytes: number,
  chunkStarts: readonly number[] | undefined,
): boolean {
  const gap = next.start - last.end;
  if (gap > gapBytes) return false;
  if (gap <= MIN_GAP_BYTES || chunkStarts === undefined) return true;
  // Whole chunks of other columns (or row groups) in between.
  if (isIn(chunkStarts, last.end) && isIn(chunkStarts, next.start)) return true;
  // Unwanted pages of a chunk being read: worth reading only if the request wants as many bytes.
  return gap <= wanted + (next.end - next.start);
}

/** Whether `value` is in `sorted`. */
function isIn(sorted: readonly number[], value: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo] === value;
}
