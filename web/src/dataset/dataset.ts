/**
 * A dataset: many Parquet files read as one table, with everything a single file's scan does —
 * pruning, late materialization, read tasks on the worker pool, the cross-scan cache, Arrow out —
 * across all of them at once.
 *
 * Opening reads the first file's footer, whose schema (widened as the other files are read) the
 * dataset takes — or, with `schema: 'union'`, every footer (`concurrency` at a time: the first,
 * then the rest, each with a tail read fitted to the first footer) and the union of their schemas
 * (see `schema.ts`). The hive partitions of the paths become columns (see `partitions.ts`).
 *
 * A scan goes through the files in order. For each, the filter is folded over the columns that
 * are constant in it (its partition values, and the columns it lacks, which are null there): a
 * file where no row can pass is skipped without a byte read; what is left of the filter is the
 * file's own filter, planned by the core with its statistics, page index and bloom filters. The
 * files' tasks go into one scheduler ({@link runParts}): one window of tasks in flight, one I/O
 * queue, one worker pool and cache budget for the whole dataset. A file is planned only when the
 * window reaches it, or, unless the scan is a limit over a filter, to read its bytes ahead of the
 * tasks in flight once its first result is out (while `footerMemoryBytes` has room for it), so a
 * `limit` over a filter stops planning (and fetching) the files after it; without a filter, a
 * `limit`/`offset` is placed in files by their row counts, from the footers (and the files after
 * the last row wanted are never opened).
 *
 * Every batch is brought to the dataset's schema (`conformBatch`): widened types, nulls for
 * missing columns, the partition values as constant columns. Output is in file order, then row
 * order. A file that fails fails the scan, the error naming the file (`error.file`); with
 * `onFileError: 'skip'`, it is left out and listed in the stats instead.
 */
import type { Field, RecordBatch, Schema } from 'apache-arrow';
import {
  type AggregateAst,
  type AggregateValue,
  count,
  finish,
  mergePartials,
  type Partial,
  valueColumns,
} from '../aggregate.js';
import { arrow, batchesFromIpc } from '../arrow.js';
import { isAbortError, ParquetSkimError, throwIfAborted, toSkimError } from '../errors.js';
import {
  type AggregateOptions,
  type CheckedOptions,
  countTask,
  emptyScanStats,
  type FilePart,
  newPhaseCosts,
  type ParquetFile,
  progressOf,
  type ScanOptions,
  syncStats,
} from '../file.js';
import { type FilterAst, FilterExpr } from '../filter.js';
import type { OpenOptions } from '../reader.js';
import { Scan, type ScanStats } from '../scan.js';
import type { TaskResult } from '../scheduler/executor.js';
import type { PhaseCosts, ScanPart, SchedulerContext } from '../scheduler/scheduler.js';
import { runParts } from '../scheduler/scheduler.js';
import type { HeldFiles } from './held-files.js';
import { aggregateInFile, checkPartitionAggregate } from './partition-aggregates.js';
import { type Constant, filterColumns, foldFilter, type PartitionColumn, type PartitionValue } from './partitions.js';
import { conformBatch, sameType, type UnifiedSchema, widen } from './schema.js';

/** One file of a dataset. */
export interface DatasetFile {
  /** The path or URL it was given as; its directories carry the partitions. */
  path: string;
  /** Its hive partition values, by column. */
  partitions: Record<string, PartitionValue>;
  /** Bytes and rows, from its footer (null when it could not be opened). */
  size: number | null;
  rows: number | null;
  /**
   * The open file: null when it failed to open (with `onFileError: 'skip'`), with `schema:
   * 'first'` until a scan reaches it, and after the dataset closed it to keep its open files
   * within `footerMemoryBytes` (a scan that reaches it opens it again).
   */
  file: ParquetFile | null;
  /** Why it could not be opened (with `onFileError: 'skip'`). */
  error: ParquetSkimError | null;
}

/** What opening a dataset cost. */
export interface DatasetOpenStats {
  files: number;
  filesOpened: number;
  filesFailed: number;
  /** Footer requests and bytes, over all files. */
  requests: number;
  bytes: number;
  /** Wall time of `openDataset`, in milliseconds. */
  ms: number;
}

/**
 * What happened to a file in one scan: `partition` (its partition values, or the columns it lacks,
 * rule every row out: not read at all), `stats` (its row groups pruned by statistics, page index
 * or bloom filters), `read`, `unread` (not needed: before the offset, past the limit, or never
 * reached), `failed` (skipped under `onFileError: 'skip'`).
 */
export type FileFate = 'partition' | 'stats' | 'read' | 'unread' | 'failed';

/** One file's share of a dataset scan. */
export interface DatasetFileStats {
  path: string;
  fate: FileFate;
  /** The file's own scan counters (null when it was not planned). */
  scan: ScanStats | null;
  /** Rows of this file in the output. */
  rowsOut: number;
  /** Why it failed (fate `failed`). */
  error: string | null;
}

/** A dataset scan's counters: the totals over its files, and each file's. */
export interface DatasetScanStats extends ScanStats {
  filesTotal: number;
  filesRead: number;
  filesPrunedByPartition: number;
  filesPrunedByStats: number;
  filesSkipped: number;
  /**
   * Files the dataset closed while the scan ran (by it, or by a scan running beside it) to keep
   * the memory of its open files within `footerMemoryBytes`; each costs its footer's request
   * again when a scan reaches it.
   */
  filesClosed: number;
  files: DatasetFileStats[];
}

