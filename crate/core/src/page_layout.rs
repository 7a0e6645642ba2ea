//! Page locations learned by walking page headers: the first rows of files without an offset
//! index.
//!
//! A file written without a page index — pyarrow's, DuckDB's and Polars' defaults, older
//! parquet-mr — says where each column chunk starts and how long it is, not where its pages are.
//! arrow-rs then reads whole column chunks: the first 100 rows of pyarrow's TPC-H lineitem
//! (1M-row groups) fetched all 35 MB of row group 0. Each page header says how long its page is
//! and how many rows it holds, so walking the headers from a chunk's start gives what an offset
//! index would, as far as the walk went. A header is read, the body jumped over; the body's bytes
//! need not be there.
//!
//! For a scan without a filter whose rows end in the first quarter of a row group (first rows, a
//! block near the top), the caller walks before it plans, when the chunks are big enough for a
//! round trip to pay ([`DEFAULT_PAGE_WALK_MIN_BYTES`]):
//!
//! 1. [`PageLayouts::wanted`] names, per column chunk the scan needs, the bytes to read next:
//!    from the chunk's start through its dictionary page and [`FIRST_ASK`] bytes into its data
//!    pages; later, from where the walk stopped, sized by the bytes per row seen so far (a
//!    quarter more). What would leave less than [`FIRST_ASK`] asks the whole chunk. A chunk it
//!    does not walk (repeated values) is asked whole in the first round, up to
//!    [`MAX_WHOLE_ASK`]: its task would read it whole anyway, and would otherwise wait for a
//!    round trip of its own after planning.
//! 2. The caller fetches them, hands them to [`PageLayouts::insert`] and asks again, for a
//!    bounded number of rounds (the caller's). It keeps the bytes for the scan's tasks, so the
//!    pages walked through are not fetched twice.
//! 3. The planner gives each task the [`LearnedPages`] of its chunks whose walk covers its rows
//!    ([`PageLayouts::learned`]). The task decodes with them as the chunks' offset index
//!    ([`with_learned_pages`]): the pages walked, then one stand-in for the rest of the chunk,
//!    starting at the first row not walked. The stand-in is never read: the task's rows end
//!    before it, arrow-rs fetches only pages that hold selected rows, and a page it holds no
//!    bytes for is an error in arrow-rs, not a read. A walked page whose first rows are all the
//!    task needs is planned in part (`plan::page_part`), usually within the bytes walked.
//!
//! What stops a walk (its chunk is then read whole, as before): a column with repeated values (a
//! v1 page's value count is then not its row count; never walked), a header this reader cannot parse
//! (garbage, encryption), a page running past its chunk, a page type other than data and a
//! leading dictionary, rows that overrun the row group or, at the chunk's end, fall short of it.
//! A hostile header that lies about its rows makes the task fail (a page without bytes, or the
//! row count checked after decoding), never read the stand-in.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaDataBuilder};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use serde::{Deserialize, Serialize};

use crate::error::{Result, SkimError};
use crate::metadata::ParquetFile;
use crate::pages::{PageHeader, DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE};
use crate::plan::{row_spans, ByteRange, ScanRequest, TaskSpec};
use crate::projection::Projection;
use crate::pushed_bytes::PushedBytes;
use crate::row_group_index::ReplacedOffsets;
use crate::scan::BoundScan;

/// Bytes read past a chunk's dictionary page on the first round: enough for the first data
/// page's header, and all of a small page.
pub const FIRST_ASK: u64 = 64 * 1024;

/// Bytes of a row group's column chunks worth a round trip to walk their page headers (those of
/// at least a sixteenth of it count): pyarrow's 1M-row groups of TPC-H lineitem hold 35 MB,
/// DuckDB's 123k-row groups 4.1 MB with one page per chunk. Until pages were fetched in part
/// (2026-11-29) a walk of DuckDB's saved nothing and this was 4 MiB; now the walk's first round
/// holds the first 100 rows' part of each page, and DuckDB's first rows read 964 KB instead of
/// 4.1 MB (349 against 791 ms at 80 ms and 50 Mbit/s, `bench/results/2026-11-29-pages-in-part.md`;
/// its chunks under 64 KiB, which do not count, are read whole in the walk's round since).
pub const DEFAULT_PAGE_WALK_MIN_BYTES: u64 = 1024 * 1024;

