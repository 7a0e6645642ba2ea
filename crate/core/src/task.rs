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
//! completes in one call (or in several of [`TaskDecoder::run_sliced`], a few batches each, on
//! a thread that must stay responsive). With a filter, `NeedsRanges` is the normal second phase of the
//! two-phase I/O: the caller pushes the filter columns' pages, and the decoder, once the filter
//! has said which rows survive, asks for the output pages that hold them (unless the caller
//! prefetched the plan's upper bound because it was small). Each batch is
//! decoded, projected and written to the IPC stream before the next is decoded, so decoded data
//! stays in cache between those steps.
//!
//! Two paths:
//! - **fused** (no filter, or no cross-scan cache): one arrow-rs decoder with the projection and
//!   a `RowFilter` — late materialization and the in-task predicate cache are arrow-rs's.
//! - **cross-scan** (the spec has a `cacheKey`). On a miss, the fused path with the filter as
//!   one `RowFilter` predicate over all its columns, which keeps every batch of them it sees
//!   (within the cache budget) for the worker to cache ([`Capture`]): the first query costs what
//!   the fused path costs, plus holding those columns. On a hit, with the filter columns from the
//!   worker's [`column_cache`](crate::column_cache): step 1 evaluates the filter on them batch by
//!   batch into a mask; step 2 decodes only the output columns not among them, for the rows that
//!   passed (so only pages holding such rows are fetched), and takes the others from the kept
//!   batches. A repeated filter column is never fetched or decoded twice.
//!
//!   (Until 2026-11-25 a miss decoded the filter columns first in a pass of their own, then the
//!   output: in memory, on the cache bench, the first query was 0.71–0.79× as fast as with the
//!   cache off.)
//!
//! Pages fetched in part (a first 100 rows; see `plan::page_part`): the plan lists only the
//! first bytes of a data page whose first rows are all the task needs. When the decoder asks for
//! such a page, it gets the page at its full length — the bytes held, then zeros — and arrow-rs
//! (patched, `file/page_prefix.rs`) is told, for the decode calls, how many of them are real: it
//! decodes only through those, or fails with its "short" error. Then the task asks for the rest of
//! each such page and starts over with a fresh decoder and an empty output (nothing it decoded
//! has left the task), reading them whole: one more round trip, never a wrong byte.
//!
//! Hostile files: every range is checked page header by page header (`pages`: declared sizes
//! against `maxPageBytes`, CRC-32, consistency) before the decoder sees it, and every decoded
//! batch is measured against `maxBatchBytes` before it goes further (see
//! [`limits`](crate::limits)); the task's batch size was reduced to fit that limit up front.

use std::ops::Range;

use bytes::{Bytes, BytesMut};
use parquet::arrow::push_decoder::{ParquetPushDecoder, RowGroupSelection};
use parquet::file::page_prefix::{self, with_pages_in_part};
use parquet::DecodeResult;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use arrow_schema::SchemaRef;
use arrow_select::filter::prep_null_mask_filter;
use parquet::arrow::arrow_reader::metrics::ArrowReaderMetrics;
use parquet::arrow::arrow_reader::RowSelection;
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

use crate::aggregate::{Aggregator, Partial};
use crate::column_cache::{memory_size, CacheReport, CachedColumns, Checkout, KeptColumn};
use crate::error::{Result, SkimError};
use crate::filter::{eval, Filter};
use crate::ipc::IpcStream;
use crate::limits::check_batch;
use crate::metadata::{check_pushed_range, ParquetFile};
use crate::page_layout::with_learned_pages;
use crate::pages::{PageGuard, PageHeader, PageRules};
use crate::plan::{ByteRange, TaskSpec};
use crate::projection::Projection;
use crate::pushed_bytes::PushedBytes;
use crate::rebase;
use crate::scan::{BoundScan, TaskPart};

/// Most bytes a page header may take beside the page's declared size, for a page fetched in part
/// (statistics may hold long values).
const MAX_PAGE_HEADER_BYTES: u64 = 1 << 20;

/// What [`TaskDecoder::run`] stopped at.
#[derive(Debug)]
pub enum TaskRun {
    /// Push these ranges, then call `run` again.
    NeedsRanges(Vec<Range<u64>>),
    /// The task is complete.
    Done(TaskOutput),
}

