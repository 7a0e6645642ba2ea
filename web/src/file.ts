/**
 * An open Parquet file: metadata, Arrow schema, request log, and {@link ParquetFile.scan}.
 *
 * Opening cost one read of the file's tail (more only when footer + page index are larger).
 * A scan plans in the core (which row groups, which rows, which byte ranges), then the scheduler
 * fetches and the executor decodes; nothing here touches bytes.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { type AggregateAst, type AggregateValue, finish, mergePartials, type Partial } from './aggregate.js';
import { arrowReadsViews, batchesFromIpc, schemaFromIpc } from './arrow.js';
import { ParquetSkimError, throwIfAborted, toSkimError } from './errors.js';
import { type FilterAst, FilterExpr } from './filter.js';
import type { ByteRange } from './io/coalesce.js';
import type { IoQueue } from './io/io-queue.js';
import type { Source } from './io/source.js';
import type { FileMetadata, RequestLogEntry } from './metadata.js';
import { recheck } from './recheck.js';
import { type RowGroupFate, Scan, type ScanStats } from './scan.js';
import type { Executor, FileFooter, TaskResult } from './scheduler/executor.js';
import { type PhaseCosts, type ReadPlan, runPlan, type ScanPart, scanRef } from './scheduler/scheduler.js';
import { keyOf } from './scheduler/shared-reads.js';
import { instanceTrapped } from './trap.js';
import type { DecodeLimits, ScanRequest, TaskSpec } from './wasm/contract.js';
import type { ParquetFileHandle } from './wasm/parquet_skim_wasm.js';
import type { Chunk } from './worker/protocol.js';

/** Options of {@link ParquetFile.scan}. */
export interface ScanOptions {
  /**
   * Columns to return, in this order; dotted paths select nested fields (`a.b`). A map is read
   * whole: its keys alone or its values alone throw `INVALID_ARGUMENT`. Default: all.
   */
  columns?: string[];
  /** Rows to skip from the start of the file. */
  offset?: number;
  /** Most rows to return. */
  limit?: number;
  /** Rows per `RecordBatch` (default 8192). */
  batchSize?: number;
  /**
   * Keep only rows where this holds: SQL `WHERE` text (`"l_quantity < 24 AND l_shipdate >=
   * DATE '1994-01-01'"`), a builder expression (`col('l_quantity').lt(24)`), or its JSON AST.
   * Row groups and pages that cannot match are never fetched.
   */
  filter?: string | FilterExpr | FilterAst;
  /** Aborting rejects the iteration with the signal's reason and stops all fetching/decoding. */
  signal?: AbortSignal;
  /** Called as tasks finish, with the scan's progress. */
  onProgress?: (progress: ScanProgress) => void;
}

/**
 * The options of a scan the core checks before anything is planned (`FileContext.checkScanOptions`):
 * rows and, for an aggregate, how many aggregates it asks for.
 */
export type CheckedOptions = Pick<ScanOptions, 'offset' | 'limit' | 'batchSize'> & { aggregates?: number };

/** What {@link ScanOptions.onProgress} receives. */
export interface ScanProgress {
  tasksDone: number;
  tasksTotal: number;
  rowsOut: number;
  bytesFetched: number;
}

/**
 * Scans planned in this page or process, each with its own id: the task hosts know a scan by it,
 * and the workers' caches evict only earlier scans' entries.
 */
let nextScanId = 1;

/** Rows below which a row group is not split into several tasks. */
const MIN_TASK_ROWS = 65_536;

/**
 * Most rounds of reads walking page headers before a scan of a file without an offset index
 * (`crate/core/src/page_layout.rs`): what is still unwalked after them is read whole.
 */
const PAGE_WALK_ROUNDS = 3;

/** What a file needs from the reader that opened it. */
export interface FileContext {
  io: IoQueue;
  executor: Executor;
  /** Most planned bytes of tasks fetched ahead of the consumer. */
  readAheadBytes: number;
  /** Most decoded bytes held ahead of the consumer (see `ScanContext.readAheadDecodedBytes`). */
  readAheadDecodedBytes: number;
  /** See `SchedulerContext.prefetchOutputBytes`. */
  prefetchOutputBytes: number;
  /** Column chunks without an offset index worth walking (see `ReaderOptions.pageWalkMinBytes`). */
  pageWalkMinBytes: number;
  /**
   * The reader's one cache budget (`ReaderOptions.cacheBytes`): split among the tasks alive for
   * arrow-rs's predicate cache, and among the workers for their cross-scan caches.
   */
  cacheBytes: number;
  /** `ReaderOptions.memoryLimitBytes`, if set: it caps each cache ({@link instanceCacheBytes}). */
  memoryLimitBytes: number | null;
  assertOpen(): void;
  /** Aborted (reason: a `DISPOSED` error) when the reader is disposed: every scan stops at once. */
  lifetime: AbortSignal;
  /** SQL `WHERE` text → AST (the core's parser). */
  parseFilter(sql: string): FilterAst;
  /** Throws `INVALID_ARGUMENT` naming the option unless `options` are valid (the core's rule, `check_scan_options`). */
  checkScanOptions(options: CheckedOptions): void;
}

