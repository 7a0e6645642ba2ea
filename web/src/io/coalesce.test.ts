import { describe, expect, it } from 'vitest';
import { coalesce } from './coalesce.js';

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
});
