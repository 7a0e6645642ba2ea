//! [`ScanRequest`] + [`ParquetFile`] → [`ReadPlan`]: the read tasks of a scan and the bytes each
//! needs. Pure: no I/O, no decoding.
//!
//! A plan is one [`ScanSpec`] — what every task shares (columns, filter, aggregates, limits),
//! sent to a worker once per scan and bound there once ([`BoundScan`]) — and its tasks, each a
//! small value naming one row group and which of its rows to decode. Without a filter, `offset`/`limit` become row-group-local `skip`/`take` before
//! anything is fetched: row groups wholly before the offset or after the limit get no task. With
//! a filter, the rows a task returns are unknown until it runs, so tasks cover whole row groups
//! (less what pruning removed), each stops after `offset + limit` matches, and the scheduler
//! applies the offset and limit across tasks in order and stops launching tasks once done.
//!
//! Pruning happens here: row groups by footer statistics, then by bloom filters (for `=`/`IN`;
//! their bytes are fetched beforehand, see [`bloom_ranges_for`]), then pages by the column index
//! (which becomes the task's row selection; a row group whose selection is empty gets no task).
//!
//! A task's byte ranges come from arrow-rs itself: the planner builds the same push decoder the
//! worker will build ([`BoundScan::decoder`]) and lists its `ScanPlan`. With an offset index that is
//! one range per needed page (plus dictionary pages). Ranges are split by phase: the filter
//! columns (phase 1, fetched up front) and the output-only columns (phase 2: with a filter,
//! fetched on demand after the filter ran, so only pages that still hold selected rows are read).

use std::collections::BTreeMap;
use std::ops::Range;

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::arrow::push_decoder::PageKind;
use parquet::basic::{Compression, Encoding, Type as PhysicalType};
use serde::{Deserialize, Serialize};

use crate::aggregate::AggregateSpec;
use crate::column_cache::{cache_key, group_cache_key};
use crate::error::{Result, SkimError};
use crate::filter::bloom::{bloom_ranges, excluded_by_bloom, may_use_blooms};
use crate::filter::prune::{prune_pages, row_groups_may_match};
use crate::filter::{Expr, Filter};
use crate::limits::DecodeLimits;
use crate::metadata::ParquetFile;
use crate::page_layout::{
    rows_through, walks_pages, with_learned_pages, LearnedPages, PageLayouts,
};
use crate::pushed_bytes::PushedBytes;
use crate::scan::{BoundScan, ScanSpec};

/// Rows per decoded batch when the caller does not say.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// What a caller asks of a scan. Every field may be left out (in TypeScript: optional).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScanRequest {
    /// Dotted column paths to return, in this order; all columns when absent.
    pub columns: Option<Vec<String>>,
    /// Rows to skip from the start of the (filtered) result.
    pub offset: Option<u64>,
    /// Most rows to return.
    pub limit: Option<u64>,
    /// Rows per batch.
    pub batch_size: Option<usize>,
    /// Keep only rows where this is true.
    pub filter: Option<Expr>,
    /// Decoding limits (each field defaults on its own; see [`limits`](crate::limits)).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub limits: DecodeLimits,
    /// Split row groups into tasks of about this many rows, at page boundaries, so that a file
    /// with few, large row groups still keeps every worker busy. Default: one task per row group.
    pub target_task_rows: Option<u64>,
    /// Fold the (filtered) rows into these aggregates inside each task instead of returning
    /// them; `columns` are then the aggregated columns.
    pub aggregates: Option<Vec<AggregateSpec>>,
    /// Bytes of decoded filter columns each task may keep to reuse for its output (the
    /// predicate cache); 0 or absent turns it off.
    pub predicate_cache_bytes: Option<u64>,
    /// Identity of the file's bytes (URL + version, or an id per `File`/buffer). With it and a
    /// `columnCacheBytes` budget, filtered tasks carry a `cacheKey` and keep their decoded filter
    /// columns in the worker's cross-scan cache (`column_cache`).
    pub file_key: Option<String>,
    /// Each worker's cross-scan cache budget; 0 or absent turns it off.
    pub column_cache_bytes: Option<u64>,
    /// Increases with every scan, unique in a page or process: task hosts know the scan by it,
    /// and the cross-scan cache lets a scan evict only entries of earlier scans (see
    /// `column_cache`).
    pub scan_id: Option<u64>,
    /// Bytes of column chunks without an offset index (in one row group) worth walking their
    /// page headers for (default
    /// [`DEFAULT_PAGE_WALK_MIN_BYTES`](crate::page_layout::DEFAULT_PAGE_WALK_MIN_BYTES)).
    pub page_walk_min_bytes: Option<u64>,
}

/// One task of a scan: what differs from task to task (the scan's [`ScanSpec`] holds the rest).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskSpec {
    /// Position of the task in the scan's output order.
    pub task_idx: usize,
    pub row_group_idx: usize,
    /// Rows of the row group to decode, as run lengths: `n > 0` selects `n` rows, `n < 0` skips
    /// `-n`. `None` decodes every row. Trailing rows not covered are skipped.
    pub selection: Option<Vec<i64>>,
    /// Rows the task returns when known (no filter): checked after decoding.
    pub expected_rows: Option<u64>,
    /// Stop after this many rows (with a filter: `offset + limit` of the scan).
    pub limit: Option<u64>,
    /// Rows per batch, already reduced to fit `maxBatchBytes` by the planner.
    pub batch_size: usize,
    /// Filtered tasks of a file with an identity: the worker's cross-scan cache entry for this
    /// task's filter columns (see `column_cache::cache_key`).
    #[serde(default)]
    pub cache_key: Option<String>,
    /// Recovery tests only (feature `test-hooks`, absent from the published build): the task
    /// panics with this message as it starts, which in WebAssembly is a real trap of its worker.
    /// No known input panics any more (crate/patches/parquet), so this is how
    /// tests/browser/worker-crash.spec.ts exercises replacing a trapped worker. The planner never
    /// sets it.
    #[cfg(feature = "test-hooks")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panic_for_test: Option<String>,
    /// Page locations walked from the page headers of column chunks with no offset index
    /// (`page_layout`): the task decodes with them as the chunks' offset index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned_pages: Option<Vec<LearnedPages>>,
    /// Row groups the task decodes after `row_group_idx`, in order, with the same decoder:
    /// consecutive small row groups share one task (see [`group_small_tasks`]). Empty for most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_row_groups: Vec<RowGroupPart>,
    /// Data pages (each whole, with its header) of which the plan lists only the first bytes:
    /// the task needs only their first rows (see [`page_part`]). Empty for most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages_in_part: Vec<ByteRange>,
}