/** A Parquet file opened by a {@link Reader}. */
export class ParquetFile {
  private schemaOf: Schema | undefined;
  private metadataOf: FileMetadata | undefined;
  /**
   * What opening cost: its reads of the file (requests, bytes, their summed milliseconds) and its
   * wall time, from `reader.open()` until the metadata was decoded; `startedAt` is
   * `performance.now()` then. Opening is reading the tail and decoding it, one after the other,
   * so `ms - fetchMs` is about the time decoding the footer and page index took.
   */
  readonly openStats: { startedAt: number; ms: number; requests: number; bytes: number; fetchMs: number };
  private readonly footer: FileFooter;
  private closed = false;
  /** Rows and footer bytes, from the footer (kept: readable after the file is closed). */
  private readonly rows: number;
  private readonly footerSize: number;
  /** Scan parts of this file prepared and not yet closed (see {@link release}). */
  private partsOpen = 0;
  /** Scans' schemas not written yet (see {@link ScanSchema}): {@link close} writes them. */
  private readonly unwrittenSchemas = new Set<ScanSchema>();

  /** @internal */
  constructor(
    private readonly context: FileContext,
    private readonly source: Source,
    private readonly handle: ParquetFileHandle,
    fileId: number,
    /** The identity of the file's bytes (keys the workers' cross-scan caches). */
    private readonly fileKey: string,
    /** Decoding limits of every scan of this file (`maxPageBytes`, …), as the core takes them. */
    private readonly limits: DecodeLimits = {},
    /** `performance.now()` when `reader.open()` was called. */
    openedAt = performance.now(),
  ) {
    this.rows = handle.numRows;
    this.footerSize = handle.footerBytes;
    // The footer's bytes are copied out of the core only when a worker (or the page's instance,
    // after a close) is sent the file: a small query decoded on the page never needs them, nor
    // does a dataset's file its statistics rule out. The copy was ~5% of a warm first 100 rows
    // from memory (0.27 of ~5.6 ms profiled; Chromium, TPC-H SF1 layout a,
    // `bench/results/2026-11-29-warm-fixed-cost.md`). A copy that fails (the core out of
    // memory, or trapped) fails the task that needed it (`openFileRequest` in the pool).
    let buffers: Uint8Array[] | undefined;
    this.footer = {
      fileId,
      fileLen: handle.fileLen,
      starts: Array.from(handle.footerStarts()),
      get buffers(): Uint8Array[] {
        buffers ??= handle.footerBuffers() as Uint8Array[];
        return buffers;
      },
      viewTypes: arrowReadsViews(),
    };
    // Every task host gets the footer (the workers' copies are posted just after open() returns),
    // so decoding it there is off the first scan's path.
    context.executor.openFile(this.footer, handle);
    const opening = this.requestLog();
    this.openStats = {
      startedAt: openedAt,
      ms: performance.now() - openedAt,
      requests: opening.length,
      bytes: opening.reduce((sum, e) => sum + e.bytes, 0),
      fetchMs: opening.reduce((sum, e) => sum + e.ms, 0),
    };
  }

  /**
   * The file's Arrow schema (as apache-arrow reads it). Built on first use: a first query does not
   * wait for it.
   */
  get schema(): Schema {
    this.schemaOf ??= built(() => schemaFromIpc(recheck(() => this.openHandle().schemaIpc())));
    return this.schemaOf;
  }

  /** Row groups, column chunks, statistics, key-value metadata… (built on first use). */
  get metadata(): FileMetadata {
    this.metadataOf ??= built(() => JSON.parse(recheck(() => this.openHandle().summary())) as FileMetadata);
    return this.metadataOf;
  }

  /** Rows in the file (from the footer, without building {@link metadata}). */
  get numRows(): number {
    return this.rows;
  }