/// What one call of a task reports across the boundary, as one value (its Arrow IPC bytes travel
/// apart, as bytes): the ranges it needs, a slice used up, or what it did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum TaskStep {
    /// Push these ranges, then run again.
    Needs { ranges: Vec<ByteRange> },
    /// The slice's batches are decoded, with more to do: run again.
    Yielded,
    /// The task is complete; its IPC stream is taken apart.
    Done {
        /// Rows that passed the filter.
        rows: u64,
        batches: u64,
        /// Output rows of filter columns served from the predicate cache or the kept columns.
        #[serde(rename = "rowsFromCache")]
        rows_from_cache: u64,
        /// With aggregates: the partial results, in spec order.
        partials: Option<Vec<Partial>>,
        /// Tasks with a cache key: what the worker's cross-scan cache did.
        cache: Option<CacheReport>,
        /// Pages fetched in part whose rest the task fetched after all (see the module doc).
        #[serde(rename = "pagesReadAgain")]
        pages_read_again: u64,
    },
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
    /// Cross-scan miss: the filter columns this task decoded, for the worker's cache (absent
    /// when they outgrew the budget).
    pub collected: Option<CachedColumns>,
    /// Cross-scan miss: bytes of filter columns not kept because they outgrew the budget.
    pub cache_rejected_bytes: u64,
    /// Cross-scan path: the filter columns came from the worker's cache.
    pub cache_hit: bool,
    /// Pages fetched in part whose rest the task fetched after all, to read them whole.
    pub pages_read_again: u64,
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
    /// The row groups the task decodes, in order (one for most tasks).
    row_groups: Vec<usize>,
    /// Their column chunks' byte spans, by start: which chunk a pushed range's pages belong to.
    chunks: Vec<ChunkSpan>,
    /// A cross-scan hit spanning several row groups: the output pages of all of them (decoder
    /// offsets), asked for together before the first is decoded.
    prefetch: Option<Vec<Range<u64>>>,
    /// Bytes pushed for this task; the decoder gets exact slices of them on request.
    pushed: PushedBytes,
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
    /// A cross-scan hit's state across its two steps.
    cross: Option<CrossScan>,
    /// A cross-scan miss: the filter columns kept as the fused decoder's filter saw them.
    capture: Option<Arc<Mutex<Capture>>>,
    /// The file's metadata: which column chunk a range belongs to.
    metadata: Arc<ParquetMetaData>,
    /// Checks each page header before the decoder sees it.
    pages: PageGuard,
    max_batch_bytes: u64,
    /// Pages the plan fetches in part (file offsets), while they are read so.
    in_part: Vec<Range<u64>>,
    /// Those of them handed to the decoder in part: `(start, length, bytes held)` at the
    /// decoder's offsets, for arrow-rs while it decodes.
    served_in_part: Vec<(u64, u64, u64)>,
    /// Pages fetched in part whose rest was asked for.
    pages_read_again: u64,
    /// With pages in part: the scan and (batch-fitted) spec, to start over reading them whole.
    restart: Option<Box<(BoundScan, TaskSpec)>>,
}

enum Stage {
    /// One decoder produces the output (fused path), or step 2 of a cross-scan hit.
    Decode(ParquetPushDecoder),
    /// Cross-scan hit, step 2 with no column left to decode: emit from the kept batches.
    FromKept,
}

/// The filter-column batches a cross-scan miss keeps for the worker's cache, as its filter sees
/// them, while their bytes stay within the budget.
///
/// A task whose batches so far, extrapolated to all its rows, would outgrow the budget stops
/// keeping at once rather than when it gets there: holding batches it will drop only keeps the
/// decoder from reusing their memory (on the hits bench, 64 MiB, in memory: 0.92× cache-off when
/// kept up to the budget).
struct Capture {
    kept: Option<Vec<RecordBatch>>,
    bytes: u64,
    rows: u64,
    /// Rows the task's filter will see.
    expected_rows: u64,
    budget: u64,
    rejected_bytes: u64,
}

impl Capture {
    fn new(budget: u64, expected_rows: u64) -> Self {
        Self {
            kept: Some(Vec::new()),
            bytes: 0,
            rows: 0,
            expected_rows,
            budget,
            rejected_bytes: 0,
        }
    }

    /// What all the task's rows would take, at the bytes per row seen so far.
    fn projected_bytes(&self) -> u128 {
        let rows = u128::from(self.rows.max(1));
        u128::from(self.bytes) * u128::from(self.expected_rows.max(self.rows)) / rows
    }

    /// Keeps `batch` (its arrays are shared, not copied); over budget, stops keeping and counts
    /// what was not kept.
    fn keep(&mut self, batch: &RecordBatch) {
        let size = memory_size(std::slice::from_ref(batch));
        self.bytes += size;
        self.rows += batch.num_rows() as u64;
        let fits = self.projected_bytes() <= u128::from(self.budget);
        match &mut self.kept {
            Some(kept) if fits => kept.push(batch.clone()),
            Some(_) => {
                self.rejected_bytes = self.bytes;
                self.kept = None;
            }
            None => self.rejected_bytes += size,
        }
    }
}

