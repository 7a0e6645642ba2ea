//! parquet-skim core: plan, decode and filter Parquet with no I/O.
//!
//! Data flows one way through these modules:
//!
//! - [`metadata`]: footer bytes → [`ParquetFile`] (arrow-rs `ParquetMetaDataPushDecoder`)
//! - [`summary`]: [`ParquetFile`] → [`FileSummary`], the metadata a page shows
//! - [`filter`]: SQL/JSON filters → typed predicates, pruning, arrow-rs `RowFilter`
//! - [`projection`]: column names → leaf mask and output column order
//! - [`page_layout`]: page headers walked → page locations, for files without an offset index
//! - [`plan`]: scan request → [`ReadPlan`]: the scan's shared [`ScanSpec`] and its read tasks
//!   with their byte ranges
//! - [`scan`]: a [`ScanSpec`] bound to its file once ([`BoundScan`]), and the push decoders of
//!   its tasks
//! - [`task`]: task + bytes → Arrow IPC (arrow-rs `ParquetPushDecoder`)
//! - `pages`: page headers checked before arrow-rs decodes them (sizes, CRC, consistency)
//! - `page_index`: a file's page index, its column indexes decoded when a scan first asks
//! - `row_group_index`: a file's page index with one row group's offset indexes replaced
//! - `thrift`: a bounds-checked reader of the few thrift fields `pages` and `metadata` check
//! - [`limits`]: memory limits on hostile files (metadata, page, chunk and batch bytes)
//! - [`pushed_bytes`]: pushed bytes → the exact ranges the decoder asks for
//! - [`column_cache`]: decoded filter columns kept across scans (one LRU per worker)
//! - [`aggregate`]: count/sum/min/max folded inside a task (fusion)
//! - [`ipc`]: record batches → Arrow IPC stream bytes
//! - [`error`]: [`SkimError`], every failure with a stable code
//! - [`warm_up`]: one pass over a small embedded file, so a fresh instance's first query runs
//!   warm code
//!
//! I/O lives outside this crate (in `parquet-skim-wasm` and the JS scheduler): every function
//! here answers "which bytes" or consumes bytes it is given.

pub mod aggregate;
pub mod column_cache;
pub mod error;
pub mod filter;
pub mod ipc;
pub mod limits;
pub mod metadata;
mod page_index;
pub mod page_layout;
mod pages;
pub mod plan;
pub mod projection;
pub mod pushed_bytes;
mod rebase;
mod row_group_index;
pub mod scan;
pub mod summary;
pub mod task;
mod thrift;
pub mod warm_up;

pub use error::{ErrorCode, Result, SkimError};
pub use filter::{parse_sql, Expr};
pub use limits::{DecodeLimits, OpenOptions};
pub use metadata::{LoadStep, MetadataLoader, ParquetFile};
pub use plan::{
    bloom_ranges_for, check_scan_options, plan_scan, plan_scan_with, ByteRange, PlanStats,
    ReadPlan, ReadTask, ScanRequest, TaskSpec,
};
pub use scan::{BoundScan, ScanSpec};
pub use summary::FileSummary;
pub use task::{TaskDecoder, TaskOutput, TaskRun, TaskStep};
