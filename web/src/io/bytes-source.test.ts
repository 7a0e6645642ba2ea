/**
 * Bytes opened from memory: read as views of the caller's buffer, never transferring (detaching)
 * it, and copied only where a chunk goes to another thread.
 */
import { describe, expect, it } from 'vitest';
import { ownedChunks, transferablesOf } from '../worker/protocol.js';
import { BytesSource } from './source.js';

const bytes = () => new Uint8Array(Array.from({ length: 1000 }, (_, i) => i % 251));

describe('BytesSource', () => {
  it('reads a range as a view of the caller’s buffer (no copy on this thread)', async () => {
    const file = bytes();
    const data = await new BytesSource(file).read(100, 300);
    expect(Array.from(data)).toEqual(Array.from(file.subarray(100, 300)));
    expect(data.buffer).toBe(file.buffer);
  });

  it('copies a read of the caller’s whole buffer, so posting it cannot transfer that buffer', async () => {
    const file = bytes();
    const data = await new BytesSource(file).read(0, file.length);
    expect(data.buffer).not.toBe(file.buffer);
    expect(Array.from(data)).toEqual(Array.from(file));
  });

  it('a view becomes an owned copy before it is posted; the caller’s buffer is never in the transfer list', async () => {
    const file = bytes();
    const source = new BytesSource(file);
    const chunks = [
      { start: 10, data: await source.read(10, 20) },
      { start: 500, data: await source.read(500, 700) },
    ];
    const owned = ownedChunks(chunks);
    const transfer = transferablesOf(owned);
    expect(transfer).not.toContain(file.buffer);
    expect(transfer).toHaveLength(2);
    expect(owned.map((c) => [c.start, Array.from(c.data)])).toEqual(chunks.map((c) => [c.start, Array.from(c.data)]));
    // A chunk that already owns its buffer is posted as it is.
    const whole = { start: 0, data: new Uint8Array([1, 2, 3]) };
    expect(ownedChunks([whole])[0]).toBe(whole);
  });
});
