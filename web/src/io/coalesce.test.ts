import { describe, expect, it } from 'vitest';
import {
  coalesce,
  gapForThroughput,
  MAX_NEAR_GAP_BYTES,
  MAX_PARTS,
  MULTI_REQUEST_BYTES,
  multiRangeRequests,
  REQUEST_COST_MS,
} from './coalesce.js';

describe('coalesce', () => {
  it('merges ranges whose gap is at most gapBytes, in sorted order', () => {
    const ranges = [
      { start: 300, end: 400 },
      { start: 0, end: 100 },
      { start: 110, end: 200 },
      { start: 1000, end: 1100 },
    ];
    expect(coalesce(ranges, 10)).toEqual([
      { start: 0, end: 200 },
      { start: 300, end: 400 },
      { start: 1000, end: 1100 },
    ]);
    expect(coalesce(ranges, 100)).toEqual([
      { start: 0, end: 400 },
      { start: 1000, end: 1100 },
    ]);
    expect(coalesce(ranges, 0)).toHaveLength(4);
  });

  it('never merges past maxRequestBytes, and reads overlaps once', () => {
    const ranges = [
      { start: 0, end: 60 },
      { start: 60, end: 120 },
      { start: 100, end: 150 },
    ];
    expect(coalesce(ranges, 1000, 100)).toEqual([
      { start: 0, end: 60 },
      { start: 60, end: 150 },
    ]);
    expect(
      coalesce(
        [
          { start: 0, end: 80 },
          { start: 40, end: 120 },
        ],
        0,
        100,
      ),
    ).toEqual([
      { start: 0, end: 80 },
      { start: 80, end: 120 },
    ]);
  });

  it('drops empty ranges and does not modify its input', () => {
    const input = [
      { start: 5, end: 5 },
      { start: 0, end: 4 },
    ];
    expect(coalesce(input, 10)).toEqual([{ start: 0, end: 4 }]);
    expect(input[1]).toEqual({ start: 0, end: 4 });
  });

  it('on a fast link reads through a larger gap only between runs at least as large as the gap', () => {
    const KB = 1024;
    // Q6's shape in a 128k-row group: three wanted columns, 91 KB of others, then a fourth.
    const dense = [
      { start: 0, end: 600 * KB },
      { start: 691 * KB, end: 941 * KB },
    ];
    expect(coalesce(dense, 64 * KB)).toHaveLength(2);
    expect(coalesce(dense, 64 * KB, undefined, 256 * KB)).toEqual([{ start: 0, end: 941 * KB }]);
    // The runs on either side count whole, not their pages: 64 KiB pages after the gap.
    const paged = [
      { start: 0, end: 600 * KB },
      ...[0, 1, 2, 3].map((i) => ({ start: (691 + 64 * i) * KB, end: (691 + 64 * (i + 1)) * KB })),
    ];
    expect(coalesce(paged, 64 * KB, undefined, 256 * KB)).toEqual([{ start: 0, end: 947 * KB }]);
    // The gap over the near bound stays a gap.
    expect(coalesce(dense, 64 * KB, undefined, 90 * KB)).toHaveLength(2);
    // A small range on either side of the gap (a dictionary page, a lookup's page): not merged.
    const sparse = [
      { start: 0, end: 8 * KB },
      { start: 100 * KB, end: 700 * KB },
      { start: 800 * KB, end: 820 * KB },
    ];
    expect(coalesce(sparse, 64 * KB, undefined, 512 * KB)).toEqual(sparse);
    // The wanted bytes of a merged run count, not its gaps: a 40 KB run made of two 20 KB ranges
    // and a 30 KB gap does not read through a 45 KB gap to a big range.
    const gappy = [
      { start: 0, end: 20 * KB },
      { start: 50 * KB, end: 70 * KB },
      { start: 115 * KB, end: 915 * KB },
    ];
    expect(coalesce(gappy, 32 * KB, undefined, 512 * KB)).toEqual([
      { start: 0, end: 70 * KB },
      { start: 115 * KB, end: 915 * KB },
    ]);
    // maxRequestBytes still bounds every request.
    expect(coalesce(dense, 64 * KB, 900 * KB, 256 * KB)).toHaveLength(2);
  });

  it('sizes the fast-link gap by what the link moves in one request cost', () => {
    expect(gapForThroughput(undefined)).toBe(0);
    expect(gapForThroughput(0)).toBe(0);
    expect(gapForThroughput(Number.NaN)).toBe(0);
    // 20 ms per request, 200 Mbit/s: a 512 KiB read took ~41 ms.
    expect(gapForThroughput((512 * 1024) / 41)).toBe(Math.floor(((512 * 1024) / 41) * REQUEST_COST_MS));
    expect(gapForThroughput((512 * 1024) / 41)).toBeLessThan(64 * 1024);
    // Localhost: 512 KiB in 2 ms.
    expect(gapForThroughput(256 * 1024)).toBe(512 * 1024);
    expect(gapForThroughput(1e9)).toBe(MAX_NEAR_GAP_BYTES);
  });
});