  /** Bytes of footer and page index read at open (as `metadata.footerBytes`, without building it). */
  get footerBytes(): number {
    return this.footerSize;
  }

  /**
   * Memory the open file holds in the core, in bytes: its decoded footer (metadata, page index)
   * and the footer bytes kept for the workers. Each worker a scan of the file ran on holds the
   * same again. A file of many row groups holds several times its footer.
   */
  get memoryBytes(): number {
    return this.closed ? 0 : this.handle.memoryBytes;
  }

  /** The core's handle, while the file is open (a dataset may have closed it: see `footerMemoryBytes`). */
  private openHandle(): ParquetFileHandle {
    if (this.closed) {
      throw new ParquetSkimError(
        'DISPOSED',
        'the file was closed (by its dataset, to keep its open files within footerMemoryBytes) before its schema or metadata were read; open it again',
      );
    }
    return this.handle;
  }

  /** Size of the file in bytes. */
  get byteLength(): number {
    return this.footer.fileLen;
  }

  /** Every read made for this file so far: range, HTTP status, bytes, milliseconds. */
  requestLog(): RequestLogEntry[] {
    return this.source.requestLog();
  }

  /**
   * Releases the file: its footer in every worker and its WebAssembly objects. Scans already
   * running finish; new ones are refused (`DISPOSED`). Closing twice does nothing.
   */
  close(): void {
    if (this.closed) return;
    // Both stay readable after the close — if they can be built: a core out of memory cannot, and
    // a close never fails (they are then `DISPOSED`, as if never read).
    // (Not after a trap of this thread's core: building them would only fail again, and leave the
    // handle borrowed, never to be freed.)
    if (!instanceTrapped()) {
      try {
        void this.schema;
        void this.metadata;
      } catch {
        // Not kept.
      }
      for (const schema of this.unwrittenSchemas) schema.write();
    }
    this.release();
  }