/// The largest chunk of repeated values read whole in the walk's round: the scan holds what the
/// walk read and hands its tasks copies, so a bigger one is left for its task to fetch (a round
/// trip after planning, as for every such chunk before 2026-11-29, rather than twice its bytes
/// in memory at once).
pub const MAX_WHOLE_ASK: u64 = 8 * 1024 * 1024;

/// A header longer than this is not one this reader walks over.
const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// The data pages of one column chunk, as far as its headers were walked.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearnedPages {
    /// The column chunk's leaf (column index in the row group).
    pub leaf: usize,
    /// File offset of each data page (its header), in order.
    pub starts: Vec<u64>,
    /// The row of the row group each page starts at.
    pub first_rows: Vec<u64>,
    /// Where the last page walked ends; the chunk's bytes from here on were not walked.
    pub end: u64,
    /// Rows in the pages walked.
    pub rows: u64,
}

/// How far a chunk's walk got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// More headers follow; the walk goes on when their bytes arrive.
    Open,
    /// Every page of the chunk was walked, and its rows add up to the row group's.
    Complete,
    /// Something this reader does not walk (see the module doc): the chunk is read whole.
    Stopped,
    /// A chunk of a walked row group this reader does not walk (repeated values): read whole
    /// in the walk's first round, beside the others' first pages, so that no task waits for a
    /// round trip of its own after planning. Then `Stopped`.
    Whole,
}

/// One column chunk's walk.
#[derive(Debug, Clone)]
struct Walk {
    starts: Vec<u64>,
    first_rows: Vec<u64>,
    /// Where the next header starts.
    frontier: u64,
    rows: u64,
    state: State,
}

/// A chunk's extent and what its walk needs to know of it.
struct Chunk {
    start: u64,
    end: u64,
    /// Where the footer says the data pages start (after the dictionary page).
    data_start: u64,
    num_rows: u64,
}

impl Chunk {
    fn of(column: &ColumnChunkMetaData, num_rows: u64) -> Self {
        let (start, len) = column.byte_range();
        let end = start.saturating_add(len);
        let data_start = u64::try_from(column.data_page_offset())
            .unwrap_or(start)
            .clamp(start, end);
        Self {
            start,
            end,
            data_start,
            num_rows,
        }
    }
}

impl Walk {
    /// A walk from the chunk's start; `whole`: the chunk is read whole instead.
    fn new(chunk: &Chunk, whole: bool) -> Self {
        Self {
            starts: Vec::new(),
            first_rows: Vec::new(),
            frontier: chunk.start,
            rows: 0,
            state: if whole { State::Whole } else { State::Open },
        }
    }

    /// Reads every header `bytes` holds from the frontier on.
    fn advance(&mut self, chunk: &Chunk, bytes: &PushedBytes) {
        while self.state == State::Open {
            if self.frontier >= chunk.end {
                self.state = if self.rows == chunk.num_rows {
                    State::Complete
                } else {
                    State::Stopped
                };
                return;
            }
            let window = MAX_HEADER_BYTES.min(chunk.end - self.frontier);
            let held = bytes.run_from(self.frontier, window);
            let Some(header) = PageHeader::parse(&held) else {
                if held.len() as u64 >= window {
                    self.state = State::Stopped;
                }
                return;
            };
            match self.step(&header, chunk) {
                Some(()) => {}
                None => self.state = State::Stopped,
            }
        }
    }

