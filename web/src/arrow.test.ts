import { describe, expect, it } from 'vitest';
import { warmArrowReader } from './arrow.js';

describe('warmArrowReader', () => {
  it('reads its embedded stream whole: two rows (a broken constant would make the warm-up a silent no-op)', () => {
    expect(warmArrowReader()).toBe(2);
  });
});