/// A further row group of a task that spans several (see [`TaskSpec::more_row_groups`]).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RowGroupPart {
    pub row_group_idx: usize,
    /// Rows of the row group to decode, as [`TaskSpec::selection`]; `None`: every row.
    pub selection: Option<Vec<i64>>,
}

impl TaskSpec {
    /// The row groups the task decodes, in order, each with its selection (`None`: all rows).
    pub fn row_groups(&self) -> impl Iterator<Item = (usize, Option<&[i64]>)> + '_ {
        std::iter::once((self.row_group_idx, self.selection.as_deref())).chain(
            self.more_row_groups
                .iter()
                .map(|part| (part.row_group_idx, part.selection.as_deref())),
        )
    }
}

/// A half-open byte range `[start, end)`, as it crosses into JS.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadTask {
    pub spec: TaskSpec,
    /// Phase 1: pages of the filter columns (empty without a filter).
    pub filter_ranges: Vec<ByteRange>,
    /// Phase 2: pages of the output-only columns (everything without a filter). With a filter
    /// this is an upper bound: the decoder asks only for pages holding selected rows.
    pub output_ranges: Vec<ByteRange>,
    /// With a filter, of `output_ranges`' bytes, those phase 2 may leave unread: the scheduler
    /// fetches the output pages with the filter pages when this is small, as waiting for the
    /// filter would save little. When the filter's statistics narrowed the scan (row groups or
    /// pages pruned: the rows left are where its values lie), one match is assumed in each task,
    /// and this is what pages finer than one match leave out — all but, in one of the task's row
    /// groups, each output column's dictionary page and smallest data page (0 where no offset
    /// index names the pages: phase 2 reads whole chunks). Otherwise, and for each part of a row
    /// group split by rows, nothing says a row of the task passes: all of them. (The scheduler
    /// bounds what a scan fetches on the assumption: it is wrong where another conjunct matches
    /// nothing.)
    pub output_skippable_bytes: u64,
    /// Rows the task decodes (after page pruning), before filtering.
    pub rows_scanned: u64,
}

/// What planning decided, for scan statistics (the package's `ScanStats` shows these counters as
/// they are: their docs here are its docs).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStats {
    /// Row groups in the file.
    pub row_groups_total: usize,
    /// Row groups skipped by their footer statistics.
    pub row_groups_pruned_by_stats: usize,
    /// Row groups skipped because their bloom filters exclude every `=`/`IN` value.
    pub row_groups_pruned_by_bloom: usize,
    /// Row groups skipped by the page index (every page of a filter column excluded).
    pub row_groups_pruned_by_page_index: usize,
    /// Data pages of the filter columns in the row groups left after statistics pruning.
    pub pages_total: usize,
    /// Of those, the pages the column index skipped.
    pub pages_pruned: usize,
    /// Rows in the file.
    pub rows_total: u64,
    /// Rows the tasks decode (after pruning, before filtering).
    pub rows_scanned: u64,
    /// Which row groups the filter skipped, and by what: `stats`, `bloom` or `pageIndex`.
    pub pruned_row_groups: Vec<PrunedRowGroup>,
}

impl PlanStats {
    /// Counts row group `row_group` as skipped `by` statistics, bloom filters or the page index.
    fn pruned(&mut self, row_group: usize, by: PrunedBy) {
        match by {
            PrunedBy::Stats => self.row_groups_pruned_by_stats += 1,
            PrunedBy::Bloom => self.row_groups_pruned_by_bloom += 1,
            PrunedBy::PageIndex => self.row_groups_pruned_by_page_index += 1,
        }
        self.pruned_row_groups
            .push(PrunedRowGroup { row_group, by });
    }
}

/// What skipped a row group: its footer statistics, its bloom filters, or the page index (every
/// page of a filter column excluded). Serialized as `stats`, `bloom`, `pageIndex`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PrunedBy {
    Stats,
    Bloom,
    PageIndex,
}

/// A row group a filter skipped.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrunedRowGroup {
    pub row_group: usize,
    pub by: PrunedBy,
}

/// All tasks of a scan, in output order.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadPlan {
    /// What every task shares.
    pub scan: ScanSpec,
    pub tasks: Vec<ReadTask>,
    /// Rows the scan returns when known (no filter).
    pub rows: Option<u64>,
    /// Rows to skip and keep across tasks, applied by the scheduler (with a filter).
    pub offset: u64,
    pub limit: Option<u64>,
    pub stats: PlanStats,
    /// What the file can still tell planning before the tasks run.
    pub learns: Learns,
}

/// Reads that can change a plan before its first page request, each with its own call
/// (`pageRanges`, `bloomRanges`): the rules are here, beside what answers those calls, so the
/// caller makes a call only where it can help — each one parses the request again, and in a
/// page's first query runs code for the first time on the way to the first page request.
/// Neither applies to a plan without a task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Learns {
    /// Page headers to walk ([`PageLayouts::wanted`] may ask for bytes): a scan without a filter
    /// or aggregates whose first rows lie in column chunks with no offset index.
    pub pages: bool,
    /// Bloom filters to read ([`bloom_ranges_for`] names some): a filter with a point lookup on
    /// a column that has them.
    pub blooms: bool,
}

