/**
 * The types of {@link ParquetFile.metadata}: what a file says about itself, read from its footer
 * (produced by the core's `FileSummary`). Byte counts are numbers (exact below 2^53); statistics
 * are display strings so 64-bit and binary values survive JSON unchanged.
 */

/** A file's metadata. */
export interface FileMetadata {
  fileLen: number;
  numRows: number;
  version: number;
  createdBy: string | null;
  keyValueMetadata: Array<{ key: string; value: string | null }>;
  /** Leaf columns in file order. */
  columns: LeafColumn[];
  rowGroups: RowGroupMetadata[];
  /** Whether the column index and offset index were found (page-level pruning and reads). */
  hasPageIndex: boolean;
  /** Bytes of footer + page index read at open. */
  footerBytes: number;
}

/** A leaf (primitive) column of the Parquet schema. */
export interface LeafColumn {
  /** Dotted path, e.g. `a.list.element`. */
  path: string;
  physicalType: string;
  logicalType: string | null;
  maxDefinitionLevel: number;
  maxRepetitionLevel: number;
}

/** One row group. */
export interface RowGroupMetadata {
  numRows: number;
  totalByteSize: number;
  compressedSize: number;
  columns: ColumnChunkMetadata[];
}

/** One column chunk (a leaf column within a row group). */
export interface ColumnChunkMetadata {
  path: string;
  /** e.g. `SNAPPY`, `ZSTD(ZstdLevel(1))`, `UNCOMPRESSED`. */
  codec: string;
  encodings: string[];
  numValues: number;
  compressedSize: number;
  uncompressedSize: number;
  /** The chunk's bytes are `[start, end)` of the file. */
  start: number;
  end: number;
  statistics: ColumnStatistics | null;
  hasColumnIndex: boolean;
  hasOffsetIndex: boolean;
  hasBloomFilter: boolean;
}

/** Chunk-level statistics, as written. */
export interface ColumnStatistics {
  min: string | null;
  max: string | null;
  nullCount: number | null;
  distinctCount: number | null;
  minIsExact: boolean;
  maxIsExact: boolean;
}

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
  /** What an answer that brought no bytes meant, e.g. a server that refused the suffix range of the open. */
  note?: string;
}
