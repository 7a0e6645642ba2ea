import { describe, expect, it } from 'vitest';
import { IoQueue, type RangeReader } from '../io/io-queue.js';
import type { Executor, FileFooter, ScanRef, TaskJob, TaskResult } from './executor.js';
import {
  DecodedAhead,
  type PhaseCosts,
  type PlannedTask,
  PREFETCH_BYTES,
  PRIOR_DECODED_PER_PLANNED,
  type ReadPlan,
  runParts,
  runPlan,
  type ScanContext,
  type ScanPart,
  scanRef,
} from './scheduler.js';

const FOOTER: FileFooter = { fileId: 1, fileLen: 1 << 22, starts: [], buffers: [], viewTypes: true };
const UNFILTERED: ScanRef = { scanId: 1, spec: '{}', filtered: false };
const FILTERED: ScanRef = { scanId: 2, spec: '{"filter":{"op":"true"}}', filtered: true };

/** A reader over a file whose byte i is i % 256, recording each request. */
function recordingReader() {
  const requests: Array<[number, number]> = [];
  const reader: RangeReader = {
    async read(start, end) {
      requests.push([start, end]);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return Uint8Array.from({ length: end - start }, (_, i) => (start + i) % 256);
    },
  };
  return { reader, requests };
}

/**
 * An executor that "decodes" task i into `decodedBytes(i)` bytes after `delayMs(i)`, recording
 * when each task was handed to it (`started`) and what it received.
 */
function fakeExecutor(
  options: { tasksAlive?: number; decodedBytes?: (i: number) => number; delayMs?: (i: number) => number } = {},
) {
  const started: number[] = [];
  const jobs: TaskJob[] = [];
  const closed: number[] = [];
  const executor: Executor = {
    concurrency: 2,
    tasksAlive: options.tasksAlive ?? 4,
    pageCacheShare: 0,
    async run(job: TaskJob): Promise<TaskResult> {
      const i = (JSON.parse(job.spec) as { taskIdx: number }).taskIdx;
      started.push(i);
      jobs.push(job);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs?.(i) ?? 1));
      return {
        ipc: new Uint8Array(options.decodedBytes?.(i) ?? 8),
        rows: i,
        batches: 1,
        decodeMs: 0,
        queueMs: 0,
        rowsFromCache: 0,
        pagesReadAgain: 0,
        wasmMemoryBytes: 0,
      };
    },
    holds: () => false,
    cachedBytes: () => 0,
    openFile() {},
    closeFile() {},
    closeScan(scanId) {
      closed.push(scanId);
    },
    dispose() {},
  };
  return { executor, started, jobs, closed };
}

const task = (
  i: number,
  ranges: { filter?: Array<[number, number]>; output?: Array<[number, number]>; skippable?: number },
) =>
  ({
    spec: { taskIdx: i, rowGroupIdx: i, batchSize: 1024 },
    filterRanges: (ranges.filter ?? []).map(([start, end]) => ({ start, end })),
    outputRanges: (ranges.output ?? []).map(([start, end]) => ({ start, end })),
    // By default nothing says a row passes: every output byte may be skipped.
    outputSkippableBytes: ranges.skippable ?? (ranges.output ?? []).reduce((sum, [start, end]) => sum + end - start, 0),
    rowsScanned: 1,
  }) as PlannedTask;

const plan = (tasks: PlannedTask[], limit: number | null = null): ReadPlan => ({
  scan: {
    columns: null,
    filter: tasks.some((t) => t.filterRanges.length > 0) ? { op: 'isNotNull', column: 'x' } : null,
    aggregates: null,
    limits: { maxChunkBytes: 1 << 30, maxPageBytes: 1 << 30, maxBatchBytes: 1 << 30, verifyChecksums: false },
    predicateCacheBytes: 0,
    columnCacheBytes: 0,
    scanId: 0,
  },
  tasks,
  rows: null,
  offset: 0,
  limit,
  learns: { pages: false, blooms: false },
  stats: {
    rowGroupsTotal: tasks.length,
    rowGroupsPrunedByStats: 0,
    rowGroupsPrunedByBloom: 0,
    rowGroupsPrunedByPageIndex: 0,
    pagesTotal: 0,
    pagesPruned: 0,
    rowsTotal: 0,
    rowsScanned: 0,
    prunedRowGroups: [],
  },
});

