//! [`ScanRequest`] + [`ParquetFile`] → [`ReadPlan`]: the read tasks of a scan and the bytes each
//! needs. Pure: no I/O, no decoding.
//!
//! A task is a value (serializable, sent to a worker) naming one row group and the rows of it to
//! return (`skip`, `take`), which is how `offset`/`limit` become row-group-local selections
//! before anything is fetched: row groups wholly before the offset or after the limit get no task
//! at all.
//!
//! A task's byte ranges come from arrow-rs itself: the planner builds the same push decoder the
//! worker will build ([`build_decoder`]) and lists its `ScanPlan`. With an offset index that is
//! one range per needed page (plus the dictionary page), so `limit: 100` fetches the first pages
//! of the projected columns and not their whole chunks; without one, whole column chunks.

use std::ops::Range;

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::arrow::push_decoder::{
    ParquetPushDecoder, ParquetPushDecoderBuilder, RowGroupSelection,
};
use serde::{Deserialize, Serialize};

use crate::error::{Result, SkimError};
use crate::metadata::ParquetFile;
use crate::projection::Projection;

/// Rows per decoded batch when the caller does not say.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// Largest uncompressed column chunk a task decodes by default. WebAssembly has 4 GiB of memory
/// and a decoded chunk is copied at least once (into IPC), so beyond this a file is refused up
/// front (`TOO_LARGE`) instead of running the page out of memory.
pub const DEFAULT_MAX_CHUNK_BYTES: u64 = 1 << 30;

/// What a caller asks of a scan.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScanRequest {
    /// Dotted column paths to return, in this order; all columns when absent.
    pub columns: Option<Vec<String>>,
    /// Rows to skip from the start of the file.
    pub offset: Option<u64>,
    /// Most rows to return.
    pub limit: Option<u64>,
    /// Rows per batch.
    pub batch_size: Option<usize>,
    /// Largest uncompressed column chunk to decode (default [`DEFAULT_MAX_CHUNK_BYTES`]).
    pub max_chunk_bytes: Option<u64>,
}

/// One unit of work for a worker: decode rows `skip..skip + take` of one row group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSpec {
    /// Position of the task in the scan's output order.
    pub task_idx: usize,
    pub row_group_idx: usize,
    /// Rows of the row group skipped before the first returned row.
    pub skip: u64,
    /// Rows returned.
    pub take: u64,
    pub columns: Option<Vec<String>>,
    pub batch_size: usize,
    pub max_chunk_bytes: u64,
}

/// A half-open byte range `[start, end)`, as it crosses into JS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteRange {
    pub start: u64,
    pub end: u64,
}

impl From<Range<u64>> for ByteRange {
    fn from(r: Range<u64>) -> Self {
        Self {
            start: r.start,
            end: r.end,
        }
    }
}

/// A task with the byte ranges it is planned to read.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadTask {
    pub spec: TaskSpec,
    /// Planned ranges in decode order (predicate columns first, then pages by row).
    pub ranges: Vec<ByteRange>,
    /// Sum of the ranges' lengths.
    pub bytes: u64,
}

/// All tasks of a scan, in output order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadPlan {
    pub tasks: Vec<ReadTask>,
    /// Rows the scan will return.
    pub rows: u64,
}

