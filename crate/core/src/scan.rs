//! A scan of one file, bound once: what every task of the scan shares, and the push decoders its
//! tasks are built with.
//!
//! A plan splits a scan into a [`ScanSpec`] — columns, filter, aggregates, decoding limits, cache
//! budgets: the same for every task — and one small [`TaskSpec`](crate::plan::TaskSpec) per
//! task (row group, rows, batch size, cache key). A worker gets the scan once and binds it to the
//! file once ([`BoundScan::try_new`]: columns resolved, filter typed and its conjuncts ordered);
//! each task then only names what differs. Before 2026-11-26 every task carried the whole scan
//! and bound the filter three times (batch size, decoder, cross-scan step), and the planner bound
//! it twice more per task.
//!
//! The decoder factories live here because the planner and the task runner must build the same
//! push decoder — the planner to list its byte ranges (`ScanPlan`), the runner to decode — so
//! both agree on every byte. They take the file explicitly: a task may decode a variant of the
//! scan's file (pages walked from headers, a row group past 4 GiB rebased), which has the same
//! schema, so the bound projection and filter hold for it.

use parquet::arrow::arrow_reader::metrics::ArrowReaderMetrics;
use parquet::arrow::arrow_reader::{RowFilter, RowSelection};
use parquet::arrow::push_decoder::{
    ParquetPushDecoder, ParquetPushDecoderBuilder, RowGroupSelection,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::RowGroupMetaData;
use serde::{Deserialize, Serialize};

use crate::aggregate::AggregateSpec;
use crate::error::{Result, SkimError};
use crate::filter::{Expr, Filter};
use crate::limits::{self, DecodeLimits};
use crate::metadata::ParquetFile;
use crate::plan::{rows_of, selection_of, to_usize, TaskSpec};
use crate::projection::Projection;

/// What every task of one scan of one file shares; a worker gets it once per scan.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScanSpec {
    /// Dotted column paths to return (with aggregates: the aggregated columns); all when absent.
    pub columns: Option<Vec<String>>,
    pub filter: Option<Expr>,
    pub aggregates: Option<Vec<AggregateSpec>>,
    #[serde(default)]
    pub limits: DecodeLimits,
    /// Bytes of decoded filter columns a task may keep for its output (0: off).
    #[serde(default)]
    pub predicate_cache_bytes: u64,
    /// The worker's cross-scan cache budget (0: off).
    #[serde(default)]
    pub column_cache_bytes: u64,
    /// The scan's id (see [`ScanRequest::scan_id`](crate::plan::ScanRequest::scan_id)).
    #[serde(default)]
    pub scan_id: u64,
}

/// One row group of a task, as [`BoundScan::parts`] resolves it.
#[derive(Debug, Clone)]
pub struct TaskPart {
    pub row_group_idx: usize,
    /// The rows decoded (`None`: all).
    pub selection: Option<RowSelection>,
    /// How many rows that is.
    pub rows: usize,
}

/// A [`ScanSpec`] bound to its file: columns resolved and the filter typed, once.
#[derive(Debug, Clone)]
pub struct BoundScan {
    file: ParquetFile,
    spec: ScanSpec,
    projection: Projection,
    filter: Option<Filter>,
    /// The filter's leaf columns (empty without a filter).
    filter_leaves: Vec<usize>,
    /// Those of them the projection outputs too: what arrow-rs's predicate cache would keep.
    projected_filter_leaves: Vec<usize>,
}

impl BoundScan {
    /// Binds `spec` to `file`: an unknown column or a filter that does not type-check fails here,
    /// once, not in each task.
    pub fn try_new(file: &ParquetFile, spec: ScanSpec) -> Result<Self> {
        spec.limits.checked()?;
        let projection = Projection::try_new(file, spec.columns.as_deref())?;
        let filter = spec
            .filter
            .as_ref()
            .map(|expr| Filter::try_new(expr, file))
            .transpose()?;
        let filter_leaves = filter.as_ref().map(Filter::leaves).unwrap_or_default();
        let projected_filter_leaves = filter_leaves
            .iter()
            .copied()
            .filter(|&leaf| projection.mask().leaf_included(leaf))
            .collect();
        Ok(Self {
            file: file.clone(),
            spec,
            projection,
            filter,
            filter_leaves,
            projected_filter_leaves,
        })
    }

    pub fn file(&self) -> &ParquetFile {
        &self.file
    }

