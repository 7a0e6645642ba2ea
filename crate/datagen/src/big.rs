//! `big-template`: a Parquet file of more than 4 GiB that never exists on disk.
//!
//! Offsets above 2^31 and 2^32 must be right everywhere (`u64` in Rust, numbers in JS, no 32-bit
//! `usize` on wasm32), and testing that needs a file that large — without writing 5 GB. The
//! *virtual file* here is `PAR1`, then [`COPIES`] byte-identical copies of one real row group,
//! then a footer that describes all of them:
//!
//! ```text
//!  0    4            4+L          4+2L                 4+N·L                         len
//!  PAR1 │ row group 0 │ row group 1 │ …  │ row group N-1 │ column/offset index, footer │
//!       └─ the same L bytes, N times ─────────────────────┘
//! ```
//!
//! The row group is written by the arrow-rs `ArrowWriter` (so its pages are real), then its
//! metadata is copied N times with every offset shifted by `i·L` — column chunk data and
//! dictionary page offsets, row group `file_offset`, and the offset index's page locations — and
//! the footer (page index included) is written by arrow-rs's `ParquetMetaDataWriter` as if it
//! started at `4 + N·L` (`new_with_tracked`, after counting that many skipped bytes). No thrift is
//! written by hand.
//!
//! Columns:
//! - `k: int64`, the row's index within its row group (`0..ROWS_PER_GROUP`), DELTA_BINARY_PACKED
//!   and Snappy: consecutive values pack to almost nothing, so the whole file's `k` (5 GiB
//!   decoded) is under 1 MB to fetch. File row `r` has `k = r % ROWS_PER_GROUP`.
//! - `pad: fixed_size_binary(8)`, all zeros, PLAIN, uncompressed, no statistics: what makes each
//!   row group ~64 MiB and the file ~5 GiB. Its pages are a page header and 4 MiB of zeros.
//!
//! On disk the template is small: `template.bin` holds the non-zero bytes (the magic, the page
//! headers, the `k` chunk, the footer) and `template.json` says where each piece goes, with the
//! zero runs listed instead of stored. `tests/server/virtual-file.mjs` serves the virtual file
//! from it; browser tests build a `Blob` of it from parts. After writing, the template is read
//! back through the same mapping with the arrow-rs reader (64-bit, native): the footer must
//! decode and rows of the last row group, above 4 GiB, must be the template's.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{FixedSizeBinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::page_index::PageIndexBuilder;
use parquet::file::metadata::{
    FileMetaData, PageIndexPolicy, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader,
    ParquetMetaDataWriter, RowGroupMetaData,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::TrackedWrite;
use parquet::schema::types::ColumnPath;
use serde_json::json;

/// Rows of the row group (and so of every copy).
pub const ROWS_PER_GROUP: usize = 1 << 23;
/// Bytes of each `pad` value.
const PAD_WIDTH: i32 = 8;
/// Copies of the row group: 80 × ~64 MiB ≈ 5 GiB, and 80 × 8 Mi rows × 8 bytes = 5 GiB of `k`.
pub const COPIES: u64 = 80;
/// Rows per data page (`k` has 8 pages per row group; `pad` pages stop at 4 MiB first).
const PAGE_ROWS: usize = 1 << 20;
const PAGE_BYTES: usize = 4 << 20;
/// Zero runs at least this long are listed in the manifest instead of stored.
const MIN_ZERO_RUN: usize = 4096;
/// Identifies the manifest's format (bump when the layout or columns change).
const FORMAT: &str = "parquet-skim big-file template 1";

/// Where a piece of the row group comes from.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// `len` bytes of `template.bin` from `bin`.
    Stored { bin: u64 },
    /// Zeros.
    Zeros,
}

/// A run of the row group's bytes: `len` bytes at `at` (relative to the row group's start).
#[derive(Debug, Clone, Copy)]
struct Segment {
    at: u64,
    len: u64,
    piece: Piece,
}