/** What a dataset needs from the reader that opened it. */
export interface DatasetContext {
  scheduler: SchedulerContext;
  lifetime: AbortSignal;
  parseFilter(sql: string): FilterAst;
  /** Throws `INVALID_ARGUMENT` naming the option unless `options` are valid (the core's rule, `check_scan_options`). */
  checkScanOptions(options: CheckedOptions): void;
}

/** Options of {@link Dataset.aggregate} (as for a file). */
export type DatasetAggregateOptions<K extends string> = AggregateOptions<K>;

/** What {@link Dataset.aggregate} returns. */
export interface DatasetAggregateResult<K extends string> {
  values: Record<K, AggregateValue>;
  stats: DatasetScanStats;
}

/** Per part of a running scan: which file, and where its rows stand. */
interface PartState {
  index: number;
  /** Rows to skip and keep within the file, as its plan places them. */
  skip: number;
  left: number;
  /** Values of the partition columns, for the file's batches. */
  constants: Map<string, PartitionValue>;
  /** Aggregates: what each of the file's partials gives the dataset's aggregates. */
  feeds?: PartialFeed[];
  failed: boolean;
}

/** What a run decides for a file it reads: its part, where its rows stand, which aggregates. */
interface FileDecision {
  part: FilePart;
  skip: number;
  left: number;
  feeds?: PartialFeed[];
}

/**
 * What one partial of a file's tasks gives the dataset's aggregates: `[aggregate index, partial]`
 * pairs (one, for an aggregate the tasks fold; one per aggregate of a partition column, for the
 * count of the rows that pass).
 */
type PartialFeed = (partial: Partial) => Array<[number, Partial]>;

/** One scan or aggregate over the files. */
interface RunSpec {
  stats: DatasetScanStats;
  /** The caller's signal. */
  signal: AbortSignal | undefined;
  /** A limit over a filter: how many tasks it needs is unknown (the scheduler starts with one). */
  limited: boolean;
  startedAt: number;
  filter: FilterAst | undefined;
  /** A limit: files are opened one at a time, as the scan reaches them. */
  hasLimit: boolean;
  /** Whether the scan needs no more files (a limit without a filter, all placed). */
  done?: () => boolean;
  /** Decides an open file: a fate, or its decision. */
  plan(index: number, file: ParquetFile, constants: ReadonlyMap<string, Constant>): FileFate | FileDecision;
}

/** A run in progress: its spec, signal, parts' states and I/O costs. */
interface Running {
  spec: RunSpec;
  signal: AbortSignal;
  states: Map<ScanPart, PartState>;
  costs: Array<{ cost: PhaseCosts; scan: ScanStats }>;
  /** The files the run holds open: opened ahead for it, or being read ({@link HeldFiles}). */
  pinned: Set<number>;
  /** Per file: its partition values rule out every row of the run's filter (folded once per run). */
  prunedByPartition: boolean[];
}

/**
 * Rows to skip and keep: within a file as its plan placed them, or across the dataset (a filter's
 * offset and limit). {@link take} applies one to a batch's row span.
 */
interface RowWindow {
  skip: number;
  left: number;
}

/** Narrows `[from, from + count)` of a batch by `window`, updating it; the span left. */
function take(window: RowWindow, from: number, count: number): [number, number] {
  const skipped = Math.min(window.skip, count);
  window.skip -= skipped;
  const kept = Math.min(count - skipped, window.left);
  window.left -= kept;
  return [from + skipped, kept];
}

/** Many Parquet files read as one table (see the module doc). */
export class Dataset {
  /** @internal */
  constructor(
    private readonly context: DatasetContext,
    /** The files, in order. */
    readonly files: readonly DatasetFile[],
    unified: UnifiedSchema,
    /** The hive partition columns, in path order. */
    readonly partitions: readonly PartitionColumn[],
    /** What opening cost. */
    readonly stats: DatasetOpenStats,
    private readonly skipFailed: boolean,
    /**
     * Opens file `index` when a scan needs it (again), and how many to open ahead of a scan;
     * `lazy`: with `schema: 'first'`, files are first opened that way.
     */
    private readonly opener: { open(index: number): Promise<ParquetFile>; concurrency: number; lazy: boolean },
    /** The files kept open, within `footerMemoryBytes`. */
    private readonly held: HeldFiles,
  ) {
    this.schema = unified.schema;
    this.conflicts = unified.conflicts;
  }

  /** The dataset's schema: the files' columns (widened), then the partition columns. */
  readonly schema: Schema;
  /**
   * Columns left out of {@link schema} because their types conflict across files, with the
   * `SCHEMA_MISMATCH` error asking for one raises (it names both files).
   */
  readonly conflicts: ReadonlyMap<string, ParquetSkimError>;

  /** Lazy opens started (or done), by file index. */
  private readonly opening = new Map<number, Promise<ParquetFile>>();

