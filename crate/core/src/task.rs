//! Running one read task: bytes in, Arrow IPC out, with no I/O.
//!
//! ```text
//!            push(range, bytes)            run()
//!  caller ───────────────────────▶ TaskDecoder ─────▶ NeedsRanges(ranges)  → caller fetches, pushes
//!                                   │  ParquetPushDecoder (arrow-rs)
//!                                   │  Projection::apply (column order)
//!                                   ▼  IpcStream
//!                                 Done { ipc, rows }
//! ```
//!
//! The caller normally pushes every planned range before the first `run`, so a task completes in
//! one call; `NeedsRanges` is the safety net for bytes the plan did not foresee. Each batch is
//! decoded, projected and written to the IPC stream before the next is decoded, so decoded data
//! stays in cache between those steps.

use std::ops::Range;

use bytes::Bytes;
use parquet::arrow::push_decoder::ParquetPushDecoder;
use parquet::DecodeResult;

use crate::aggregate::{Aggregator, Partial};
use crate::bytes_cache::ByteCache;
use crate::error::{Result, SkimError};
use crate::ipc::IpcStream;
use crate::metadata::{check_pushed_range, ParquetFile};
use crate::plan::{build_decoder_with_metrics, TaskSpec};
use crate::projection::Projection;
use parquet::arrow::arrow_reader::metrics::ArrowReaderMetrics;

/// What [`TaskDecoder::run`] stopped at.
#[derive(Debug)]
pub enum TaskRun {
    /// Push these ranges, then call `run` again.
    NeedsRanges(Vec<Range<u64>>),
    /// The task is complete.
    Done(TaskOutput),
}

/// The result of a task.
#[derive(Debug)]
pub struct TaskOutput {
    /// One Arrow IPC stream with the task's batches (just the schema when aggregating).
    pub ipc: Vec<u8>,
    /// Rows that passed the filter (decoded into the output, or folded into the aggregates).
    pub rows: u64,
    pub batches: u64,
    /// With aggregates: the partial results, in spec order.
    pub partials: Option<Vec<Partial>>,
    /// Output rows of filter columns served from the predicate cache instead of decoded again.
    pub rows_from_cache: u64,
}

/// Decodes one task from pushed bytes.
pub struct TaskDecoder {
    file_len: u64,
    /// Rows the task must return, when known (no filter): anything else is a decoder bug, never
    /// silently passed on.
    expected_rows: Option<u64>,
    row_group_idx: usize,
    /// Bytes pushed for this task; the decoder gets exact slices of them on request.
    cache: ByteCache,
    decoder: ParquetPushDecoder,
    projection: Projection,
    /// Counts rows served from the predicate cache.
    metrics: ArrowReaderMetrics,
    /// `None` once the task is done.
    stream: Option<IpcStream>,
    /// With aggregates: folds batches instead of writing them.
    aggregator: Option<Aggregator>,
    folded_rows: u64,
    batches: u64,
}

impl TaskDecoder {
    /// A decoder for `spec` over `file`.
    pub fn try_new(file: &ParquetFile, spec: &TaskSpec) -> Result<Self> {
        let metrics = ArrowReaderMetrics::enabled();
        let projection = Projection::try_new(file, spec.columns.as_deref())?;
        let stream = IpcStream::try_new(projection.output_schema())?;
        Ok(Self {
            file_len: file.file_len(),
            expected_rows: spec.expected_rows,
            row_group_idx: spec.row_group_idx,
            cache: ByteCache::default(),
            decoder: build_decoder_with_metrics(file, spec, metrics.clone())?,
            metrics,
            projection,
            stream: Some(stream),
            aggregator: spec
                .aggregates
                .as_deref()
                .map(|specs| {
                    Aggregator::try_new(
                        specs,
                        file.arrow_schema(),
                        file.metadata().file_metadata().schema_descr(),
                    )
                })
                .transpose()?,
            folded_rows: 0,
            batches: 0,
        })
    }

    /// Hands bytes `range` of the file to the task. Ranges may be larger than requested ones
    /// (coalesced reads); arrow-rs slices what it needs.
    pub fn push(&mut self, range: Range<u64>, data: Bytes) -> Result<()> {
        check_pushed_range(&range, &data, self.file_len)?;
        self.cache.insert(range.start, data);
        Ok(())
    }

    /// Bytes pushed and held for this task.
    pub fn buffered_bytes(&self) -> u64 {
        self.cache.bytes()
    }

    /// Decodes until more bytes are needed or the task is done.
    pub fn run(&mut self) -> Result<TaskRun> {
        loop {
            let step = self
                .decoder
                .try_decode()
                .map_err(|e| SkimError::from_parquet("decoding", e))?;
            let stream = self
                .stream
                .as_mut()
                .ok_or_else(|| SkimError::internal("a finished task was run again"))?;
            match step {
                DecodeResult::NeedsData(ranges) => {
                    let missing = self.cache.missing(&ranges);
                    if !missing.is_empty() {
                        return Ok(TaskRun::NeedsRanges(missing));
                    }
                    let data = ranges.iter().filter_map(|r| self.cache.get(r)).collect();
                    self.decoder
                        .push_ranges(ranges, data)
                        .map_err(|e| SkimError::from_parquet("receiving task data", e))?;
                }
                DecodeResult::Data(batch) => {
                    self.batches += 1;
                    match &mut self.aggregator {
                        // Fused: fold the filtered batch now; it never leaves the task.
                        Some(aggregator) => {
                            self.folded_rows += batch.num_rows() as u64;
                            aggregator.fold(&batch)?;
                        }
                        None => stream.write(&self.projection.apply(batch)?)?,
                    }
                }
                DecodeResult::Finished => {
                    let stream = self
                        .stream
                        .take()
                        .ok_or_else(|| SkimError::internal("a finished task was run again"))?;
                    let rows = stream.rows() + self.folded_rows;
                    if let Some(expected) = self.expected_rows.filter(|e| *e != rows) {
                        return Err(SkimError::Unsupported {
                            detail: format!(
                                "the decoder returned {rows} of the {expected} rows of row group {}; \
                                 this file's layout is not decoded correctly by this build \
                                 (arrow-rs), so no result is returned rather than a wrong one",
                                self.row_group_idx
                            ),
                        });
                    }
                    return Ok(TaskRun::Done(TaskOutput {
                        ipc: stream.finish()?,
                        rows,
                        batches: self.batches,
                        partials: self.aggregator.as_ref().map(Aggregator::partials),
                        rows_from_cache: self.metrics.records_read_from_cache().unwrap_or(0) as u64,
                    }));
                }
            }
        }
    }
}