impl ReadPlan {
    /// The plan's [`ScanSpec`] bound to `file` (what a worker does once per scan).
    pub fn bind(&self, file: &ParquetFile) -> Result<BoundScan> {
        BoundScan::try_new(file, self.scan.clone())
    }
}

/// The bloom filter ranges planning `request` can use: fetch them and pass them to
/// [`plan_scan_with`]. Empty without a filter or when no column has a bloom filter.
pub fn bloom_ranges_for(file: &ParquetFile, request: &ScanRequest) -> Result<Vec<ByteRange>> {
    let Some(expr) = &request.filter else {
        return Ok(Vec::new());
    };
    let filter = Filter::try_new(expr, file)?;
    if !may_use_blooms(filter.predicate(), file.metadata()) {
        return Ok(Vec::new());
    }
    let keep = row_groups_may_match(filter.predicate(), file.metadata());
    Ok(bloom_ranges(
        filter.predicate(),
        file.metadata(),
        &keep,
        footer_start(file),
    )
    .into_iter()
    .map(ByteRange::from)
    .collect())
}

/// Plans `request` over `file` without bloom filters or learned pages.
pub fn plan_scan(file: &ParquetFile, request: &ScanRequest) -> Result<ReadPlan> {
    plan_scan_with(
        file,
        request,
        &PushedBytes::default(),
        &PageLayouts::default(),
    )
}

/// Plans `request` over `file`, pruning with whatever bloom filter bytes `blooms` holds, and
/// reading pages where `layouts` learned them (files without an offset index).
///
/// Its steps (specs, splits, read tasks, grouping) stay out of line: inlined (fat LTO), this
/// was one function of 22 KB of WebAssembly that V8 optimized whole on a background thread
/// once a page had planned a few scans, a core of a 2-core machine taken from the page's next
/// queries (like `TaskDecoder::run_step`).
pub fn plan_scan_with(
    file: &ParquetFile,
    request: &ScanRequest,
    blooms: &PushedBytes,
    layouts: &PageLayouts,
) -> Result<ReadPlan> {
    let batch_size = checked_batch_size(request.batch_size)?;
    request.limits.checked()?;
    let asked = request;
    let aggregate_request;
    let request = match &request.aggregates {
        None => checked_columns(request)?,
        Some(aggregates) => {
            aggregate_request = aggregate_columns(request, aggregates)?;
            &aggregate_request
        }
    };
    // Bound once up front, so a bad column fails the scan, not each task.
    let scan = BoundScan::try_new(file, scan_spec_of(request))?;
    let row_groups = file.metadata().row_groups();
    let mut stats = PlanStats {
        row_groups_total: row_groups.len(),
        rows_total: row_groups.iter().map(|rg| rows_of(rg.num_rows())).sum(),
        ..Default::default()
    };
    let specs = match scan.filter() {
        None => unfiltered_specs(file, request, batch_size),
        Some(filter) => filtered_specs(file, request, filter, batch_size, blooms, &mut stats)?,
    };
    let specs = match request.target_task_rows {
        Some(target) if target > 0 => split_specs(&scan, specs, target),
        _ => specs,
    };
    let mut tasks = read_tasks(&scan, request, specs, layouts, &mut stats)?;
    // A match is assumed where the statistics narrowed the scan, for a row group: not for each
    // part of one split by rows (a lookup's match lies in one of them).
    let mut parts_of_row_group: BTreeMap<usize, usize> = BTreeMap::new();
    for task in &tasks {
        *parts_of_row_group
            .entry(task.spec.row_group_idx)
            .or_default() += 1;
    }
    let narrowed = narrowed(&stats);
    for task in &mut tasks {
        let split = parts_of_row_group.get(&task.spec.row_group_idx) != Some(&1);
        if !narrowed || split {
            task.output_skippable_bytes = ReadTask::bytes_of(&task.output_ranges);
        }
    }
    // A filtered scan with a limit (first rows, lookups) keeps a task per row group: each task
    // sees all its row group's rows before it stops at the limit, so it fills the cross-scan
    // cache, and the scheduler stops launching tasks once the limit is met. With
    // `targetTaskRows`, a group stops at that many rows too.
    let tasks = if scan.filter().is_some() && request.limit.is_some() {
        tasks
    } else {
        let max_rows = match request.target_task_rows {
            Some(target) if target > 0 => target.min(GROUP_TASK_ROWS),
            _ => GROUP_TASK_ROWS,
        };
        group_small_tasks(&scan, tasks, request.file_key.as_deref(), max_rows)
    };
    let rows = scan
        .filter()
        .is_none()
        .then(|| tasks.iter().filter_map(|t| t.spec.expected_rows).sum());
    let filtered = scan.filter().is_some();
    let learns = if tasks.is_empty() {
        Learns::default()
    } else {
        Learns {
            pages: walks_pages(file, asked)?,
            blooms: scan
                .filter()
                .is_some_and(|filter| may_use_blooms(filter.predicate(), file.metadata())),
        }
    };
    Ok(ReadPlan {
        scan: scan.spec().clone(),
        tasks,
        rows,
        offset: if filtered {
            request.offset.unwrap_or(0)
        } else {
            0
        },
        limit: if filtered { request.limit } else { None },
        stats,
        learns,
    })
}

