//! Decoding row groups that lie past 4 GiB, where `usize` is 32 bits (wasm32).
//!
//! arrow-rs (parquet 60.1) keeps the pages of a column chunk read page by page
//! (`ColumnChunkData::Sparse` in `arrow/in_memory_row_group.rs`) keyed by their file offset cast
//! to `usize`, then looks each page up by its full `u64` offset. On wasm32 a page at or past
//! 4 GiB is therefore never found ("Invalid offset in sparse column chunk data"), so every
//! page-level read of such a row group fails: any task with a row selection (offset/limit, pages
//! pruned by the column index, a row group split into tasks) over a page index. Whole chunks
//! (`Dense`) subtract two truncated offsets, which wraps to the right answer.
//!
//! The fix lives here rather than in a patched arrow-rs: a task of a row group that ends past
//! 4 GiB decodes with a copy of the file's metadata in which that row group's byte offsets — the
//! column chunks' data and dictionary page offsets and the offset index's page locations — are
//! `base` lower, `base` being the row group's first byte. The task shifts the decoder's requests
//! up by `base` before they reach the bytes it holds (file offsets), and hands it those bytes at
//! the lowered offsets. Other row groups keep their offsets; the page index of the file is shared,
//! not copied (only the task's row group's offset indexes are). A row group spanning more than
//! 4 GiB cannot be lowered below 4 GiB, nor decoded in a 4 GiB address space: it is left as is.
//!
//! It applies on every target, so the host tests exercise it too.

use std::ops::Range;
use std::sync::Arc;

use parquet::file::metadata::ParquetMetaDataBuilder;

use crate::error::{Result, SkimError};
use crate::metadata::ParquetFile;
use crate::row_group_index::ReplacedOffsets;

/// The first offset a 32-bit `usize` cannot hold.
const FOUR_GIB: u64 = 1 << 32;

