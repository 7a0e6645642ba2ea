import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRangeServer } from '../../../tests/server/range-server.mjs';
import { ParquetSkimError } from '../errors.js';
import {
  DEFAULT_IO_CONCURRENCY,
  type IoCost,
  IoQueue,
  Prefetch,
  type RangeReader,
  TRANSPORT_SLOTS,
} from './io-queue.js';
import { HttpSource } from './source.js';

/** Counters of a read not yet made. */
function freshCost(): IoCost {
  return { requests: 0, bytes: 0, ms: 0, readThroughBytes: 0, gapBytes: 0 };
}

/** A reader over `size` bytes (byte i = i % 256) that records concurrency. */
function recordingReader(size: number, delayMs: number) {
  const state = { active: 0, peak: 0, calls: [] as Array<[number, number]> };
  const reader: RangeReader = {
    async read(start, end) {
      state.calls.push([start, end]);
      state.active += 1;
      state.peak = Math.max(state.peak, state.active);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      state.active -= 1;
      if (end > size) throw new Error('past the end');
      return Uint8Array.from({ length: end - start }, (_, i) => (start + i) % 256);
    },
  };
  return { reader, state };
}

/** A reader whose reads end only when their signal aborts; records each read's signal. */
function hangingReader() {
  const signals: AbortSignal[] = [];
  const reader: RangeReader = {
    read(_start, _end, signal) {
      if (signal !== undefined) signals.push(signal);
      return new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
  };
  return { reader, signals };
}

/** An abort controller whose signal counts its abort listeners: those added now, and the most at once. */
function countedListeners() {
  const controller = new AbortController();
  const count = { listeners: 0, peak: 0 };
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    count.listeners += 1;
    count.peak = Math.max(count.peak, count.listeners);
    add(...args);
  }) as typeof add;
  controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    count.listeners -= 1;
    remove(...args);
  }) as typeof remove;
  return { controller, count };
}