  /**
   * File `index`, opened (`schema: 'first'` opens files as scans reach them, and a file closed to
   * stay within `footerMemoryBytes` is opened again); its schema checked against the dataset's. A
   * failure of its first open is kept on the file: later scans see it too (a failed re-open fails
   * the run that asked only). The caller has pinned it ({@link pin}).
   */
  private openFile(index: number): Promise<ParquetFile> {
    const entry = this.files[index] as DatasetFile;
    if (this.closed) return Promise.reject(new ParquetSkimError('DISPOSED', 'the dataset was closed; open it again'));
    if (entry.file !== null) return Promise.resolve(entry.file);
    if (entry.error !== null) return Promise.reject(entry.error);
    let promise = this.opening.get(index);
    if (promise === undefined) {
      // A file opened before (then closed to stay within footerMemoryBytes) whose open fails
      // now fails this run only: its failure is not kept as the file's.
      const reopening = entry.rows !== null;
      promise = this.opener.open(index).then(
        (file) => {
          // Settled, the file is on its entry (or its error is): a later open asks the entry.
          this.opening.delete(index);
          if (this.closed) {
            file.release();
            throw new ParquetSkimError('DISPOSED', 'the dataset was closed; open it again');
          }
          try {
            this.checkLateSchema(index, entry.path, file);
          } catch (error) {
            file.release();
            if (!reopening) entry.error = toSkimError(error) as ParquetSkimError;
            throw error;
          }
          Object.assign(entry, { file, size: file.byteLength, rows: file.numRows });
          this.held.opened(index, file.memoryBytes);
          return file;
        },
        (error: unknown) => {
          this.opening.delete(index);
          const named = inFile(error, entry.path);
          if (!reopening) entry.error = toSkimError(named) as ParquetSkimError;
          throw named;
        },
      );
      this.opening.set(index, promise);
    }
    return promise;
  }

  /** `running` holds file `index` open (once however often it asks). */
  private pin(running: Running, index: number): void {
    if (running.pinned.has(index)) return;
    running.pinned.add(index);
    this.held.pin(index);
  }

  /** `running` is done with file `index`. */
  private unpin(running: Running, index: number): void {
    if (running.pinned.delete(index)) this.held.unpin(index);
  }

  /**
   * Holds the files from `index` on that the run will read (not those its filter's partition
   * values rule out) for the run, up to the opener's concurrency of them: the open ones so that
   * making room never closes a file the run is about to read, the others opened now — as far as
   * the files the run holds leave room within `footerMemoryBytes` — so footers arrive ahead of
   * the scan rather than one round trip per file on its path. Only the file at `index` for a scan
   * with a limit.
   */
  private openAhead(running: Running, index: number): void {
    // Every file was opened with the dataset, and none has been closed since: nothing to open.
    if (!this.opener.lazy && this.held.closed === 0) return;
    const { hasLimit } = running.spec;
    // A scan with a limit may end in this very file: it opens the next only when it gets there.
    const last = hasLimit ? index : this.files.length - 1;
    let held = 0;
    for (let j = index; j <= last && held < this.opener.concurrency; j++) {
      const entry = this.files[j] as DatasetFile;
      if (entry.error !== null) continue;
      if (running.prunedByPartition[j] === true) continue;
      if (entry.file === null && !this.opening.has(j)) {
        if (!this.held.hasRoom()) return;
        this.pin(running, j);
        this.openFile(j).catch(() => undefined);
      } else {
        this.pin(running, j);
      }
      held += 1;
    }
  }

  /** Whether `filter` rules out every row of `entry` by its partition values alone (no footer needed). */
  private prunedByPartition(entry: DatasetFile, filter: FilterAst): boolean {
    if (this.partitions.length === 0) return false;
    const constants = new Map<string, Constant>(
      this.partitions.map((p) => [p.name, { type: p.type, value: entry.partitions[p.name] ?? null }]),
    );
    return foldFilter(filter, constants).kind === 'none';
  }

  /**
   * A file opened after the dataset (`schema: 'first'`): each of its columns in the dataset's schema
   * must widen to the dataset's type (its other columns are not in the dataset). A column that does
   * not is kept as the file's conflict: a scan that reads it there fails ({@link assertFits}).
   */
  private checkLateSchema(index: number, path: string, file: ParquetFile): void {
    const conflicts = new Map<string, ParquetSkimError>();
    for (const field of file.schema.fields) {
      if (this.partitions.some((p) => p.name === field.name)) {
        throw new ParquetSkimError(
          'SCHEMA_MISMATCH',
          `'${field.name}' is a hive partition of the paths and also a column of '${path}'; pass hivePartitioning: false to read the column from the files`,
        );
      }
      const wanted = this.schema.fields.find((f) => f.name === field.name);
      if (wanted === undefined) continue;
      const wider = widen(wanted.type, field.type);
      if (wider === null || !sameType(wider, wanted.type)) {
        conflicts.set(
          field.name,
          new ParquetSkimError(
            'SCHEMA_MISMATCH',
            `column '${field.name}' is ${wanted.type} in the dataset (its schema comes from the first file) but ` +
              `${field.type} in '${path}', which does not fit it; open the dataset with schema: 'union' to widen it`,
            { file: path },
          ),
        );
      }
    }
    if (conflicts.size > 0) this.lateConflicts.set(index, conflicts);
  }

  /** Columns of a file whose type does not fit the dataset's (`schema: 'first'`), by file index. */
  private readonly lateConflicts = new Map<number, Map<string, ParquetSkimError>>();

  /** Throws if the scan reads, in file `index`, a column whose type there does not fit the dataset's. */
  private assertFits(index: number, names: Iterable<string>): void {
    const conflicts = this.lateConflicts.get(index);
    if (conflicts === undefined) return;
    for (const name of names) {
      const conflict = conflicts.get(name);
      if (conflict !== undefined) throw conflict;
    }
  }

