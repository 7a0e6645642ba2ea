/**
 * Byte-range coalescing: fewer, larger requests when wanted ranges are close.
 *
 * Two ranges merge when the gap between them is at most `gapBytes` (reading a small gap costs
 * less than a round trip) and the merged request stays within `maxRequestBytes` (so one huge
 * request does not serialize what could be fetched in parallel). Ranges are half-open.
 *
 * A link measured fast (`nearGapBytes`, see {@link gapForThroughput}) also merges the runs so
 * formed through larger gaps, up to `nearGapBytes` and never more than the wanted bytes of the run
 * on either side: a gap between two big runs of pages (TPC-H Q6's columns of a 128k-row group,
 * with three other columns' 91 KB between them) is read through, a gap beside a small read (a
 * lookup's pages, a first page) is not. A dense scan makes fewer requests; a sparse read makes the
 * same ones; no merge more than doubles what its two runs want.
 */
import type { ByteRange } from '../wasm/contract.js';

/** A half-open byte range `[start, end)`: the one form ranges have, the core's `ByteRange`. */
export type { ByteRange };

/** Default largest gap read through to merge two ranges. */
export const DEFAULT_GAP_BYTES = 64 * 1024;
/** Default largest merged request. */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/**
 * What one more request costs beside its bytes, in milliseconds of the reader's time: on a link
 * with next to no latency the request's own work (the browser's network stack, the server)
 * dominates — ~5 ms of CPU per request on this project's 2-core bench machine at 0 ms (README,
 * "Requests against bytes"). A gap is worth reading through when moving it takes less.
 */
export const REQUEST_COST_MS = 2;
/** The largest gap a fast link reads through. */
export const MAX_NEAR_GAP_BYTES = 1024 * 1024;

/**
 * The largest gap worth reading through on a link that moves `bytesPerMs` (response bodies in
 * transit, `LinkMeter` in `source.ts`): what the link moves in {@link REQUEST_COST_MS}, capped at
 * {@link MAX_NEAR_GAP_BYTES}. 0 when nothing was measured. On localhost (bodies of hundreds of
 * KB in a millisecond or two) that is hundreds of KB, up to the cap; at 200 Mbit/s (25 bytes per
 * µs) 50 KB, under the default gap, and at 50 Mbit/s less: on such links nothing changes.
 */
export function gapForThroughput(bytesPerMs: number | undefined): number {
  if (bytesPerMs === undefined || !(bytesPerMs > 0)) return 0;
  return Math.min(MAX_NEAR_GAP_BYTES, Math.floor(bytesPerMs * REQUEST_COST_MS));
}

/** Merges `ranges` (any order, may overlap) into sorted requests. Empty ranges are dropped. */
export function coalesce(
  ranges: readonly ByteRange[],
  gapBytes = DEFAULT_GAP_BYTES,
  maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
  nearGapBytes = 0,
): ByteRange[] {
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || a.end - b.end);
  // Runs: the ranges merged through gaps of at most `gapBytes`, with their wanted bytes.
  const runs: Array<ByteRange & { wanted: number }> = [];
  for (const range of sorted) {
    const last = runs[runs.length - 1];
    if (
      last !== undefined &&
      range.start - last.end <= gapBytes &&
      Math.max(last.end, range.end) - last.start <= maxRequestBytes
    ) {
      last.wanted += Math.max(0, range.end - Math.max(last.end, range.start));
      last.end = Math.max(last.end, range.end);
    } else if (last !== undefined && range.start < last.end) {
      // Overlapping but too large to merge: read only the part not already covered.
      if (range.end > last.end) runs.push({ start: last.end, end: range.end, wanted: range.end - last.end });
    } else {
      runs.push({ start: range.start, end: range.end, wanted: range.end - range.start });
    }
  }
  if (nearGapBytes <= gapBytes) return runs.map(({ start, end }) => ({ start, end }));
  // A fast link: whole runs merge through a larger gap, never larger than either run's wanted bytes.
  const merged: Array<ByteRange & { wanted: number }> = [];
  for (const run of runs) {
    const last = merged[merged.length - 1];
    const gap = last === undefined ? 0 : run.start - last.end;
    if (
      last !== undefined &&
      gap <= nearGapBytes &&
      gap <= last.wanted &&
      gap <= run.wanted &&
      run.end - last.start <= maxRequestBytes
    ) {
      last.wanted += run.wanted;
      last.end = run.end;
    } else {
      merged.push({ ...run });
    }
  }
  return merged.map(({ start, end }) => ({ start, end }));
}