/// A cross-scan miss: the fused decoder, its filter keeping the batches it sees in the capture
/// (up to `room` bytes, within the scan's cache budget).
fn capturing_decoder(
    scan: &BoundScan,
    file: &ParquetFile,
    spec: &TaskSpec,
    room: u64,
    metrics: ArrowReaderMetrics,
) -> Result<(ParquetPushDecoder, Arc<Mutex<Capture>>)> {
    let rows: usize = scan.parts(spec)?.iter().map(|part| part.rows).sum();
    let budget = room.min(scan.spec().column_cache_bytes);
    let capture = Arc::new(Mutex::new(Capture::new(budget, rows as u64)));
    let keep = Arc::clone(&capture);
    let decoder = scan.fused_decoder(file, spec, metrics, |filter| {
        filter.observed_row_filter(file, move |batch| locked(&keep).keep(batch))
    })?;
    Ok((decoder, capture))
}

/// The capture, whatever a panic elsewhere did to its lock (a batch is kept whole or not at all).
fn locked(capture: &Mutex<Capture>) -> std::sync::MutexGuard<'_, Capture> {
    capture
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct CrossScan {
    file: ParquetFile,
    spec: TaskSpec,
    filter: Filter,
    /// The task's row groups, with its rows of each.
    parts: Vec<TaskPart>,
    /// The filter's leaf columns.
    leaves: Vec<usize>,
    /// The filter-column batches, from the worker's cache.
    kept: Vec<RecordBatch>,
    /// One mask per filter batch: which rows passed.
    masks: Vec<BooleanArray>,
    /// Output columns taken from the kept batches (the rows that passed), by name.
    from_kept: HashMap<String, KeptColumn>,
    /// Output rows emitted so far.
    emitted: usize,
    /// Rows that passed the filter.
    passed: usize,
}

impl CrossScan {
    /// A cross-scan hit for a task of `scan` filtered by `filter`, its filter columns `cached`
    /// by the worker; `file` is the scan's file as this task decodes it.
    fn start(
        scan: &BoundScan,
        file: &ParquetFile,
        spec: &TaskSpec,
        filter: &Filter,
        cached: &CachedColumns,
    ) -> Result<Self> {
        Ok(Self {
            file: file.clone(),
            spec: spec.clone(),
            filter: filter.clone(),
            parts: scan.parts(spec)?,
            leaves: scan.filter_leaves().to_vec(),
            kept: cached.as_ref().clone(),
            masks: Vec::new(),
            from_kept: HashMap::new(),
            emitted: 0,
            passed: 0,
        })
    }
}