  /** Memory the dataset's open files hold in the core, in bytes (see `footerMemoryBytes`). */
  get memoryBytes(): number {
    return this.held.bytes;
  }

  /** Whether {@link close} was called: its scans are refused, and no file opens again. */
  private closed = false;

  /**
   * Closes every file: their footers are freed at once, without building the schema and metadata
   * of each first (a file's that were read stay readable; the others are `DISPOSED`), so closing
   * thousands of files costs nothing — and cannot fail when the core is out of memory.
   */
  close(): void {
    this.closed = true;
    for (const [index, entry] of this.files.entries()) {
      entry.file?.release();
      this.held.forget(index);
    }
  }

  /** Reads rows of every file, in file order: an async iterable of `RecordBatch`es (see {@link Scan}). */
  scan(options: ScanOptions = {}): Scan<DatasetScanStats> {
    const startedAt = performance.now();
    this.context.checkScanOptions(options);
    const offset = options.offset ?? 0;
    const { limit, batchSize } = options;
    const columns = options.columns ?? this.schema.fields.map((f) => f.name);
    const schema = new (arrow().Schema)(columns.map((name) => this.field(name)));
    const filter = this.filterAst(options.filter);
    const stats = newStats(this.files);
    // Without a filter the footers' row counts place offset and limit in files exactly; with one,
    // each file returns up to offset + limit matches, and the dataset's window takes its rows.
    const placing: RowWindow = {
      skip: filter === undefined ? offset : 0,
      left: filter === undefined ? (limit ?? Infinity) : Infinity,
    };
    const request = { columns, filter, offset, limit, batchSize, startedAt };
    const spec: RunSpec = {
      stats,
      signal: options.signal,
      limited: filter !== undefined && limit !== undefined,
      startedAt,
      filter,
      hasLimit: limit !== undefined,
      done: () => filter === undefined && placing.left <= 0,
      plan: (index, file, constants) => this.planScanFile(request, placing, index, file, constants),
    };
    const produce = async function* (this: Dataset): AsyncGenerator<RecordBatch> {
      const window: RowWindow = {
        skip: filter === undefined ? 0 : offset,
        left: filter === undefined ? Infinity : (limit ?? Infinity),
      };
      try {
        for await (const { state, result } of this.run(spec)) {
          const ipcStarted = performance.now();
          const batches = batchesFromIpc(result.ipc);
          stats.ipcMs += performance.now() - ipcStarted;
          for (const whole of batches) {
            // The file's own offset/limit (as its plan placed them), then the dataset's.
            const [from, count] = take(window, ...take(state, 0, whole.numRows));
            if (count <= 0) continue;
            const sliced = from === 0 && count === whole.numRows ? whole : whole.slice(from, from + count);
            const batch = conformBatch(sliced, schema, state.constants);
            stats.rowsOut += batch.numRows;
            (stats.files[state.index] as DatasetFileStats).rowsOut += batch.numRows;
            stats.timeline.firstBatch ??= performance.now() - startedAt;
            yield batch;
            if (window.left <= 0) return;
          }
          options.onProgress?.(progressOf(stats));
        }
        // The run's stats are summed at its end (and only every SYNC_MS before): the last word.
        options.onProgress?.(progressOf(stats));
      } finally {
        stats.timeline.done = performance.now() - startedAt;
      }
    }.bind(this);
    stats.timeline.planned = performance.now() - startedAt;
    return new Scan(() => schema, stats, produce);
  }

  /**
   * A scan's decision for one open file: pruned (its constant columns rule every row out), not
   * needed (before the offset or past the limit, `placing` them by row counts without a filter),
   * or its part — the requested columns it has (or, wanting none of them, the filter's or its
   * smallest column, for the row count) and what is left of the filter.
   */
  private planScanFile(
    request: {
      columns: string[];
      filter: FilterAst | undefined;
      offset: number;
      limit: number | undefined;
      batchSize: number | undefined;
      startedAt: number;
    },
    placing: RowWindow,
    index: number,
    file: ParquetFile,
    constants: ReadonlyMap<string, Constant>,
  ): FileFate | FileDecision {
    const { columns, filter, offset, limit, batchSize, startedAt } = request;
    const folded = filter === undefined ? ({ kind: 'all' } as const) : foldFilter(filter, constants);
    if (folded.kind === 'none') return 'partition';
    const residual = folded.kind === 'filter' ? folded.ast : undefined;
    let fileOffset: number | undefined;
    let fileLimit: number | undefined;
    if (filter === undefined) {
      const rows = this.files[index]?.rows ?? 0;
      const [from, count] = take(placing, 0, rows);
      if (count <= 0) return 'unread';
      fileOffset = from;
      fileLimit = from + count < rows || limit !== undefined ? count : undefined;
    } else if (limit !== undefined) {
      fileLimit = offset + limit;
    }
    const present = new Set(file.schema.fields.map((f) => f.name));
    let fileColumns = columns.filter((name) => present.has(name) && !constants.has(name));
    if (fileColumns.length === 0) {
      fileColumns = residual !== undefined ? filterColumns(residual).filter((n) => present.has(n)) : [cheapest(file)];
    }
    this.assertFits(index, [...fileColumns, ...(residual !== undefined ? filterColumns(residual) : [])]);
    const part = file.planPart(
      {
        columns: fileColumns,
        filter: residual,
        ...(fileOffset ? { offset: fileOffset } : {}),
        ...(fileLimit !== undefined ? { limit: fileLimit } : {}),
        batchSize,
      },
      startedAt,
    );
    const { plan } = part.planned;
    return { part, skip: plan.offset, left: plan.limit ?? Infinity };
  }