/// For decoding row group `row_group_idx` of `file`: `None` when its offsets fit 32 bits (or it
/// cannot be helped), else a copy of `file` with that row group's offsets lowered by the returned
/// `base`.
pub(crate) fn for_row_group(
    file: &ParquetFile,
    row_group_idx: usize,
) -> Result<Option<(ParquetFile, u64)>> {
    let metadata = file.metadata();
    // A missing row group is reported by the decoder's builder.
    let Some(group) = metadata.row_groups().get(row_group_idx) else {
        return Ok(None);
    };
    let spans: Vec<(u64, u64)> = group.columns().iter().map(|c| c.byte_range()).collect();
    let base = spans.iter().map(|(start, _)| *start).min().unwrap_or(0);
    let end = spans
        .iter()
        .map(|(start, len)| start.saturating_add(*len))
        .max()
        .unwrap_or(0);
    if end <= FOUR_GIB || end - base > FOUR_GIB {
        return Ok(None);
    }
    let shift = i64::try_from(base)
        .map_err(|_| SkimError::internal(format!("row group offset {base} exceeds i64")))?;
    let columns = group
        .columns()
        .iter()
        .map(|c| {
            c.clone()
                .into_builder()
                .set_data_page_offset(c.data_page_offset() - shift)
                .set_dictionary_page_offset(c.dictionary_page_offset().map(|o| o - shift))
                .build()
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| SkimError::from_parquet("lowering offsets past 4 GiB", e))?;
    let lowered = group
        .clone()
        .into_builder()
        .set_column_metadata(columns)
        .build()
        .map_err(|e| SkimError::from_parquet("lowering offsets past 4 GiB", e))?;
    let mut builder = ParquetMetaDataBuilder::new_from_metadata(metadata.as_ref().clone());
    let mut row_groups = builder.take_row_groups();
    row_groups[row_group_idx] = lowered;
    builder = builder.set_row_groups(row_groups);
    if let Some(index) = metadata.page_index() {
        let offsets = (0..group.num_columns())
            .map(|column| {
                index.offset_index(row_group_idx, column).map(|o| {
                    let mut o = o.clone();
                    for page in &mut o.page_locations {
                        page.offset -= shift;
                    }
                    o
                })
            })
            .collect();
        builder = builder.set_page_index(Some(Arc::new(ReplacedOffsets {
            inner: Some(Arc::clone(index)),
            row_group_idx,
            offsets,
        })));
    }
    Ok(Some((file.with_metadata(Arc::new(builder.build()))?, base)))
}

/// `ranges` shifted up by `base`: from the decoder's offsets to the file's.
pub(crate) fn raised(ranges: &[Range<u64>], base: u64) -> Vec<Range<u64>> {
    ranges
        .iter()
        .map(|r| r.start + base..r.end + base)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::page_index::PageIndexBuilder;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader, ParquetMetaDataWriter};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::writer::TrackedWrite;

    use super::*;
    use crate::plan::{plan_scan, ScanRequest};
    use crate::task::{TaskDecoder, TaskRun};

    /// How far the row group is moved: past 4 GiB, and not a multiple of it.
    const SHIFT: u64 = 5 << 30;
    const ROWS: i64 = 10_000;

    /// Drops the first `skip` bytes written (the file body the footer writer counts).
    struct SkipWrite<'a>(u64, &'a mut Vec<u8>);

    impl Write for SkipWrite<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let skipped = self.0.min(buf.len() as u64) as usize;
            self.0 -= skipped as u64;
            self.1.extend_from_slice(&buf[skipped..]);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A file whose one row group (`k` = 0..ROWS, pages of 1000 rows) starts `shift` bytes past
    /// where it was written; returns the file and the written bytes.
    fn moved_file(shift: u64) -> (ParquetFile, Bytes) {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(1000)
            .set_write_batch_size(1000)
            .build();
        let mut written = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut written, Arc::clone(&schema), Some(props)).unwrap();
        let k = Int64Array::from_iter_values(0..ROWS);
        writer
            .write(&RecordBatch::try_new(schema, vec![Arc::new(k)]).unwrap())
            .unwrap();
        writer.close().unwrap();
        let written = Bytes::from(written);
        let single = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Required)
            .parse_and_finish(&written)
            .unwrap();
        let footer_shift = shift;
        let shift = shift as i64;
        let group = single.row_group(0);
        let chunk = group.column(0);
        let moved = chunk
            .clone()
            .into_builder()
            .set_data_page_offset(chunk.data_page_offset() + shift)
            .set_dictionary_page_offset(chunk.dictionary_page_offset().map(|o| o + shift))
            .set_column_index_offset(None)
            .set_offset_index_offset(None)
            .build()
            .unwrap();
        let index = single.page_index().unwrap();
        let mut offsets = index.offset_index(0, 0).unwrap().clone();
        for page in &mut offsets.page_locations {
            page.offset += shift;
        }
        let mut page_index = PageIndexBuilder::new(1, 1);
        page_index.put_column_index(index.column_index(0, 0).unwrap().clone(), 0, 0);
        page_index.put_offset_index(offsets, 0, 0);
        let mut builder = ParquetMetaDataBuilder::new_from_metadata(single.clone());
        let group = group
            .clone()
            .into_builder()
            .set_column_metadata(vec![moved])
            .build()
            .unwrap();
        builder = builder
            .set_row_groups(vec![group])
            .set_page_index(Some(Arc::new(page_index.build())));
        let (start, len) = chunk.byte_range();
        let footer_start = start + len + footer_shift;
        let mut footer = Vec::new();
        let mut tracked = TrackedWrite::new(SkipWrite(footer_start, &mut footer));
        let zeros = vec![0u8; 1 << 20];
        let mut left = footer_start;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            tracked.write_all(&zeros[..n]).unwrap();
            left -= n as u64;
        }
        ParquetMetaDataWriter::new_with_tracked(tracked, &builder.build())
            .finish()
            .unwrap();
        let file_len = footer_start + footer.len() as u64;
        let file = ParquetFile::try_from_footer(
            file_len,
            vec![(footer_start..file_len, footer.into())],
            true,
        )
        .unwrap();
        (file, written)
    }

    #[test]
    fn rows_past_4_gib_decode_with_lowered_offsets_and_file_offsets_outside() {
        let (file, written) = moved_file(SHIFT);
        let start = file.metadata().row_group(0).column(0).byte_range().0;
        assert_eq!(start, 4 + SHIFT);
        let (lowered, base) = for_row_group(&file, 0).unwrap().unwrap();
        assert_eq!(base, start);
        assert_eq!(lowered.metadata().row_group(0).column(0).byte_range().0, 0);
        let pages = lowered
            .metadata()
            .page_index()
            .unwrap()
            .offset_index(0, 0)
            .unwrap();
        assert!(pages
            .page_locations
            .iter()
            .all(|p| (p.offset as u64) < FOUR_GIB));

        // A page-level read (offset/limit) asks for, and is given, the file's offsets.
        let request = ScanRequest {
            offset: Some(4321),
            limit: Some(100),
            ..ScanRequest::default()
        };
        let plan = plan_scan(&file, &request).unwrap();
        let task = &plan.tasks[0];
        let scan = plan.bind(&file).unwrap();
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec).unwrap();
        let read =
            |r: &Range<u64>| written.slice((r.start - SHIFT) as usize..(r.end - SHIFT) as usize);
        for r in &task.output_ranges {
            assert!(
                r.start >= start,
                "planned {}..{} below the row group",
                r.start,
                r.end
            );
            decoder
                .push(r.start..r.end, read(&(r.start..r.end)))
                .unwrap();
        }
        let output = loop {
            match decoder.run().unwrap() {
                TaskRun::NeedsRanges(ranges) => {
                    for r in ranges {
                        assert!(
                            r.start >= start,
                            "asked for {}..{} below the row group",
                            r.start,
                            r.end
                        );
                        decoder.push(r.clone(), read(&r)).unwrap();
                    }
                }
                TaskRun::Done(output) => break output,
            }
        };
        let reader = arrow_ipc::reader::StreamReader::try_new(&output.ipc[..], None).unwrap();
        let k: Vec<i64> = reader
            .flat_map(|b| {
                b.unwrap()
                    .column(0)
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(k, (4321..4421).collect::<Vec<_>>());
    }

    #[test]
    fn row_groups_below_4_gib_are_left_alone() {
        let (file, _) = moved_file(0);
        assert_eq!(file.metadata().row_group(0).column(0).byte_range().0, 4);
        assert!(for_row_group(&file, 0).unwrap().is_none());
        assert!(for_row_group(&file, 1).unwrap().is_none());
        let rebuilt = file.with_metadata(Arc::clone(file.metadata())).unwrap();
        assert_eq!(rebuilt.arrow_schema(), file.arrow_schema());
    }
}