/// The read tasks of `specs`, numbered in order: each with its cross-scan cache key (when its
/// filter columns may be kept), batch size and learned page locations.
#[inline(never)] // out of line: see `plan_scan_with`
fn read_tasks(
    scan: &BoundScan,
    request: &ScanRequest,
    specs: Vec<(TaskSpec, u64)>,
    layouts: &PageLayouts,
    stats: &mut PlanStats,
) -> Result<Vec<ReadTask>> {
    let cacheable = scan.filter().is_some() && scan.spec().column_cache_bytes > 0;
    let mut tasks: Vec<ReadTask> = Vec::with_capacity(specs.len());
    for (task_idx, (mut spec, rows_scanned)) in specs.into_iter().enumerate() {
        spec.task_idx = task_idx;
        // Not a task whose filter columns cannot fit the worker's cache. One with a limit keeps
        // its filter columns only if it saw all its rows (a rare filter), and a hit stops at it.
        let keep = cacheable && fits_column_cache(scan, &spec);
        if let (true, Some(file_key)) = (keep, &request.file_key) {
            spec.cache_key = Some(cache_key(
                file_key,
                spec.row_group_idx,
                scan.filter_leaves(),
                spec.selection.as_deref(),
            ));
        }
        spec.batch_size = scan.batch_size(&spec)?;
        spec.learned_pages = layouts.learned(scan, &spec)?;
        stats.rows_scanned += rows_scanned;
        tasks.push(read_task(scan, spec, rows_scanned)?);
    }
    Ok(tasks)
}

/// Planned bytes (filter and output pages; with a filter, the filter columns' pages) under which a
/// task may share its decoder with the tasks next to it.
pub const SMALL_TASK_BYTES: u64 = 256 * 1024;
/// A task made of small row groups stops taking more at this many planned bytes…
pub const GROUP_TASK_BYTES: u64 = 1024 * 1024;
/// …or at this many rows scanned.
pub const GROUP_TASK_ROWS: u64 = 128 * 1024;

/// Consecutive small tasks become one task over their row groups, decoded by one push decoder.
///
/// Writers that split data by partition, or flush often, leave row groups of a few hundred rows:
/// pyarrow's `write_to_dataset` wrote lineitem SF1 as 84 files of ~180 row groups of ~400 rows.
/// A task per row group then costs more to schedule than to decode: TPC-H Q6 over that dataset
/// ran 2,208 tasks of ~0.4 ms of decoding each, and the page — planning, reading, posting and
/// collecting each task — was busy for most of the scan while the workers idled 60% of it.
/// A task per ~1 MiB of pages decodes the same rows with a fiftieth of the tasks.
///
/// Only tasks that decode as plain row groups are grouped: not one whose pages were walked from
/// their headers (its own offset index), nor in a file past 4 GiB (a row group's offsets may need
/// lowering on its own, see [`rebase`](crate::rebase)). Two parts of one row group (split by
/// `targetTaskRows`) never share a task.
///
/// A grouped task whose row groups all have a cross-scan cache key gets one key for all of them.
/// With a filter, groups are bounded by the filter columns' bytes and the rows, never by the
/// output columns: the same filter columns over the same row groups group the same way whatever
/// the scan projects or aggregates, and hit. (A re-filter that prunes other row groups groups
/// them otherwise, and misses.) An output column of a group is then bounded only by its rows.
#[inline(never)] // out of line: see `plan_scan_with`
pub(crate) fn group_small_tasks(
    scan: &BoundScan,
    tasks: Vec<ReadTask>,
    file_key: Option<&str>,
    max_rows: u64,
) -> Vec<ReadTask> {
    let groupable_file = scan.file().file_len() <= 1 << 32;
    let filtered = scan.filter().is_some();
    let weight = |task: &ReadTask| {
        if filtered {
            ReadTask::bytes_of(&task.filter_ranges)
        } else {
            task.bytes()
        }
    };
    let small = |task: &ReadTask| {
        groupable_file
            && task.spec.learned_pages.is_none()
            // Its pages fetched in part are read by a task of its own (`task.rs`).
            && task.spec.pages_in_part.is_empty()
            && weight(task) <= SMALL_TASK_BYTES
            && task.rows_scanned <= max_rows
    };
    let mut grouped: Vec<ReadTask> = Vec::with_capacity(tasks.len());
    let mut open = false;
    for task in tasks {
        let joins = open
            && small(&task)
            && grouped.last().is_some_and(|group| {
                weight(group) + weight(&task) <= GROUP_TASK_BYTES
                    && group.rows_scanned + task.rows_scanned <= max_rows
                    // With a filter, the predicate cache is off for a task with a page
                    // selection (`BoundScan::fused_decoder`): row groups read whole do not join one.
                    && (!filtered || group.spec.selection.is_some() == task.spec.selection.is_some())
                    && group
                        .spec
                        .row_groups()
                        .all(|(rg, _)| rg != task.spec.row_group_idx)
            });
        match grouped.last_mut() {
            Some(group) if joins => group.absorb(task),
            _ => {
                open = small(&task);
                grouped.push(task);
            }
        }
    }
    for (task_idx, task) in grouped.iter_mut().enumerate() {
        task.spec.task_idx = task_idx;
        let spec = &mut task.spec;
        if !spec.more_row_groups.is_empty() && spec.cache_key.is_some() {
            spec.cache_key = file_key
                .filter(|_| fits_column_cache(scan, spec))
                .map(|file_key| group_cache_key(file_key, spec.row_groups(), scan.filter_leaves()));
        }
    }
    grouped
}

impl ReadTask {
    /// Bytes the plan lists for the task (filter and output pages).
    fn bytes(&self) -> u64 {
        Self::bytes_of(&self.filter_ranges) + Self::bytes_of(&self.output_ranges)
    }

    fn bytes_of(ranges: &[ByteRange]) -> u64 {
        ranges.iter().map(|r| r.end - r.start).sum()
    }

    /// Takes `next`'s row groups after this task's, as one task.
    fn absorb(&mut self, next: ReadTask) {
        let spec = &mut self.spec;
        // Keyed again once grouped, if every row group had a key.
        spec.cache_key = spec
            .cache_key
            .take()
            .filter(|_| next.spec.cache_key.is_some());
        spec.expected_rows = spec
            .expected_rows
            .zip(next.spec.expected_rows)
            .map(|(a, b)| a + b);
        spec.batch_size = spec.batch_size.min(next.spec.batch_size);
        spec.more_row_groups.push(RowGroupPart {
            row_group_idx: next.spec.row_group_idx,
            selection: next.spec.selection,
        });
        spec.more_row_groups.extend(next.spec.more_row_groups);
        // One match in either task's row groups reads that one's least (see the field).
        let (own, theirs) = (
            Self::bytes_of(&self.output_ranges),
            Self::bytes_of(&next.output_ranges),
        );
        self.output_skippable_bytes =
            (self.output_skippable_bytes + theirs).max(next.output_skippable_bytes + own);
        self.filter_ranges.extend(next.filter_ranges);
        self.output_ranges.extend(next.output_ranges);
        self.rows_scanned += next.rows_scanned;
    }
}