const costs = (): PhaseCosts => ({
  filter: { requests: 0, bytes: 0, ms: 0, readThroughBytes: 0, gapBytes: 0 },
  output: { requests: 0, bytes: 0, ms: 0, readThroughBytes: 0, gapBytes: 0 },
});

function context(executor: Executor, reader: RangeReader, overrides: Partial<ScanContext> = {}): ScanContext {
  return {
    file: FOOTER,
    scan: UNFILTERED,
    reader,
    io: new IoQueue({ gapBytes: 0 }),
    executor,
    readAheadBytes: 1 << 30,
    readAheadDecodedBytes: 1 << 30,
    prefetchOutputBytes: 1 << 20,
    cost: costs(),
    ...overrides,
  };
}

describe('runPlan', () => {
  it('reads small neighbouring tasks in one shared request, each task getting its own bytes', async () => {
    const { reader, requests } = recordingReader();
    const { executor, jobs } = fakeExecutor();
    // Eight small row groups side by side (as pyarrow's write_to_dataset writes them).
    const tasks = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => task(i, { output: [[i * 100, i * 100 + 100]] }));
    const ctx = context(executor, reader);
    const rows: number[] = [];
    for await (const result of runPlan(plan(tasks), ctx)) rows.push(result.rows);
    expect(rows).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(requests).toEqual([[0, 800]]);
    expect(ctx.cost.output).toMatchObject({ requests: 1, bytes: 800 });
    for (const job of jobs) {
      const i = (JSON.parse(job.spec) as { taskIdx: number }).taskIdx;
      expect(job.chunks.map((c) => [c.start, c.data.length, c.data[0]])).toEqual([[i * 100, 100, (i * 100) % 256]]);
    }
  });

  it('does not share a read across tasks whose ranges are apart, nor for a task of 1 MiB or more', async () => {
    const { reader, requests } = recordingReader();
    const { executor } = fakeExecutor();
    const big = 1 << 20;
    const tasks = [
      task(0, { output: [[0, big]] }),
      task(1, { output: [[big, big + 100]] }),
      task(2, { output: [[big + 5000, big + 5100]] }),
    ];
    for await (const _ of runPlan(plan(tasks), context(executor, reader))) {
      // drain
    }
    expect(requests.sort((a, b) => a[0] - b[0])).toEqual([
      [0, big],
      [big, big + 100],
      [big + 5000, big + 5100],
    ]);
  });

  it('reads ranges several tasks list once, both phases, each task getting its own copy of the bytes', async () => {
    const { reader, requests } = recordingReader();
    const { executor, jobs } = fakeExecutor();
    // A row group split into three tasks where no offset index names the pages: each lists the
    // same whole chunks (filter [0, 2 MiB), output [2 MiB, 4 MiB)) and asks for the output
    // chunk in phase 2; the fourth task is another row group.
    const mib = 1 << 20;
    const split = [0, 1, 2].map((i) => task(i, { filter: [[0, 2 * mib]], output: [[2 * mib, 4 * mib]] }));
    const other = task(3, { filter: [[4 * mib, 5 * mib]], output: [[5 * mib, 6 * mib]] });
    // What each task received, [start, length, bytes intact], phase 1 then phase 2.
    const got: Array<Array<[number, number, boolean]>> = [];
    const intact = (c: { start: number; data: Uint8Array }) => c.data.every((b, k) => b === (c.start + k) % 256);
    const asking: Executor = {
      ...executor,
      async run(job) {
        const wanted = job.chunks[0]?.start === 0 ? { start: 2 * mib, end: 4 * mib } : { start: 5 * mib, end: 6 * mib };
        const more = await job.fetchMore([wanted]);
        got.push([...job.chunks, ...more].map((c) => [c.start, c.data.length, intact(c)]));
        // The task owns its bytes (they are transferred to a worker): spoil them.
        for (const c of [...job.chunks, ...more]) c.data.fill(7);
        return executor.run(job);
      },
    };
    const ctx = context(asking, reader, { scan: FILTERED, prefetchOutputBytes: 0 });
    const rows: number[] = [];
    for await (const result of runPlan(plan([...split, other]), ctx)) rows.push(result.rows);
    expect(rows).toEqual([0, 1, 2, 3]);
    expect(requests.sort((a, b) => a[0] - b[0])).toEqual([
      [0, 2 * mib],
      [2 * mib, 4 * mib],
      [4 * mib, 5 * mib],
      [5 * mib, 6 * mib],
    ]);
    expect(ctx.cost.filter).toMatchObject({ requests: 2, bytes: 3 * mib });
    expect(ctx.cost.output).toMatchObject({ requests: 2, bytes: 3 * mib });
    expect(jobs).toHaveLength(4);
    const splitTask: Array<[number, number, boolean]> = [
      [0, 2 * mib, true],
      [2 * mib, 2 * mib, true],
    ];
    expect(got).toEqual([
      splitTask,
      splitTask,
      splitTask,
      [
        [4 * mib, mib, true],
        [5 * mib, mib, true],
      ],
    ]);
  });

  it('yields results in plan order when tasks finish out of order', async () => {
    const { reader } = recordingReader();
    // Later tasks finish first.
    const { executor } = fakeExecutor({ delayMs: (i) => 20 - i * 4 });
    const tasks = [0, 1, 2, 3].map((i) => task(i, { output: [[i * 1000, i * 1000 + 100]] }));
    const rows: number[] = [];
    for await (const result of runPlan(plan(tasks), context(executor, reader))) rows.push(result.rows);
    expect(rows).toEqual([0, 1, 2, 3]);
  });

  it('reads a filtered task’s prefetched output pages with its filter pages in one coalesced read', async () => {
    const { reader, requests } = recordingReader();
    const { executor, jobs } = fakeExecutor();
    // The output column lies between two filter columns: one request, not three.
    const t = task(0, {
      filter: [
        [0, 100],
        [300, 400],
      ],
      output: [[100, 300]],
    });
    const ctx = context(executor, reader, { scan: FILTERED });
    for await (const _ of runPlan(plan([t]), ctx)) {
      // drain
    }
    expect(requests).toEqual([[0, 400]]);
    expect(jobs[0]?.chunks.map((c) => [c.start, c.data.length])).toEqual([[0, 400]]);
    // The request counts as phase 1; the output ranges' bytes as phase 2.
    expect(ctx.cost.filter).toMatchObject({ requests: 1, bytes: 200 });
    expect(ctx.cost.output).toMatchObject({ requests: 0, bytes: 200 });
  });

  it('without prefetch, reads only the filter pages up front', async () => {
    const { reader, requests } = recordingReader();
    const { executor } = fakeExecutor();
    const t = task(0, {
      filter: [
        [0, 100],
        [300, 400],
      ],
      output: [[100, 300]],
    });
    const ctx = context(executor, reader, { prefetchOutputBytes: 0, scan: FILTERED });
    for await (const _ of runPlan(plan([t]), ctx)) {
      // drain
    }
    expect(requests).toEqual([
      [0, 100],
      [300, 400],
    ]);
    expect(ctx.cost.output.bytes).toBe(0);
  });

  it('prefetches output pages by the bytes waiting could save, not by their size', async () => {
    const reads = async (skippable: number) => {
      const { reader, requests } = recordingReader();
      const { executor } = fakeExecutor();
      // 2000 bytes of output pages, over a `prefetchOutputBytes` of 1000.
      const t = task(0, { filter: [[0, 100]], output: [[100, 2100]], skippable });
      const ctx = context(executor, reader, { scan: FILTERED, prefetchOutputBytes: 1000 });
      for await (const _ of runPlan(plan([t]), ctx)) {
        // drain
      }
      return requests;
    };
    // One match reads them all (pages no finer than the filter's): one read, both phases.
    expect(await reads(0)).toEqual([[0, 2100]]);
    expect(await reads(1000)).toEqual([[0, 2100]]);
    // Waiting for the filter may save more than that: the filter pages alone first.
    expect(await reads(1001)).toEqual([[0, 100]]);
  });

  it('fetches at most 16 × prefetchOutputBytes per scan up front on the assumption of a match', async () => {
    const { reader, requests } = recordingReader();
    const { executor } = fakeExecutor();
    // Ten tasks, 3000 output bytes each that one match reads whole (skippable 0), over a
    // `prefetchOutputBytes` of 1000: the budget of 16,000 admits five.
    const tasks = Array.from({ length: 10 }, (_, i) =>
      task(i, {
        filter: [[i * 10_000, i * 10_000 + 100]],
        output: [[i * 10_000 + 100, i * 10_000 + 3100]],
        skippable: 0,
      }),
    );
    const ctx = context(executor, reader, { scan: FILTERED, prefetchOutputBytes: 1000 });
    for await (const _ of runPlan(plan(tasks), ctx)) {
      // drain
    }
    const upFront = tasks.filter((_, i) =>
      requests.some(([start, end]) => start === i * 10_000 && end === i * 10_000 + 3100),
    );
    expect(upFront.map((t) => t.spec.taskIdx)).toEqual([0, 1, 2, 3, 4]);
    // The others read their filter pages alone.
    for (let i = 5; i < 10; i++) expect(requests).toContainEqual([i * 10_000, i * 10_000 + 100]);
  });

  it('bounds read-ahead in fetched bytes: a slow consumer has at most that many planned bytes in flight', async () => {
    const { reader } = recordingReader();
    const { executor, started } = fakeExecutor({ tasksAlive: 16 });
    const tasks = Array.from({ length: 10 }, (_, i) => task(i, { output: [[i * 10_000, i * 10_000 + 1000]] }));
    const scan = runPlan(plan(tasks), context(executor, reader, { readAheadBytes: 3000 }));
    await scan.next();
    // The consumer holds task 0's result and waits: tasks 0..3 are the most that fit.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started.length).toBeLessThanOrEqual(4);
    await scan.return(undefined);
  });

  it('bounds read-ahead in decoded bytes, at the ratio the finished tasks showed', async () => {
    const { reader } = recordingReader();
    // Each task plans 100,000 bytes and decodes to 1 MB (10×). With a 2.5 MB bound, the first
    // window (before any task finished) assumes 4× and launches 6 tasks; once the ratio is
    // known, no task starts until fewer than ~3 results are held or expected ahead.
    const { executor, started } = fakeExecutor({ tasksAlive: 16, decodedBytes: () => 1_000_000 });
    const tasks = Array.from({ length: 12 }, (_, i) => task(i, { output: [[i * 200_000, i * 200_000 + 100_000]] }));
    const scan = runPlan(plan(tasks), context(executor, reader, { readAheadDecodedBytes: 2_500_000 }));
    expect(started.length).toBeLessThanOrEqual(6);
    const rows: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = await scan.next();
      if (!next.done) rows.push(next.value.rows);
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Handed to the executor and not yet taken by the consumer.
      expect(started.length - rows.length).toBeLessThanOrEqual(i < 4 ? 6 : 3);
    }
    const rest: number[] = [];
    for await (const result of { [Symbol.asyncIterator]: () => scan }) rest.push(result.rows);
    expect([...rows, ...rest]).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('over HTTP, reads the tasks after a full window ahead, within PREFETCH_BYTES and readAheadBytes', async () => {
    const run = async (options: {
      remote: boolean;
      limit?: number;
      readAheadBytes?: number;
      taskBytes?: number;
      cached?: number;
    }) => {
      const requests: Array<[number, number]> = [];
      const reader: RangeReader = {
        remote: options.remote,
        async read(start, end) {
          requests.push([start, end]);
          await new Promise((resolve) => setTimeout(resolve, 1));
          const data = new Uint8Array(end - start);
          data[0] = start % 251;
          return data;
        },
      };
      // One task at a time (a window of two), each taking 20 ms to decode.
      const { executor, started, jobs } = fakeExecutor({ tasksAlive: 1, delayMs: () => 20 });
      const size = options.taskBytes ?? 1000;
      const stride = 2 * size;
      const tasks = Array.from({ length: 12 }, (_, i) => task(i, { output: [[i * stride, i * stride + size]] }));
      // A task whose columns a host's cache holds: nothing to read.
      if (options.cached !== undefined) (tasks[options.cached] as PlannedTask).spec.cacheKey = 'cached';
      executor.holds = (key) => key === 'cached';
      const overrides = options.readAheadBytes === undefined ? {} : { readAheadBytes: options.readAheadBytes };
      const scan = runPlan(plan(tasks, options.limit ?? null), context(executor, reader, overrides));
      const first = scan.next();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const early = { requested: requests.length, started: started.length };
      await first;
      for await (const _ of { [Symbol.asyncIterator]: () => scan }) {
        // drain
      }
      return { early, requests, jobs, stride };
    };
    // Before the first task is decoded, the reads of all twelve tasks are out; two were handed over.
    const http = await run({ remote: true });
    expect(http.early).toEqual({ requested: 12, started: 2 });
    // Each task still gets exactly its own bytes, read once.
    expect(http.requests).toHaveLength(12);
    for (const job of http.jobs) {
      const i = (JSON.parse(job.spec) as { taskIdx: number }).taskIdx;
      expect(job.chunks.map((c) => [c.start, c.data.byteLength, c.data[0]])).toEqual([
        [i * http.stride, 1000, (i * http.stride) % 251],
      ]);
    }
    // Within readAheadBytes: the window's 2,000 bytes and two tasks more.
    expect((await run({ remote: true, readAheadBytes: 4000 })).early.requested).toBe(4);
    // Within PREFETCH_BYTES: tasks of an eighth of it, eight ahead of the window's two.
    expect((await run({ remote: true, taskBytes: PREFETCH_BYTES / 8 })).early.requested).toBe(10);
    // It stops at a task with nothing to read (its columns cached): tasks 2–4 only.
    expect((await run({ remote: true, cached: 5 })).early.requested).toBe(5);
    // Not from memory or a local file, and not for a limit over a filter (it may end at any task).
    expect((await run({ remote: false })).early.requested).toBe(2);
    expect((await run({ remote: true, limit: 5 })).early.requested).toBe(1);
  });

  it('reads ahead through the ranges several tasks list: once, and each byte counted in one phase', async () => {
    const { reader, requests } = recordingReader();
    const remote: RangeReader = { read: reader.read.bind(reader), remote: true };
    // A window of two: tasks 2 and 3 are read ahead. Tasks 0–2 split one row group and list the
    // same whole chunks; both phases are read up front (their output is within prefetchOutputBytes).
    const { executor, jobs } = fakeExecutor({ tasksAlive: 1, delayMs: () => 10 });
    const mib = 1 << 20;
    const split = [0, 1, 2].map((i) => task(i, { filter: [[0, 2 * mib]], output: [[2 * mib, 4 * mib]] }));
    const other = task(3, { filter: [[4 * mib, 5 * mib]], output: [[5 * mib, 6 * mib]] });
    const ctx = context(executor, remote, { scan: FILTERED, prefetchOutputBytes: 4 * mib });
    for await (const _ of runPlan(plan([...split, other]), ctx)) {
      // drain
    }
    expect(requests.sort((a, b) => a[0] - b[0])).toEqual([
      [0, 4 * mib],
      [4 * mib, 6 * mib],
    ]);
    expect(jobs.map((job) => job.chunks.reduce((sum, c) => sum + c.data.length, 0))).toEqual([
      4 * mib,
      4 * mib,
      4 * mib,
      2 * mib,
    ]);
    // The reads count as phase 1, the output ranges' bytes as phase 2, the shared ones once.
    expect(ctx.cost.filter).toMatchObject({ requests: 2, bytes: 3 * mib });
    expect(ctx.cost.output).toMatchObject({ requests: 0, bytes: 3 * mib });
  });

  it('aborts its reads ahead when the consumer returns with no task running', async () => {
    const signals: AbortSignal[] = [];
    const reader: RangeReader = {
      remote: true,
      read(start, end, signal) {
        if (start === 0) return Promise.resolve(new Uint8Array(end - start));
        if (signal !== undefined) signals.push(signal);
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
    };
    // A window of one task: when its result is taken, nothing runs, and three tasks were read ahead.
    const { executor, started } = fakeExecutor({ tasksAlive: 0 });
    const tasks = Array.from({ length: 4 }, (_, i) => task(i, { output: [[i * 10_000, i * 10_000 + 1000]] }));
    const scan = runPlan(plan(tasks), context(executor, reader));
    await scan.next();
    expect(started).toEqual([0]);
    expect(signals).toHaveLength(3);
    await scan.return(undefined);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });

  it('pulls parts to read ahead only after the first result, over HTTP, and when the scan may hold them', async () => {
    const run = async (options: { mayPullAhead: boolean; remote: boolean }) => {
      const { reader, requests } = recordingReader();
      const source: RangeReader = { read: reader.read.bind(reader), remote: options.remote };
      const { executor } = fakeExecutor({ tasksAlive: 1, delayMs: () => 20 });
      const base = context(executor, source, { mayPullAhead: () => options.mayPullAhead });
      let pulled = 0;
      async function* parts(): AsyncGenerator<ScanPart> {
        for (let i = 0; i < 8; i++) {
          pulled += 1;
          yield { ...base, tasks: [task(i, { output: [[i * 10_000, i * 10_000 + 100]] })] };
        }
      }
      const scan = runParts(parts(), false, base);
      const first = scan.next();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const beforeFirst = pulled;
      await first;
      const second = scan.next();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const afterFirst = { pulled, requested: requests.length };
      await second;
      await scan.return(undefined);
      return { beforeFirst, afterFirst };
    };
    // A file each, a window of two. Before the first result, only the window's files are planned
    // (a pull may walk many files, and the first result does not wait for it); after it, the
    // window's next file and the other five, read ahead — or none of those five: no room for
    // their footers, or nothing gained (not over HTTP).
    expect(await run({ mayPullAhead: true, remote: true })).toEqual({
      beforeFirst: 2,
      afterFirst: { pulled: 8, requested: 8 },
    });
    expect(await run({ mayPullAhead: false, remote: true })).toEqual({
      beforeFirst: 2,
      afterFirst: { pulled: 3, requested: 3 },
    });
    expect(await run({ mayPullAhead: true, remote: false })).toEqual({
      beforeFirst: 2,
      afterFirst: { pulled: 3, requested: 3 },
    });
  });

  it('aborts the reads it started ahead when the consumer returns early', async () => {
    const signals: AbortSignal[] = [];
    const reader: RangeReader = {
      remote: true,
      read(start, end, signal) {
        if (signal !== undefined) signals.push(signal);
        // The first two tasks' bytes arrive; the reads ahead of them never end unless aborted.
        if (start < 20_000) return Promise.resolve(new Uint8Array(end - start));
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
    };
    const { executor } = fakeExecutor({ tasksAlive: 1, delayMs: () => 5 });
    const tasks = Array.from({ length: 6 }, (_, i) => task(i, { output: [[i * 10_000, i * 10_000 + 1000]] }));
    const scan = runPlan(plan(tasks), context(executor, reader));
    await scan.next();
    expect(signals).toHaveLength(6);
    await scan.return(undefined);
    expect(signals.slice(2).every((signal) => signal.aborted)).toBe(true);
  });

  it('tells the executor what the scan plans before fetching', async () => {
    const { reader, requests } = recordingReader();
    const { executor } = fakeExecutor();
    const prepared: Array<[number, number]> = [];
    executor.prepare = (_file, bytes) => prepared.push([bytes, requests.length]);
    const tasks = [0, 1].map((i) => task(i, { output: [[i * 1000, i * 1000 + 100]] }));
    for await (const _ of runPlan(plan(tasks), context(executor, reader))) {
      // drain
    }
    // 200 planned bytes, announced when no request had been made yet.
    expect(prepared).toEqual([[200, 0]]);
  });

  it('weighs a scan over several parts (a dataset’s files) by the parts it may read, unbounded when unknown', async () => {
    const run = async (partsExpected: number | undefined) => {
      const { reader } = recordingReader();
      const { executor, jobs } = fakeExecutor({ tasksAlive: 1 });
      const prepared: number[] = [];
      executor.prepare = (_file, bytes) => prepared.push(bytes);
      const base = context(executor, reader, partsExpected === undefined ? {} : { partsExpected });
      const part = (first: number): ScanPart => ({
        ...base,
        tasks: [first, first + 1].map((i) => task(i, { output: [[i * 1000, i * 1000 + 100]] })),
      });
      async function* parts(): AsyncGenerator<ScanPart> {
        yield { ...part(4), tasks: [] };
        yield part(0);
        yield { ...part(4), tasks: [] };
        yield part(2);
      }
      for await (const _ of runParts(parts(), false, base)) {
        // drain
      }
      return { prepared, planned: jobs.map((job) => job.scanPlannedBytes) };
    };
    // The first file alone: its 200 bytes (a small query may decode on the page); a part without
    // tasks does not count. With the second file's tasks: 200 bytes per file with tasks, times the
    // files the scan may read (50: a big query); not knowing how many, a bulk read.
    expect(await run(50)).toEqual({ prepared: [200, 10_000], planned: [200, 200, 10_000, 10_000] });
    const unknown = Number.POSITIVE_INFINITY;
    expect(await run(undefined)).toEqual({ prepared: [200, unknown], planned: [200, 200, unknown, unknown] });
    // Never fewer parts than those seen.
    expect((await run(1)).planned).toEqual([200, 200, 400, 400]);
  });

  it('stops fetching and decoding when the consumer returns early, and closes the scan', async () => {
    const { reader } = recordingReader();
    const { executor, started, jobs, closed } = fakeExecutor({ tasksAlive: 2, delayMs: () => 5 });
    const tasks = Array.from({ length: 20 }, (_, i) => task(i, { output: [[i * 1000, i * 1000 + 10]] }));
    for await (const result of runPlan(plan(tasks), context(executor, reader))) {
      if (result.rows === 1) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started.length).toBeLessThan(20);
    // Every task went with the scan's reference (its spec sent once per host), then closed once.
    expect(new Set(jobs.map((j) => j.scan.scanId))).toEqual(new Set([UNFILTERED.scanId]));
    expect(closed).toEqual([UNFILTERED.scanId]);
  });

  it('sends a task only what differs per task: the scan is its own reference', async () => {
    const { reader } = recordingReader();
    const { executor, jobs, closed } = fakeExecutor();
    const tasks = [0, 1].map((i) => task(i, { filter: [[i * 1000, i * 1000 + 100]] }));
    for await (const _ of runPlan(plan(tasks), context(executor, reader, { scan: FILTERED }))) {
      // drain
    }
    for (const job of jobs) {
      expect(job.scan).toBe(FILTERED);
      expect(Object.keys(JSON.parse(job.spec) as object)).not.toContain('filter');
    }
    expect(closed).toEqual([FILTERED.scanId]);
  });
});

describe('DecodedAhead', () => {
  it('estimates at the prior ratio until a task finished, then at the observed one; taking a result frees it', () => {
    const d = new DecodedAhead();
    d.launch(0, 100);
    d.launch(1, 100);
    expect(d.estimate(100)).toBe(100 * PRIOR_DECODED_PER_PLANNED);
    expect(d.ahead()).toBe(200 * PRIOR_DECODED_PER_PLANNED);
    d.finish(0, 1000);
    expect(d.estimate(50)).toBe(500);
    // Task 0 held (1000) + task 1 expected (1000).
    expect(d.ahead()).toBe(2000);
    d.take(0);
    expect(d.ahead()).toBe(1000);
    d.finish(1, 3000);
    expect(d.estimate(100)).toBe(2000);
    d.take(1);
    expect(d.ahead()).toBe(0);
  });
});

describe('scanRef', () => {
  const plan = (columnCacheBytes: number) =>
    ({
      scan: { scanId: 7, filter: { op: 'true' }, columnCacheBytes, predicateCacheBytes: 0 },
      tasks: [],
    }) as unknown as ReadPlan;

  it("gives the page's instance its own cache share when it differs from the workers'", () => {
    const ref = scanRef(plan(56), 16);
    expect(ref).toMatchObject({ scanId: 7, filtered: true });
    expect(JSON.parse(ref.spec)).toMatchObject({ columnCacheBytes: 56, filter: { op: 'true' } });
    expect(JSON.parse(ref.pageSpec ?? '{}')).toEqual({ ...JSON.parse(ref.spec), columnCacheBytes: 16 });
  });

  it('sends one spec to every host when there is no page share, or it is the same', () => {
    expect(scanRef(plan(64)).pageSpec).toBeUndefined();
    expect(scanRef(plan(64), 64).pageSpec).toBeUndefined();
  });
});
