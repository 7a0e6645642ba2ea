import { describe, expect, it } from 'vitest';
import { takeHeld } from './held.js';

const bytes = (start: number, end: number) => Uint8Array.from({ length: end - start }, (_, i) => (start + i) % 256);

describe('takeHeld', () => {
  const held = [
    { start: 10, data: bytes(10, 20) },
    { start: 30, data: bytes(30, 40) },
  ];

  it('serves covered ranges from copies and fetches the rest', () => {
    const { chunks, missing } = takeHeld(
      [
        { start: 12, end: 18 },
        { start: 15, end: 35 },
        { start: 50, end: 60 },
      ],
      held,
    );
    expect(missing).toEqual([
      { start: 20, end: 30 },
      { start: 50, end: 60 },
    ]);
    expect(chunks.map((c) => [c.start, c.start + c.data.byteLength])).toEqual([
      [12, 18],
      [15, 20],
      [30, 35],
    ]);
    for (const c of chunks) expect(Array.from(c.data)).toEqual(Array.from(bytes(c.start, c.start + c.data.byteLength)));
    // Copies: transferring a task's chunk leaves the held bytes intact.
    expect(chunks[0]?.data.buffer).not.toBe(held[0]?.data.buffer);
  });

  it('fetches everything when nothing is held', () => {
    expect(takeHeld([{ start: 0, end: 5 }], [])).toEqual({ chunks: [], missing: [{ start: 0, end: 5 }] });
  });
});
