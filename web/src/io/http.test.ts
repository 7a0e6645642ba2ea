import { describe, expect, it } from 'vitest';
import { checkCovers, contentRangeSize, parseContentRange, rangeHeader } from './http.js';

describe('Content-Range', () => {
  it('is parsed and checked against what was asked', () => {
    expect(parseContentRange('bytes 10-19/100')).toEqual({ start: 10, end: 20, total: 100 });
    expect(() => parseContentRange('bytes 10-19/*')).toThrow(/numeric size/);
    expect(() => parseContentRange('bytes 10-100/100')).toThrow(/not inside/);
    expect(() => parseContentRange('10-19/100')).toThrow(/bytes start-end\/size/);
    const suffix = { suffix: 8 };
    expect(checkCovers(suffix, { start: 92, end: 100, total: 100 })).toEqual({ start: 92, end: 100, total: 100 });
    // Vite answering bytes=-8 with the first 9 bytes.
    expect(() => checkCovers(suffix, { start: 0, end: 9, total: 100 })).toThrow('expected bytes 92-99 of 100');
    // A range past the end is clamped by the server.
    expect(checkCovers({ start: 90, end: 120 }, { start: 90, end: 100, total: 100 }).end).toBe(100);
    // Files above 4 GiB keep exact offsets.
    const big = 5 * 2 ** 30;
    expect(parseContentRange(`bytes ${big - 8}-${big - 1}/${big}`)).toEqual({ start: big - 8, end: big, total: big });
  });

  it('names the size even when its span is not the one asked, or is *', () => {
    expect(contentRangeSize('bytes 0-524288/183565658')).toBe(183565658);
    expect(contentRangeSize('bytes */1851')).toBe(1851);
    expect(contentRangeSize('bytes 0-9/*')).toBeUndefined();
  });

  it('asks bounded ranges inclusively and suffixes as such', () => {
    expect(rangeHeader({ start: 0, end: 10 })).toBe('bytes=0-9');
    expect(rangeHeader({ suffix: 512 })).toBe('bytes=-512');
  });
});
