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
//! Without a filter the caller pushes every planned range before the first `run`, and a task
//! completes in one call. With a filter, `NeedsRanges` is the normal second phase of the
//! two-phase I/O: the caller pushes the filter columns' pages, and the decoder, once the filter
//! has said which rows survive, asks for the output pages that hold them (unless the caller
//! prefetched the plan's upper bound because it was small). Each batch is
//! decoded, projected and written to the IPC stream before the next is decoded, so decoded data
//! stays in cache between those steps.
//!
//! Two paths:
//! - **fused** (no filter, or no cross-scan cache): one arrow-rs decoder with the projection and
//!   a `RowFilter` — late materialization and the in-task predicate cache are arrow-rs's.
//! - **cross-scan** (the spec has a `cacheKey`): step 1 decodes the filter columns over the
//!   task's rows — or takes them from the worker's [`column_cache`](crate::column_cache) —
//!   evaluating the filter batch by batch into a mask, and keeps the batches (within the cache
//!   budget) for the worker to cache; step 2 decodes only the output columns not among them, for
//!   the rows that passed (so only pages holding such rows are fetched), and takes the others
//!   from the kept batches. A repeated filter column is never fetched or decoded twice.
//!
//! Hostile files: every range is checked page header by page header (`pages`: declared sizes
//! against `maxPageBytes`, CRC-32, consistency) before the decoder sees it, and every decoded
//! batch is measured against `maxBatchBytes` before it goes further (see
//! [`limits`](crate::limits)); the task's batch size was reduced to fit that limit up front.

use std::ops::Range;

use bytes::Bytes;
use parquet::arrow::push_decoder::ParquetPushDecoder;
use parquet::DecodeResult;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::BooleanBufferBuilder;
use arrow_schema::SchemaRef;
use arrow_select::filter::prep_null_mask_filter;
use parquet::arrow::arrow_reader::metrics::ArrowReaderMetrics;
use parquet::arrow::arrow_reader::RowSelection;
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

use crate::aggregate::{Aggregator, Partial};
use crate::bytes_cache::ByteCache;
use crate::column_cache::{filtered_column, memory_size, CachedColumns};
use crate::error::{Result, SkimError};
use crate::filter::{eval, Expr, Filter};
use crate::ipc::IpcStream;
use crate::limits::check_batch;
use crate::metadata::{check_pushed_range, ParquetFile};
use crate::page_layout::with_learned_pages;
use crate::pages::{PageGuard, PageRules};
use crate::plan::{
    build_decoder_with_metrics, build_plain_decoder, task_batch_size, task_selection, TaskSpec,
};
use crate::projection::Projection;
use crate::rebase;

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
    /// Cross-scan path: the filter columns this task decoded, for the worker's cache (absent
    /// when they came from it, or outgrew the budget).
    pub collected: Option<CachedColumns>,
    /// Cross-scan path: bytes of filter columns not kept because they outgrew the budget.
    pub cache_rejected_bytes: u64,
    /// Cross-scan path: the filter columns came from the worker's cache.
    pub cache_hit: bool,
}

/// Decodes one task from pushed bytes.
pub struct TaskDecoder {
    file_len: u64,
    /// How far below the file's offsets the decoder's are (a row group past 4 GiB; see
    /// [`rebase`](crate::rebase)); 0 for most.
    base: u64,
    /// Rows the task must return, when known (no filter): anything else is a decoder bug, never
    /// silently passed on.
    expected_rows: Option<u64>,
    row_group_idx: usize,
    /// Bytes pushed for this task; the decoder gets exact slices of them on request.
    cache: ByteCache,
    stage: Stage,
    projection: Projection,
    /// Counts rows served from the predicate cache.
    metrics: ArrowReaderMetrics,
    /// `None` once the task is done.
    stream: Option<IpcStream>,
    /// With aggregates: folds batches instead of writing them.
    aggregator: Option<Aggregator>,
    folded_rows: u64,
    batches: u64,
    batch_size: usize,
    /// The cross-scan path's state across its two steps.
    cross: Option<CrossScan>,
    /// The file's metadata: which column chunk a range belongs to.
    metadata: Arc<ParquetMetaData>,
    /// Checks each page header before the decoder sees it.
    pages: PageGuard,
    max_batch_bytes: u64,
}

