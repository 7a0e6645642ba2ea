/**
 * Bytes a scan read before it planned — the page headers walked in files without an offset
 * index (`crate/core/src/page_layout.rs`) — handed to its tasks instead of fetched again.
 */
import type { Chunk } from '../worker/protocol.js';
import type { ByteRange } from './coalesce.js';

/**
 * Splits `ranges` into what `held` already has (as copies: a task's chunks may be transferred
 * to a worker) and what is still to fetch.
 */
export function takeHeld(
  ranges: readonly ByteRange[],
  held: readonly Chunk[],
): { chunks: Chunk[]; missing: ByteRange[] } {
  if (held.length === 0) return { chunks: [], missing: [...ranges] };
  const chunks: Chunk[] = [];
  const missing: ByteRange[] = [];
  for (const range of ranges) {
    let at = range.start;
    while (at < range.end) {
      const cover = held.find((h) => h.start <= at && at < h.start + h.data.byteLength);
      if (cover !== undefined) {
        const end = Math.min(range.end, cover.start + cover.data.byteLength);
        chunks.push({ start: at, data: cover.data.slice(at - cover.start, end - cover.start) });
        at = end;
        continue;
      }
      // Up to where the next held chunk starts, if it starts inside the range.
      let end = range.end;
      for (const h of held) if (h.start > at && h.start < end) end = h.start;
      missing.push({ start: at, end });
      at = end;
    }
  }
  return { chunks, missing };
}