/// What every task of `request` shares.
fn scan_spec_of(request: &ScanRequest) -> ScanSpec {
    ScanSpec {
        columns: request.columns.clone(),
        filter: request.filter.clone(),
        aggregates: request.aggregates.clone(),
        limits: request.limits,
        predicate_cache_bytes: request.predicate_cache_bytes.unwrap_or(0),
        column_cache_bytes: request.column_cache_bytes.unwrap_or(0),
        scan_id: request.scan_id.unwrap_or(0),
    }
}

/// Whether `spec`'s decoded filter columns can fit its worker's cross-scan cache: their pages'
/// uncompressed bytes (for the rows it scans) are a lower bound of what Arrow holds of them. A
/// task that could only be rejected decodes fused (filter and output in one pass, the predicate
/// cache) instead of collecting its filter columns for nothing: with a 16 MiB `cacheBytes`, the
/// hits bench's first query was 0.88× cache-off that way, in memory.
/// A task spanning several row groups sums theirs.
fn fits_column_cache(scan: &BoundScan, spec: &TaskSpec) -> bool {
    let Ok(parts) = scan.parts(spec) else {
        return false;
    };
    let mut scanned = 0u128;
    for part in parts {
        let rg = scan.file().metadata().row_group(part.row_group_idx);
        let num_rows = rows_of(rg.num_rows()).max(1);
        let bytes: u64 = scan
            .filter_leaves()
            .iter()
            .filter_map(|&leaf| rg.columns().get(leaf))
            .map(|chunk| u64::try_from(chunk.uncompressed_size()).unwrap_or(0))
            .sum();
        scanned += u128::from(bytes) * part.rows as u128 / u128::from(num_rows);
    }
    scanned <= u128::from(scan.spec().column_cache_bytes)
}

/// `request`, refused when it names an empty list of columns.
fn checked_columns(request: &ScanRequest) -> Result<&ScanRequest> {
    if request.columns.as_ref().is_some_and(Vec::is_empty) {
        return Err(SkimError::invalid_argument(
            "columns",
            "expected at least one column name, got an empty list; omit `columns` to read every \
             column",
        ));
    }
    Ok(request)
}

/// Whether a filter's statistics (footer, bloom filters, page index) pruned any of the file.
fn narrowed(stats: &PlanStats) -> bool {
    stats.row_groups_pruned_by_stats > 0
        || stats.row_groups_pruned_by_bloom > 0
        || stats.row_groups_pruned_by_page_index > 0
        || stats.pages_pruned > 0
}

/// `spec` with its byte ranges, listed by the push decoder the task will build, split into the
/// filter columns' (phase 1) and the output-only columns' (phase 2), and the output bytes a
/// match leaves unread ([`ReadTask::output_skippable_bytes`], assuming one).
fn read_task(scan: &BoundScan, spec: TaskSpec, rows_scanned: u64) -> Result<ReadTask> {
    let learned = with_learned_pages(scan.file(), &spec)?;
    let file = learned.as_ref().unwrap_or(scan.file());
    let (mut filter_ranges, mut output_ranges) = (Vec::new(), Vec::new());
    // Per row group and output column: the least bytes phase 2 reads of it for one match.
    let mut least: BTreeMap<(usize, usize), ColumnLeast> = BTreeMap::new();
    let rows_needed = rows_needed_in_part(scan, &spec);
    let mut pages_in_part = Vec::new();
    for planned in scan.decoder(file, &spec)?.scan_plan() {
        if scan.filter_leaves().contains(&planned.column) {
            filter_ranges.push(planned.range.into());
            continue;
        }
        let column = least
            .entry((planned.row_group, planned.column))
            .or_default();
        match planned.kind {
            PageKind::Data => {
                column.data = Some(column.data.map_or(planned.len(), |d| d.min(planned.len())));
            }
            _ => column.always += planned.len(),
        }
        let part = rows_needed
            .filter(|_| planned.kind == PageKind::Data)
            .and_then(|rows| {
                page_part(
                    file,
                    planned.row_group,
                    planned.column,
                    &planned.range,
                    rows,
                )
            });
        match part {
            Some(part) => {
                pages_in_part.push(planned.range.clone().into());
                output_ranges.push(ByteRange {
                    start: planned.range.start,
                    end: planned.range.start + part,
                });
            }
            None => output_ranges.push(planned.range.into()),
        }
    }
    let mut per_row_group: BTreeMap<usize, u64> = BTreeMap::new();
    for ((row_group, _), column) in least {
        *per_row_group.entry(row_group).or_default() += column.always + column.data.unwrap_or(0);
    }
    let output = ReadTask::bytes_of(&output_ranges);
    let fewest = per_row_group.into_values().min().unwrap_or(output);
    Ok(ReadTask {
        spec: TaskSpec {
            pages_in_part,
            ..spec
        },
        filter_ranges,
        output_ranges,
        output_skippable_bytes: output.saturating_sub(fewest),
        rows_scanned,
    })
}

/// Bytes of a page fetched in part for its header (with statistics, which may hold strings).
const PART_HEADER: u64 = 1024;

/// The rows of its row group a task reads (from the first), when it may fetch pages in part:
/// a task without a filter or aggregates, of one row group, whose selection ends before the row
/// group does — a first 100 rows, a page of a table. Its pages are named by the file's offset
/// index or by the page headers walked (`page_layout`), whose bytes (a chunk's first 64 KiB)
/// the task already holds: a part within them is not fetched at all.
fn rows_needed_in_part(scan: &BoundScan, spec: &TaskSpec) -> Option<u64> {
    let plain = scan.filter().is_none()
        && scan.spec().aggregates.is_none()
        && spec.more_row_groups.is_empty()
        && spec.cache_key.is_none();
    rows_through(spec.selection.as_deref().filter(|_| plain))
}