    /// Takes the page whose header is `header` (at the frontier); `None` stops the walk.
    fn step(&mut self, header: &PageHeader, chunk: &Chunk) -> Option<()> {
        let body = u64::try_from(header.compressed).ok()?;
        let end = self
            .frontier
            .checked_add(header.len as u64)?
            .checked_add(body)?;
        if end > chunk.end {
            return None;
        }
        let rows = match header.page_type {
            DICTIONARY_PAGE if self.frontier == chunk.start => None,
            DATA_PAGE => Some(header.data_values?),
            DATA_PAGE_V2 => Some(header.v2_rows?),
            _ => return None,
        };
        if let Some(rows) = rows {
            let rows = u64::try_from(rows).ok()?;
            self.starts.push(self.frontier);
            self.first_rows.push(self.rows);
            self.rows = self.rows.checked_add(rows)?;
            if self.rows > chunk.num_rows {
                return None;
            }
        }
        self.frontier = end;
        Some(())
    }

    /// The bytes to read next for the walk to cover `rows` rows, if it can and does not yet.
    fn ask(&mut self, chunk: &Chunk, rows: u64) -> Option<Range<u64>> {
        if self.state == State::Whole {
            self.state = State::Stopped;
            return Some(chunk.start..chunk.end);
        }
        if self.state != State::Open || self.rows >= rows {
            return None;
        }
        let first = self.starts.first().copied();
        // Bytes per row: of the pages walked, else of the whole chunk.
        let per_row = match first {
            Some(first) if self.rows > 0 => (self.frontier - first) as f64 / self.rows as f64,
            _ => (chunk.end - chunk.start) as f64 / chunk.num_rows.max(1) as f64,
        };
        let estimate = ((rows - self.rows) as f64 * per_row * 1.25) as u64;
        let len = estimate.max(FIRST_ASK);
        // The first round reads through the dictionary page, whose length the footer gives.
        let from = if self.frontier == chunk.start {
            chunk.data_start
        } else {
            self.frontier
        };
        let mut end = from.saturating_add(len);
        // Rather than a small tail for later, the whole rest now.
        if end.saturating_add(FIRST_ASK) >= chunk.end {
            end = chunk.end;
        }
        Some(self.frontier..end)
    }

    fn learned(&self, leaf: usize, rows: u64) -> Option<LearnedPages> {
        (self.state != State::Stopped && self.rows >= rows && !self.starts.is_empty()).then(|| {
            LearnedPages {
                leaf,
                starts: self.starts.clone(),
                first_rows: self.first_rows.clone(),
                end: self.frontier,
                rows: self.rows,
            }
        })
    }
}

/// The page walks of one file's column chunks, and the bytes fetched for them.
#[derive(Debug, Default)]
pub struct PageLayouts {
    walks: HashMap<(usize, usize), Walk>,
    /// Fetched for walking and not yet walked past (dropped by [`PageLayouts::forget_bytes`]).
    bytes: PushedBytes,
}

impl PageLayouts {
    /// Keeps bytes `start..` of the file (read for [`PageLayouts::wanted`]) for the walks.
    pub fn insert(&mut self, start: u64, data: Bytes) {
        self.bytes.insert(start, data);
    }

    /// Drops the bytes kept for walking (what was learned stays).
    pub fn forget_bytes(&mut self) {
        self.bytes = PushedBytes::default();
    }

    /// Walks what the bytes held allow, then names the bytes to read next so that every chunk
    /// `request` needs is walked as far as its rows: empty when there is nothing (more) to learn.
    pub fn wanted(&mut self, file: &ParquetFile, request: &ScanRequest) -> Result<Vec<ByteRange>> {
        let mut asks = Vec::new();
        for Walkable {
            row_group_idx,
            leaf,
            rows,
            whole,
        } in walkable(file, request)?
        {
            let chunk = chunk_of(file, row_group_idx, leaf);
            let walk = self
                .walks
                .entry((row_group_idx, leaf))
                .or_insert_with(|| Walk::new(&chunk, whole));
            walk.advance(&chunk, &self.bytes);
            asks.extend(walk.ask(&chunk, rows).map(ByteRange::from));
        }
        Ok(asks)
    }