  /**
   * Computes aggregates over the (filtered) rows of every file, inside the read tasks (as
   * {@link ParquetFile.aggregate} does for one file), merged exactly across files. A `count()`
   * of a file every row of which passes comes from its footer.
   */
  async aggregate<K extends string>(options: DatasetAggregateOptions<K>): Promise<DatasetAggregateResult<K>> {
    const startedAt = performance.now();
    const names = Object.keys(options.aggregates) as K[];
    const specs = names.map((name) => options.aggregates[name]);
    this.context.checkScanOptions({ batchSize: options.batchSize, aggregates: specs.length });
    for (const spec of specs) {
      for (const name of valueColumns(spec.expr)) this.field(name);
      checkPartitionAggregate(spec, this.partitions);
    }
    const filter = this.filterAst(options.filter);
    const { batchSize } = options;
    const stats = newStats(this.files);
    const merged: Array<Partial | undefined> = specs.map(() => undefined);
    const add = (i: number, partial: Partial) => {
      const fn = specs[i]?.fn ?? 'count';
      const before = merged[i];
      merged[i] = before === undefined ? partial : mergePartials(fn, before, partial);
    };
    const run = this.run({
      stats,
      signal: options.signal,
      limited: false,
      startedAt,
      filter,
      hasLimit: false,
      plan: (index, file, constants) => {
        const folded = filter === undefined ? ({ kind: 'all' } as const) : foldFilter(filter, constants);
        if (folded.kind === 'none') return 'partition';
        // Each aggregate in this file: folded by its tasks, made from its count of rows (of a
        // partition column), or nothing (a column the file lacks, a null partition: only nulls).
        const inFile = specs.map((spec) => aggregateInFile(spec, constants));
        const fileSpecs: AggregateAst[] = [];
        const feeds: PartialFeed[] = [];
        inFile.forEach((a, i) => {
          if (a.kind !== 'tasks') return;
          fileSpecs.push(a.spec);
          feeds.push((partial) => [[i, partial]]);
        });
        const fromRows = inFile.flatMap((a, i) => (a.kind === 'rows' ? [{ i, partial: a.partial }] : []));
        if (fromRows.length > 0) {
          // One count of the rows that pass makes every partition column's partial.
          fileSpecs.push(count());
          feeds.push((rows) => fromRows.map(({ i, partial }) => [i, partial(rows.count)]));
        }
        if (fileSpecs.length === 0) return 'unread';
        if (folded.kind === 'all' && fileSpecs.every((spec) => spec.fn === 'count' && spec.expr === undefined)) {
          // Every row passes and only rows are counted: the footer's count.
          const rows = this.files[index]?.rows ?? 0;
          const counted: Partial = { kind: 'count', scale: 0, dataType: 'Int64', count: rows, value: null };
          for (const feed of feeds) for (const [i, partial] of feed(counted)) add(i, partial);
          stats.rowsOut += rows;
          return 'read';
        }
        this.assertFits(index, [
          ...fileSpecs.flatMap((spec) => valueColumns(spec.expr)),
          ...(folded.kind === 'filter' ? filterColumns(folded.ast) : []),
        ]);
        const part = file.planPart(
          { filter: folded.kind === 'filter' ? folded.ast : undefined, batchSize, aggregates: fileSpecs },
          startedAt,
        );
        return { part, skip: 0, left: Number.POSITIVE_INFINITY, feeds };
      },
    });
    for await (const { state, result } of run) {
      const partials = result.partials ?? null;
      if (partials === null) throw new ParquetSkimError('INTERNAL', 'an aggregate task returned no partials');
      for (const [j, partial] of partials.entries()) {
        const feed = state.feeds?.[j];
        if (feed === undefined)
          throw new ParquetSkimError('INTERNAL', `an aggregate task returned partial ${j} unasked`);
        for (const [i, value] of feed(partial)) add(i, value);
      }
      stats.rowsOut += result.rows;
      options.onProgress?.(progressOf(stats));
    }
    options.onProgress?.(progressOf(stats));
    stats.timeline.done = performance.now() - startedAt;
    const values = {} as Record<K, AggregateValue>;
    names.forEach((name, i) => {
      const spec = specs[i] as AggregateAst;
      const partial = merged[i];
      values[name] = partial === undefined ? (spec.fn === 'count' ? 0 : null) : finish(spec.fn, partial);
    });
    return { values, stats };
  }