  /**
   * @internal Closes the file without keeping its schema and metadata readable: a dataset's file
   * it forgets (and opens again when a scan reaches it), whose summary nobody will read.
   */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.context.executor.closeFile(this.footer.fileId);
    // A scan still running (a part with tasks, not yet closed) may yet send the file to a
    // worker: its footer's bytes are taken out of the core before the core lets go of them.
    if (this.partsOpen > 0) {
      try {
        void this.footer.buffers;
      } catch {
        // The core is out of memory or trapped: that scan's next host fails its task.
      }
    }
    try {
      this.handle.free();
    } catch {
      // Still borrowed by a call that trapped (out of memory, say): it cannot be freed, and the
      // instance is suspect anyway. It is forgotten all the same.
    }
  }

  private filterAst(filter: ScanOptions['filter']): FilterAst | undefined {
    if (filter === undefined) return undefined;
    if (typeof filter === 'string') return this.context.parseFilter(filter);
    if (filter instanceof FilterExpr) return filter.toJSON();
    return filter;
  }

  /**
   * Plans a scan request (synchronously, so bad columns, filters and options throw at once). With
   * fewer tasks than workers can share (one big row group, say), row groups are split at page
   * boundaries into about two tasks per worker.
   */
  private plan(requested: ScanRequest, startedAt = performance.now()): Planned {
    let fields: ScanRequest = requested;
    this.context.assertOpen();
    if (this.closed) throw new ParquetSkimError('DISPOSED', 'the file was closed; open it again');
    try {
      // The reader's one cache budget: split among the tasks alive at once for arrow-rs's
      // in-task predicate cache, and among the hosts for their cross-scan caches.
      const { cacheBytes, executor } = this.context;
      const cap = instanceCacheBytes(this.context.memoryLimitBytes);
      const predicateCacheBytes = Math.floor(Math.min(cap, cacheBytes / Math.max(1, executor.tasksAlive)));
      const columnCacheBytes = cacheSharesOf(this.context).worker;
      fields = {
        ...fields,
        limits: this.limits,
        pageWalkMinBytes: this.context.pageWalkMinBytes,
        predicateCacheBytes,
        ...(columnCacheBytes > 0 ? { fileKey: this.fileKey, columnCacheBytes } : {}),
        scanId: nextScanId++,
      };
      let request = JSON.stringify(fields);
      let plan = JSON.parse(recheck(() => this.handle.planScan(request))) as ReadPlan;
      const workers = this.context.executor.concurrency;
      if (plan.tasks.length < 2 * workers && plan.stats.rowsScanned >= 2 * MIN_TASK_ROWS) {
        const targetTaskRows = Math.max(MIN_TASK_ROWS, Math.ceil(plan.stats.rowsScanned / (2 * workers)));
        request = JSON.stringify({ ...fields, targetTaskRows });
        plan = JSON.parse(recheck(() => this.handle.planScan(request))) as ReadPlan;
      }
      const stats = statsOf(plan, this.context);
      stats.timeline.startedAt = startedAt;
      stats.timeline.planned = performance.now() - startedAt;
      return { request, plan, stats, startedAt };
    } catch (error) {
      throw toSkimError(error);
    }
  }

  /**
   * Runs a planned scan: bloom filters first (for `=`/`IN`, one coalesced round trip, then plan
   * again with them), then every task, yielding results in plan order and keeping `stats`
   * current.
   */
  private async *execute(planned: Planned, callerSignal: AbortSignal | undefined): AsyncGenerator<TaskResult> {
    const { stats } = planned;
    // The caller's signal, and the reader's lifetime: dispose() aborts requests and tasks at once.
    const { lifetime } = this.context;
    const signal = callerSignal === undefined ? lifetime : AbortSignal.any([callerSignal, lifetime]);
    const started = performance.now();
    // Row groups with a task whose filter columns were not cached.
    const missed = new Set<number>();
    const cost = newPhaseCosts();
    const sync = () => syncStats(stats, cost, planned.startedAt, started);
    try {
      throwIfAborted(signal);
      const part = await this.preparePart(planned, signal, cost);
      const results = runPlan(planned.plan, {
        ...part,
        io: this.context.io,
        executor: this.context.executor,
        readAheadBytes: this.context.readAheadBytes,
        readAheadDecodedBytes: this.context.readAheadDecodedBytes,
        prefetchOutputBytes: this.context.prefetchOutputBytes,
        ...(signal !== undefined ? { signal } : {}),
        onTaskStart: () => {
          stats.timeline.firstTask ??= performance.now() - planned.startedAt;
        },
        onTaskDone: (task, result) => {
          stats.timeline.firstResult ??= performance.now() - planned.startedAt;
          countTask(stats, missed, task.spec, result);
          const bytes = this.context.executor.cachedBytes();
          stats.columnCache.series.push({ ms: performance.now() - started, bytes });
          stats.columnCache.peakBytes = Math.max(stats.columnCache.peakBytes, bytes);
        },
      });
      for await (const result of results) {
        sync();
        yield result;
      }
    } catch (error) {
      // Cancellation rejects with the signal's own reason, whatever it is (TimeoutError, …).
      if (signal?.aborted && error === signal.reason) throw error;
      throw toSkimError(error);
    } finally {
      sync();
    }
  }

  /**
   * What runs before a planned scan's tasks: page headers walked (a file without an offset index;
   * a scan without a filter or aggregates) and bloom filters read (a filter), each followed by
   * planning again (`planned.plan` and its stats are replaced). Returns the scan's part for the
   * scheduler.
   */
  private async preparePart(planned: Planned, signal: AbortSignal, cost: PhaseCosts): Promise<ScanPart> {
    const { request, stats } = planned;
    // A new plan keeps the scan's counters and its timeline (the caller holds it).
    const replan = () => {
      planned.plan = JSON.parse(recheck(() => this.handle.planScan(request))) as ReadPlan;
      const { timeline, pageWalkRounds } = stats;
      Object.assign(stats, statsOf(planned.plan, this.context), { timeline, pageWalkRounds });
    };
    this.assertOpen();
    // Only where the core's plan says they can help (`Learns`): a call that would answer
    // "nothing" still parses the request, and in a page's first query runs its code for the
    // first time, on the way to the first page request. (Page walks serve scans without a
    // filter, bloom filters scans with one: never both.)
    const { learns } = planned.plan;
    const held = learns.pages ? await this.walkPages(request, signal, cost, stats) : [];
    if (held.length > 0) replan();
    if (learns.blooms && (await this.readBlooms(request, signal, cost))) replan();
    const scan = scanRef(planned.plan, cacheSharesOf(this.context).page);
    const { tasks } = planned.plan;
    // A part without tasks is never run, nor closed: it needs no footer and is not counted.
    if (tasks.length === 0) return { file: this.footer, scan, reader: this.source, tasks, held, cost };
    this.assertOpen();
    this.partsOpen += 1;
    const onClose = () => {
      this.partsOpen -= 1;
    };
    return { file: this.footer, scan, reader: this.source, tasks, held, cost, onClose };
  }

  /**
   * @internal A dataset's scan of this file: plans `fields` at once (bad options throw here), and
   * `prepare` readies the part the dataset's scheduler runs, as a scan of this file alone would.
   * `schemaIpc` is the Arrow schema of the part's batches.
   */
  planPart(fields: ScanRequest, startedAt: number): FilePart {
    const planned = this.plan(fields, startedAt);
    return {
      planned,
      schemaIpc: () => recheck(() => this.openHandle().scanSchemaIpc(planned.request)),
      prepare: (signal, cost) => this.preparePart(planned, signal, cost),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new ParquetSkimError('DISPOSED', 'the file was closed during the scan');
  }

  /**
   * A file without an offset index: walks the page headers of the chunks the first rows need
   * (a few rounds at most), keeping the bytes read for the tasks; the next plan then reads their
   * pages instead of whole chunks. Returns the bytes read (none: nothing to walk).
   */
  private async walkPages(request: string, signal: AbortSignal, cost: PhaseCosts, stats: ScanStats): Promise<Chunk[]> {
    const held: Chunk[] = [];
    for (let round = 0; round < PAGE_WALK_ROUNDS; round++) {
      const ranges = JSON.parse(this.handle.pageRanges(request)) as ByteRange[];
      if (ranges.length === 0) break;
      const chunks = await this.context.io.read(this.source, ranges, signal, cost.output);
      this.assertOpen();
      for (const chunk of chunks) {
        this.handle.pushPageBytes(chunk.start, chunk.data);
        held.push(chunk);
      }
      stats.pageWalkRounds += 1;
    }
    return held;
  }

  /**
   * Reads the bloom filters an `=`/`IN` filter can use, in one coalesced round trip; whether any
   * were read (then the scan plans again with them). They only prune: if they cannot be read, the
   * scan goes on without them.
   */
  private async readBlooms(request: string, signal: AbortSignal, cost: PhaseCosts): Promise<boolean> {
    const ranges = JSON.parse(this.handle.bloomRanges(request)) as ByteRange[];
    if (ranges.length === 0) return false;
    const chunks = await this.context.io.read(this.source, ranges, signal, cost.filter).catch((error: unknown) => {
      if (signal.aborted) throw error;
      return [];
    });
    this.assertOpen();
    for (const chunk of chunks) this.handle.pushBloom(chunk.start, chunk.data);
    return chunks.length > 0;
  }

  /** Reads rows: an async iterable of `RecordBatch`es in file order (see {@link Scan}). */
  scan(options: ScanOptions = {}): Scan {
    const startedAt = performance.now();
    this.context.checkScanOptions(options);
    const fields = {
      columns: options.columns,
      offset: options.offset,
      limit: options.limit,
      batchSize: options.batchSize,
      filter: this.filterAst(options.filter),
    };
    const planned = this.plan(fields, startedAt);
    const schema = new ScanSchema(
      () => recheck(() => this.openHandle().scanSchemaIpc(planned.request)),
      this.unwrittenSchemas,
    );
    const { stats } = planned;
    const { timeline } = stats;
    timeline.planned = performance.now() - startedAt;
    const mark = (): number => performance.now() - startedAt;
    const produce = async function* (this: ParquetFile): AsyncGenerator<RecordBatch> {
      // With a filter the plan cannot place offset/limit in row groups: apply them here, in order,
      // and stop (aborting what is in flight) once the limit is reached.
      let skip = planned.plan.offset;
      let left = planned.plan.limit ?? Number.POSITIVE_INFINITY;
      // In the turn after this one: by then the scan's first reads are out.
      setTimeout(() => schema.write(), 0);
      try {
        for await (const result of this.execute(planned, options.signal)) {
          const ipcStarted = performance.now();
          const batches = batchesFromIpc(result.ipc);
          stats.ipcMs += performance.now() - ipcStarted;
          options.onProgress?.(progressOf(stats));
          for (const whole of batches) {
            if (left <= 0) return;
            const from = Math.min(skip, whole.numRows);
            skip -= from;
            const take = Math.min(whole.numRows - from, left);
            if (take <= 0) continue;
            left -= take;
            const batch = from === 0 && take === whole.numRows ? whole : whole.slice(from, from + take);
            stats.rowsOut += batch.numRows;
            timeline.firstBatch ??= mark();
            yield batch;
          }
          if (left <= 0) return;
        }
      } finally {
        timeline.done = mark();
      }
    }.bind(this);
    return new Scan(() => schemaFromIpc(schema.ipc()), stats, produce);
  }

  /**
   * Computes aggregates over the (filtered) rows inside the read tasks — decode, filter and fold
   * in one pass per batch in the worker; only partial results leave it:
   *
   * ```ts
   * const { values: { revenue, rows } } = await file.aggregate({
   *   filter: 'l_discount BETWEEN 0.05 AND 0.07',
   *   aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))), rows: count() },
   * });
   * ```
   */
  async aggregate<K extends string>(options: AggregateOptions<K>): Promise<AggregateResult<K>> {
    const names = Object.keys(options.aggregates) as K[];
    const specs = names.map((name) => options.aggregates[name]);
    const startedAt = performance.now();
    this.context.checkScanOptions({ batchSize: options.batchSize, aggregates: specs.length });
    const planned = this.plan(
      {
        filter: this.filterAst(options.filter),
        batchSize: options.batchSize,
        aggregates: specs,
      },
      startedAt,
    );
    let merged: Partial[] | undefined;
    for await (const result of this.execute(planned, options.signal)) {
      const partials = result.partials ?? null;
      if (partials === null) throw new ParquetSkimError('INTERNAL', 'an aggregate task returned no partials');
      merged = merged?.map((m, i) => mergePartials(specs[i]?.fn ?? 'count', m, partials[i] as Partial)) ?? partials;
      planned.stats.rowsOut += result.rows;
      options.onProgress?.(progressOf(planned.stats));
    }
    planned.stats.timeline.done = performance.now() - startedAt;
    const values = {} as Record<K, AggregateValue>;
    names.forEach((name, i) => {
      const spec = specs[i] as AggregateAst;
      const partial = merged?.[i];
      values[name] = partial === undefined ? (spec.fn === 'count' ? 0 : null) : finish(spec.fn, partial);
    });
    return { values, stats: { ...planned.stats } };
  }
}