/// How many bytes of data page `range` (leaf `column` of `row_group`) to fetch when a read
/// needs the row group's first `rows_needed` rows: `Some` for a page that arrow-rs (patched,
/// `file/page_prefix.rs`) decompresses only in part — snappy, no repetition, `PLAIN` (not
/// boolean or fixed-length) or dictionary indices, the rows ending in its first quarter — and
/// whose part is at most half of it (less would not pay for the odds of a second round trip).
/// The part is [`PART_HEADER`], the most a nullable column's definition levels take (read
/// whole: bit-packed at their width), and the rows' share of the page twice over. A read that
/// needs more fails with arrow-rs's "short" error, and the task fetches the rest and decodes
/// again (`task.rs`).
fn page_part(
    file: &ParquetFile,
    row_group: usize,
    column: usize,
    range: &Range<u64>,
    rows_needed: u64,
) -> Option<u64> {
    let metadata = file.metadata();
    let group = metadata.row_groups().get(row_group)?;
    let chunk = group.columns().get(column)?;
    let plain_values = chunk.encodings().all(|e| {
        matches!(
            e,
            Encoding::PLAIN | Encoding::RLE | Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
        )
    });
    let fits = chunk.compression() == Compression::SNAPPY
        && chunk.column_descr().max_rep_level() == 0
        && !matches!(
            chunk.column_type(),
            PhysicalType::BOOLEAN | PhysicalType::FIXED_LEN_BYTE_ARRAY
        )
        && plain_values
        // A row group ending past 4 GiB decodes at lowered offsets (`rebase`): whole pages there.
        && group.columns().iter().all(|c| {
            let (start, len) = c.byte_range();
            start.saturating_add(len) <= 1 << 32
        });
    if !fits {
        return None;
    }
    let pages = metadata
        .page_index()?
        .offset_index(row_group, column)?
        .page_locations();
    let at = pages
        .iter()
        .position(|p| u64::try_from(p.offset).ok() == Some(range.start))?;
    let first = u64::try_from(pages[at].first_row_index).ok()?;
    let next = match pages.get(at + 1) {
        Some(next) => u64::try_from(next.first_row_index).ok()?,
        None => u64::try_from(group.num_rows()).ok()?,
    };
    let page_rows = next.checked_sub(first)?;
    let rows = rows_needed.checked_sub(first).filter(|&r| r > 0)?;
    // arrow-rs's rule (`RowsNeeded::in_page`): past a page's first quarter it decodes it whole.
    if rows > page_rows / 4 {
        return None;
    }
    let len = range.end - range.start;
    // Bit-packed at their width, the most RLE levels take (plus a run header per 504 values).
    let max_def_level = u64::try_from(chunk.column_descr().max_def_level()).unwrap_or(0);
    let levels = page_rows
        .saturating_mul(u64::from(u64::BITS - max_def_level.leading_zeros()))
        .div_ceil(8)
        .saturating_add(page_rows / 504 + 1)
        * u64::from(max_def_level > 0);
    let share = len.saturating_mul(2).saturating_mul(rows) / page_rows;
    let part = PART_HEADER.saturating_add(levels).saturating_add(share);
    (part <= len / 2).then_some(part)
}

/// What phase 2 reads at least of one output column chunk for one match: its dictionary page
/// (or the whole chunk, where no offset index names its pages) and its smallest data page.
#[derive(Default)]
struct ColumnLeast {
    always: u64,
    data: Option<u64>,
}

/// An aggregate scan reads exactly the aggregated columns (to count rows, none: the decoder
/// yields row counts, so `count(*)` reads only the filter's columns, or nothing at all);
/// offset and limit do not apply to it.
fn aggregate_columns(request: &ScanRequest, aggregates: &[AggregateSpec]) -> Result<ScanRequest> {
    if request.offset.is_some() || request.limit.is_some() {
        return Err(SkimError::invalid_argument(
            "aggregates",
            "offset and limit do not apply to an aggregate; filter instead",
        ));
    }
    check_aggregate_count(aggregates.len())?;
    let mut columns = Vec::new();
    for spec in aggregates {
        if let Some(expr) = &spec.expr {
            expr.columns(&mut columns);
        }
    }
    Ok(ScanRequest {
        columns: Some(columns),
        ..request.clone()
    })
}

/// Without a filter: the row groups `offset`/`limit` reach, with the rows each skips and takes.
pub(crate) fn row_spans(file: &ParquetFile, request: &ScanRequest) -> Vec<(usize, u64, u64)> {
    let mut offset = request.offset.unwrap_or(0);
    let mut remaining = request.limit.unwrap_or(u64::MAX);
    let mut spans = Vec::new();
    for (row_group_idx, rg) in file.metadata().row_groups().iter().enumerate() {
        if remaining == 0 {
            break;
        }
        let num_rows = rows_of(rg.num_rows());
        if offset >= num_rows {
            offset -= num_rows;
            continue;
        }
        let skip = offset;
        offset = 0;
        let take = (num_rows - skip).min(remaining);
        remaining -= take;
        spans.push((row_group_idx, skip, take));
    }
    spans
}

/// Without a filter: `offset`/`limit` become each row group's skip/take.
#[inline(never)] // out of line: see `plan_scan_with`
fn unfiltered_specs(
    file: &ParquetFile,
    request: &ScanRequest,
    batch_size: usize,
) -> Vec<(TaskSpec, u64)> {
    let metadata = file.metadata();
    row_spans(file, request)
        .into_iter()
        .map(|(row_group_idx, skip, take)| {
            let num_rows = rows_of(metadata.row_group(row_group_idx).num_rows());
            let selection = (skip > 0 || take < num_rows).then(|| {
                let mut runs = Vec::with_capacity(2);
                if skip > 0 {
                    runs.push(-(skip as i64));
                }
                runs.push(take as i64);
                runs
            });
            let spec = TaskSpec {
                row_group_idx,
                selection,
                expected_rows: Some(take),
                batch_size,
                ..TaskSpec::default()
            };
            (spec, take)
        })
        .collect()
}