/// Plans `request` over `file`.
pub fn plan_scan(file: &ParquetFile, request: &ScanRequest) -> Result<ReadPlan> {
    let batch_size = checked_batch_size(request.batch_size)?;
    // Resolve the projection once up front so a bad column fails the scan, not each task.
    Projection::try_new(file, request.columns.as_deref())?;
    let mut offset = request.offset.unwrap_or(0);
    let mut remaining = request.limit.unwrap_or(u64::MAX);
    let mut tasks = Vec::new();
    let mut rows = 0;
    for (row_group_idx, rg) in file.metadata().row_groups().iter().enumerate() {
        if remaining == 0 {
            break;
        }
        let num_rows = u64::try_from(rg.num_rows()).map_err(|_| SkimError::InvalidFile {
            detail: format!("row group {row_group_idx} has {} rows", rg.num_rows()),
        })?;
        if offset >= num_rows {
            offset -= num_rows;
            continue;
        }
        let skip = offset;
        offset = 0;
        let take = (num_rows - skip).min(remaining);
        remaining -= take;
        rows += take;
        let spec = TaskSpec {
            task_idx: tasks.len(),
            row_group_idx,
            skip,
            take,
            columns: request.columns.clone(),
            batch_size,
            max_chunk_bytes: request.max_chunk_bytes.unwrap_or(DEFAULT_MAX_CHUNK_BYTES),
        };
        let ranges: Vec<ByteRange> = build_decoder(file, &spec)?
            .scan_plan()
            .map(|planned| planned.range.into())
            .collect();
        let bytes = ranges.iter().map(|r| r.end - r.start).sum();
        tasks.push(ReadTask {
            spec,
            ranges,
            bytes,
        });
    }
    Ok(ReadPlan { tasks, rows })
}

/// The push decoder of one task: shared by the planner (to list ranges) and the task runner
/// (to decode), so both agree on every byte.
pub fn build_decoder(file: &ParquetFile, spec: &TaskSpec) -> Result<ParquetPushDecoder> {
    let row_groups = file.metadata().row_groups();
    let rg = row_groups.get(spec.row_group_idx).ok_or_else(|| {
        SkimError::invalid_argument(
            "rowGroup",
            format!(
                "expected a row group below {}, got {}",
                row_groups.len(),
                spec.row_group_idx
            ),
        )
    })?;
    let num_rows = u64::try_from(rg.num_rows()).unwrap_or(0);
    if spec.skip.saturating_add(spec.take) > num_rows {
        return Err(SkimError::invalid_argument(
            "task",
            format!(
                "rows {}..{} are outside row group {} of {num_rows} rows",
                spec.skip,
                spec.skip + spec.take,
                spec.row_group_idx
            ),
        ));
    }
    let projection = Projection::try_new(file, spec.columns.as_deref())?;
    for (leaf, chunk) in rg.columns().iter().enumerate() {
        let size = u64::try_from(chunk.uncompressed_size()).unwrap_or(u64::MAX);
        if projection.mask().leaf_included(leaf) && size > spec.max_chunk_bytes {
            return Err(SkimError::TooLarge {
                detail: format!(
                    "column '{}' of row group {} decompresses to {size} bytes, over the \
                     {}-byte limit (maxChunkBytes)",
                    chunk.column_path().string(),
                    spec.row_group_idx,
                    spec.max_chunk_bytes
                ),
            });
        }
    }
    let selection = (spec.skip > 0 || spec.take < num_rows).then(|| {
        let mut selectors = Vec::with_capacity(2);
        if spec.skip > 0 {
            selectors.push(RowSelector::skip(to_usize(spec.skip)));
        }
        selectors.push(RowSelector::select(to_usize(spec.take)));
        RowSelection::from(selectors)
    });
    ParquetPushDecoderBuilder::new_with_metadata(file.reader_metadata().clone())
        .with_projection(projection.mask().clone())
        .with_batch_size(spec.batch_size)
        .with_row_group_selections(vec![RowGroupSelection::new(spec.row_group_idx, selection)])
        .build()
        .map_err(|e| SkimError::from_parquet("planning the read", e))
}

fn checked_batch_size(batch_size: Option<usize>) -> Result<usize> {
    match batch_size {
        None => Ok(DEFAULT_BATCH_SIZE),
        Some(n) if (1..=1 << 24).contains(&n) => Ok(n),
        Some(n) => Err(SkimError::invalid_argument(
            "batchSize",
            format!("expected 1 to 16777216 rows, got {n}"),
        )),
    }
}

/// Row counts are bounded by the row group's `i64` row count, which fits `usize` on wasm32 only
/// below 2^32; larger counts saturate (a row group that large cannot be decoded in 4 GiB anyway).
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