    /// The pages of `spec`'s column chunks whose walks cover its rows (none with a filter: its
    /// rows are not known before it runs).
    pub fn learned(&self, scan: &BoundScan, spec: &TaskSpec) -> Result<Option<Vec<LearnedPages>>> {
        if self.walks.is_empty() || scan.filter().is_some() {
            return Ok(None);
        }
        let rows = rows_through(spec.selection.as_deref());
        let projection = scan.projection();
        let learned: Vec<LearnedPages> = self
            .walks
            .iter()
            .filter(|((rg, leaf), _)| {
                *rg == spec.row_group_idx && projection.mask().leaf_included(*leaf)
            })
            .filter_map(|((_, leaf), walk)| walk.learned(*leaf, rows?))
            .collect();
        Ok((!learned.is_empty()).then(|| {
            let mut learned = learned;
            learned.sort_by_key(|l| l.leaf);
            learned
        }))
    }
}

/// Whether [`PageLayouts::wanted`] asks for anything before its first walk of `request`: what a
/// plan reports as `learns.pages`.
pub(crate) fn walks_pages(file: &ParquetFile, request: &ScanRequest) -> Result<bool> {
    Ok(!walkable(file, request)?.is_empty())
}

/// A column chunk a walk reads before planning.
struct Walkable {
    row_group_idx: usize,
    leaf: usize,
    /// The rows of its row group the walk must cover.
    rows: u64,
    /// Read whole, not walked (repeated values).
    whole: bool,
}

/// The chunks of `request` to read before planning: without a filter or aggregates, in row
/// groups whose selected rows end in their first quarter and whose projected flat columns with
/// no offset index — those of at least 1/16 of `pageWalkMinBytes` — hold that much in all, every
/// projected column chunk with no offset index. The flat ones are walked (one under twice
/// [`FIRST_ASK`] is asked whole at once); the repeated ones up to [`MAX_WHOLE_ASK`] are read
/// whole, beside them. Either way no task of those row groups needs a round trip after planning
/// for a chunk the walk left out (but for a bigger repeated one).
fn walkable(file: &ParquetFile, request: &ScanRequest) -> Result<Vec<Walkable>> {
    if request.filter.is_some() || request.aggregates.is_some() {
        return Ok(Vec::new());
    }
    let projection = Projection::try_new(file, request.columns.as_deref())?;
    let min_bytes = request
        .page_walk_min_bytes
        .unwrap_or(DEFAULT_PAGE_WALK_MIN_BYTES);
    let metadata = file.metadata();
    let schema = metadata.file_metadata().schema_descr();
    let mut out = Vec::new();
    for (row_group_idx, skip, take) in row_spans(file, request) {
        let rg = metadata.row_group(row_group_idx);
        let through = skip + take;
        if through.saturating_mul(4) > u64::try_from(rg.num_rows()).unwrap_or(0) {
            continue;
        }
        let bytes_of = |leaf: usize| u64::try_from(rg.column(leaf).compressed_size()).unwrap_or(0);
        // (leaf, repeated) of the projected chunks with no offset index; a repeated one only
        // up to `MAX_WHOLE_ASK`.
        let chunks: Vec<(usize, bool)> = (0..rg.num_columns())
            .filter(|&leaf| {
                projection.mask().leaf_included(leaf)
                    && metadata
                        .page_index()
                        .is_none_or(|index| index.offset_index(row_group_idx, leaf).is_none())
            })
            .map(|leaf| (leaf, schema.column(leaf).max_rep_level() > 0))
            .filter(|&(leaf, repeated)| !repeated || bytes_of(leaf) <= MAX_WHOLE_ASK)
            .collect();
        let worth: Vec<u64> = chunks
            .iter()
            .filter(|&&(leaf, repeated)| !repeated && bytes_of(leaf) >= min_bytes / 16)
            .map(|&(leaf, _)| bytes_of(leaf))
            .collect();
        if !worth.is_empty() && worth.iter().sum::<u64>() >= min_bytes {
            out.extend(chunks.into_iter().map(|(leaf, whole)| Walkable {
                row_group_idx,
                leaf,
                rows: through,
                whole,
            }));
        }
    }
    Ok(out)
}

