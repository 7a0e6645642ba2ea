//! The page index of an open file: its offset indexes decoded at open, each column index only when
//! a scan first asks for it.
//!
//! The two halves are used differently. The offset index (where each data page lies, and its first
//! row) serves every scan that reads part of a column chunk, and is checked against the file at
//! open (`metadata::check_layout`, against hostile files). The column index (each page's min, max
//! and null count) serves only a filter's page pruning, for the filter's own columns: the first
//! 100 rows never read it, and a lookup reads one column's. Yet every open decoded every column
//! index — on the page, and again in each worker shown the file. Decoding them on first use made
//! an open that has run a few times a third faster (Node, in memory, a fresh process per run,
//! the median of 30 opens after the first, medians of 9 runs: TPC-H SF1 with 6 row groups 2.0 →
//! 1.4 ms, with 46 row groups 5.5 → 4.1, tpchgen-cli's file 4.5 → 3.0;
//! `bench/results/2026-11-27-lazy-column-index.md`). A fresh instance's first open (~21–28 ms,
//! code running for the first time) and a fully optimized one (1–2 ms) hardly move. An open file
//! also holds less: the 60 footers of a dataset test no longer fill a 32 MiB page.
//!
//! So the loader reads the page-index bytes as before (one span, in the open's requests) and
//! arrow-rs decodes the offset indexes from them, while [`FilePageIndex`] keeps the span and
//! decodes a chunk's column index with arrow-rs's `decode_column_index` on first use, once. A
//! column index that cannot be decoded is `INVALID_FILE` where page pruning reads it
//! ([`check_column_index`], from `filter::prune`); to arrow-rs, which asks through
//! [`PageIndexProvider`] and cannot be told of an error, it is absent. A failed decode is not
//! kept: the page's recheck of a decode the engine may have failed plans the scan again.

use std::ops::Range;
use std::sync::OnceLock;

use bytes::Bytes;
use parquet::basic::Type;
use parquet::errors::ParquetError;
use parquet::file::metadata::page_index::{PageIndex, PageIndexProvider};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::index_reader::decode_column_index;
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};

use crate::error::{Result, SkimError};

/// Where one chunk's column index lies in the page-index bytes, and its physical type.
#[derive(Debug)]
struct Located {
    bytes: Range<usize>,
    physical_type: Type,
}

/// A file's page index: arrow-rs's offset indexes, and column indexes decoded on first use.
#[derive(Debug)]
pub(crate) struct FilePageIndex {
    /// The offset indexes, decoded at open (`None`: the file has none).
    offsets: Option<PageIndex>,
    /// Columns per row group (the schema's leaves).
    columns: usize,
    /// Per row group × column: its column index, if the footer names one.
    located: Vec<Option<Located>>,
    /// The page-index bytes the column indexes are decoded from.
    bytes: Bytes,
    /// Per row group × column: the decoded column index (boxed: a file of many row groups has
    /// many slots, most never filled). A failed decode is not kept: a decode that failed as the
    /// engine might make it fail is tried again (`web/src/recheck.ts` plans the scan again).
    decoded: Vec<OnceLock<Box<ColumnIndexMetaData>>>,
}

impl FilePageIndex {
    /// The page index of `metadata` from `span` (the bytes of every column and offset index,
    /// starting at file offset `span_start`) and the offset indexes arrow-rs decoded from them.
    /// `None` when the file has neither kind of index.
    pub(crate) fn try_new(
        metadata: &ParquetMetaData,
        offsets: Option<PageIndex>,
        span_start: u64,
        bytes: Bytes,
    ) -> Result<Option<Self>> {
        let columns = metadata.file_metadata().schema_descr().num_columns();
        let mut located = Vec::with_capacity(metadata.num_row_groups() * columns);
        for rg in metadata.row_groups() {
            for column_idx in 0..columns {
                let Some(chunk) = rg.columns().get(column_idx) else {
                    located.push(None);
                    continue;
                };
                located.push(match chunk.column_index_range() {
                    Some(range) => Some(Located {
                        bytes: within(&range, span_start, bytes.len())?,
                        physical_type: chunk.column_type(),
                    }),
                    None => None,
                });
            }
        }
        if offsets.is_none() && located.iter().all(Option::is_none) {
            return Ok(None);
        }
        let decoded = located.iter().map(|_| OnceLock::new()).collect();
        Ok(Some(Self {
            offsets,
            columns,
            located,
            bytes,
            decoded,
        }))
    }