/// The virtual file as the template describes it.
struct Template {
    /// The stored bytes: magic, non-zero pieces of the row group, footer.
    bin: Bytes,
    group_start: u64,
    group_len: u64,
    copies: u64,
    segments: Vec<Segment>,
    /// Where the footer starts in the file and in `bin`.
    footer_start: u64,
    footer_bin: u64,
    file_len: u64,
}

impl Template {
    /// Bytes `start..start + out.len()` of the virtual file into `out`.
    fn read_at(&self, start: u64, out: &mut [u8]) {
        let mut position = start;
        let mut filled = 0;
        while filled < out.len() {
            let left = (out.len() - filled) as u64;
            let (source, n) = if position < self.group_start {
                (Some(position), left.min(self.group_start - position))
            } else if position < self.footer_start {
                let local = (position - self.group_start) % self.group_len;
                let i = self.segments.partition_point(|s| s.at + s.len <= local);
                let segment = self.segments[i];
                let into = local - segment.at;
                let n = left.min(segment.len - into);
                match segment.piece {
                    Piece::Stored { bin } => (Some(bin + into), n),
                    Piece::Zeros => (None, n),
                }
            } else {
                let into = position - self.footer_start;
                (
                    Some(self.footer_bin + into),
                    left.min(self.file_len - position),
                )
            };
            let n = n as usize;
            let target = &mut out[filled..filled + n];
            match source {
                Some(from) => target.copy_from_slice(&self.bin[from as usize..from as usize + n]),
                None => target.fill(0),
            }
            filled += n;
            position += n as u64;
        }
    }
}

impl Length for Template {
    fn len(&self) -> u64 {
        self.file_len
    }
}

/// A reader of the virtual file from some offset on.
struct TemplateRead {
    template: Arc<Template>,
    position: u64,
}

