/**
 * A running scan: an async iterable of apache-arrow `RecordBatch`es in file order, plus
 * {@link Scan.toTable} and live {@link ScanStats}.
 *
 * A scan starts when first iterated and can be iterated once. Breaking out of the loop (or
 * aborting the `signal`) stops fetching and decoding of the tasks still in flight.
 *
 * An iterator left unfinished without `return()` — `await scan[Symbol.asyncIterator]().next()`
 * for a first batch, then dropped — would keep what its scan holds for good: its generator never
 * resumes, so its `finally` blocks never run (a dataset's files stay pinned open past
 * `footerMemoryBytes`, the workers keep the scan's state). The iterator handed out is a thin
 * wrapper registered with a `FinalizationRegistry`: when it is collected unfinished, its
 * generator is told to return, and lets go of everything as a `break` would — at the engine's
 * next garbage collection, not at once.
 */
import type { RecordBatch, Schema, Table } from 'apache-arrow';
import { arrow } from './arrow.js';
import { ParquetSkimError } from './errors.js';
import type { PlanStats, PrunedBy } from './wasm/contract.js';
import type { CacheCounters } from './worker/protocol.js';

/** Counters of one scan, updated while it runs. */
export interface ScanStats extends Omit<PlanStats, 'prunedRowGroups'> {
  /** Read tasks planned / finished. */
  tasksTotal: number;
  tasksDone: number;
  /** Row groups read (their filter columns fetched, or served by a worker's cache). */
  rowGroupsRead: number;
  /** Rows returned so far. */
  rowsOut: number;
  /**
   * Output rows of filter columns not decoded twice: served from arrow-rs's predicate cache within a
   * task, or, on a cross-scan hit, from the filter columns the worker's cache kept.
   */
  rowsFromPredicateCache: number;
  /**
   * Data pages of which the plan fetches only the first bytes, because the scan needs only their
   * first rows (a first 100 rows, a page of a table: snappy pages, read with an offset index).
   */
  pagesInPart: number;
  /**
   * Of those, pages whose rows needed more than the bytes fetched (or that had to be read whole:
   * a CRC to verify, a page stored uncompressed): their rest was fetched, one more round trip.
   */
  pagesReadAgain: number;
  /** Bytes the plan lists, each range once (an upper bound with a filter). */
  bytesPlanned: number;
  /**
   * Bytes fetched: in all, for the filter columns (phase 1), for the output columns (phase 2:
   * output pages fetched together with the filter pages count here too).
   */
  bytesFetched: number;
  bytesFetchedFilter: number;
  bytesFetchedOutput: number;
  /** Range requests made (after coalescing). */
  requests: number;
  /**
   * Of `bytesFetched`, the bytes between wanted ranges that requests read through, each merge to
   * save a request (see `gapBytes`).
   */
  bytesReadThrough: number;
  /**
   * The largest gap between two wanted ranges the scan's reads would read through: the reader's
   * `coalesceGapBytes` (64 KiB by default), or, left to the default over a link measured fast,
   * what the link moves in 2 ms (up to 1 MiB) between two large runs of wanted bytes. It follows
   * `linkBytesPerMs`, so the same scan can make fewer requests on a fast link than on a slow one.
   */
  gapBytes: number;
  /**
   * The source's link when the scan last read: bytes per millisecond of response bodies in
   * transit, per origin (latency not counted). `null` until 256 KiB came from the origin, and for
   * a `Blob` or bytes in memory.
   */
  linkBytesPerMs: number | null;
  /**
   * Rounds of reads spent walking page headers before planning, in a file without an offset
   * index, so that first rows read their pages rather than whole column chunks (0 otherwise).
   * Their requests and bytes count in `requests` and `bytesFetchedOutput`.
   */
  pageWalkRounds: number;
  /** Sum of request durations (overlapping requests each count). */
  fetchMs: number;
  /** Sum of decode + filter + IPC-encode time in the task hosts (across workers). */
  decodeMs: number;
  /** Time turning IPC into apache-arrow batches on the calling thread. */
  ipcMs: number;
  /**
   * Time tasks waited between being handed to the executor and starting in a task host: for a
   * worker still starting (loading its script, instantiating the core) or busy (summed over tasks).
   */
  queueMs: number;
  /** Wall time from the first pull to the end. */
  elapsedMs: number;
  /** When each step of the scan first happened (see {@link ScanTimeline}). */
  timeline: ScanTimeline;
  /**
   * The largest WebAssembly memory of a worker (or of the thread decoding inline) after one of
   * this scan's tasks. A WebAssembly memory never shrinks, so this is the workers' heap
   * high-water mark — over their life, earlier scans included.
   */
  wasmMemoryPeakBytes: number;
  /** The workers' cross-scan cache of decoded filter columns, during this scan. */
  columnCache: ColumnCacheStats;
  /** What happened to each row group, by index (see {@link RowGroupFate}). */
  rowGroupFates: RowGroupFate[];
}