/// With a filter: prune row groups and pages; each task stops after `offset + limit` matches.
#[inline(never)] // out of line: see `plan_scan_with`
fn filtered_specs(
    file: &ParquetFile,
    request: &ScanRequest,
    filter: &Filter,
    batch_size: usize,
    blooms: &PushedBytes,
    stats: &mut PlanStats,
) -> Result<Vec<(TaskSpec, u64)>> {
    let metadata = file.metadata();
    let keep = row_groups_may_match(filter.predicate(), metadata);
    let limit = request
        .limit
        .map(|l| l.saturating_add(request.offset.unwrap_or(0)));
    let mut specs = Vec::new();
    for (row_group_idx, rg) in metadata.row_groups().iter().enumerate() {
        if !keep[row_group_idx] {
            stats.pruned(row_group_idx, PrunedBy::Stats);
            continue;
        }
        if excluded_by_bloom(
            filter.predicate(),
            metadata,
            row_group_idx,
            blooms,
            footer_start(file),
        ) {
            stats.pruned(row_group_idx, PrunedBy::Bloom);
            continue;
        }
        let pages = prune_pages(filter.predicate(), metadata, row_group_idx)?;
        stats.pages_total += pages.pages_total;
        stats.pages_pruned += pages.pages_pruned;
        let rows_scanned = pages
            .selection
            .as_ref()
            .map_or(rows_of(rg.num_rows()), |s| s.row_count() as u64);
        if rows_scanned == 0 {
            stats.pruned(row_group_idx, PrunedBy::PageIndex);
            continue;
        }
        // A page selection that keeps every row is no selection (and keeps the predicate cache).
        let selection = pages
            .selection
            .as_ref()
            .filter(|_| rows_scanned < rows_of(rg.num_rows()))
            .map(runs_of);
        let spec = TaskSpec {
            row_group_idx,
            selection,
            limit,
            batch_size,
            ..TaskSpec::default()
        };
        specs.push((spec, rows_scanned));
    }
    Ok(specs)
}

/// Splits each row group's task into windows of about `target` rows, starting at page
/// boundaries of the first projected column (so a page is rarely read by two tasks).
#[inline(never)] // out of line: see `plan_scan_with`
fn split_specs(scan: &BoundScan, specs: Vec<(TaskSpec, u64)>, target: u64) -> Vec<(TaskSpec, u64)> {
    let metadata = scan.file().metadata();
    let leaf = (0..metadata.file_metadata().schema_descr().num_columns())
        .find(|&l| scan.projection().mask().leaf_included(l))
        .unwrap_or(0);
    let mut out = Vec::with_capacity(specs.len());
    for (spec, rows_scanned) in specs {
        let num_rows = rows_of(metadata.row_group(spec.row_group_idx).num_rows());
        if num_rows <= target || rows_scanned <= target {
            out.push((spec, rows_scanned));
            continue;
        }
        let page_starts: Vec<u64> = metadata
            .page_index()
            .and_then(|index| index.offset_index(spec.row_group_idx, leaf))
            .map(|o| {
                o.page_locations()
                    .iter()
                    .map(|p| rows_of(p.first_row_index))
                    .collect()
            })
            .unwrap_or_default();
        // Window starts: every `target` rows, moved to the first page start at or after it.
        let mut starts = vec![0u64];
        let mut next = target;
        while next < num_rows {
            let start = page_starts
                .iter()
                .copied()
                .find(|&s| s >= next)
                .unwrap_or(next);
            if start >= num_rows {
                break;
            }
            if start > *starts.last().unwrap_or(&0) {
                starts.push(start);
            }
            next = start + target;
        }
        let whole = spec
            .selection
            .as_deref()
            .and_then(|runs| selection_of(runs, num_rows, spec.row_group_idx).ok())
            .unwrap_or_else(|| RowSelection::from(vec![RowSelector::select(to_usize(num_rows))]));
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(num_rows);
            let window = RowSelection::from_consecutive_ranges(
                std::iter::once(to_usize(start)..to_usize(end)),
                to_usize(num_rows),
            );
            let selection = whole.intersection(&window);
            let rows = selection.row_count() as u64;
            if rows == 0 {
                continue;
            }
            let part = TaskSpec {
                selection: Some(runs_of(&selection)),
                expected_rows: spec.expected_rows.map(|_| rows),
                ..spec.clone()
            };
            out.push((part, rows));
        }
    }
    out
}

/// Where the thrift footer starts: nothing in the file body lies beyond it.
fn footer_start(file: &ParquetFile) -> u64 {
    file.footer()
        .iter()
        .map(|(r, _)| r.start)
        .max()
        .unwrap_or(file.file_len())
}

/// Run lengths (`+n` select, `-n` skip) of a selection; a trailing skip is implied.
fn runs_of(selection: &RowSelection) -> Vec<i64> {
    let mut runs: Vec<i64> = selection
        .iter()
        .map(|s| {
            let n = s.row_count as i64;
            if s.skip {
                -n
            } else {
                n
            }
        })
        .collect();
    while runs.last().is_some_and(|n| *n <= 0) {
        runs.pop();
    }
    runs
}

