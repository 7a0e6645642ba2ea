/**
 * What one task host's cross-scan cache holds, as its task reports tell the scheduler: the keys
 * (for affinity and to skip fetching cached filter columns) and the bytes (for the stats).
 * The host's cache is the truth; this mirror may lag by a task, which costs at most a fetch the
 * task then asks for itself.
 */
import type { CacheCounters, CacheReport } from '../worker/protocol.js';

/** How a host's cache counters moved since its previous report. */
export interface CacheDelta {
  bytesInserted: number;
  bytesEvicted: number;
  bytesRejected: number;
}

export class CacheKeys {
  private readonly keys = new Set<string>();
  private last: CacheCounters | undefined;

  /** Bytes the host's cache held after its latest task. */
  get bytes(): number {
    return this.last?.bytes ?? 0;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Applies a finished task's report; returns how the counters moved since the last one. */
  update(report: CacheReport | null): CacheDelta | undefined {
    if (report === null) return undefined;
    for (const key of report.evicted) this.keys.delete(key);
    if (report.inserted) this.keys.add(report.key);
    const before = this.last;
    this.last = report.stats;
    return {
      bytesInserted: report.stats.bytesInserted - (before?.bytesInserted ?? 0),
      bytesEvicted: report.stats.bytesEvicted - (before?.bytesEvicted ?? 0),
      bytesRejected: report.stats.bytesRejected - (before?.bytesRejected ?? 0),
    };
  }
}