describe('IoQueue', () => {
  it('reads through larger gaps between large runs of a remote reader measured fast, unless a gap is given', async () => {
    const KB = 1024;
    const ranges = [
      { start: 0, end: 600 * KB },
      { start: 691 * KB, end: 941 * KB },
      // A small read 80 KB past the big one: never merged through that gap.
      { start: 1021 * KB, end: 1029 * KB },
    ];
    const fast = (remote: boolean) => {
      const { reader, state } = recordingReader(2048 * KB, 0);
      return { reader: { read: reader.read, remote, bytesPerMs: 256 * KB }, state };
    };
    const remote = fast(true);
    const cost = freshCost();
    await new IoQueue().read(remote.reader, ranges, undefined, cost);
    expect(remote.state.calls).toEqual([
      [0, 941 * KB],
      [1021 * KB, 1029 * KB],
    ]);
    // The scan's stats say why: the 91 KB read through, at the gap the link allowed.
    expect(cost).toMatchObject({ readThroughBytes: 91 * KB, gapBytes: 512 * KB, linkBytesPerMs: 256 * KB });
    // The same link, not yet measured, or measured slow: the default gap.
    const unmeasured = recordingReader(2048 * KB, 0);
    const unmeasuredCost = freshCost();
    await new IoQueue().read({ read: unmeasured.reader.read, remote: true }, ranges, undefined, unmeasuredCost);
    expect(unmeasured.state.calls).toHaveLength(3);
    expect(unmeasuredCost).toMatchObject({ readThroughBytes: 0, gapBytes: 64 * KB });
    expect(unmeasuredCost.linkBytesPerMs).toBeUndefined();
    const slow = recordingReader(2048 * KB, 0);
    await new IoQueue().read({ read: slow.reader.read, remote: true, bytesPerMs: 12 * KB }, ranges);
    expect(slow.state.calls).toHaveLength(3);
    // In memory (not remote), or with the gap given: the gap is the rule.
    const local = fast(false);
    await new IoQueue().read(local.reader, ranges);
    expect(local.state.calls).toHaveLength(3);
    const given = fast(true);
    await new IoQueue({ gapBytes: 64 * KB }).read(given.reader, ranges);
    expect(given.state.calls).toHaveLength(3);
    // What the scheduler asks to group tasks by agrees with what a read makes.
    expect(new IoQueue().requestsFor(ranges, fast(true).reader)).toHaveLength(2);
    expect(new IoQueue().requestsFor(ranges)).toHaveLength(3);
  });

  it('coalesces, returns the bytes read, and counts cost', async () => {
    const { reader, state } = recordingReader(10_000, 1);
    const queue = new IoQueue({ gapBytes: 50 });
    const cost = freshCost();
    const chunks = await queue.read(
      reader,
      [
        { start: 100, end: 200 },
        { start: 220, end: 300 },
        { start: 5000, end: 5010 },
      ],
      undefined,
      cost,
    );
    expect(state.calls).toEqual([
      [100, 300],
      [5000, 5010],
    ]);
    expect(chunks.map((c) => [c.start, c.data.length, c.data[0]])).toEqual([
      [100, 200, 100],
      [5000, 10, 5000 % 256],
    ]);
    expect({ requests: cost.requests, bytes: cost.bytes }).toEqual({ requests: 2, bytes: 210 });
    // 20 of the 210 bytes lie between the wanted ranges; overlapping ranges count once.
    expect({ readThroughBytes: cost.readThroughBytes, gapBytes: cost.gapBytes }).toEqual({
      readThroughBytes: 20,
      gapBytes: 50,
    });
    await queue.read(
      reader,
      [
        { start: 0, end: 60 },
        { start: 40, end: 80 },
        { start: 80, end: 90 },
      ],
      undefined,
      cost,
    );
    expect(cost.readThroughBytes).toBe(20);
    expect(cost.ms).toBeGreaterThan(0);
  });

  it('keeps at most `concurrency` requests in flight across calls', async () => {
    const { reader, state } = recordingReader(1_000_000, 5);
    const queue = new IoQueue({ concurrency: 3, gapBytes: 0 });
    const ranges = Array.from({ length: 10 }, (_, i) => ({ start: i * 1000, end: i * 1000 + 10 }));
    await Promise.all([queue.read(reader, ranges.slice(0, 5)), queue.read(reader, ranges.slice(5))]);
    expect(state.calls).toHaveLength(10);
    expect(state.peak).toBe(3);
  });

  it('rejects an aborted read without issuing requests, and bad options with typed errors', async () => {
    const { reader, state } = recordingReader(1000, 1);
    const controller = new AbortController();
    controller.abort();
    await expect(new IoQueue().read(reader, [{ start: 0, end: 10 }], controller.signal)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(state.calls).toHaveLength(0);
    expect(() => new IoQueue({ concurrency: 0 })).toThrow(ParquetSkimError);
  });

  it('rejects reads waiting for a slot when their signal aborts, and keeps the slot count right', async () => {
    const { reader, state } = recordingReader(1_000_000, 20);
    const queue = new IoQueue({ concurrency: 1, gapBytes: 0 });
    const first = queue.read(reader, [{ start: 0, end: 10 }]);
    const controller = new AbortController();
    const waiting = queue.read(reader, [{ start: 5000, end: 5010 }], controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    await first;
    await queue.read(reader, [{ start: 9000, end: 9010 }]);
    expect(state.calls).toEqual([
      [0, 10],
      [9000, 9010],
    ]);
    expect(state.peak).toBe(1);
  });

  it('adds one listener to the signal for a batch, and aborts its waiting and in-flight requests', async () => {
    const { controller, count } = countedListeners();
    // Requests that end only when their signal aborts: two in flight, eighteen waiting for a slot.
    const { reader: hanging, signals: started } = hangingReader();
    const queue = new IoQueue({ concurrency: 2, gapBytes: 0 });
    const ranges = Array.from({ length: 20 }, (_, i) => ({ start: i * 1000, end: i * 1000 + 10 }));
    const batch = queue.read(hanging, ranges, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toHaveLength(2);
    expect(count.peak).toBe(1);
    controller.abort();
    await expect(batch).rejects.toMatchObject({ name: 'AbortError' });
    expect(started.every((signal) => signal.aborted)).toBe(true);
    expect(started).toHaveLength(2);
    // Both slots are free again, and nothing of the batch is left in the queue.
    const { reader, state } = recordingReader(100_000, 5);
    await queue.read(reader, [
      { start: 0, end: 10 },
      { start: 50_000, end: 50_010 },
    ]);
    expect(state.peak).toBe(2);
    expect(count.listeners).toBe(0);
  });

  it('gives each request in flight a signal of its own: one listener each, however many are in flight', async () => {
    // 24 requests in flight at once: on one shared signal, 24 listeners (Node warns past 10).
    const { reader: hanging, signals } = hangingReader();
    const queue = new IoQueue({ concurrency: 24, gapBytes: 0 });
    const controller = new AbortController();
    const ranges = Array.from({ length: 24 }, (_, i) => ({ start: i * 1000, end: i * 1000 + 10 }));
    const batch = queue.read(hanging, ranges, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(new Set(signals).size).toBe(24);
    controller.abort();
    await expect(batch).rejects.toMatchObject({ name: 'AbortError' });
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });

  it('cancels the rest of a batch when one of its requests fails', async () => {
    const started: Array<{ start: number; signal: AbortSignal | undefined }> = [];
    const failing: RangeReader = {
      read(start, _end, signal) {
        started.push({ start, signal });
        if (start === 0) return Promise.reject(new Error('connection reset'));
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
    };
    const queue = new IoQueue({ concurrency: 2, gapBytes: 0 });
    const ranges = Array.from({ length: 6 }, (_, i) => ({ start: i * 1000, end: i * 1000 + 10 }));
    await expect(queue.read(failing, ranges, new AbortController().signal)).rejects.toThrow('connection reset');
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The request in flight beside the failed one was aborted; the rest never started, and both
    // slots are free again.
    expect(started.map(({ start }) => start)).toEqual([0, 1000]);
    expect(started.every(({ signal }) => signal?.aborted)).toBe(true);
    const { reader, state } = recordingReader(100_000, 5);
    await queue.read(reader, [
      { start: 0, end: 10 },
      { start: 50_000, end: 50_010 },
    ]);
    expect(state.peak).toBe(2);
  });

  it('gives a prefetch a slot only when no other request waits, and never the last free one', async () => {
    const { reader, state } = recordingReader(100_000, 5);
    const queue = new IoQueue({ concurrency: 1, gapBytes: 0 });
    const order: string[] = [];
    const read = (q: IoQueue, name: string, start: number, prefetch?: Prefetch) =>
      q.read(reader, [{ start, end: start + 10 }], undefined, undefined, prefetch).then(() => order.push(name));
    // One slot: `first` takes it; the prefetch queued before `second` still goes after it.
    await Promise.all([
      read(queue, 'first', 0),
      read(queue, 'prefetch', 1000, new Prefetch()),
      read(queue, 'second', 2000),
    ]);
    expect(order).toEqual(['first', 'second', 'prefetch']);
    // Three slots: prefetches hold two at most; the third is there for a running task's request.
    const three = new IoQueue({ concurrency: 3, gapBytes: 0 });
    state.peak = 0;
    const ahead = new Prefetch();
    const prefetches = three.read(
      reader,
      Array.from({ length: 6 }, (_, i) => ({ start: 10_000 + i * 1000, end: 10_000 + i * 1000 + 10 })),
      undefined,
      undefined,
      ahead,
    );
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(state.active).toBe(2);
    const calls = state.calls.length;
    await three.read(reader, [{ start: 50_000, end: 50_010 }]);
    // It started at once, beside the two prefetches.
    expect(state.calls[calls]).toEqual([50_000, 50_010]);
    await prefetches;
    expect(state.peak).toBe(3);
  });

  it('hands a running task the whole default bound, and prefetches only the transport slots but one', async () => {
    const { reader, signals } = hangingReader();
    const queue = new IoQueue({ gapBytes: 0 });
    expect(queue.concurrency).toBe(DEFAULT_IO_CONCURRENCY);
    const spread = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ start: from + i * 1000, end: from + i * 1000 + 10 }));
    const stop = new AbortController();
    const prefetches = queue.read(reader, spread(0, 10), stop.signal, undefined, new Prefetch());
    await new Promise((resolve) => setTimeout(resolve, 1));
    // Five of the prefetch's ten requests are out: one connection of six stays for a running task.
    expect(signals).toHaveLength(TRANSPORT_SLOTS - 1);
    // A running task's 21 requests (a lookup's) all go out at once; the transport queues them.
    const running = queue.read(reader, spread(100_000, 21), stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(signals).toHaveLength(TRANSPORT_SLOTS - 1 + 21);
    stop.abort(new DOMException('done', 'AbortError'));
    await expect(prefetches).rejects.toThrow('done');
    await expect(running).rejects.toThrow('done');
  });

  it('promotes a prefetch whose task started: its waiting requests go ahead of the others', async () => {
    const { reader, state } = recordingReader(100_000, 5);
    const queue = new IoQueue({ concurrency: 1, gapBytes: 0 });
    const blocker = queue.read(reader, [{ start: 0, end: 10 }]);
    const ahead = new Prefetch();
    const prefetched = queue.read(reader, [{ start: 1000, end: 1010 }], undefined, undefined, ahead);
    const other = queue.read(reader, [{ start: 2000, end: 2010 }]);
    queue.promote(ahead);
    await Promise.all([blocker, prefetched, other]);
    expect(state.calls).toEqual([
      [0, 10],
      [1000, 1010],
      [2000, 2010],
    ]);
  });

  it('takes an aborted prefetch out of its queue: the slot goes to the next request, which completes', async () => {
    const { reader, signals } = hangingReader();
    const queue = new IoQueue({ concurrency: 1, gapBytes: 0 });
    const holder = new AbortController();
    const held = queue.read(reader, [{ start: 0, end: 10 }], holder.signal);
    const prefetching = new AbortController();
    const prefetch = queue.read(reader, [{ start: 100, end: 110 }], prefetching.signal, undefined, new Prefetch());
    prefetching.abort(new DOMException('done', 'AbortError'));
    await expect(prefetch).rejects.toThrow('done');
    holder.abort(new DOMException('first', 'AbortError'));
    await expect(held).rejects.toThrow('first');
    expect(signals).toHaveLength(1);
    // Nothing of the aborted prefetch holds the one slot.
    const { reader: working } = recordingReader(100_000, 1);
    const chunks = await queue.read(working, [{ start: 200, end: 210 }], undefined, undefined, new Prefetch());
    expect(chunks[0]?.start).toBe(200);
  });

  it('adds one listener to a signal however many batches read with it, and removes it after the last', async () => {
    const { controller, count } = countedListeners();
    const { reader } = recordingReader(1_000_000, 2);
    const queue = new IoQueue({ concurrency: 4, gapBytes: 0 });
    const batches = Array.from({ length: 40 }, (_, i) =>
      queue.read(reader, [{ start: i * 1000, end: i * 1000 + 10 }], controller.signal, undefined, new Prefetch()),
    );
    await Promise.all(batches);
    expect(count.peak).toBe(1);
    expect(count.listeners).toBe(0);
    // And it still cancels every batch waiting when the signal aborts.
    const { reader: hanging } = hangingReader();
    const waiting = Array.from({ length: 10 }, (_, i) =>
      queue.read(hanging, [{ start: i * 1000, end: i * 1000 + 10 }], controller.signal),
    );
    controller.abort();
    for (const batch of waiting) await expect(batch).rejects.toMatchObject({ name: 'AbortError' });
    expect(count.listeners).toBe(0);
  });
});

describe('several ranges per request', () => {
  const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../shared/parquet-testing/data');
  const NAME = 'alltypes_tiny_pages_plain.parquet';
  let server: Awaited<ReturnType<typeof startRangeServer>>;
  let bytes: Uint8Array;
  beforeAll(async () => {
    bytes = new Uint8Array(await readFile(path.join(dataDir, NAME)));
    server = await startRangeServer({ mounts: { '/': dataDir } });
  });
  afterAll(() => server.close());

  const OPTIONS = {
    headers: [],
    retries: 0,
    retryDelayMs: 0,
    timeoutMs: 5000,
    maxFullBodyBytes: 0,
    conditional: false,
    multiRange: true,
  };

  it('go as one request where the server answers with parts, and as a range each where it may not', async () => {
    // A lookup's shape: 12 small reads 70 KB apart, more than the 64 KiB gap rule reads through.
    const ranges = Array.from({ length: 12 }, (_, i) => ({ start: 1000 + i * 70_000, end: 1000 + i * 70_000 + 500 }));
    const queue = new IoQueue();
    const multi = new HttpSource(`${server.url}/${NAME}`, OPTIONS, bytes.length);
    const cost = freshCost();
    expect(queue.requestsFor(ranges, multi)).toHaveLength(1);
    const chunks = await queue.read(multi, ranges, undefined, cost);
    for (const range of ranges) {
      const chunk = chunks.find((c) => c.start <= range.start && range.end <= c.start + c.data.byteLength);
      expect(chunk, `${range.start}`).toBeDefined();
      const at = range.start - (chunk?.start ?? 0);
      expect(chunk?.data.subarray(at, at + 500)).toEqual(bytes.subarray(range.start, range.end));
    }
    expect(cost).toMatchObject({ requests: 1, bytes: 12 * 500, readThroughBytes: 0 });
    expect(server.log.map((e) => e.range?.split(',').length)).toEqual([12]);

    const single = new HttpSource(`${server.url}/${NAME}`, { ...OPTIONS, multiRange: false }, bytes.length);
    const each = freshCost();
    expect(queue.requestsFor(ranges, single)).toHaveLength(12);
    await queue.read(single, ranges, undefined, each);
    expect(each).toMatchObject({ requests: 12, bytes: 12 * 500 });
  });
});
