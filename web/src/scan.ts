/**
 * A running scan: an async iterable of apache-arrow `RecordBatch`es in file order, plus
 * {@link Scan.toTable} and live {@link ScanStats}.
 *
 * A scan starts when first iterated and can be iterated once. Breaking out of the loop (or
 * aborting the `signal`) stops fetching and decoding of the tasks still in flight.
 */
import { type RecordBatch, type Schema, Table } from 'apache-arrow';
import { ParquetSkimError } from './errors.js';

/** Counters of one scan, updated while it runs. */
export interface ScanStats {
  /** Read tasks planned / finished. */
  tasksTotal: number;
  tasksDone: number;
  /** Row groups in the file / with at least one task. */
  rowGroupsTotal: number;
  rowGroupsRead: number;
  /** Rows the plan will return / rows returned so far. */
  rowsPlanned: number;
  rowsOut: number;
  /** Bytes the plan lists, and bytes and requests actually fetched (coalescing adds gaps). */
  bytesPlanned: number;
  bytesFetched: number;
  requests: number;
  /** Sum of decode time in the task hosts (across workers, so it can exceed wall time). */
  decodeMs: number;
  /** Wall time from the first pull to the end. */
  elapsedMs: number;
}

/** The batches of a scan. */
export class Scan implements AsyncIterable<RecordBatch> {
  private started = false;

  /** @internal */
  constructor(
    /** The schema of every batch (also of an empty result). */
    readonly schema: Schema,
    /** Live counters of this scan. */
    readonly stats: ScanStats,
    private readonly produce: () => AsyncGenerator<RecordBatch>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordBatch> {
    if (this.started) {
      throw new ParquetSkimError('INVALID_ARGUMENT', 'a scan can be iterated once; call file.scan() again');
    }
    this.started = true;
    return this.produce();
  }

  /** Collects every batch into one apache-arrow `Table`. */
  async toTable(): Promise<Table> {
    const batches: RecordBatch[] = [];
    for await (const batch of this) batches.push(batch);
    return batches.length === 0 ? new Table(this.schema) : new Table(batches);
  }
}