    pub fn spec(&self) -> &ScanSpec {
        &self.spec
    }

    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    pub fn filter(&self) -> Option<&Filter> {
        self.filter.as_ref()
    }

    /// The filter's leaf columns, sorted (empty without a filter).
    pub fn filter_leaves(&self) -> &[usize] {
        &self.filter_leaves
    }

    /// The push decoder of `task` over the scan's file, with no metrics: what the planner lists
    /// the byte ranges of.
    pub fn decoder(&self, file: &ParquetFile, task: &TaskSpec) -> Result<ParquetPushDecoder> {
        self.decoder_with_metrics(file, task, ArrowReaderMetrics::disabled())
    }

    /// [`decoder`](Self::decoder), reporting predicate-cache use into `metrics`.
    pub fn decoder_with_metrics(
        &self,
        file: &ParquetFile,
        task: &TaskSpec,
        metrics: ArrowReaderMetrics,
    ) -> Result<ParquetPushDecoder> {
        self.fused_decoder(file, task, metrics, |filter| filter.row_filter(file))
    }

    /// [`decoder_with_metrics`](Self::decoder_with_metrics) with the filter evaluated by the
    /// `RowFilter` that `row_filter` makes of it.
    pub fn fused_decoder(
        &self,
        file: &ParquetFile,
        task: &TaskSpec,
        metrics: ArrowReaderMetrics,
        row_filter: impl FnOnce(&Filter) -> RowFilter,
    ) -> Result<ParquetPushDecoder> {
        let batch_size = self.batch_size(task)?;
        let selections = task
            .row_groups()
            .map(|(idx, runs)| Ok(RowGroupSelection::new(idx, self.part_selection(idx, runs)?)))
            .collect::<Result<Vec<_>>>()?;
        let cache_bytes = self.predicate_cache_bytes(task)?;
        let mut builder =
            ParquetPushDecoderBuilder::new_with_metadata(file.reader_metadata().clone())
                .with_max_predicate_cache_size(cache_bytes)
                .with_metrics(metrics)
                .with_projection(self.projection.mask().clone())
                .with_batch_size(batch_size)
                .with_row_group_selections(selections);
        if let Some(filter) = &self.filter {
            builder = builder.with_row_filter(row_filter(filter));
        }
        if let Some(limit) = task.limit {
            builder = builder.with_limit(to_usize(limit));
        }
        builder
            .build()
            .map_err(|e| SkimError::from_parquet("planning the read", e))
    }

    /// The predicate cache budget of `task`'s decoder: the scan's, or 0 where the cache would
    /// cost more than it saves.
    ///
    /// The cache keeps filter columns decoded for the output instead of decoding them twice.
    /// arrow-rs gives each row group a cache of the whole budget and stops inserting when it is
    /// full (it never fails); the output then reads every batch the cache does not hold whole
    /// from its pages — all its rows, filtered after — where without the cache it would skip the
    /// rows the filter dropped. So a cache that holds only part of a row group's filter columns
    /// costs a selective filter more than it saves (until 2026-11-26, the cache bench's first
    /// query at 16 MiB: 0.83–0.88× cache-off). It is on only when every row group of the task
    /// fits it, by [`limits::decoded_bytes`] — an estimate from chunk metadata. arrow-rs counts a
    /// cached array by its buffers' capacity, which for plain strings is reserved from the
    /// encoded bytes (4-byte lengths included): short strings (`name-NNNN`) needed 1.3× the
    /// estimate to be cached whole, long ones (`URL`) about 1.0× (filter_io.rs tests the edge).
    /// The estimate is also low for dictionary-encoded strings without size statistics. So a
    /// cache it admits may still fill part way near its edge. Half as much again to spare was
    /// tried and measured worse: it turned the cache off for the cache bench's tasks at 64 MiB,
    /// which it had served almost whole (first query 404 → 441 ms, dense 559 → 604, in memory).
    /// The cache also widens the pages read for cached columns to whole batches, which would
    /// undo page pruning, so a task with a page selection does without it.
    fn predicate_cache_bytes(&self, task: &TaskSpec) -> Result<usize> {
        let budget = self.spec.predicate_cache_bytes;
        let cached = &self.projected_filter_leaves;
        if budget == 0 || cached.is_empty() || task.row_groups().any(|(_, r)| r.is_some()) {
            return Ok(0);
        }
        for (idx, _) in task.row_groups() {
            let rg = self.row_group_at(idx)?;
            let rows = rows_of(rg.num_rows());
            let bytes = cached
                .iter()
                .filter_map(|&leaf| rg.columns().get(leaf))
                .fold(0u64, |sum, chunk| {
                    sum.saturating_add(limits::decoded_bytes(chunk, rows))
                });
            if bytes > budget {
                return Ok(0);
            }
        }
        Ok(to_usize(budget))
    }

