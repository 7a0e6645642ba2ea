import { describe, expect, it } from 'vitest';
import { cacheSharesOf } from './file.js';

const MiB = 2 ** 20;

describe('cacheSharesOf', () => {
  const shares = (
    cacheBytes: number,
    concurrency: number,
    pageCacheShare: number,
    memoryLimitBytes: number | null = null,
  ) => cacheSharesOf({ cacheBytes, memoryLimitBytes, executor: { concurrency, pageCacheShare } });

  it('keeps a share for the page beside the workers; together they are the budget', () => {
    expect(shares(64 * MiB, 2, 1 / 8)).toEqual({ worker: 28 * MiB, page: 8 * MiB, total: 64 * MiB });
    expect(shares(256 * MiB, 4, 1 / 8)).toEqual({ worker: 56 * MiB, page: 32 * MiB, total: 256 * MiB });
  });

  it('gives everything to the one kind of host there is', () => {
    // Workers only, or the page only (`workers: 0`, Node): no page share.
    expect(shares(64 * MiB, 2, 0)).toEqual({ worker: 32 * MiB, page: null, total: 64 * MiB });
    expect(shares(64 * MiB, 1, 0)).toEqual({ worker: 64 * MiB, page: null, total: 64 * MiB });
    expect(shares(0, 2, 1 / 8)).toEqual({ worker: 0, page: 0, total: 0 });
  });

  it('caps each instance at an eighth of memoryLimitBytes, and never sums above the budget', () => {
    expect(shares(256 * MiB, 2, 1 / 8, 256 * MiB)).toEqual({ worker: 32 * MiB, page: 32 * MiB, total: 96 * MiB });
    for (const cacheBytes of [0, 1, 7, 1000, 64 * MiB + 3, 1e12]) {
      for (const concurrency of [1, 2, 3, 4, 7, 16]) {
        for (const share of [0, 1 / 8]) {
          for (const limit of [null, 32 * MiB, 1e9]) {
            const { worker, page, total } = shares(cacheBytes, concurrency, share, limit);
            expect(total).toBe(worker * concurrency + (page ?? 0));
            expect(total).toBeLessThanOrEqual(cacheBytes);
            expect(Number.isInteger(worker) && worker >= 0).toBe(true);
          }
        }
      }
    }
  });
});
