/**
 * The types of {@link ParquetFile.metadata}: what a file says about itself, read from its footer
 * (produced by the core's `FileSummary`). Byte counts are numbers (exact below 2^53); statistics
 * are display strings so 64-bit and binary values survive JSON unchanged.
 */
import type {
  ColumnChunkSummary,
  FileSummary,
  LeafColumn,
  RowGroupSummary,
  StatisticsSummary,
} from './wasm/contract.js';

/** A file's metadata (the core's `FileSummary`). */
export type FileMetadata = FileSummary;
/** A leaf (primitive) column of the Parquet schema. */
export type { LeafColumn };
/** One row group. */
export type RowGroupMetadata = RowGroupSummary;
/** One column chunk (a leaf column within a row group). */
export type ColumnChunkMetadata = ColumnChunkSummary;
/** Chunk-level statistics, as written. */
export type ColumnStatistics = StatisticsSummary;

/** One read in a file's request log. */
export interface RequestLogEntry {
  /** Half-open byte range read. */
  start: number;
  end: number;
  /** The `Range` header sent (HTTP sources). */
  range: string | null;
  /** HTTP status (HTTP sources). */
  status: number | null;
  bytes: number;
  /** When the read started (ms since the Unix epoch). */
  at: number;
  /** Request start to complete body. */
  ms: number;
  /** How many ranges one request asked for, when more than one (`Range: bytes=a-b,c-d`). */
  parts?: number;
  /** What an answer that brought no bytes meant, e.g. a server that refused the suffix range of the open. */
  note?: string;
}
