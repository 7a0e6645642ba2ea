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

/** A request: the span it covers and, when it asks for several ranges at once, those ranges. */
export type Request = ByteRange & { parts?: ByteRange[] };

/**
 * Largest gap read through between two ranges of a request for several (`multipart.ts`): about
 * what a part's own header costs in the answer (~100 bytes: boundary, type, `Content-Range`).
 */
export const PART_GAP_BYTES = 128;
/** Most ranges in one request: servers cap them (Apache answers more than 200 with the whole file). */
export const MAX_PARTS = 32;
/** Wanted bytes one request for several ranges carries before a batch is spread over more. */
export const MULTI_REQUEST_BYTES = 1024 * 1024;

/**
 * Requests for `ranges` where one request may ask for several ranges (the server answers with
 * parts). It starts from the requests {@link coalesce} makes (`gapBytes`, `maxRequestBytes`,
 * `nearGapBytes`), so it never makes more: each of those becomes its wanted ranges, merged only
 * through gaps of at most `partGapBytes` (a part's header costs ~100 bytes of the answer, no round
 * trip), and consecutive ones share a request up to {@link MAX_PARTS} parts and a share of the
 * batch — its wanted bytes over `slots` (the transport's connections), at least
 * {@link MULTI_REQUEST_BYTES}, at most `maxRequestBytes` — so a small read spread over a file (a
 * lookup, a first page of each column) is one request, and a large one still spreads over the
 * connections. One of those requests with more than {@link MAX_PARTS} parts (tiny pages close
 * together) becomes requests of that many parts each, merged with no other.
 */
export function multiRangeRequests(
  ranges: readonly ByteRange[],
  slots: number,
  gapBytes = DEFAULT_GAP_BYTES,
  maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
  nearGapBytes = 0,
  partGapBytes = PART_GAP_BYTES,
): Request[] {
  const base = coalesce(ranges, gapBytes, maxRequestBytes, nearGapBytes);
  const parts = coalesce(ranges, Math.min(partGapBytes, gapBytes), maxRequestBytes);
  // The parts of each of those requests (a part goes with the request its start is in).
  const groups: Array<{ request: ByteRange; parts: ByteRange[]; bytes: number }> = base.map((request) => ({
    request,
    parts: [],
    bytes: 0,
  }));
  let at = 0;
  for (const part of parts) {
    while (at + 1 < groups.length && (groups[at + 1] as (typeof groups)[number]).request.start <= part.start) at += 1;
    const group = groups[at] as (typeof groups)[number];
    group.parts.push(part);
    group.bytes += part.end - part.start;
  }
  const wanted = groups.reduce((sum, group) => sum + group.bytes, 0);
  const share = Math.min(maxRequestBytes, Math.max(MULTI_REQUEST_BYTES, Math.ceil(wanted / Math.max(1, slots))));
  const requests: Array<{ parts: ByteRange[]; bytes: number }> = [];
  for (const group of groups) {
    if (group.parts.length > MAX_PARTS) {
      // Many small ranges close together (tiny pages): requests of MAX_PARTS parts each.
      for (let i = 0; i < group.parts.length; i += MAX_PARTS) {
        const chunk = group.parts.slice(i, i + MAX_PARTS);
        requests.push({ parts: chunk, bytes: Number.POSITIVE_INFINITY });
      }
      continue;
    }
    const last = requests[requests.length - 1];
    if (
      last !== undefined &&
      last.parts.length + group.parts.length <= MAX_PARTS &&
      last.bytes + group.bytes <= share
    ) {
      last.parts.push(...group.parts);
      last.bytes += group.bytes;
    } else {
      requests.push({ parts: [...group.parts], bytes: group.bytes });
    }
  }
  return requests.map(({ parts: [first, ...others] }) => {
    const only = first as ByteRange;
    if (others.length === 0) return { start: only.start, end: only.end };
    const last = others[others.length - 1] as ByteRange;
    return { start: only.start, end: last.end, parts: [only, ...others] };
  });
}