/** @internal A file's share of a dataset's scan (see {@link ParquetFile.planPart}). */
export interface FilePart {
  planned: Planned;
  schemaIpc(): Uint8Array;
  prepare(signal: AbortSignal, cost: PhaseCosts): Promise<ScanPart>;
}

/** Fresh I/O counters of a scan's two phases. */
export function newPhaseCosts(): PhaseCosts {
  const phase = () => ({ requests: 0, bytes: 0, ms: 0, readThroughBytes: 0, gapBytes: 0 });
  return { filter: phase(), output: phase() };
}

/** A plan with its request and live statistics. */
export interface Planned {
  request: string;
  plan: ReadPlan;
  stats: ScanStats;
  /** `performance.now()` when the scan was asked for: the timeline's zero. */
  startedAt: number;
}

/** Options of {@link ParquetFile.aggregate}. */
export interface AggregateOptions<K extends string> {
  /** Named aggregates: `{ revenue: sum(...), rows: count() }`. */
  aggregates: Record<K, AggregateAst>;
  /** Keep only rows where this holds (as in {@link ScanOptions.filter}). */
  filter?: string | FilterExpr | FilterAst;
  batchSize?: number;
  signal?: AbortSignal;
  onProgress?: (progress: ScanProgress) => void;
}

/** What {@link ParquetFile.aggregate} returns: the named values and the scan's statistics. */
export interface AggregateResult<K extends string> {
  values: Record<K, AggregateValue>;
  stats: ScanStats;
}