/// The scan's aggregates, folded as batches are decoded (none: batches go out as IPC).
fn aggregator(scan: &BoundScan) -> Result<Option<Aggregator>> {
    let file = scan.file();
    scan.spec()
        .aggregates
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
    /// A decoder for task `spec` of `scan` (cross-scan path when the spec has a `cacheKey`, with
    /// no cached columns).
    pub fn try_new(scan: &BoundScan, spec: &TaskSpec) -> Result<Self> {
        let checkout = Checkout {
            cached: None,
            room: scan.spec().column_cache_bytes,
        };
        Self::try_new_cached(scan, spec, checkout)
    }

    /// A decoder for task `spec` of `scan`, with what the worker's cache offers it under the
    /// spec's `cacheKey`: the filter columns it holds, or the room a miss may keep its in.
    pub fn try_new_cached(scan: &BoundScan, spec: &TaskSpec, checkout: Checkout) -> Result<Self> {
        let Checkout { cached, room } = checkout;
        #[cfg(feature = "test-hooks")]
        if let Some(message) = &spec.panic_for_test {
            panic!("{message}");
        }
        // Checks the chunk sizes, and fits the batch size to `maxBatchBytes` for every decoder.
        let spec = &TaskSpec {
            batch_size: scan.batch_size(spec)?,
            ..spec.clone()
        };
        // Chunks without an offset index decode with the pages walked from their headers.
        let learned = with_learned_pages(scan.file(), spec)?;
        let file = learned.as_ref().unwrap_or(scan.file());
        // A row group past 4 GiB decodes with lowered offsets (arrow-rs keys pages by `usize`).
        let rebased = rebase::for_row_group(file, spec.row_group_idx)?;
        let (file, base) = rebased
            .as_ref()
            .map_or((file, 0), |(file, base)| (file, *base));
        if !spec.more_row_groups.is_empty() {
            check_group(file, spec, base)?;
        }
        let metrics = ArrowReaderMetrics::enabled();
        let projection = scan.projection().clone();
        let mut stream = IpcStream::try_new(projection.output_schema())?;
        if let Some(rows) = spec.expected_rows {
            stream.expect_rows(rows);
        }
        let (stage, cross, capture) = match (scan.filter(), &spec.cache_key, cached) {
            (Some(filter), Some(_), Some(cached)) => {
                // Not decoded with, but it validates the row group, chunk sizes and filter as
                // every other path does.
                scan.decoder_with_metrics(file, spec, metrics.clone())?;
                let cross = CrossScan::start(scan, file, spec, filter, &cached)?;
                (Stage::FromKept, Some(cross), None)
            }
            (Some(_), Some(_), None) => {
                let (decoder, capture) =
                    capturing_decoder(scan, file, spec, room, metrics.clone())?;
                (Stage::Decode(decoder), None, Some(capture))
            }
            _ => {
                let fused = scan.decoder_with_metrics(file, spec, metrics.clone())?;
                (Stage::Decode(fused), None, None)
            }
        };
        let limits = &scan.spec().limits;
        // Pages in part are read by the plain fused path only (the plan lists none elsewhere).
        let in_part_readable =
            base == 0 && cross.is_none() && capture.is_none() && scan.spec().aggregates.is_none();
        let in_part: Vec<Range<u64>> = spec
            .pages_in_part
            .iter()
            .filter(|_| in_part_readable)
            .map(|r| r.start..r.end)
            .collect();
        let restart = (!in_part.is_empty()).then(|| Box::new((scan.clone(), spec.clone())));
        let mut decoder = Self {
            file_len: file.file_len(),
            base,
            expected_rows: spec.expected_rows,
            row_groups: spec.row_groups().map(|(idx, _)| idx).collect(),
            chunks: chunk_spans(file.metadata(), spec),
            prefetch: None,
            pushed: PushedBytes::default(),
            stage,
            metrics,
            projection,
            stream: Some(stream),
            aggregator: aggregator(scan)?,
            folded_rows: 0,
            batches: 0,
            batch_size: spec.batch_size.max(1),
            cross,
            capture,
            metadata: Arc::clone(file.metadata()),
            pages: PageGuard::new(PageRules {
                max_page_bytes: limits.max_page_bytes,
                verify_checksums: limits.verify_checksums,
            }),
            max_batch_bytes: limits.max_batch_bytes,
            in_part,
            served_in_part: Vec::new(),
            pages_read_again: 0,
            restart,
        };
        if decoder.cross.is_some() {
            decoder.evaluate_kept()?;
            decoder.start_output(scan)?;
        }
        Ok(decoder)
    }

    /// Hands bytes `range` of the file to the task. Ranges may be larger than requested ones
    /// (coalesced reads); arrow-rs slices what it needs.
    pub fn push(&mut self, range: Range<u64>, data: Bytes) -> Result<()> {
        check_pushed_range(&range, &data, self.file_len)?;
        self.pushed.insert(range.start, data);
        Ok(())
    }

    /// Bytes pushed and held for this task.
    pub fn buffered_bytes(&self) -> u64 {
        self.pushed.bytes()
    }

    /// Decodes until more bytes are needed or the task is done.
    pub fn run(&mut self) -> Result<TaskRun> {
        self.run_step(None)?
            .ok_or_else(|| SkimError::internal("an unbounded run stopped before the task ended"))
    }

    /// [`run`](Self::run) in slices: decodes at most `max_batches` batches, and returns `None`
    /// when it stopped there with more to do (call again). A thread that must stay responsive —
    /// the page's own, running a small task while no worker is ready — decodes a slice, yields to
    /// its event loop, and goes on: a batch cannot be split, so a batch is the finest slice.
    pub fn run_sliced(&mut self, max_batches: usize) -> Result<Option<TaskRun>> {
        self.run_step(Some(max_batches.max(1)))
    }

    /// The task's loop: a dispatcher whose steps (the push decoder's `try_decode` and
    /// `push_ranges`, page checks, a batch's projection and IPC, the finish) stay out of line.
    /// Inlined (fat LTO), this was one function of 22.7 KB of WebAssembly that every task runs
    /// hot, and V8 optimized all of it on a background thread (69–169 ms of CPU in Node, a core of
    /// a 2-core machine while the first queries of a page decode); out of line, only the steps
    /// that are hot get optimized, each on its own.
    fn run_step(&mut self, max_batches: Option<usize>) -> Result<Option<TaskRun>> {
        let mut emitted = 0;
        loop {
            if max_batches.is_some_and(|max| emitted >= max) {
                return Ok(None);
            }
            if let Some(ranges) = self.prefetch.take() {
                let missing = self.pushed.missing(&rebase::raised(&ranges, self.base));
                if !missing.is_empty() {
                    return Ok(Some(TaskRun::NeedsRanges(missing)));
                }
            }
            let step = match &mut self.stage {
                Stage::Decode(decoder) => match decode_step(decoder, &self.served_in_part)? {
                    Some(step) => step,
                    None => return self.read_pages_whole().map(Some),
                },
                Stage::FromKept => match self.next_from_kept()? {
                    Some(batch) => DecodeResult::Data(batch),
                    None => DecodeResult::Finished,
                },
            };
            match step {
                DecodeResult::NeedsData(ranges) => {
                    // The bytes held are at file offsets, `base` above the decoder's.
                    let wanted = rebase::raised(&ranges, self.base);
                    let mut missing = Vec::new();
                    let mut data = Vec::with_capacity(wanted.len());
                    for range in &wanted {
                        match self.answer(range) {
                            Ok(answer) => data.push(answer),
                            Err(range) => missing.push(range),
                        }
                    }
                    if !missing.is_empty() {
                        return Ok(Some(TaskRun::NeedsRanges(missing)));
                    }
                    for (range, (_, real)) in ranges.iter().zip(&data) {
                        self.check_pages(range, real)?;
                    }
                    for (range, (page, real)) in ranges.iter().zip(&data) {
                        if page.len() != real.len() {
                            self.served_in_part.push((
                                range.start,
                                page.len() as u64,
                                real.len() as u64,
                            ));
                        }
                    }
                    let data = data.into_iter().map(|(page, _)| page).collect();
                    if let Stage::Decode(decoder) = &mut self.stage {
                        push_step(decoder, ranges, data)?;
                    }
                }
                DecodeResult::Data(batch) => {
                    self.take_batch(batch)?;
                    emitted += 1;
                }
                DecodeResult::Finished => return self.finish().map(|out| Some(TaskRun::Done(out))),
            }
        }
    }

    /// The bytes to hand the decoder for `range` (file offsets), and the real ones among them:
    /// the same bytes, or for a page fetched in part, the page at its length with zeros after
    /// the bytes held. `Err`: what to fetch first (the rest of a range held in part).
    fn answer(&mut self, range: &Range<u64>) -> std::result::Result<(Bytes, Bytes), Range<u64>> {
        if let Some(bytes) = self.pushed.get(range) {
            return Ok((bytes.clone(), bytes));
        }
        let len = range.end - range.start;
        let held = self.pushed.run_from(range.start, len);
        let rest = range.start + held.len() as u64..range.end;
        // Zeros are made only for a page of a size a page may have (its header is checked
        // against `maxPageBytes` before the decoder runs; an offset index may say anything).
        let sized = len
            <= self
                .pages
                .rules()
                .max_page_bytes
                .saturating_add(MAX_PAGE_HEADER_BYTES);
        let in_part = self.in_part.contains(range);
        if held.is_empty() || !sized || !in_part || self.checksum_in(&held) {
            if in_part && !held.is_empty() {
                self.pages_read_again += 1;
            }
            return Err(rest);
        }
        let mut page = BytesMut::zeroed(usize::try_from(len).map_err(|_| rest.clone())?);
        page[..held.len()].copy_from_slice(&held);
        Ok((page.freeze(), held))
    }

    /// Whether the page header at the start of `held` has a CRC this task must verify, which
    /// takes the whole page.
    fn checksum_in(&self, held: &[u8]) -> bool {
        self.pages.rules().verify_checksums && PageHeader::parse(held).is_some_and(|h| h.has_crc())
    }

    /// The decoder read past the bytes held of a page fetched in part: start over with the
    /// pages whole. What the first attempt decoded never left the task: a fresh decoder, output
    /// and counters, and the rest of each such page asked for.
    #[inline(never)] // out of line: see `run_step`
    fn read_pages_whole(&mut self) -> Result<TaskRun> {
        let (scan, spec) = *self
            .restart
            .take()
            .ok_or_else(|| SkimError::internal("a task read its pages in part twice"))?;
        let rest: Vec<Range<u64>> = self
            .in_part
            .drain(..)
            .filter_map(|page| {
                let held = self
                    .pushed
                    .run_from(page.start, page.end - page.start)
                    .len() as u64;
                (page.start + held < page.end).then_some(page.start + held..page.end)
            })
            .collect();
        self.pages_read_again += rest.len() as u64;
        self.served_in_part.clear();
        let metrics = ArrowReaderMetrics::enabled();
        let learned = with_learned_pages(scan.file(), &spec)?;
        let file = learned.as_ref().unwrap_or(scan.file());
        self.stage = Stage::Decode(scan.decoder_with_metrics(file, &spec, metrics.clone())?);
        self.metrics = metrics;
        let mut stream = IpcStream::try_new(self.projection.output_schema())?;
        if let Some(rows) = self.expected_rows {
            stream.expect_rows(rows);
        }
        self.stream = Some(stream);
        self.batches = 0;
        self.folded_rows = 0;
        if rest.is_empty() {
            return Err(SkimError::internal(
                "a page fetched in part was read past its bytes, but every such page is held whole",
            ));
        }
        Ok(TaskRun::NeedsRanges(rest))
    }

    /// A decoded batch: checked against `maxBatchBytes`, projected (or assembled with the kept
    /// columns) and emitted. Out of line, as are the steps `run_step` calls: see there. What only
    /// some tasks run — a cross-scan hit's kept columns, an aggregate's fold — and the IPC write
    /// are out of line too: this runs for every batch, so V8 optimizes it during a fresh page's
    /// first scan, and with them inlined it was 14.3 KB of WebAssembly to optimize (30–62 ms of
    /// compiling on a background thread in a first bulk scan in Chromium); now what V8 optimizes
    /// is the IPC write alone (3.4 KB).
    #[inline(never)]
    fn take_batch(&mut self, batch: RecordBatch) -> Result<()> {
        if !matches!(self.stage, Stage::FromKept) {
            check_batch(&batch, self.max_batch_bytes, self.first_row_group())?;
        }
        let batch = match (&self.stage, self.cross.is_some()) {
            // Assembled from the kept columns already.
            (Stage::FromKept, _) => batch,
            (_, true) => self.with_kept_columns(batch)?,
            (_, false) => self.projection.apply(batch)?,
        };
        self.emit(batch)
    }

    /// Checks the page headers of `bytes` (file range `range`, asked for by the decoder) before
    /// the decoder sees them.
    #[inline(never)] // out of line: see `run_step`
    fn check_pages(&mut self, range: &Range<u64>, bytes: &Bytes) -> Result<()> {
        // The last chunk starting at or before the range (a range in none of them is the
        // decoder's business, not a page to check). A hostile file's chunks may overlap, one
        // starting inside another: the range may then lie in an earlier, longer chunk, and its
        // pages are checked against that one.
        let holds = |c: &&ChunkSpan| range.start >= c.start && range.start - c.start < c.len;
        let at = self.chunks.partition_point(|c| c.start <= range.start);
        let nearest = at.checked_sub(1).and_then(|i| self.chunks.get(i));
        let Some(&ChunkSpan {
            start,
            row_group,
            column,
            ..
        }) = nearest
            .filter(holds)
            .or_else(|| self.chunks[..at].iter().find(holds))
        else {
            return Ok(());
        };
        let chunk = self.metadata.row_group(row_group).column(column);
        self.pages.check(bytes, range.start, chunk, start)
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

    #[inline(never)] // out of line: see `run_step`
    fn finish(&mut self) -> Result<TaskOutput> {
        let stream = self
            .stream
            .take()
            .ok_or_else(|| SkimError::internal("a finished task was run again"))?;
        let rows = stream.rows() + self.folded_rows;
        if let Some(expected) = self.expected_rows.filter(|e| *e != rows) {
            return Err(short_decode(rows, expected, &self.row_groups_label()));
        }
        let cross = self.cross.take();
        let from_kept_rows = cross
            .as_ref()
            .filter(|c| !c.from_kept.is_empty())
            .map_or(0, |c| c.passed as u64);
        // The decoder's filter may still hold the capture: take what it kept. A task that stopped
        // at its limit saw only part of its rows: nothing to cache.
        let capture = self
            .capture
            .take()
            .map(|capture| std::mem::replace(&mut *locked(&capture), Capture::new(0, 0)));
        let complete = capture.as_ref().is_some_and(|c| c.rows >= c.expected_rows);
        Ok(TaskOutput {
            ipc: stream.finish()?,
            rows,
            batches: self.batches,
            partials: self.aggregator.as_ref().map(Aggregator::partials),
            rows_from_cache: self.metrics.records_read_from_cache().unwrap_or(0) as u64
                + from_kept_rows,
            cache_hit: cross.is_some(),
            pages_read_again: self.pages_read_again,
            cache_rejected_bytes: capture.as_ref().map_or(0, |c| c.rejected_bytes),
            collected: capture
                .and_then(|c| c.kept)
                .filter(|_| complete)
                .map(Arc::new),
        })
    }

    /// A cache hit: evaluate the filter on the cached batches.
    ///
    /// With a limit, the batches after the one where it is reached are not evaluated (their rows
    /// are not wanted): an edited filter's first rows stop at the first batches that hold them
    /// instead of running the filter over every row the cache holds (SF1's `l_comment`, a
    /// common `LIKE`: 1M strings of a row group, ~125 ms in Chromium, for 200 rows found in the
    /// first few thousand).
    fn evaluate_kept(&mut self) -> Result<()> {
        let cross = self.cross_mut()?;
        let limit = cross.spec.limit.map_or(usize::MAX, |limit| {
            usize::try_from(limit).unwrap_or(usize::MAX)
        });
        let mut masks = Vec::with_capacity(cross.kept.len());
        let mut passed = 0usize;
        for batch in &cross.kept {
            if passed >= limit {
                masks.push(BooleanArray::new(
                    BooleanBuffer::new_unset(batch.num_rows()),
                    None,
                ));
                continue;
            }
            let mask = eval::evaluate(cross.filter.predicate(), batch)
                .map_err(|e| SkimError::from_arrow("evaluating the filter", e))?;
            passed = passed.saturating_add(mask.true_count());
            masks.push(mask);
        }
        cross.masks = masks;
        Ok(())
    }

    /// Step 2: the rows that passed become the output decoder's selection; output columns
    /// wholly among the kept filter columns are taken from them.
    fn start_output(&mut self, scan: &BoundScan) -> Result<()> {
        let output_schema = Arc::clone(self.projection.output_schema());
        let cross = self.cross_mut()?;
        for mask in &mut cross.masks {
            if mask.null_count() > 0 {
                *mask = prep_null_mask_filter(mask);
            }
        }
        let scanned: usize = cross.masks.iter().map(|m| m.len()).sum();
        let expected: usize = cross.parts.iter().map(|part| part.rows).sum();
        if scanned != expected {
            return Err(short_decode(
                scanned as u64,
                expected as u64,
                &format!("the row groups from {}", cross.spec.row_group_idx),
            ));
        }
        if let Some(limit) = cross.spec.limit {
            keep_first_passed(&mut cross.masks, limit);
        }
        cross.passed = cross.masks.iter().map(BooleanArray::true_count).sum();
        let passed = cross.passed as u64;
        let mut prefetch = None;
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
            let wholly_kept = leaves_of(root).all(|l| cross.leaves.contains(&l));
            if wholly_kept && cross.passed > 0 {
                let column = KeptColumn::try_new(&cross.kept, &cross.masks, field.name())
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
            // Split by row group (the filter saw the task's rows of each, in order).
            let bits = bits.finish();
            let mut at = 0;
            let mut selections = Vec::with_capacity(cross.parts.len());
            for part in &cross.parts {
                let passed = RowSelection::from_boolean_buffer(bits.slice(at, part.rows));
                at += part.rows;
                let selection = match &part.selection {
                    Some(task) => task.and_then(&passed),
                    None => passed,
                };
                selections.push(RowGroupSelection::new(part.row_group_idx, Some(selection)));
            }
            let mask = ProjectionMask::roots(schema, decode_roots);
            let decoder = scan.plain_decoder(&cross.file, &cross.spec, mask, selections)?;
            // The decoder asks for one row group's pages at a time: a task spanning several
            // asks for all of them at once instead, one round trip rather than one per row group.
            if cross.parts.len() > 1 {
                prefetch = Some(decoder.scan_plan().map(|p| p.range).collect());
            }
            Stage::Decode(decoder)
        };
        self.prefetch = prefetch;
        // The rows that passed are the task's output: its IPC stream reserves room for them.
        if let Some(stream) = &mut self.stream {
            stream.expect_rows(passed);
        }
        Ok(())
    }

    /// Step 2 without a decoder: the next batch of kept output columns (or of row counts).
    #[inline(never)] // out of line: see `run_step`
    fn next_from_kept(&mut self) -> Result<Option<RecordBatch>> {
        let cross = self.cross_mut()?;
        let n = cross.passed - cross.emitted;
        match n.min(self.batch_size) {
            0 => Ok(None),
            n => self.assemble(None, n).map(Some),
        }
    }

    /// Step 2 with a decoder: its batch plus the same rows of the kept output columns. Out of
    /// line, as `fold` and `IpcStream::write` are: see `take_batch`.
    #[inline(never)]
    fn with_kept_columns(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        self.assemble(Some(&batch), n)
    }

    /// The next `n` output rows in the requested column order: the kept columns' next `n` rows,
    /// the others from `decoded`.
    fn assemble(&mut self, decoded: Option<&RecordBatch>, n: usize) -> Result<RecordBatch> {
        let schema = Arc::clone(self.projection.output_schema());
        let cross = self.cross_mut()?;
        let columns = schema
            .fields()
            .iter()
            .map(|f| match (cross.from_kept.get_mut(f.name()), decoded) {
                (Some(kept), _) => kept
                    .take(n)
                    .map_err(|e| SkimError::from_arrow("taking cached filter columns", e))?
                    .ok_or_else(|| {
                        short_decode(
                            (cross.emitted + n) as u64,
                            cross.passed as u64,
                            &format!("row group {}", cross.spec.row_group_idx),
                        )
                    }),
                (None, Some(batch)) => batch.column_by_name(f.name()).cloned().ok_or_else(|| {
                    SkimError::internal(format!("decoded batch lacks column {}", f.name()))
                }),
                (None, None) => Err(SkimError::internal(format!("no kept column {}", f.name()))),
            })
            .collect::<Result<Vec<_>>>()?;
        cross.emitted += n;
        batch_of(schema, columns, n)
    }

    fn first_row_group(&self) -> usize {
        self.row_groups.first().copied().unwrap_or(0)
    }

    /// "row group 3", or "row groups 3–9" for a task spanning several.
    fn row_groups_label(&self) -> String {
        match self.row_groups.as_slice() {
            [one] => format!("row group {one}"),
            [first, .., last] => format!("row groups {first}–{last}"),
            [] => "no row group".to_owned(),
        }
    }

    fn cross_mut(&mut self) -> Result<&mut CrossScan> {
        self.cross
            .as_mut()
            .ok_or_else(|| SkimError::internal("cross-scan step on a fused task"))
    }
}

/// Where a column chunk lies in the file (from its dictionary page, or its first data page).
#[derive(Clone, Copy)]
struct ChunkSpan {
    start: u64,
    len: u64,
    row_group: usize,
    column: usize,
}

/// One step of arrow-rs's push decoder (out of line: see `TaskDecoder::run_step`), with the
/// pages handed to it in part; `None` when it read past the bytes held of one of them.
#[inline(never)]
fn decode_step(
    decoder: &mut ParquetPushDecoder,
    in_part: &[(u64, u64, u64)],
) -> Result<Option<DecodeResult<RecordBatch>>> {
    match with_pages_in_part(in_part, || decoder.try_decode()) {
        Ok(step) => Ok(Some(step)),
        Err(e) if !in_part.is_empty() && e.to_string().contains(page_prefix::SHORT) => Ok(None),
        Err(e) => Err(SkimError::from_parquet("decoding", e)),
    }
}

/// Hands the decoder the bytes it asked for (out of line: see `TaskDecoder::run_step`).
#[inline(never)]
fn push_step(
    decoder: &mut ParquetPushDecoder,
    ranges: Vec<Range<u64>>,
    data: Vec<Bytes>,
) -> Result<()> {
    decoder
        .push_ranges(ranges, data)
        .map_err(|e| SkimError::from_parquet("receiving task data", e))
}

/// The byte spans of the column chunks of `spec`'s row groups, sorted by start.
fn chunk_spans(metadata: &ParquetMetaData, spec: &TaskSpec) -> Vec<ChunkSpan> {
    let row_groups = metadata.row_groups();
    let mut spans: Vec<ChunkSpan> = spec
        .row_groups()
        .filter_map(|(row_group, _)| Some((row_group, row_groups.get(row_group)?)))
        .flat_map(|(row_group, rg)| {
            rg.columns()
                .iter()
                .enumerate()
                .filter_map(move |(column, chunk)| {
                    let start = chunk
                        .dictionary_page_offset()
                        .unwrap_or(chunk.data_page_offset());
                    Some(ChunkSpan {
                        start: u64::try_from(start).ok()?,
                        len: u64::try_from(chunk.compressed_size()).ok()?,
                        row_group,
                        column,
                    })
                })
        })
        .collect();
    spans.sort_by_key(|span| span.start);
    spans
}

/// A task spanning several row groups (the planner's grouping of small ones) decodes them with one
/// decoder over `file`: none may need its offsets lowered or pages walked from its headers. The
/// planner never makes another.
fn check_group(file: &ParquetFile, spec: &TaskSpec, base: u64) -> Result<()> {
    if spec.learned_pages.is_some() {
        return Err(SkimError::invalid_argument(
            "task",
            "expected a task spanning several row groups to have no learnedPages, got one with \
             them; plan tasks with planScan",
        ));
    }
    for part in &spec.more_row_groups {
        if base != 0 || rebase::for_row_group(file, part.row_group_idx)?.is_some() {
            return Err(SkimError::invalid_argument(
                "task",
                format!(
                    "expected the row groups of a task spanning several to lie below 4 GiB, \
                     got row group {} past it; plan tasks with planScan",
                    part.row_group_idx
                ),
            ));
        }
    }
    Ok(())
}

/// Keeps the first `limit` rows that passed (masks without nulls, in row order); later ones are
/// dropped, as a task that stops at its limit drops them.
fn keep_first_passed(masks: &mut [BooleanArray], limit: u64) {
    let mut left = usize::try_from(limit).unwrap_or(usize::MAX);
    for mask in masks.iter_mut() {
        let passed = mask.true_count();
        if passed <= left {
            left -= passed;
            continue;
        }
        let mut kept = 0;
        *mask = mask
            .values()
            .iter()
            .map(|pass| {
                let keep = pass && kept < left;
                kept += usize::from(keep);
                Some(keep)
            })
            .collect();
        left = 0;
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

fn short_decode(rows: u64, expected: u64, row_groups: &str) -> SkimError {
    SkimError::Unsupported {
        detail: format!(
            "the decoder returned {rows} of the {expected} rows of {row_groups}; \
             this file's layout is not decoded correctly by this build (arrow-rs), so no result \
             is returned rather than a wrong one"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;

    fn batch(rows: i64) -> RecordBatch {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        RecordBatch::try_from_iter([("id", ids)]).expect("batch")
    }

    #[test]
    fn a_capture_keeps_what_fits_and_gives_up_as_soon_as_its_rows_cannot() {
        let size = memory_size(&[batch(100)]);
        // Four batches of 100 rows fit a budget of four batches' bytes: all kept.
        let mut fits = Capture::new(4 * size, 400);
        for _ in 0..4 {
            fits.keep(&batch(100));
        }
        assert_eq!(fits.kept.as_ref().map(Vec::len), Some(4));
        assert_eq!(fits.rejected_bytes, 0);
        // Ten batches cannot fit that budget: the first batch says so, and nothing is kept.
        let mut outgrows = Capture::new(4 * size, 1000);
        outgrows.keep(&batch(100));
        assert!(outgrows.kept.is_none());
        outgrows.keep(&batch(100));
        assert_eq!(outgrows.rejected_bytes, 2 * size);
    }
}
