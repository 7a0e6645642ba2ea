/**
 * parquet-skim: read only what a query needs from Parquet files, in the browser and in Node.
 *
 * This module only re-exports the public API.
 */

export {
  type AggregateAst,
  type AggregateValue,
  count,
  expr,
  max,
  min,
  type Operand,
  sum,
  type ValueAst,
  ValueExpr,
} from './aggregate.js';
export {
  Dataset,
  type DatasetAggregateOptions,
  type DatasetAggregateResult,
  type DatasetFile,
  type DatasetFileStats,
  type DatasetOpenStats,
  type DatasetOptions,
  type DatasetScanStats,
  type FileFate,
} from './dataset/dataset.js';
export { DEFAULT_DATASET_CONCURRENCY } from './dataset/open.js';
export type { PartitionColumn, PartitionType, PartitionValue } from './dataset/partitions.js';
export type { DatasetSource, DatasetSources } from './dataset/sources.js';
export { type ErrorCode, ParquetSkimError } from './errors.js';
export {
  type AggregateOptions,
  type AggregateResult,
  ParquetFile,
  type ScanOptions,
  type ScanProgress,
} from './file.js';
export { and, Column, col, type FilterAst, FilterExpr, type FilterValue, not, or } from './filter.js';
export { formatRows, formatValue, valueAt } from './format.js';
export type {
  ColumnChunkMetadata,
  ColumnStatistics,
  FileMetadata,
  LeafColumn,
  RequestLogEntry,
  RowGroupMetadata,
} from './metadata.js';
export {
  createReader,
  DEFAULT_FOOTER_READ_BYTES,
  DEFAULT_PAGE_WALK_MIN_BYTES,
  DEFAULT_PREFETCH_OUTPUT_BYTES,
  type OpenOptions,
  openParquet,
  type ParquetSource,
  Reader,
  type ReaderOptions,
  type ReaderStats,
} from './reader.js';
export { type ColumnCacheStats, type RowGroupFate, Scan, type ScanStats, type ScanTimeline } from './scan.js';
export type { WasmBuild } from './wasm-build.js';