/**
 * Milestones of a scan, in milliseconds since `file.scan()` was called; `null` until reached. The
 * gaps between them are where a small scan's time goes: planning, waiting for bytes, waiting
 * for a worker, decoding, and turning IPC into apache-arrow batches.
 */
export interface ScanTimeline {
  /** `performance.now()` when `file.scan()` was called: the zero of the others. */
  startedAt: number;
  /** The scan was planned (`file.scan()` returned). */
  planned: number;
  /** The first range request was sent (or the first read of a `Blob`/buffer started). */
  firstRequest: number | null;
  /** The first range request's bytes had all arrived. */
  firstBytes: number | null;
  /** The first task was handed to the executor (a worker, or the page's own instance). */
  firstTask: number | null;
  /** The first task's result arrived on the calling thread. */
  firstResult: number | null;
  /** The first batch was yielded, as apache-arrow. */
  firstBatch: number | null;
  /** The scan ended (every batch yielded, or the limit reached). */
  done: number | null;
}

/**
 * A row group in one scan: skipped by footer `stats`, `bloom` filters or the `pageIndex`; `read`
 * (its filter columns fetched and decoded); `cached` (its filter columns came from a worker's
 * cache); or `unread` (not needed: past a limit, say).
 */
export type RowGroupFate = PrunedBy | 'read' | 'cached' | 'unread';

/**
 * The cross-scan cache during one scan. Each worker — and the page's own instance, for the small
 * tasks it decodes — keeps the filter columns its tasks decoded (an LRU within its share of the
 * reader's `cacheBytes`: an eighth for the page, the rest split among the workers); a later scan
 * of the same file and filter columns takes them from there instead of fetching and decoding them.
 */
export interface ColumnCacheStats
  extends Pick<CacheCounters, 'hits' | 'misses' | 'bytesInserted' | 'bytesEvicted' | 'bytesRejected'> {
  // hits / misses: filtered tasks whose filter columns came from a worker's cache / were
  // decoded; bytes*: added to, evicted from, and decoded but not kept by the caches (over budget).
  /** Most bytes all caches (the workers' and the page's) held together during the scan; never above `budgetBytes`. */
  peakBytes: number;
  /** The caches' budget: the reader's `cacheBytes` (0: off), or less under `memoryLimitBytes` (an eighth of it per instance). */
  budgetBytes: number;
  /** Bytes all caches held, at the start and after each task: milliseconds since the start. */
  series: Array<{ ms: number; bytes: number }>;
}

/** The prototype every async generator's iterators share (`[Symbol.asyncIterator]` returns `this`). */
const ASYNC_ITERATOR_PROTOTYPE: object = Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype);

/** Generators of iterators collected before they finished: each is told to return (see the module doc). */
const abandoned = new FinalizationRegistry<AsyncGenerator<RecordBatch>>((generator) => {
  generator.return(undefined).catch(() => undefined);
});

/**
 * `generator` behind an iterator of its own, which returns the generator when it is collected
 * unfinished. The generator must not reach the wrapper (it does not: the wrapper is made here).
 */
function returnedWhenDropped(generator: AsyncGenerator<RecordBatch>): AsyncIterableIterator<RecordBatch> {
  const ended = <T>(result: IteratorResult<RecordBatch, T>) => {
    if (result.done === true) abandoned.unregister(iterator);
    return result;
  };
  // On the engine's %AsyncIteratorPrototype%, as a generator is: `[Symbol.asyncIterator]`, and
  // `[Symbol.asyncDispose]` (`await using`) where the engine has it, come from there.
  const iterator: AsyncIterableIterator<RecordBatch> = Object.assign(Object.create(ASYNC_ITERATOR_PROTOTYPE), {
    next: () => generator.next().then(ended),
    return: (value?: unknown) => {
      abandoned.unregister(iterator);
      return generator.return(value as undefined);
    },
    throw: (error?: unknown) => generator.throw(error).then(ended),
  });
  abandoned.register(iterator, generator, iterator);
  return iterator;
}

/** The batches of a scan. */
export class Scan<S extends ScanStats = ScanStats> implements AsyncIterable<RecordBatch> {
  private started = false;
  private schemaOf: Schema | undefined;

  /** @internal */
  constructor(
    private readonly readSchema: () => Schema,
    /** Live counters of this scan (a dataset scan's add each file's). */
    readonly stats: S,
    private readonly produce: () => AsyncGenerator<RecordBatch>,
  ) {}

  /** The schema of every batch (also of an empty result); built on first use. */
  get schema(): Schema {
    this.schemaOf ??= this.readSchema();
    return this.schemaOf;
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordBatch> {
    if (this.started) {
      throw new ParquetSkimError('INVALID_ARGUMENT', 'a scan can be iterated once; call file.scan() again');
    }
    this.started = true;
    return returnedWhenDropped(this.produce());
  }

  /** Collects every batch into one apache-arrow `Table`. */
  async toTable(): Promise<Table> {
    const batches: RecordBatch[] = [];
    for await (const batch of this) batches.push(batch);
    const { Table } = arrow();
    return batches.length === 0 ? new Table(this.schema) : new Table(batches);
  }
}