fn chunk_of(file: &ParquetFile, row_group_idx: usize, leaf: usize) -> Chunk {
    let rg = file.metadata().row_group(row_group_idx);
    Chunk::of(rg.column(leaf), u64::try_from(rg.num_rows()).unwrap_or(0))
}

/// The row after the last selected one (`None`: every row).
pub(crate) fn rows_through(selection: Option<&[i64]>) -> Option<u64> {
    let runs = selection?;
    let mut end = 0u64;
    let mut position = 0u64;
    for &run in runs {
        position = position.saturating_add(run.unsigned_abs());
        if run > 0 {
            end = position;
        }
    }
    Some(end)
}

/// `file`, with `spec`'s learned pages as the offset indexes of its row group (`None` when it
/// has none).
pub(crate) fn with_learned_pages(
    file: &ParquetFile,
    spec: &TaskSpec,
) -> Result<Option<ParquetFile>> {
    let Some(learned) = spec.learned_pages.as_deref().filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let metadata = file.metadata();
    let rg = metadata
        .row_groups()
        .get(spec.row_group_idx)
        .ok_or_else(|| SkimError::invalid_argument("rowGroup", "no such row group"))?;
    let inner = metadata.page_index().cloned();
    let mut offsets: Vec<_> = (0..rg.num_columns())
        .map(|leaf| {
            inner
                .as_ref()
                .and_then(|index| index.offset_index(spec.row_group_idx, leaf).cloned())
        })
        .collect();
    let num_rows = u64::try_from(rg.num_rows()).unwrap_or(0);
    for pages in learned {
        let column = rg.columns().get(pages.leaf).ok_or_else(|| {
            SkimError::internal(format!("learned pages of a missing column {}", pages.leaf))
        })?;
        let slot = offsets
            .get_mut(pages.leaf)
            .ok_or_else(|| SkimError::internal("learned pages of a missing column"))?;
        *slot = Some(offset_index(pages, &Chunk::of(column, num_rows))?);
    }
    let builder = ParquetMetaDataBuilder::new_from_metadata(metadata.as_ref().clone())
        .set_page_index(Some(Arc::new(ReplacedOffsets {
            inner,
            row_group_idx: spec.row_group_idx,
            offsets,
        })));
    Ok(Some(file.with_metadata(Arc::new(builder.build()))?))
}

/// The offset index `pages` stand for: the pages walked, then the rest of the chunk as one
/// stand-in page (see the module doc). Refuses pages that do not fit their chunk.
fn offset_index(pages: &LearnedPages, chunk: &Chunk) -> Result<OffsetIndexMetaData> {
    let bad = || {
        SkimError::internal(format!(
            "learned pages of column {} do not fit its column chunk",
            pages.leaf
        ))
    };
    if pages.starts.is_empty()
        || pages.first_rows.len() != pages.starts.len()
        || pages.end > chunk.end
        || pages.rows > chunk.num_rows
    {
        return Err(bad());
    }
    let location = |start: u64, end: u64, first_row: u64| -> Result<PageLocation> {
        Ok(PageLocation {
            offset: i64::try_from(start).map_err(|_| bad())?,
            compressed_page_size: i32::try_from(end - start).map_err(|_| bad())?,
            first_row_index: i64::try_from(first_row).map_err(|_| bad())?,
        })
    };
    let ends = pages.starts.iter().skip(1).copied().chain([pages.end]);
    let mut locations = Vec::with_capacity(pages.starts.len() + 1);
    let mut previous_row = 0;
    for ((&start, end), &first_row) in pages.starts.iter().zip(ends).zip(&pages.first_rows) {
        if start < chunk.start || end <= start || first_row < previous_row || first_row > pages.rows
        {
            return Err(bad());
        }
        locations.push(location(start, end, first_row)?);
        previous_row = first_row;
    }
    if pages.end < chunk.end {
        // Rows must remain for the stand-in to hold.
        if pages.rows >= chunk.num_rows {
            return Err(bad());
        }
        locations.push(location(pages.end, chunk.end, pages.rows)?);
    }
    Ok(OffsetIndexMetaData {
        page_locations: locations,
        unencoded_byte_array_data_bytes: None,
    })
}
