/**
 * Byte-range coalescing: fewer, larger requests when wanted ranges are close.
 *
 * Two ranges merge when the gap between them is at most `gapBytes` (reading a small gap costs
 * less than a round trip) and the merged request stays within `maxRequestBytes` (so one huge
 * request does not serialize what could be fetched in parallel). Ranges are half-open.
 */
import type { ByteRange } from '../wasm/contract.js';

/** A half-open byte range `[start, end)`: the one form ranges have, the core's `ByteRange`. */
export type { ByteRange };

/** Default largest gap read through to merge two ranges. */
export const DEFAULT_GAP_BYTES = 64 * 1024;
/** Default largest merged request. */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/** Merges `ranges` (any order, may overlap) into sorted requests. Empty ranges are dropped. */
export function coalesce(
  ranges: readonly ByteRange[],
  gapBytes = DEFAULT_GAP_BYTES,
  maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
): ByteRange[] {
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: ByteRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (
      last !== undefined &&
      range.start - last.end <= gapBytes &&
      Math.max(last.end, range.end) - last.start <= maxRequestBytes
    ) {
      last.end = Math.max(last.end, range.end);
    } else if (last !== undefined && range.start < last.end) {
      // Overlapping but too large to merge: read only the part not already covered.
      if (range.end > last.end) merged.push({ start: last.end, end: range.end });
    } else {
      merged.push({ start: range.start, end: range.end });
    }
  }
  return merged;
}