/// The selection of run lengths, checked against the row group's size.
pub(crate) fn selection_of(
    runs: &[i64],
    num_rows: u64,
    row_group_idx: usize,
) -> Result<RowSelection> {
    let covered: u64 = runs.iter().map(|n| n.unsigned_abs()).sum();
    if covered > num_rows {
        return Err(SkimError::invalid_argument(
            "task",
            format!("the selection covers {covered} rows of row group {row_group_idx}, which has {num_rows}"),
        ));
    }
    let mut selectors: Vec<RowSelector> = runs
        .iter()
        .filter(|n| **n != 0)
        .map(|&n| {
            let count = to_usize(n.unsigned_abs());
            if n < 0 {
                RowSelector::skip(count)
            } else {
                RowSelector::select(count)
            }
        })
        .collect();
    // The implied trailing skip, made explicit: intersecting with a shorter selection would
    // otherwise select the rows past its end.
    if covered < num_rows {
        selectors.push(RowSelector::skip(to_usize(num_rows - covered)));
    }
    Ok(RowSelection::from(selectors))
}

/// Most rows a batch may hold (2^24).
const MAX_BATCH_SIZE: usize = 1 << 24;

fn checked_batch_size(batch_size: Option<usize>) -> Result<usize> {
    match batch_size {
        None => Ok(DEFAULT_BATCH_SIZE),
        Some(n) if (1..=MAX_BATCH_SIZE).contains(&n) => Ok(n),
        Some(n) => Err(bad_batch_size(n)),
    }
}

fn bad_batch_size(got: impl std::fmt::Display) -> SkimError {
    SkimError::invalid_argument(
        "batchSize",
        format!("expected a whole number of rows from 1 to {MAX_BATCH_SIZE}, got {got}"),
    )
}

/// Checks the options of a scan as a caller without integers (JavaScript) holds them, before
/// anything is planned or serialized (JSON would turn `NaN` into `null`, an absent option):
/// `offset` and `limit` whole numbers from 0 to 2^53 − 1, `batchSize` one from 1 to 2^24, and —
/// for an aggregate — at least one aggregate. The one rule for these options: [`plan_scan_with`]
/// applies the same to the [`ScanRequest`] it gets, and a dataset, which places offset and limit
/// across its files before planning any of them (and may plan none), calls this first.
pub fn check_scan_options(
    offset: Option<f64>,
    limit: Option<f64>,
    batch_size: Option<f64>,
    aggregates: Option<usize>,
) -> Result<()> {
    for (name, value) in [("offset", offset), ("limit", limit)] {
        if let Some(value) = value {
            if whole(value).is_none() {
                return Err(SkimError::invalid_argument(
                    name,
                    format!("expected a whole number of rows >= 0, got {value}"),
                ));
            }
        }
    }
    if let Some(value) = batch_size {
        let rows = whole(value).ok_or_else(|| bad_batch_size(value))?;
        checked_batch_size(Some(to_usize(rows)))?;
    }
    aggregates.map_or(Ok(()), check_aggregate_count)
}

fn check_aggregate_count(count: usize) -> Result<()> {
    if count == 0 {
        return Err(SkimError::invalid_argument(
            "aggregates",
            "expected at least one aggregate, got none",
        ));
    }
    Ok(())
}

/// `value` as a count if it is a whole number from 0 to 2^53 − 1 (what a JS number holds exactly).
pub fn whole(value: f64) -> Option<u64> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    (value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER)
        .then_some(value as u64)
}

/// A row group's row count; a negative count (corrupt footer) reads as 0.
pub(crate) fn rows_of(num_rows: i64) -> u64 {
    u64::try_from(num_rows).unwrap_or(0)
}

/// Row counts are bounded by the row group's `i64` row count, which fits `usize` on wasm32 only
/// below 2^32; larger counts saturate (a row group that large cannot be decoded in 4 GiB anyway).
pub(crate) fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(offset: Option<f64>, limit: Option<f64>, batch: Option<f64>) -> String {
        match check_scan_options(offset, limit, batch, None) {
            Err(e @ SkimError::InvalidArgument { .. }) => e.to_string(),
            other => panic!("expected INVALID_ARGUMENT, got {other:?}"),
        }
    }

    #[test]
    fn a_grouped_task_may_skip_all_but_the_least_of_one_of_its_row_groups() {
        let task = |row_group_idx, output: u64, skippable| ReadTask {
            spec: TaskSpec {
                row_group_idx,
                ..TaskSpec::default()
            },
            filter_ranges: Vec::new(),
            output_ranges: vec![ByteRange {
                start: 0,
                end: output,
            }],
            output_skippable_bytes: skippable,
            rows_scanned: 1,
        };
        // Least reads: 100 - 30 = 70 and 50 - 45 = 5; one match in the second reads its 5.
        let mut group = task(0, 100, 30);
        group.absorb(task(1, 50, 45));
        assert_eq!(group.output_skippable_bytes, 145);
        let mut group = task(1, 50, 45);
        group.absorb(task(0, 100, 30));
        assert_eq!(group.output_skippable_bytes, 145);
    }

    #[test]
    fn scan_options_are_checked_by_one_rule() {
        assert!(check_scan_options(None, None, None, None).is_ok());
        assert!(
            check_scan_options(Some(0.0), Some(9_007_199_254_740_991.0), Some(1.0), Some(1))
                .is_ok()
        );
        assert!(check_scan_options(Some(7.0), Some(0.0), Some(16_777_216.0), None).is_ok());
        assert!(matches!(
            check_scan_options(None, None, None, Some(0)),
            Err(SkimError::InvalidArgument { name, .. }) if name == "aggregates"
        ));
        for bad in [-1.0, 1.5, f64::NAN, f64::INFINITY, 9_007_199_254_740_992.0] {
            assert!(refused(Some(bad), None, None).starts_with("invalid option 'offset'"));
            assert!(refused(None, Some(bad), None).starts_with("invalid option 'limit'"));
        }
        assert_eq!(
            refused(None, Some(f64::NAN), None),
            "invalid option 'limit': expected a whole number of rows >= 0, got NaN"
        );
        for bad in [0.0, 16_777_217.0, 1.5, -3.0, f64::NAN] {
            assert!(refused(None, None, Some(bad))
                .starts_with("invalid option 'batchSize': expected a whole number of rows from 1 to 16777216, got"));
        }
    }
}