/** Brings a scan's I/O counters and timeline up to date from its phases' costs. */
export function syncStats(stats: ScanStats, cost: PhaseCosts, plannedAt: number, started: number): void {
  const since = (at: number | undefined) => (at === undefined ? null : at - plannedAt);
  const earliest = (a: number | undefined, b: number | undefined) =>
    a === undefined ? b : b === undefined ? a : Math.min(a, b);
  stats.timeline.firstRequest = since(earliest(cost.filter.firstSentAt, cost.output.firstSentAt));
  stats.timeline.firstBytes = since(earliest(cost.filter.firstDoneAt, cost.output.firstDoneAt));
  stats.requests = cost.filter.requests + cost.output.requests;
  stats.bytesFetchedFilter = cost.filter.bytes;
  stats.bytesFetchedOutput = cost.output.bytes;
  stats.bytesFetched = cost.filter.bytes + cost.output.bytes;
  stats.bytesReadThrough = cost.filter.readThroughBytes + cost.output.readThroughBytes;
  stats.gapBytes = Math.max(cost.filter.gapBytes, cost.output.gapBytes);
  stats.linkBytesPerMs = cost.output.linkBytesPerMs ?? cost.filter.linkBytesPerMs ?? null;
  stats.fetchMs = cost.filter.ms + cost.output.ms;
  stats.elapsedMs = performance.now() - started;
}

