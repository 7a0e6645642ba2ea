import { describe, expect, it } from 'vitest';
import { coalesce, MIN_GAP_BYTES } from './coalesce.js';

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

  it('reads through the unwanted pages of a chunk only when the request wants as many bytes', () => {
    const kib = 1024;
    // One chunk at 0 (the next starts at 1 MiB): its dictionary page, then one selected data page
    // 33 KiB further on (a lookup), then a run of big selected pages with small pruned gaps.
    const chunkStarts = [0, 1024 * kib];
    const lookup = [
      { start: 0, end: 5 * kib },
      { start: 38 * kib, end: 38 * kib + 254 },
    ];
    expect(coalesce(lookup, 64 * kib, 16 * 1024 * kib, chunkStarts)).toEqual(lookup);
    // Without the chunk starts it is one request, as before; so with the next page being the
    // start of another (tiny) chunk: the gap still holds the first chunk's unwanted pages.
    expect(coalesce(lookup, 64 * kib)).toEqual([{ start: 0, end: 38 * kib + 254 }]);
    expect(coalesce(lookup, 64 * kib, 16 * 1024 * kib, [0, 38 * kib])).toEqual(lookup);
    // Whole chunks skipped between two read whole (columns the scan does not project): one request.
    const columns = [
      { start: 0, end: 20 * kib },
      { start: 50 * kib, end: 60 * kib },
    ];
    expect(coalesce(columns, 64 * kib, 16 * 1024 * kib, [0, 20 * kib, 35 * kib, 50 * kib, 60 * kib])).toEqual([
      { start: 0, end: 60 * kib },
    ]);
    // A gap up to MIN_GAP_BYTES is read through whatever it holds.
    const close = [
      { start: 0, end: 100 },
      { start: 100 + MIN_GAP_BYTES, end: 200 + MIN_GAP_BYTES },
    ];
    expect(coalesce(close, 64 * kib, 16 * 1024 * kib, chunkStarts)).toEqual([{ start: 0, end: 200 + MIN_GAP_BYTES }]);
    // Dense but patchy: 40 KiB pages with 30 KiB pruned between them merge (the request wants more).
    const patchy = [0, 1, 2, 3].map((i) => ({ start: i * 70 * kib, end: i * 70 * kib + 40 * kib }));
    expect(coalesce(patchy, 64 * kib, 16 * 1024 * kib, chunkStarts)).toEqual([{ start: 0, end: 250 * kib }]);
    // Never past gapBytes, even inside a chunk.
    expect(coalesce(patchy, 16 * kib, 16 * 1024 * kib, chunkStarts)).toHaveLength(4);
  });
});