    /// The column index of column `column_idx` of row group `row_group_idx`, decoded now if it
    /// was not yet; why not when its bytes do not decode.
    fn decoded_column_index(
        &self,
        row_group_idx: usize,
        column_idx: usize,
    ) -> std::result::Result<Option<&ColumnIndexMetaData>, ParquetError> {
        if column_idx >= self.columns {
            return Ok(None);
        }
        let slot = row_group_idx * self.columns + column_idx;
        let (Some(Some(located)), Some(cell)) = (self.located.get(slot), self.decoded.get(slot))
        else {
            return Ok(None);
        };
        if let Some(index) = cell.get() {
            return Ok(Some(index));
        }
        let bytes = self.bytes.get(located.bytes.clone()).unwrap_or_default();
        let index = decode_column_index(bytes, located.physical_type)?;
        Ok(Some(cell.get_or_init(|| Box::new(index))))
    }

    /// Column indexes decoded so far.
    #[cfg(test)]
    fn decoded_count(&self) -> usize {
        self.decoded.iter().filter(|c| c.get().is_some()).count()
    }

    /// Memory held, in bytes, estimated: the offset indexes' page locations and byte counts, and
    /// every column index at the size of its encoded bytes — counted whether decoded yet or not,
    /// so that an open file's figure does not grow as scans decode them (a dataset bounds the
    /// files it keeps open by it). The page-index bytes themselves count with the footer's.
    pub(crate) fn memory_bytes(&self) -> usize {
        let mut bytes = self.decoded.len()
            * std::mem::size_of::<OnceLock<Box<ColumnIndexMetaData>>>()
            + self.located.len() * std::mem::size_of::<Option<Located>>();
        if let Some(offsets) = &self.offsets {
            bytes += self.located.len() * std::mem::size_of::<Option<OffsetIndexMetaData>>();
            let row_groups = self.located.len() / self.columns.max(1);
            for rg in 0..row_groups {
                for column in 0..self.columns {
                    if let Some(index) = offsets.offset_index(rg, column) {
                        bytes += index.page_locations().len() * std::mem::size_of::<PageLocation>()
                            + index
                                .unencoded_byte_array_data_bytes()
                                .map_or(0, |v| v.len() * std::mem::size_of::<i64>());
                    }
                }
            }
        }
        bytes
            + self
                .located
                .iter()
                .flatten()
                .map(|l| l.bytes.len())
                .sum::<usize>()
    }
}

/// `range` (file offsets) as offsets into the `len` page-index bytes starting at `span_start`.
fn within(range: &Range<u64>, span_start: u64, len: usize) -> Result<Range<usize>> {
    let start = range.start.checked_sub(span_start);
    let end = range.end.checked_sub(span_start);
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len as u64 => {
            Ok(start as usize..end as usize)
        }
        _ => Err(SkimError::internal(format!(
            "column index at {range:?} outside the page-index bytes read \
             ({span_start}..{})",
            span_start + len as u64
        ))),
    }
}

impl PageIndexProvider for FilePageIndex {
    // `has_column_indexes` says whether the footer names any column index, before any is decoded:
    // one that later fails to decode reads as absent through `column_index`.
    fn has_offset_indexes(&self) -> bool {
        self.offsets
            .as_ref()
            .is_some_and(PageIndexProvider::has_offset_indexes)
    }

    fn has_column_indexes(&self) -> bool {
        self.located.iter().any(Option::is_some)
    }

    fn column_index(
        &self,
        row_group_idx: usize,
        column_idx: usize,
    ) -> Option<&ColumnIndexMetaData> {
        self.decoded_column_index(row_group_idx, column_idx)
            .ok()
            .flatten()
    }