/** The row groups task `spec` decodes: its own, then any it spans (small row groups share a task). */
export function rowGroupsOf(spec: TaskSpec): number[] {
  return [spec.rowGroupIdx, ...(spec.moreRowGroups ?? []).map((part) => part.rowGroupIdx)];
}

/**
 * Counts a finished task in its scan's stats: decode and queue time, predicate-cache rows, memory,
 * and what the cross-scan cache did. A row group split into tasks is `cached` only if every one of
 * them hit (`missed`: the row groups where one did not).
 */
export function countTask(stats: ScanStats, missed: Set<number>, spec: TaskSpec, result: TaskResult): void {
  stats.tasksDone += 1;
  stats.decodeMs += result.decodeMs;
  stats.queueMs += result.queueMs;
  stats.rowsFromPredicateCache += result.rowsFromCache;
  stats.pagesReadAgain += result.pagesReadAgain;
  stats.wasmMemoryPeakBytes = Math.max(stats.wasmMemoryPeakBytes, result.wasmMemoryBytes);
  const cache = stats.columnCache;
  if (result.cache !== undefined) {
    if (result.cache.hit) cache.hits += 1;
    else cache.misses += 1;
    for (const rowGroup of rowGroupsOf(spec)) {
      if (!result.cache.hit) missed.add(rowGroup);
      stats.rowGroupFates[rowGroup] = missed.has(rowGroup) ? 'read' : 'cached';
    }
  }
  if (result.cacheDelta !== undefined) {
    cache.bytesInserted += result.cacheDelta.bytesInserted;
    cache.bytesEvicted += result.cacheDelta.bytesEvicted;
    cache.bytesRejected += result.cacheDelta.bytesRejected;
  }
}

export function statsOf(
  plan: ReadPlan,
  context: { cacheBytes: number; memoryLimitBytes: number | null; executor: Executor },
): ScanStats {
  const rowGroupFates: RowGroupFate[] = Array.from({ length: plan.stats.rowGroupsTotal }, () => 'unread');
  for (const { rowGroup, by } of plan.stats.prunedRowGroups) rowGroupFates[rowGroup] = by;
  const read = new Set(plan.tasks.flatMap((task) => rowGroupsOf(task.spec)));
  for (const rowGroup of read) rowGroupFates[rowGroup] = 'read';
  // Each range once: the tasks of a row group split where no offset index names its pages list
  // the same whole chunks, read once (scheduler/shared-reads.ts).
  const planned = new Map<string, number>();
  for (const task of plan.tasks) {
    for (const r of [...task.filterRanges, ...task.outputRanges]) planned.set(keyOf(r), r.end - r.start);
  }
  const { prunedRowGroups: _, ...counts } = plan.stats;
  return {
    // All hosts' caches together, each within its instance's cap when memory is limited.
    ...emptyScanStats(context.executor.cachedBytes(), cacheSharesOf(context).total),
    ...counts,
    tasksTotal: plan.tasks.length,
    rowGroupsRead: read.size,
    bytesPlanned: [...planned.values()].reduce((sum, bytes) => sum + bytes, 0),
    pagesInPart: plan.tasks.reduce((sum, task) => sum + (task.spec.pagesInPart?.length ?? 0), 0),
    rowGroupFates,
  };
}