impl Read for TemplateRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.template.file_len - self.position) as usize;
        self.template.read_at(self.position, &mut buf[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

/// Reads the virtual file through the template (what the arrow-rs reader checks).
struct VirtualFile(Arc<Template>);

impl Length for VirtualFile {
    fn len(&self) -> u64 {
        self.0.file_len
    }
}

impl ChunkReader for VirtualFile {
    type T = TemplateRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<TemplateRead> {
        Ok(TemplateRead {
            template: Arc::clone(&self.0),
            position: start,
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let mut out = vec![0; length];
        self.0.read_at(start, &mut out);
        Ok(out.into())
    }
}

/// Drops the first `skip` bytes written, keeps the rest: the footer writer counts the file's
/// body as written (so the offsets it records are the virtual file's) without it existing.
struct SkipWrite<'a> {
    skip: u64,
    out: &'a mut Vec<u8>,
}

impl Write for SkipWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let skipped = self.skip.min(buf.len() as u64) as usize;
        self.skip -= skipped as u64;
        self.out.extend_from_slice(&buf[skipped..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `template.json` and `template.bin` into `dir`, then reads the virtual file back.
pub fn write_template(dir: &Path) -> Result<(), String> {
    let file = one_row_group()?;
    let single = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&file)
        .map_err(|e| format!("reading the template's own footer: {e}"))?;
    let group = single.row_group(0);
    let group_start = 4u64;
    let group_end = group
        .columns()
        .iter()
        .map(|c| {
            let (start, len) = c.byte_range();
            start + len
        })
        .max()
        .ok_or("the row group has no columns")?;
    let group_len = group_end - group_start;
    let footer_start = group_start + COPIES * group_len;

    let metadata = copies_of(&single, group_len)?;
    let footer = footer_at(footer_start, &metadata)?;

    // The stored bytes: the magic, the row group's non-zero runs, the footer.
    let (mut bin, segments) = stored_runs(&file, group_start as usize, group_end as usize);
    let footer_bin = bin.len() as u64;
    bin.extend_from_slice(&footer);
    let template = Arc::new(Template {
        bin: Bytes::from(bin),
        group_start,
        group_len,
        copies: COPIES,
        segments,
        footer_start,
        footer_bin,
        file_len: footer_start + footer.len() as u64,
    });
    verify(&template)?;

    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let pages = |column: usize| pages_of(&single, column, group_start);
    let manifest = json!({
        "format": FORMAT,
        "fileLen": template.file_len,
        "copies": template.copies,
        "rowsPerGroup": ROWS_PER_GROUP,
        "padWidth": PAD_WIDTH,
        "groupStart": group_start,
        "groupLen": group_len,
        "footerStart": footer_start,
        "head": { "bin": 0, "len": group_start },
        "segments": template.segments.iter().map(|s| match s.piece {
            Piece::Stored { bin } => json!({ "at": s.at, "len": s.len, "bin": bin }),
            Piece::Zeros => json!({ "at": s.at, "len": s.len, "zeros": true }),
        }).collect::<Vec<_>>(),
        "footer": { "bin": footer_bin, "len": footer.len() },
        "binLen": template.bin.len(),
        // Data pages of the template row group, relative to its start: [at, bytes, first row].
        "pages": { "k": pages(0), "pad": pages(1) },
    });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    write_whole(&dir.join("template.bin"), &template.bin)?;
    // The manifest last: its presence means the template is complete.
    write_whole(&dir.join("template.json"), format!("{text}\n").as_bytes())?;
    println!(
        "wrote a template of {} bytes for a {}-byte file ({COPIES} row groups of {group_len} \
         bytes, footer {} bytes) to {}",
        template.bin.len(),
        template.file_len,
        footer.len(),
        dir.display()
    );
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all (to a `.partial` file first, then renamed).
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The footer of a file whose footer starts at `footer_start`, as `ParquetMetaDataWriter` writes
/// it there (its offsets depend on where it starts): the bytes before it are written as zeros and
/// dropped.
fn footer_at(footer_start: u64, metadata: &ParquetMetaData) -> Result<Vec<u8>, String> {
    let mut footer = Vec::new();
    let mut tracked = TrackedWrite::new(SkipWrite {
        skip: footer_start,
        out: &mut footer,
    });
    let zeros = vec![0u8; 1 << 20];
    let mut left = footer_start;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        tracked.write_all(&zeros[..n]).map_err(|e| e.to_string())?;
        left -= n as u64;
    }
    ParquetMetaDataWriter::new_with_tracked(tracked, metadata)
        .finish()
        .map_err(|e| format!("writing the footer: {e}"))?;
    Ok(footer)
}

/// The stored bytes of `file` up to the row group (the magic) and the row group's
/// `group_start..group_end` as segments: its non-zero runs stored (appended to the bytes), its
/// zero runs not.
fn stored_runs(file: &[u8], group_start: usize, group_end: usize) -> (Vec<u8>, Vec<Segment>) {
    let mut bin = file[..group_start].to_vec();
    let mut segments = Vec::new();
    for (at, len, zero) in runs(&file[group_start..group_end]) {
        let piece = if zero {
            Piece::Zeros
        } else {
            let stored = Piece::Stored {
                bin: bin.len() as u64,
            };
            bin.extend_from_slice(&file[group_start + at..][..len]);
            stored
        };
        segments.push(Segment {
            at: at as u64,
            len: len as u64,
            piece,
        });
    }
    (bin, segments)
}

/// Data pages of the template's `column`, relative to the row group's start: [at, bytes, first row].
fn pages_of(single: &ParquetMetaData, column: usize, group_start: u64) -> Vec<[i64; 3]> {
    single
        .page_index()
        .and_then(|index| index.offset_index(0, column))
        .map(|o| {
            o.page_locations
                .iter()
                .map(|p| {
                    [
                        p.offset - group_start as i64,
                        i64::from(p.compressed_page_size),
                        p.first_row_index,
                    ]
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A real Parquet file of one row group of [`ROWS_PER_GROUP`] rows, in memory.
fn one_row_group() -> Result<Bytes, String> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("pad", DataType::FixedSizeBinary(PAD_WIDTH), false),
    ]));
    let k = ColumnPath::from("k");
    let pad = ColumnPath::from("pad");
    let props = WriterProperties::builder()
        .set_created_by("parquet-skim-datagen big-template (arrow-rs parquet 60)".into())
        .set_max_row_group_row_count(Some(ROWS_PER_GROUP))
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_data_page_size_limit(PAGE_BYTES)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_column_dictionary_enabled(k.clone(), false)
        .set_column_encoding(k.clone(), Encoding::DELTA_BINARY_PACKED)
        .set_column_compression(k, Compression::SNAPPY)
        .set_column_dictionary_enabled(pad.clone(), false)
        .set_column_compression(pad.clone(), Compression::UNCOMPRESSED)
        .set_column_statistics_enabled(pad, EnabledStatistics::None)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, Arc::clone(&schema), Some(props))
        .map_err(|e| e.to_string())?;
    let batch_rows = 1 << 20;
    for first in (0..ROWS_PER_GROUP).step_by(batch_rows) {
        let n = batch_rows.min(ROWS_PER_GROUP - first);
        let k = Int64Array::from_iter_values((first..first + n).map(|i| i as i64));
        let pad = FixedSizeBinaryArray::try_from_iter(std::iter::repeat_n([0u8; 8], n))
            .map_err(|e| e.to_string())?;
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(k), Arc::new(pad)])
            .map_err(|e| e.to_string())?;
        writer.write(&batch).map_err(|e| e.to_string())?;
    }
    let written = writer.close().map_err(|e| e.to_string())?;
    if written.num_row_groups() != 1 {
        return Err(format!(
            "expected one row group, the writer made {}",
            written.num_row_groups()
        ));
    }
    Ok(Bytes::from(out))
}

/// The metadata of [`COPIES`] copies of `single`'s row group, copy `i` shifted by `i·group_len`.
fn copies_of(single: &ParquetMetaData, group_len: u64) -> Result<ParquetMetaData, String> {
    let group = single.row_group(0);
    let columns = group.num_columns();
    let index = single
        .page_index()
        .ok_or("the template has no page index")?;
    let mut page_index = PageIndexBuilder::new(COPIES as usize, columns);
    let mut row_groups: Vec<RowGroupMetaData> = Vec::with_capacity(COPIES as usize);
    for copy in 0..COPIES {
        let shift = i64::try_from(copy * group_len).map_err(|e| e.to_string())?;
        let chunks = group
            .columns()
            .iter()
            .map(|c| {
                c.clone()
                    .into_builder()
                    .set_data_page_offset(c.data_page_offset() + shift)
                    .set_dictionary_page_offset(c.dictionary_page_offset().map(|o| o + shift))
                    .set_index_page_offset(c.index_page_offset().map(|o| o + shift))
                    // Where the column/offset indexes are is decided by the footer writer.
                    .set_column_index_offset(None)
                    .set_column_index_length(None)
                    .set_offset_index_offset(None)
                    .set_offset_index_length(None)
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        row_groups.push(
            group
                .clone()
                .into_builder()
                .set_column_metadata(chunks)
                .set_file_offset(group.file_offset().unwrap_or(4) + shift)
                .set_ordinal(i32::try_from(copy).map_err(|e| e.to_string())?)
                .build()
                .map_err(|e| e.to_string())?,
        );
        for column in 0..columns {
            // `pad` has no statistics, so no column index.
            if let Some(column_index) = index.column_index(0, column) {
                page_index.put_column_index(column_index.clone(), copy as usize, column);
            }
            let mut offset_index = index
                .offset_index(0, column)
                .cloned()
                .ok_or(format!("column {column} has no offset index"))?;
            for page in &mut offset_index.page_locations {
                page.offset += shift;
            }
            page_index.put_offset_index(offset_index, copy as usize, column);
        }
    }
    let file = single.file_metadata();
    let rows = row_groups.iter().map(RowGroupMetaData::num_rows).sum();
    let file_metadata = FileMetaData::new(
        file.version(),
        rows,
        file.created_by().map(str::to_owned),
        file.key_value_metadata().cloned(),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    Ok(ParquetMetaDataBuilder::new(file_metadata)
        .set_row_groups(row_groups)
        .set_page_index(Some(Arc::new(page_index.build())))
        .build())
}

/// `(start, len, is_zero)` runs covering `bytes`: zero runs of at least [`MIN_ZERO_RUN`], and
/// everything between them.
fn runs(bytes: &[u8]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut stored_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0 {
            i += 1;
            continue;
        }
        let zero_end = bytes[i..]
            .iter()
            .position(|b| *b != 0)
            .map_or(bytes.len(), |n| i + n);
        if zero_end - i >= MIN_ZERO_RUN {
            if i > stored_from {
                out.push((stored_from, i - stored_from, false));
            }
            out.push((i, zero_end - i, true));
            stored_from = zero_end;
        }
        i = zero_end;
    }
    if stored_from < bytes.len() {
        out.push((stored_from, bytes.len() - stored_from, false));
    }
    out
}

/// Reads the virtual file back with the arrow-rs reader: its footer, and rows of the row group
/// straddling 4 GiB and of the last one.
fn verify(template: &Arc<Template>) -> Result<(), String> {
    let file = VirtualFile(Arc::clone(template));
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map_err(|e| format!("reading the virtual file's footer: {e}"))?;
    let metadata = Arc::clone(builder.metadata());
    if metadata.num_row_groups() as u64 != COPIES
        || metadata.file_metadata().num_rows() != (COPIES as usize * ROWS_PER_GROUP) as i64
    {
        return Err("the virtual file's footer has the wrong row groups".into());
    }
    let last = metadata
        .row_group(COPIES as usize - 1)
        .column(0)
        .byte_range()
        .0;
    if last <= 1 << 32 {
        return Err(format!("the last row group starts at {last}, below 4 GiB"));
    }
    let straddling = ((1u64 << 32) - template.group_start) / template.group_len;
    for group in [straddling as usize, COPIES as usize - 1] {
        let first = ROWS_PER_GROUP / 2 - 500;
        let selection = RowSelection::from(vec![
            RowSelector::skip(first),
            RowSelector::select(1000),
            RowSelector::skip(ROWS_PER_GROUP - first - 1000),
        ]);
        let schema = metadata.file_metadata().schema_descr();
        let reader = ParquetRecordBatchReaderBuilder::try_new_with_options(
            VirtualFile(Arc::clone(template)),
            ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required),
        )
        .and_then(|b| {
            b.with_row_groups(vec![group])
                .with_projection(ProjectionMask::leaves(schema, [0, 1]))
                .with_row_selection(selection)
                .build()
        })
        .map_err(|e| format!("reading row group {group}: {e}"))?;
        let mut expected = first as i64;
        for batch in reader {
            let batch = batch.map_err(|e| format!("decoding row group {group}: {e}"))?;
            let k = batch.column(0).as_primitive::<Int64Type>();
            let pad = batch.column(1).as_fixed_size_binary();
            for row in 0..batch.num_rows() {
                if k.value(row) != expected || pad.value(row) != [0u8; 8] {
                    return Err(format!(
                        "row group {group}: expected k = {expected} and zero pad, got {} and {:?}",
                        k.value(row),
                        pad.value(row)
                    ));
                }
                expected += 1;
            }
        }
        if expected != first as i64 + 1000 {
            return Err(format!(
                "row group {group}: read {} rows, expected 1000",
                expected - first as i64
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_runs_are_found_and_short_ones_kept() {
        let mut bytes = vec![1u8; 10];
        bytes.extend(std::iter::repeat_n(0, MIN_ZERO_RUN));
        bytes.extend([2, 0, 0, 3]);
        assert_eq!(
            runs(&bytes),
            vec![
                (0, 10, false),
                (10, MIN_ZERO_RUN, true),
                (10 + MIN_ZERO_RUN, 4, false)
            ]
        );
        assert_eq!(runs(&[0; 8]), vec![(0, 8, false)]);
    }

    #[test]
    fn skip_write_drops_the_prefix() {
        let mut out = Vec::new();
        let mut w = SkipWrite {
            skip: 3,
            out: &mut out,
        };
        w.write_all(b"ab").unwrap();
        w.write_all(b"cdef").unwrap();
        assert_eq!(out, b"def");
    }
}