describe('requests for several ranges each', () => {
  /** A lookup's shape: a dictionary page and a selected data page per column, far apart. */
  const lookup = Array.from({ length: 16 }, (_, column) => [
    { start: column * 1_000_000, end: column * 1_000_000 + 5_300 },
    { start: column * 1_000_000 + 38_000, end: column * 1_000_000 + 38_254 },
  ]).flat();

  it('asks for a small read in one request, reading nothing between its ranges', () => {
    const requests = multiRangeRequests(lookup, 6);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.parts).toEqual(coalesce(lookup, 0));
    expect(requests[0]).toMatchObject({ start: 0, end: 15_038_254 });
  });

  it('reads through gaps of at most partGapBytes, and keeps a lone range a plain request', () => {
    const near = [
      { start: 0, end: 100 },
      { start: 600, end: 700 },
      { start: 5000, end: 5100 },
    ];
    // By default only gaps about a part's header (PART_GAP_BYTES) are read through.
    expect(multiRangeRequests(near, 6, 1024)[0]?.parts).toHaveLength(3);
    // The gap rule's requests first (here 1024 bytes), then their parts (gaps up to 1 KiB).
    expect(multiRangeRequests(near, 6, 1024, undefined, 0, 1024)).toEqual([
      {
        start: 0,
        end: 5100,
        parts: [
          { start: 0, end: 700 },
          { start: 5000, end: 5100 },
        ],
      },
    ]);
    expect(multiRangeRequests(near, 6, 10_000, undefined, 0, 10_000)).toEqual([{ start: 0, end: 5100 }]);
  });

  it('spreads a large read over the connections, and caps the ranges per request', () => {
    // 48 column chunks of 1 MiB with gaps: 48 MiB over 6 connections, 8 MiB each.
    const dense = Array.from({ length: 48 }, (_, i) => ({ start: i * 2 ** 21, end: i * 2 ** 21 + 2 ** 20 }));
    const requests = multiRangeRequests(dense, 6);
    expect(requests).toHaveLength(6);
    expect(requests.map((r) => r.parts?.length)).toEqual([8, 8, 8, 8, 8, 8]);
    // A share is at least MULTI_REQUEST_BYTES, and at most maxRequestBytes.
    expect(multiRangeRequests(dense, 48)).toHaveLength(48 / (MULTI_REQUEST_BYTES / 2 ** 20));
    expect(multiRangeRequests(dense, 1, 1024, 4 * 2 ** 20)).toHaveLength(12);
    const many = Array.from({ length: 100 }, (_, i) => ({ start: i * 10_000, end: i * 10_000 + 10 }));
    expect(multiRangeRequests(many, 6).map((r) => r.parts?.length)).toEqual([MAX_PARTS, MAX_PARTS, MAX_PARTS, 4]);
  });

  it('never makes more requests than one range per request would, nor reads more', () => {
    // Q6's shape on a row group: three filter columns together, a fourth 91 KB away, on a fast
    // link (the gap rule reads the 91 KB through): one request either way, without the gap here.
    const q6 = [
      { start: 0, end: 300_000 },
      { start: 300_000, end: 600_000 },
      { start: 691_000, end: 991_000 },
    ];
    expect(coalesce(q6, 65_536, 16 << 20, 1 << 20)).toHaveLength(1);
    const requests = multiRangeRequests(q6, 6, 65_536, 16 << 20, 1 << 20);
    expect(requests).toEqual([
      {
        start: 0,
        end: 991_000,
        parts: [
          { start: 0, end: 600_000 },
          { start: 691_000, end: 991_000 },
        ],
      },
    ]);
    // Row groups of ~1 MB each: as many requests as row groups, at most.
    const rowGroups = Array.from({ length: 20 }, (_, g) =>
      q6.map((r) => ({ start: r.start + g * 2_000_000, end: r.end + g * 2_000_000 })),
    ).flat();
    const single = coalesce(rowGroups, 65_536, 16 << 20, 1 << 20);
    const multi = multiRangeRequests(rowGroups, 6, 65_536, 16 << 20, 1 << 20);
    expect(multi.length).toBeLessThanOrEqual(single.length);
    const bytes = (rs: Array<{ start: number; end: number; parts?: Array<{ start: number; end: number }> }>) =>
      rs.flatMap((r) => r.parts ?? [r]).reduce((n, r) => n + r.end - r.start, 0);
    expect(bytes(multi)).toBe(20 * 900_000);
    expect(bytes(single)).toBeGreaterThan(bytes(multi));
  });
});
