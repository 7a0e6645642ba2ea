import { describe, expect, it } from 'vitest';
import { arrow, arrowReadsViews, loadArrow, warmArrowReader } from './arrow.js';

describe('apache-arrow, loaded beside the core', () => {
  it('is reached only once it has loaded: before, a use is an internal error, not a crash further on', async () => {
    expect(() => arrow()).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    const loading = loadArrow();
    expect(loadArrow()).toBe(loading);
    const module = await loading;
    expect(arrow()).toBe(module);
    expect(typeof module.tableFromIPC).toBe('function');
    // The apache-arrow installed here (21.2) reads string views.
    expect(arrowReadsViews()).toBe(true);
  });

  it('reads its embedded stream whole: two rows (a broken constant would make the warm-up a silent no-op)', async () => {
    await loadArrow();
    expect(warmArrowReader()).toBe(2);
  });
});