enum Stage {
    /// One decoder produces the output (fused path), or step 2 of the cross-scan path.
    Decode(ParquetPushDecoder),
    /// Cross-scan step 1: decoding the filter columns.
    Collect(ParquetPushDecoder),
    /// Cross-scan step 2 with no column left to decode: emit from the kept batches.
    FromKept,
}

struct CrossScan {
    file: ParquetFile,
    spec: TaskSpec,
    filter: Filter,
    /// The task's rows of its row group (`None`: all).
    selection: Option<RowSelection>,
    /// The filter's leaf columns.
    leaves: Vec<usize>,
    /// Filter-column batches, kept while within budget (or from the cache).
    kept: Option<Vec<RecordBatch>>,
    kept_bytes: u64,
    rejected_bytes: u64,
    budget: u64,
    hit: bool,
    /// One mask per filter batch: which rows passed.
    masks: Vec<BooleanArray>,
    /// Output columns taken from the kept batches (filtered, concatenated), by name.
    from_kept: HashMap<String, ArrayRef>,
    /// Output rows emitted so far (offset into `from_kept`).
    emitted: usize,
    /// Rows that passed the filter.
    passed: usize,
}

impl CrossScan {
    /// Step 1 of the cross-scan path for a task filtered by `expr`: collect the filter columns,
    /// or, when the worker's cache holds them (`cached`), evaluate on those at once.
    fn start(
        file: &ParquetFile,
        spec: &TaskSpec,
        expr: &Expr,
        cached: Option<CachedColumns>,
    ) -> Result<(Stage, Self)> {
        let filter = Filter::try_new(expr, file)?;
        let selection = task_selection(file, spec)?;
        let leaves = filter.leaves();
        let hit = cached.is_some();
        let kept = cached.map(|c| c.as_ref().clone());
        let stage = match &kept {
            Some(_) => Stage::FromKept,
            None => {
                let schema = file.metadata().file_metadata().schema_descr();
                let mask = ProjectionMask::leaves(schema, leaves.iter().copied());
                Stage::Collect(build_plain_decoder(file, spec, mask, selection.clone())?)
            }
        };
        let cross = Self {
            file: file.clone(),
            spec: spec.clone(),
            filter,
            selection,
            leaves,
            kept: kept.or_else(|| Some(Vec::new())),
            kept_bytes: 0,
            rejected_bytes: 0,
            budget: spec.column_cache_bytes,
            hit,
            masks: Vec::new(),
            from_kept: HashMap::new(),
            emitted: 0,
            passed: 0,
        };
        Ok((stage, cross))
    }
}

/// The task's aggregates, folded as batches are decoded (none: batches go out as IPC).
fn aggregator(file: &ParquetFile, spec: &TaskSpec) -> Result<Option<Aggregator>> {
    spec.aggregates
        .as_deref()
        .map(|specs| {
            Aggregator::try_new(
                specs,
                file.arrow_schema(),
                file.metadata().file_metadata().schema_descr(),
            )
        })
        .transpose()
}

impl TaskDecoder {
    /// A decoder for `spec` over `file` (cross-scan path when the spec has a `cacheKey`, with no
    /// cached columns).
    pub fn try_new(file: &ParquetFile, spec: &TaskSpec) -> Result<Self> {
        Self::try_new_cached(file, spec, None)
    }