    /// A decoder of `mask`'s columns over `selections` of the task's row groups, with no filter
    /// and no predicate cache: the cross-scan path (`task.rs`) evaluates the filter itself. Call
    /// after [`decoder`](Self::decoder) has accepted `task` (row group and chunk sizes are
    /// checked there), with the batch size of [`batch_size`](Self::batch_size).
    pub fn plain_decoder(
        &self,
        file: &ParquetFile,
        task: &TaskSpec,
        mask: ProjectionMask,
        selections: Vec<RowGroupSelection>,
    ) -> Result<ParquetPushDecoder> {
        ParquetPushDecoderBuilder::new_with_metadata(file.reader_metadata().clone())
            .with_projection(mask)
            .with_batch_size(task.batch_size)
            .with_row_group_selections(selections)
            .build()
            .map_err(|e| SkimError::from_parquet("planning the read", e))
    }

    /// A task's batch size: the task's, reduced so a batch of the columns it reads fits
    /// `maxBatchBytes` (see [`limits`](crate::limits)). Refuses a task reading a column chunk
    /// over `maxChunkBytes`, or whose single row is over `maxBatchBytes`.
    /// A task spanning several row groups gets the smallest of theirs.
    pub fn batch_size(&self, task: &TaskSpec) -> Result<usize> {
        let mut size = task.batch_size;
        for (idx, _) in task.row_groups() {
            size = size.min(self.part_batch_size(task.batch_size, idx)?);
        }
        Ok(size)
    }

    fn part_batch_size(&self, batch_size: usize, row_group_idx: usize) -> Result<usize> {
        let rg = self.row_group_at(row_group_idx)?;
        let num_rows = rows_of(rg.num_rows());
        let limits = &self.spec.limits;
        let mut row_bytes = 0u64;
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            if !self.projection.mask().leaf_included(leaf) && !self.filter_leaves.contains(&leaf) {
                continue;
            }
            let size = u64::try_from(chunk.uncompressed_size()).unwrap_or(u64::MAX);
            if size > limits.max_chunk_bytes {
                return Err(SkimError::TooLarge {
                    detail: format!(
                        "column '{}' of row group {} decompresses to {size} bytes, over the \
                         {}-byte column chunk limit; project fewer columns, or raise \
                         `maxChunkBytes`",
                        chunk.column_path().string(),
                        row_group_idx,
                        limits.max_chunk_bytes
                    ),
                });
            }
            row_bytes = row_bytes.saturating_add(limits::bytes_per_row(chunk, num_rows));
        }
        limits::fitted_batch_size(batch_size, row_bytes, limits.max_batch_bytes, row_group_idx)
    }

    /// Each row group `task` decodes, in order, with its rows (`None`: all of them) and how many
    /// rows that is.
    pub fn parts(&self, task: &TaskSpec) -> Result<Vec<TaskPart>> {
        task.row_groups()
            .map(|(row_group_idx, runs)| {
                let selection = self.part_selection(row_group_idx, runs)?;
                let rows = match &selection {
                    Some(selection) => selection.row_count(),
                    None => to_usize(rows_of(self.row_group_at(row_group_idx)?.num_rows())),
                };
                Ok(TaskPart {
                    row_group_idx,
                    selection,
                    rows,
                })
            })
            .collect()
    }

    fn part_selection(
        &self,
        row_group_idx: usize,
        runs: Option<&[i64]>,
    ) -> Result<Option<RowSelection>> {
        let rg = self.row_group_at(row_group_idx)?;
        runs.map(|runs| selection_of(runs, rows_of(rg.num_rows()), row_group_idx))
            .transpose()
    }

    fn row_group_at(&self, row_group_idx: usize) -> Result<&RowGroupMetaData> {
        let row_groups = self.file.metadata().row_groups();
        row_groups.get(row_group_idx).ok_or_else(|| {
            SkimError::invalid_argument(
                "rowGroup",
                format!(
                    "expected a row group below {}, got {row_group_idx}",
                    row_groups.len(),
                ),
            )
        })
    }
}