  /** Rows where `filter` holds (every row without one: from the footers alone). */
  async count(options: { filter?: ScanOptions['filter']; signal?: AbortSignal } = {}): Promise<number> {
    const { values } = await this.aggregate({
      aggregates: { rows: { fn: 'count' } },
      ...(options.filter !== undefined ? { filter: options.filter } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    return Number(values.rows);
  }

  /**
   * Runs one scan over the files (see {@link RunSpec}): the parts' task results are yielded in
   * order with the part's state, and `spec.stats` is kept current.
   */
  private async *run(spec: RunSpec): AsyncGenerator<{ state: PartState; result: TaskResult }> {
    const { lifetime } = this.context;
    const signal = spec.signal === undefined ? lifetime : AbortSignal.any([spec.signal, lifetime]);
    const { filter } = spec;
    const running: Running = {
      spec,
      signal,
      states: new Map(),
      costs: [],
      pinned: new Set(),
      prunedByPartition: this.files.map((f) => filter !== undefined && this.prunedByPartition(f, filter)),
    };
    const closedBefore = this.held.closed;
    const started = performance.now();
    // Summing every file's stats costs O(files): done after every task, it was most of a hive
    // dataset's count (84 files, 2,200 tasks of ~450 rows: 0.6 s of 1.3 s in Node). So at most
    // every SYNC_MS while the run goes on (progress and `stats` lag by that much), and at its end
    // — and no more often than SYNC_SHARE allows for what a sum costs, which grows with the files
    // read (a count over 1,008 files spent 6.8 of its 21 s summing every 16 ms).
    let syncedAt = Number.NEGATIVE_INFINITY;
    let syncMs = 0;
    const sync = (final = false) => {
      const now = performance.now();
      if (!final && now - syncedAt < Math.min(SYNC_MAX_MS, Math.max(SYNC_MS, syncMs / SYNC_SHARE))) return;
      syncedAt = now;
      spec.stats.rowsTotal = this.files.reduce((sum, f) => sum + (f.rows ?? 0), 0);
      for (const { cost, scan } of running.costs) syncStats(scan, cost, spec.startedAt, started);
      totals(spec.stats, running.costs, spec.startedAt);
      spec.stats.filesClosed = this.held.closed - closedBefore;
      syncMs = performance.now() - now;
    };
    try {
      throwIfAborted(signal);
      const partsExpected = running.prunedByPartition.filter((pruned) => !pruned).length;
      // Files opened only to read ahead stay within the half of footerMemoryBytes a run may hold.
      const mayPullAhead = () => this.held.hasRoom();
      const context = { ...this.context.scheduler, signal, partsExpected, mayPullAhead };
      for await (const outcome of runParts(this.parts(running), spec.limited, context)) {
        const state = running.states.get(outcome.part) as PartState;
        sync();
        if ('error' in outcome) {
          if (!state.failed) this.fail(spec.stats, state.index, outcome.error);
          state.failed = true;
          continue;
        }
        if (state.failed) continue;
        yield { state, result: outcome.result };
      }
    } catch (error) {
      if (signal.aborted && error === signal.reason) throw error;
      throw toSkimError(error);
    } finally {
      for (const index of [...running.pinned]) this.unpin(running, index);
      sync(true);
    }
  }

  /** A file's failure: thrown, named — or, under `onFileError: 'skip'`, recorded in `stats`. */
  private fail(stats: DatasetScanStats, index: number, error: unknown): void {
    const named = inFile(error, this.files[index]?.path ?? '');
    if (!this.skipFailed || !isFileError(named)) throw named;
    const fileStats = stats.files[index] as DatasetFileStats;
    fileStats.fate = 'failed';
    fileStats.error = named.message;
  }

  /** The parts of a run, file by file: each file decided, and the ones read prepared. */
  private async *parts(running: Running): AsyncGenerator<ScanPart> {
    const { spec, signal } = running;
    for (const [index, entry] of this.files.entries()) {
      const fileStats = spec.stats.files[index] as DatasetFileStats;
      const decided = await this.decide(running, index, entry);
      if (typeof decided === 'string' || decided === null) {
        // Decided without reading: the run is done with the file.
        this.unpin(running, index);
        if (decided !== null) fileStats.fate = decided;
        continue;
      }
      const { planned } = decided.part;
      fileStats.scan = planned.stats;
      const cost = newPhaseCosts();
      running.costs.push({ cost, scan: planned.stats });
      let part: ScanPart;
      try {
        part = await decided.part.prepare(signal, cost);
      } catch (error) {
        if (signal.aborted) throw error;
        this.unpin(running, index);
        this.fail(spec.stats, index, error);
        continue;
      }
      if (part.tasks.length === 0) {
        this.unpin(running, index);
        fileStats.fate = 'stats';
        continue;
      }
      fileStats.fate = 'read';
      const withHooks = this.hooked(spec, part, planned.stats, () => this.unpin(running, index));
      running.states.set(withHooks, {
        index,
        skip: decided.skip,
        left: decided.left,
        constants: partitionValues(entry, this.partitions),
        failed: false,
        ...(decided.feeds !== undefined ? { feeds: decided.feeds } : {}),
      });
      yield withHooks;
    }
  }

  /**
   * What a run does with file `index`: a fate (decided by its partition values or by the rows
   * wanted before its footer is read, or by the plan), its decision, or null (it failed and is
   * skipped).
   */
  private async decide(running: Running, index: number, entry: DatasetFile): Promise<FileFate | FileDecision | null> {
    const { spec, signal } = running;
    if (running.prunedByPartition[index] === true) return 'partition';
    if (spec.done?.() === true) return 'unread';
    this.openAhead(running, index);
    this.pin(running, index);
    let file: ParquetFile;
    try {
      file = await this.openFile(index);
    } catch (error) {
      if (signal.aborted) throw error;
      this.fail(spec.stats, index, error);
      return null;
    }
    try {
      return spec.plan(index, file, this.constantsOf(entry));
    } catch (error) {
      this.fail(spec.stats, index, error);
      return null;
    }
  }

  /**
   * `part` with the run's hooks: failures come back to be named, tasks counted in the file's
   * stats, and `closed` called once its scan is done.
   */
  private hooked(spec: RunSpec, part: ScanPart, scan: ScanStats, closed: () => void): ScanPart {
    const missed = new Set<number>();
    const { stats, startedAt } = spec;
    return {
      ...part,
      // Its failures come back to the run, to be named (and, under onFileError: 'skip', skipped).
      yieldErrors: true,
      onTaskStart: () => {
        stats.timeline.firstTask ??= performance.now() - startedAt;
      },
      onTaskDone: (task, result) => {
        stats.timeline.firstResult ??= performance.now() - startedAt;
        countTask(scan, missed, task.spec, result);
      },
      onClose: () => {
        part.onClose?.();
        closed();
      },
    };
  }

  /** The columns constant in a file: its partitions, and the dataset's columns it lacks (null). */
  private constantsOf(entry: DatasetFile): Map<string, Constant> {
    const constants = new Map<string, Constant>();
    for (const p of this.partitions) constants.set(p.name, { type: p.type, value: entry.partitions[p.name] ?? null });
    const present = new Set(entry.file?.schema.fields.map((f) => f.name) ?? []);
    for (const field of this.schema.fields) {
      if (!constants.has(field.name) && !present.has(field.name))
        constants.set(field.name, { type: null, value: null });
    }
    return constants;
  }

  private field(name: string): Field {
    const field = this.schema.fields.find((f) => f.name === name);
    const conflict = this.conflicts.get(name);
    if (conflict !== undefined) throw new ParquetSkimError(conflict.code, conflict.message);
    if (field === undefined) {
      throw new ParquetSkimError(
        'UNKNOWN_COLUMN',
        `unknown column '${name}': the dataset's columns are ${this.schema.fields.map((f) => f.name).join(', ')}` +
          (this.opener.lazy
            ? " (the first file's: open the dataset with schema: 'union' for the columns of every file)"
            : ''),
      );
    }
    return field;
  }

  private filterAst(filter: ScanOptions['filter']): FilterAst | undefined {
    if (filter === undefined) return undefined;
    const ast =
      typeof filter === 'string'
        ? this.context.parseFilter(filter)
        : filter instanceof FilterExpr
          ? filter.toJSON()
          : filter;
    for (const name of filterColumns(ast)) this.field(name.split('.')[0] ?? name);
    return ast;
  }
}

/** Opens `open(i)` for every index, at most `concurrency` at a time, in order of the results. */
export async function mapConcurrently<T>(
  count: number,
  concurrency: number,
  open: (i: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await open(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** The error of one file of a dataset, naming it. */
export function inFile(error: unknown, path: string): Error {
  const skim = toSkimError(error);
  if (!(skim instanceof ParquetSkimError) || skim.file !== undefined) return skim;
  return new ParquetSkimError(skim.code, `in file '${path}': ${skim.message}`, {
    cause: error,
    file: path,
    ...(skim.position !== undefined ? { position: skim.position } : {}),
  });
}

/** Least milliseconds between two summings of a dataset scan's stats while it runs. */
const SYNC_MS = 16;
/** Most share of a dataset scan's time its stats' summing may take while it runs… */
const SYNC_SHARE = 0.05;
/** …and the longest its stats may go unsummed (one slow sum, a GC pause in it, does not stall progress). */
const SYNC_MAX_MS = 1000;

/** Whether an error is the file's (its bytes, its server) rather than the query's or the reader's. */
export function isFileError(error: Error): boolean {
  if (isAbortError(error) || !(error instanceof ParquetSkimError)) return false;
  // Nor a reader's memory running out: skipping the file would not make room.
  return ![
    'INVALID_FILTER',
    'TYPE_MISMATCH',
    'UNKNOWN_COLUMN',
    'INVALID_ARGUMENT',
    'DISPOSED',
    'OUT_OF_MEMORY',
  ].includes(error.code);
}

function partitionValues(entry: DatasetFile, partitions: readonly PartitionColumn[]): Map<string, PartitionValue> {
  return new Map(partitions.map((p) => [p.name, entry.partitions[p.name] ?? null]));
}

/** The file's column with the fewest compressed bytes (to count rows when no column is wanted). */
function cheapest(file: ParquetFile): string {
  const bytes = new Map<string, number>();
  for (const group of file.metadata.rowGroups) {
    for (const chunk of group.columns) {
      const top = chunk.path.split('.')[0] ?? chunk.path;
      bytes.set(top, (bytes.get(top) ?? 0) + chunk.compressedSize);
    }
  }
  const names = file.schema.fields.map((f) => f.name);
  return names.reduce((best, name) => ((bytes.get(name) ?? 0) < (bytes.get(best) ?? 0) ? name : best), names[0] ?? '');
}

function newStats(files: readonly DatasetFile[]): DatasetScanStats {
  const empty = emptyScanStats(0, 0);
  return {
    ...empty,
    rowsTotal: files.reduce((sum, f) => sum + (f.rows ?? 0), 0),
    timeline: { ...empty.timeline, startedAt: performance.now() },
    columnCache: { ...empty.columnCache, series: [] },
    filesTotal: files.length,
    filesRead: 0,
    filesPrunedByPartition: 0,
    filesPrunedByStats: 0,
    filesSkipped: 0,
    filesClosed: 0,
    files: files.map((f) => ({ path: f.path, fate: 'unread', scan: null, rowsOut: 0, error: null })),
  };
}

/** The dataset's totals from its files' scans. */
function totals(
  stats: DatasetScanStats,
  costs: ReadonlyArray<{ cost: PhaseCosts; scan: ScanStats }>,
  startedAt: number,
): void {
  const sums = [
    'tasksTotal',
    'tasksDone',
    'rowGroupsTotal',
    'rowGroupsPrunedByStats',
    'rowGroupsPrunedByBloom',
    'rowGroupsPrunedByPageIndex',
    'rowGroupsRead',
    'pagesTotal',
    'pagesPruned',
    'rowsScanned',
    'rowsFromPredicateCache',
    'pagesInPart',
    'pagesReadAgain',
    'bytesPlanned',
    'bytesFetched',
    'bytesFetchedFilter',
    'bytesFetchedOutput',
    'requests',
    'bytesReadThrough',
    'pageWalkRounds',
    'fetchMs',
    'decodeMs',
    'queueMs',
  ] as const;
  for (const key of sums) stats[key] = costs.reduce((sum, { scan }) => sum + scan[key], 0);
  stats.wasmMemoryPeakBytes = Math.max(0, ...costs.map(({ scan }) => scan.wasmMemoryPeakBytes));
  stats.gapBytes = Math.max(0, ...costs.map(({ scan }) => scan.gapBytes));
  // Files of one origin share its measure: the latest file's is the newest.
  stats.linkBytesPerMs =
    [...costs].reverse().find(({ scan }) => scan.linkBytesPerMs !== null)?.scan.linkBytesPerMs ?? null;
  const cache = stats.columnCache;
  for (const key of ['hits', 'misses', 'bytesInserted', 'bytesEvicted', 'bytesRejected'] as const) {
    cache[key] = costs.reduce((sum, { scan }) => sum + scan.columnCache[key], 0);
  }
  cache.peakBytes = Math.max(0, ...costs.map(({ scan }) => scan.columnCache.peakBytes));
  cache.budgetBytes = Math.max(0, ...costs.map(({ scan }) => scan.columnCache.budgetBytes));
  stats.rowGroupFates = stats.files.flatMap((f) => f.scan?.rowGroupFates ?? []);
  const first = (pick: (cost: PhaseCosts) => number | undefined) => {
    const times = costs.flatMap(({ cost }) => [pick(cost)].filter((t): t is number => t !== undefined));
    return times.length === 0 ? null : Math.min(...times) - startedAt;
  };
  stats.timeline.firstRequest = first((c) => earliest(c.filter.firstSentAt, c.output.firstSentAt));
  stats.timeline.firstBytes = first((c) => earliest(c.filter.firstDoneAt, c.output.firstDoneAt));
  stats.elapsedMs = performance.now() - startedAt;
  stats.filesRead = stats.files.filter((f) => f.fate === 'read').length;
  stats.filesPrunedByPartition = stats.files.filter((f) => f.fate === 'partition').length;
  stats.filesPrunedByStats = stats.files.filter((f) => f.fate === 'stats').length;
  stats.filesSkipped = stats.files.filter((f) => f.fate === 'failed').length;
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A dataset's open options: a file's, for every file, plus how to find and open them. */
export interface DatasetOptions extends Omit<OpenOptions, 'size'> {
  /**
   * Read hive partitions (`key=value` directories) as columns: `'auto'` (default: when the paths
   * have them), `true` (they must), `false` (never).
   */
  hivePartitioning?: 'auto' | boolean;
  /** Types of partition columns, instead of inferring them: `{ year: 'int64', day: 'date', region: 'string' }`. */
  partitionSchema?: Record<string, 'int64' | 'date' | 'string'>;
  /**
   * Which footers opening reads: `'first'` (default, as DuckDB's `read_parquet` without
   * `union_by_name`) only the first file's, whose schema the dataset takes — the other footers are
   * read when a scan reaches their files (a few ahead of it), and never for files a filter rules
   * out by their partition values; a later file's column must fit the first file's type, and its
   * columns the first lacks are not seen. `'union'` reads every file's footer at open, and the
   * schema is the union of theirs (widened).
   */
  schema?: 'union' | 'first';
  /**
   * Footers read at once, while opening and (with `schema: 'first'`) ahead of a scan. Default 128:
   * the footers of up to 129 files in two rounds, the first file's then the rest (the browser still
   * sends at most its per-host limit at a time).
   */
  concurrency?: number;
  /**
   * A file that cannot be opened or read: `'fail'` (default) fails the open or the scan, naming
   * the file; `'skip'` leaves it out and lists it (`dataset.files[i].error`, the scan's stats).
   */
  onFileError?: 'fail' | 'skip';
  /**
   * The most memory, in bytes, the dataset's open files may hold in the core (their decoded
   * footers: `ParquetFile.memoryBytes`) — default 256 MiB, or a quarter of the reader's
   * `memoryLimitBytes` when it has a smaller one. A file of many row groups holds
   * several times its footer (~1.3 MB for a 292 KB footer of ~180 row groups), and a page's
   * WebAssembly memory ends at 4 GiB. Beyond the bound, files no scan is reading are closed —
   * the one a scan let go of last first, so a scan larger than the bound closes the files behind
   * it and the first files stay open for the next — and opened again (one footer request) when a
   * scan reaches them; a scan opens ahead only as far as the bound leaves room.
   * `stats.filesClosed` counts them. A `ParquetFile` taken from `files` may be closed this way:
   * its `schema` and `metadata` are then `DISPOSED` unless read before.
   */
  footerMemoryBytes?: number;
}