/** The counters of a scan that has not started: all zero, its caches holding `cachedBytes` of `budgetBytes`. */
export function emptyScanStats(cachedBytes: number, budgetBytes: number): ScanStats {
  return {
    tasksTotal: 0,
    tasksDone: 0,
    rowGroupsTotal: 0,
    rowGroupsPrunedByStats: 0,
    rowGroupsPrunedByBloom: 0,
    rowGroupsPrunedByPageIndex: 0,
    rowGroupsRead: 0,
    pagesTotal: 0,
    pagesPruned: 0,
    rowsTotal: 0,
    rowsScanned: 0,
    rowsOut: 0,
    rowsFromPredicateCache: 0,
    pagesInPart: 0,
    pagesReadAgain: 0,
    bytesPlanned: 0,
    bytesFetched: 0,
    bytesFetchedFilter: 0,
    bytesFetchedOutput: 0,
    requests: 0,
    bytesReadThrough: 0,
    gapBytes: 0,
    linkBytesPerMs: null,
    pageWalkRounds: 0,
    fetchMs: 0,
    decodeMs: 0,
    ipcMs: 0,
    queueMs: 0,
    elapsedMs: 0,
    timeline: {
      startedAt: 0,
      planned: 0,
      firstRequest: null,
      firstBytes: null,
      firstTask: null,
      firstResult: null,
      firstBatch: null,
      done: null,
    },
    wasmMemoryPeakBytes: 0,
    columnCache: {
      hits: 0,
      misses: 0,
      bytesInserted: 0,
      bytesEvicted: 0,
      bytesRejected: 0,
      peakBytes: cachedBytes,
      budgetBytes,
      series: [{ ms: 0, bytes: cachedBytes }],
    },
    rowGroupFates: [],
  };
}

export function progressOf(stats: ScanStats): ScanProgress {
  return {
    tasksDone: stats.tasksDone,
    tasksTotal: stats.tasksTotal,
    rowsOut: stats.rowsOut,
    bytesFetched: stats.bytesFetched,
  };
}

/**
 * The most one cache may take in one instance of the core: an eighth of `memoryLimitBytes`
 * (infinite without one), so that a bounded memory is not filled by caches — a task's predicate
 * cache, the instance's cross-scan cache, a second task's — before footers and decoding.
 */
function instanceCacheBytes(memoryLimitBytes: number | null): number {
  return memoryLimitBytes === null ? Number.POSITIVE_INFINITY : memoryLimitBytes / 8;
}

/** The reader's cross-scan cache budget as its hosts split it. */
export interface CacheShares {
  /** Each worker's (the scan spec's `columnCacheBytes`); all of it with no workers. */
  worker: number;
  /** The page's own instance's, when it runs tasks beside workers (`ScanRef.pageSpec`); else `null`. */
  page: number | null;
  /** All of them: what the caches together may hold (`ColumnCacheStats.budgetBytes`). */
  total: number;
}

/**
 * `cacheBytes` split among the hosts that cache: the executor's page share to the page's instance
 * (see `HybridExecutor`), the rest evenly among the workers, each within the cap of its instance
 * under `memoryLimitBytes`. The shares add up to `cacheBytes` at most.
 */
export function cacheSharesOf(context: {
  cacheBytes: number;
  memoryLimitBytes: number | null;
  executor: Pick<Executor, 'concurrency' | 'pageCacheShare'>;
}): CacheShares {
  const { cacheBytes, executor } = context;
  const cap = instanceCacheBytes(context.memoryLimitBytes);
  const workers = Math.max(1, executor.concurrency);
  const pageShare = cacheBytes * executor.pageCacheShare;
  const worker = Math.floor(Math.min(cap, (cacheBytes - pageShare) / workers));
  const page = executor.pageCacheShare > 0 ? Math.floor(Math.min(cap, pageShare)) : null;
  return { worker, page, total: worker * workers + (page ?? 0) };
}

/**
 * A scan's schema as the core writes it (Arrow IPC, no batches): what an empty result and
 * `Scan.schema` read. Not written when the scan is made, before its first page request goes out
 * (the core's schema and IPC code took 2.8–7.5 ms there on a fresh WebKit page, 0.2–2.1 in
 * Chromium; `bench/results/2026-12-07-cold-first-run.md`), but in the turn after the scan starts,
 * while its reads travel — or on first use, or when its file closes, whichever comes first: the
 * scans of a closed file keep their schemas, as the file keeps its own.
 */
class ScanSchema {
  private bytes: Uint8Array | undefined;
  private failure: unknown;

  constructor(
    private readonly writer: () => Uint8Array,
    /** The file's unwritten schemas: this one is there until written. */
    private readonly unwritten: Set<ScanSchema>,
  ) {
    unwritten.add(this);
  }

  /** Writes it, once (what that throws is kept for {@link ipc}). */
  write(): void {
    if (!this.unwritten.delete(this)) return;
    try {
      this.bytes = this.writer();
    } catch (error) {
      this.failure = error;
    }
  }

  ipc(): Uint8Array {
    this.write();
    if (this.bytes === undefined) throw toSkimError(this.failure);
    return this.bytes;
  }
}

/** `build()`'s value; what it throws as a typed error (a trap of the core, say, out of memory). */
function built<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw toSkimError(error);
  }
}