    /// A decoder for `spec` over `file`; `cached` are the filter columns the worker's cache holds
    /// under the spec's `cacheKey`, if any.
    pub fn try_new_cached(
        file: &ParquetFile,
        spec: &TaskSpec,
        cached: Option<CachedColumns>,
    ) -> Result<Self> {
        if let Some(message) = &spec.panic_for_test {
            panic!("{message}");
        }
        // Checks the chunk sizes, and fits the batch size to `maxBatchBytes` for every decoder.
        let spec = &TaskSpec {
            batch_size: task_batch_size(file, spec)?,
            ..spec.clone()
        };
        // Chunks without an offset index decode with the pages walked from their headers.
        let learned = with_learned_pages(file, spec)?;
        let file = learned.as_ref().unwrap_or(file);
        // A row group past 4 GiB decodes with lowered offsets (arrow-rs keys pages by `usize`).
        let rebased = rebase::for_row_group(file, spec.row_group_idx)?;
        let (file, base) = rebased
            .as_ref()
            .map_or((file, 0), |(file, base)| (file, *base));
        let metrics = ArrowReaderMetrics::enabled();
        let projection = Projection::try_new(file, spec.columns.as_deref())?;
        let stream = IpcStream::try_new(projection.output_schema())?;
        // Validates the row group, chunk sizes and filter for both paths.
        let fused = build_decoder_with_metrics(file, spec, metrics.clone())?;
        let (stage, cross) = match (&spec.filter, &spec.cache_key) {
            (Some(expr), Some(_)) if spec.limit.is_none() => {
                let (stage, cross) = CrossScan::start(file, spec, expr, cached)?;
                (stage, Some(cross))
            }
            _ => (Stage::Decode(fused), None),
        };
        let mut decoder = Self {
            file_len: file.file_len(),
            base,
            expected_rows: spec.expected_rows,
            row_group_idx: spec.row_group_idx,
            cache: ByteCache::default(),
            stage,
            metrics,
            projection,
            stream: Some(stream),
            aggregator: aggregator(file, spec)?,
            folded_rows: 0,
            batches: 0,
            batch_size: spec.batch_size.max(1),
            cross,
            metadata: Arc::clone(file.metadata()),
            pages: PageGuard::new(PageRules {
                max_page_bytes: spec.max_page_bytes,
                verify_checksums: spec.verify_checksums,
            }),
            max_batch_bytes: spec.max_batch_bytes,
        };
        if decoder.cross.as_ref().is_some_and(|c| c.hit) {
            decoder.evaluate_kept()?;
            decoder.start_output()?;
        }
        Ok(decoder)
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
            let step = match &mut self.stage {
                Stage::Decode(decoder) | Stage::Collect(decoder) => decoder
                    .try_decode()
                    .map_err(|e| SkimError::from_parquet("decoding", e))?,
                Stage::FromKept => match self.next_from_kept()? {
                    Some(batch) => DecodeResult::Data(batch),
                    None => DecodeResult::Finished,
                },
            };
            match step {
                DecodeResult::NeedsData(ranges) => {
                    // The bytes held are at file offsets, `base` above the decoder's.
                    let wanted = rebase::raised(&ranges, self.base);
                    let missing = self.cache.missing(&wanted);
                    if !missing.is_empty() {
                        return Ok(TaskRun::NeedsRanges(missing));
                    }
                    let data: Vec<Bytes> =
                        wanted.iter().filter_map(|r| self.cache.get(r)).collect();
                    for (range, bytes) in ranges.iter().zip(&data) {
                        self.check_pages(range, bytes)?;
                    }
                    if let Stage::Decode(decoder) | Stage::Collect(decoder) = &mut self.stage {
                        decoder
                            .push_ranges(ranges, data)
                            .map_err(|e| SkimError::from_parquet("receiving task data", e))?;
                    }
                }
                DecodeResult::Data(batch) => {
                    if !matches!(self.stage, Stage::FromKept) {
                        check_batch(&batch, self.max_batch_bytes, self.row_group_idx)?;
                    }
                    if matches!(self.stage, Stage::Collect(_)) {
                        self.collect(batch)?;
                        continue;
                    }
                    let batch = match (&self.stage, self.cross.is_some()) {
                        // Assembled from the kept columns already.
                        (Stage::FromKept, _) => batch,
                        (_, true) => self.with_kept_columns(batch)?,
                        (_, false) => self.projection.apply(batch)?,
                    };
                    self.emit(batch)?;
                }
                DecodeResult::Finished => {
                    if matches!(self.stage, Stage::Collect(_)) {
                        self.start_output()?;
                        continue;
                    }
                    return self.finish().map(TaskRun::Done);
                }
            }
        }
    }

    /// Checks the page headers of `bytes` (file range `range`, asked for by the decoder) before
    /// the decoder sees them.
    fn check_pages(&mut self, range: &Range<u64>, bytes: &Bytes) -> Result<()> {
        let Some(rg) = self.metadata.row_groups().get(self.row_group_idx) else {
            return Ok(());
        };
        let chunk = rg.columns().iter().find_map(|chunk| {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let start = u64::try_from(start).ok()?;
            let len = u64::try_from(chunk.compressed_size()).ok()?;
            (range.start >= start && range.start - start < len).then_some((chunk, start))
        });
        match chunk {
            Some((chunk, start)) => self.pages.check(bytes, range.start, chunk, start),
            None => Ok(()),
        }
    }

    fn emit(&mut self, batch: RecordBatch) -> Result<()> {
        self.batches += 1;
        match &mut self.aggregator {
            // Fused: fold the filtered batch now; it never leaves the task.
            Some(aggregator) => {
                self.folded_rows += batch.num_rows() as u64;
                aggregator.fold(&batch)
            }
            None => self
                .stream
                .as_mut()
                .ok_or_else(|| SkimError::internal("a finished task was run again"))?
                .write(&batch),
        }
    }

    fn finish(&mut self) -> Result<TaskOutput> {
        let stream = self
            .stream
            .take()
            .ok_or_else(|| SkimError::internal("a finished task was run again"))?;
        let rows = stream.rows() + self.folded_rows;
        if let Some(expected) = self.expected_rows.filter(|e| *e != rows) {
            return Err(short_decode(rows, expected, self.row_group_idx));
        }
        let cross = self.cross.take();
        let from_kept_rows = cross
            .as_ref()
            .filter(|c| !c.from_kept.is_empty())
            .map_or(0, |c| c.passed as u64);
        Ok(TaskOutput {
            ipc: stream.finish()?,
            rows,
            batches: self.batches,
            partials: self.aggregator.as_ref().map(Aggregator::partials),
            rows_from_cache: self.metrics.records_read_from_cache().unwrap_or(0) as u64
                + from_kept_rows,
            cache_hit: cross.as_ref().is_some_and(|c| c.hit),
            cache_rejected_bytes: cross.as_ref().map_or(0, |c| c.rejected_bytes),
            collected: cross.filter(|c| !c.hit).and_then(|c| c.kept).map(Arc::new),
        })
    }

    /// Step 1: evaluate the filter on a batch of filter columns; keep it while within budget.
    fn collect(&mut self, batch: RecordBatch) -> Result<()> {
        let cross = self.cross_mut()?;
        let mask = eval::evaluate(cross.filter.predicate(), &batch)
            .map_err(|e| SkimError::from_arrow("evaluating the filter", e))?;
        cross.masks.push(mask);
        if let Some(kept) = &mut cross.kept {
            cross.kept_bytes += memory_size(std::slice::from_ref(&batch));
            if cross.kept_bytes > cross.budget {
                // Over budget: stop keeping (the output decodes these columns again).
                cross.rejected_bytes = cross.kept_bytes;
                cross.kept = None;
            } else {
                kept.push(batch);
            }
        } else {
            cross.rejected_bytes += memory_size(std::slice::from_ref(&batch));
        }
        Ok(())
    }

    /// A cache hit: evaluate the filter on the cached batches.
    fn evaluate_kept(&mut self) -> Result<()> {
        let cross = self.cross_mut()?;
        let kept = cross.kept.as_deref().unwrap_or_default();
        let mut masks = Vec::with_capacity(kept.len());
        for batch in kept {
            masks.push(
                eval::evaluate(cross.filter.predicate(), batch)
                    .map_err(|e| SkimError::from_arrow("evaluating the filter", e))?,
            );
        }
        cross.masks = masks;
        Ok(())
    }

    /// Step 2: the rows that passed become the output decoder's selection; output columns
    /// wholly among the kept filter columns are taken from them.
    fn start_output(&mut self) -> Result<()> {
        let output_schema = Arc::clone(self.projection.output_schema());
        let cross = self.cross_mut()?;
        for mask in &mut cross.masks {
            if mask.null_count() > 0 {
                *mask = prep_null_mask_filter(mask);
            }
        }
        let scanned: usize = cross.masks.iter().map(|m| m.len()).sum();
        let num_rows = rows_of(
            cross
                .file
                .metadata()
                .row_group(cross.spec.row_group_idx)
                .num_rows(),
        );
        let expected = cross
            .selection
            .as_ref()
            .map_or(num_rows, RowSelection::row_count);
        if scanned != expected {
            return Err(short_decode(
                scanned as u64,
                expected as u64,
                cross.spec.row_group_idx,
            ));
        }
        cross.passed = cross.masks.iter().map(BooleanArray::true_count).sum();
        let schema = cross.file.metadata().file_metadata().schema_descr();
        let roots = schema.root_schema().get_fields();
        let leaves_of = |root: usize| {
            (0..schema.num_columns()).filter(move |&leaf| schema.get_column_root_idx(leaf) == root)
        };
        let mut decode_roots = Vec::new();
        for field in output_schema.fields() {
            let Some(root) = roots.iter().position(|r| r.name() == field.name()) else {
                return Err(SkimError::internal(format!(
                    "output column {} has no root",
                    field.name()
                )));
            };
            let wholly_kept =
                cross.kept.is_some() && leaves_of(root).all(|l| cross.leaves.contains(&l));
            if wholly_kept && cross.passed > 0 {
                let kept = cross.kept.as_deref().unwrap_or_default();
                let column = filtered_column(kept, &cross.masks, field.name())
                    .map_err(|e| SkimError::from_arrow("taking cached filter columns", e))?;
                cross.from_kept.insert(field.name().clone(), column);
            } else if !wholly_kept {
                decode_roots.push(root);
            }
        }
        self.stage = if decode_roots.is_empty() || cross.passed == 0 {
            Stage::FromKept
        } else {
            // The rows that passed, as a bitmap: scattered matches would make a run-length
            // selection of millions of selectors.
            let mut bits = BooleanBufferBuilder::new(scanned);
            for mask in &cross.masks {
                bits.append_buffer(mask.values());
            }
            let passed = RowSelection::from_boolean_buffer(bits.finish());
            let selection = match &cross.selection {
                Some(task) => task.and_then(&passed),
                None => passed,
            };
            let mask = ProjectionMask::roots(schema, decode_roots);
            Stage::Decode(build_plain_decoder(
                &cross.file,
                &cross.spec,
                mask,
                Some(selection),
            )?)
        };
        Ok(())
    }

    /// Step 2 without a decoder: the next batch of kept output columns (or of row counts).
    fn next_from_kept(&mut self) -> Result<Option<RecordBatch>> {
        let cross = self.cross_mut()?;
        let n = cross.passed - cross.emitted;
        match n.min(self.batch_size) {
            0 => Ok(None),
            n => self.assemble(None, n).map(Some),
        }
    }

    /// Step 2 with a decoder: its batch plus the same rows of the kept output columns.
    fn with_kept_columns(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        self.assemble(Some(&batch), n)
    }

    /// The next `n` output rows in the requested column order: kept columns sliced at the rows
    /// emitted so far, the others from `decoded`.
    fn assemble(&mut self, decoded: Option<&RecordBatch>, n: usize) -> Result<RecordBatch> {
        let schema = Arc::clone(self.projection.output_schema());
        let cross = self.cross_mut()?;
        let columns = schema
            .fields()
            .iter()
            .map(|f| match (cross.from_kept.get(f.name()), decoded) {
                (Some(kept), _) if cross.emitted + n <= kept.len() => {
                    Ok(kept.slice(cross.emitted, n))
                }
                (Some(_), _) => Err(short_decode(
                    (cross.emitted + n) as u64,
                    cross.passed as u64,
                    cross.spec.row_group_idx,
                )),
                (None, Some(batch)) => batch.column_by_name(f.name()).cloned().ok_or_else(|| {
                    SkimError::internal(format!("decoded batch lacks column {}", f.name()))
                }),
                (None, None) => Err(SkimError::internal(format!("no kept column {}", f.name()))),
            })
            .collect::<Result<Vec<_>>>()?;
        cross.emitted += n;
        batch_of(schema, columns, n)
    }

    fn cross_mut(&mut self) -> Result<&mut CrossScan> {
        self.cross
            .as_mut()
            .ok_or_else(|| SkimError::internal("cross-scan step on a fused task"))
    }
}

fn batch_of(schema: SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| SkimError::from_arrow("assembling an output batch", e))
}

fn rows_of(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

fn short_decode(rows: u64, expected: u64, row_group_idx: usize) -> SkimError {
    SkimError::Unsupported {
        detail: format!(
            "the decoder returned {rows} of the {expected} rows of row group {row_group_idx}; \
             this file's layout is not decoded correctly by this build (arrow-rs), so no result \
             is returned rather than a wrong one"
        ),
    }
}