    fn offset_index(
        &self,
        row_group_idx: usize,
        column_idx: usize,
    ) -> Option<&OffsetIndexMetaData> {
        self.offsets
            .as_ref()?
            .offset_index(row_group_idx, column_idx)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Decodes the column index of `column_idx` in `row_group_idx` if the file has one, so that
/// one that cannot be read fails the scan about to prune by it (`INVALID_FILE`), instead of
/// reading as absent.
pub(crate) fn check_column_index(
    metadata: &ParquetMetaData,
    row_group_idx: usize,
    column_idx: usize,
) -> Result<()> {
    let index = metadata
        .page_index()
        .and_then(|index| index.as_any().downcast_ref::<FilePageIndex>());
    let Some(index) = index else {
        return Ok(());
    };
    match index.decoded_column_index(row_group_idx, column_idx) {
        Ok(_) => Ok(()),
        Err(reason) => {
            let path = metadata
                .row_groups()
                .get(row_group_idx)
                .and_then(|rg| rg.columns().get(column_idx))
                .map_or_else(|| format!("{column_idx}"), |c| c.column_path().string());
            Err(SkimError::InvalidFile {
                detail: format!(
                    "the column index (page statistics) of column `{path}` (leaf {column_idx}) in \
                     row group {row_group_idx} cannot be read: {reason}"
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    use parquet::file::properties::WriterProperties;

    use super::*;
    use crate::metadata::{LoadStep, MetadataLoader, ParquetFile};
    use crate::{parse_sql, plan_scan, ErrorCode, ScanRequest};

    /// `id` (0..2000) and `name`, row groups of 1000 rows, pages of 100, page index on.
    fn written() -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, false),
        ]));
        let ids: Vec<i64> = (0..2000).collect();
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("name-{i:05}")),
                )),
            ],
        )
        .expect("batch");
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(1000))
            .set_data_page_row_count_limit(100)
            .set_write_batch_size(100)
            .build();
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, schema, Some(props)).expect("writer");
        writer.write(&batch).expect("write");
        writer.close().expect("close");
        out
    }

    fn open(bytes: &[u8]) -> ParquetFile {
        let len = bytes.len() as u64;
        let mut loader = MetadataLoader::try_new(len).expect("loader");
        loader
            .push(0..len, Bytes::copy_from_slice(bytes))
            .expect("push");
        match loader.try_load().expect("load") {
            LoadStep::Loaded(file) => *file,
            LoadStep::NeedsRanges(ranges) => panic!("asked for {ranges:?}"),
        }
    }

    fn index(file: &ParquetFile) -> &FilePageIndex {
        file.metadata()
            .page_index()
            .and_then(|i| i.as_any().downcast_ref::<FilePageIndex>())
            .expect("the file's page index")
    }

    #[test]
    fn column_indexes_are_decoded_on_first_use_as_arrow_rs_decodes_them() {
        let bytes = written();
        let file = open(&bytes);
        let lazy = index(&file);
        assert_eq!(lazy.decoded_count(), 0, "nothing decoded at open");
        assert!(lazy.has_column_indexes() && lazy.has_offset_indexes());
        let eager = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Required)
            .parse_and_finish(&Bytes::from(bytes))
            .expect("arrow-rs reads the page index");
        let eager = eager.page_index().expect("page index");
        for rg in 0..2 {
            for column in 0..2 {
                assert_eq!(
                    lazy.offset_index(rg, column),
                    eager.offset_index(rg, column),
                    "offset index {rg}/{column}"
                );
                let decoded = lazy.column_index(rg, column).expect("column index");
                assert_eq!(Some(decoded), eager.column_index(rg, column));
                assert_eq!(decoded.num_pages(), 10);
            }
        }
        assert_eq!(lazy.decoded_count(), 4);
        assert_eq!(lazy.column_index(2, 0), None, "no such row group");
        // A filtered scan decodes its filter column's indexes only, once per file.
        let file = open(&written());
        let request = ScanRequest {
            filter: Some(parse_sql("id = 1234").expect("filter")),
            ..ScanRequest::default()
        };
        let plan = plan_scan(&file, &request).expect("plan");
        assert_eq!(plan.tasks.len(), 1, "pruned to one row group");
        assert_eq!(index(&file).decoded_count(), 1, "row group 1's id only");
    }

    #[test]
    fn a_column_index_that_does_not_decode_fails_the_scan_that_prunes_by_it() {
        let mut bytes = written();
        let eager = ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::from(bytes.clone()))
            .expect("footer");
        let range = eager
            .row_group(0)
            .column(0)
            .column_index_range()
            .expect("a column index");
        bytes[range.start as usize..range.end as usize].fill(0xff);
        // Opening reads no column index: it succeeds.
        let file = open(&bytes);
        let lazy = index(&file);
        let error = check_column_index(file.metadata(), 0, 0).expect_err("garbage");
        assert_eq!(error.error_code(), ErrorCode::InvalidFile);
        assert!(
            error
                .to_string()
                .contains("column `id` (leaf 0) in row group 0 cannot be read"),
            "{error}"
        );
        assert_eq!(
            lazy.decoded_count(),
            0,
            "a failure is not kept: a recheck decodes again"
        );
        assert_eq!(lazy.column_index(0, 0), None, "absent to arrow-rs");
        assert!(lazy.column_index(0, 1).is_some(), "the others still read");
        // A scan filtered on that column fails; one that does not prune by it plans.
        let filtered = ScanRequest {
            filter: Some(parse_sql("id > 5").expect("filter")),
            ..ScanRequest::default()
        };
        let error = plan_scan(&file, &filtered).expect_err("pruning reads it");
        assert_eq!(error.error_code(), ErrorCode::InvalidFile);
        // Pages are pruned per conjunct of one column: under an OR, the index is never read.
        let either = ScanRequest {
            filter: Some(parse_sql("id > 5 OR name = 'name-00001'").expect("filter")),
            ..ScanRequest::default()
        };
        plan_scan(&file, &either).expect("an OR prunes no pages");
        let plain = ScanRequest {
            limit: Some(10),
            ..ScanRequest::default()
        };
        plan_scan(&file, &plain).expect("first rows need no column index");
    }
}
