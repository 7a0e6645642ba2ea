import { describe, expect, it } from 'vitest';
import { HeldFiles } from './held-files.js';

/** A HeldFiles of `budget` bytes, and the files it closed, in order. */
function held(budget: number) {
  const closed: number[] = [];
  return { files: new HeldFiles(budget, (i) => closed.push(i)), closed };
}

describe('the files a dataset keeps open', () => {
  it('keeps every file under the budget', () => {
    const { files, closed } = held(100);
    for (let i = 0; i < 4; i++) files.opened(i, 25);
    expect(files.bytes).toBe(100);
    expect(closed).toEqual([]);
    expect(files.closed).toBe(0);
  });

  it('closes idle files over it, the one let go of last first: a pass in order keeps the first files open', () => {
    const { files, closed } = held(100);
    // A scan through 8 files of 25 bytes, each opened as the scan reaches it and let go behind it.
    for (let i = 0; i < 8; i++) {
      files.pin(i);
      files.opened(i, 25);
      files.unpin(i);
    }
    // Each file past the budget closed the one the scan had just let go of.
    expect(closed).toEqual([3, 4, 5, 6]);
    expect(files.bytes).toBe(100);
    // The next pass finds the first three open; the one let go of last (0, just read again) is
    // the first to close when 3 opens again.
    files.pin(0);
    files.unpin(0);
    files.pin(3);
    files.opened(3, 25);
    expect(closed).toEqual([3, 4, 5, 6, 0]);
    expect(files.closed).toBe(5);
  });

  it('never closes a file a run holds, and closes it once the last run is done with it', () => {
    const { files, closed } = held(50);
    files.pin(0);
    files.pin(0);
    files.opened(0, 40);
    files.pin(1);
    files.opened(1, 40);
    expect(closed).toEqual([]);
    expect(files.bytes).toBe(80);
    files.unpin(0);
    expect(closed).toEqual([]);
    files.unpin(0);
    expect(closed).toEqual([0]);
    files.unpin(1);
    expect(closed).toEqual([0]);
    expect(files.bytes).toBe(40);
  });

  it('has room for another file while the held ones and one more fit in half the budget', () => {
    const { files } = held(200);
    expect(files.hasRoom()).toBe(true);
    files.pin(0);
    files.opened(0, 30);
    files.pin(1);
    files.opened(1, 30);
    expect(files.hasRoom()).toBe(true);
    // A file pinned while it opens counts as the average one.
    files.pin(2);
    expect(files.hasRoom()).toBe(false);
    files.unpin(2);
    // Idle files do not count: the other half of the budget is theirs.
    files.unpin(1);
    files.pin(3);
    expect(files.hasRoom()).toBe(true);
  });

  it('takes a file about to open for the average file opened so far, even once none is open', () => {
    const { files, closed } = held(10);
    files.pin(0);
    files.opened(0, 40);
    files.unpin(0);
    expect(closed).toEqual([0]);
    expect(files.bytes).toBe(0);
    // No file is open, but the next is likely as big as the last: it does not fit.
    expect(files.hasRoom()).toBe(false);
  });

  it('forgets a file its owner closed', () => {
    const { files, closed } = held(50);
    files.opened(0, 40);
    files.forget(0);
    files.opened(1, 40);
    expect(closed).toEqual([]);
    expect(files.bytes).toBe(40);
  });
});
