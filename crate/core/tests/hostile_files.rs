//! Hostile files: every way a file can be broken must end in the right typed error (or, where
//! the file is merely unusual, in the right rows), never a panic: in WebAssembly a panic traps
//! the worker.
//!
//! Files are real (apache/parquet-testing) or made here: written with the arrow-rs writers, then
//! cut, patched byte by byte, or given a rewritten footer (`ParquetMetaDataWriter`). Each case
//! reads the file the way the browser does (a tail read, the loader's further asks, the plan,
//! every task from its planned ranges and whatever else it asks), asserts the exact error code
//! and that nothing panicked, and records itself in the robustness ledger
//! (`tests/.cache/robustness/rust-hostile-files.jsonl`).

mod common;

use std::cell::RefCell;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use common::{parquet_testing, record_case, sample_file};
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, FixedLenByteArray, FixedLenByteArrayType};
use parquet::file::metadata::{
    ColumnChunkMetaDataBuilder, PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader,
    ParquetMetaDataWriter,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::Type;
use parquet_skim_core::limits::DEFAULT_MAX_PAGE_BYTES;
use parquet_skim_core::{
    plan_scan, DecodeLimits, LoadStep, MetadataLoader, OpenOptions, ParquetFile, ScanRequest,
    SkimError, TaskDecoder, TaskRun,
};

const SUITE: &str = "rust-hostile-files";

/// What a read came to: rows and the largest decoded batch, or an error.
#[derive(Debug, Default)]
struct Read {
    rows: u64,
    largest_batch_bytes: usize,
    batches: usize,
    /// The batch size the plan gave its first task.
    planned_batch_size: usize,
    /// Every range the opener read.
    open_reads: Vec<Range<u64>>,
}

/// Opens `file` with one tail read of `tail` bytes, then whatever the loader asks.
fn open(
    file: &Bytes,
    tail: u64,
    options: OpenOptions,
    reads: &mut Vec<Range<u64>>,
) -> Result<ParquetFile, SkimError> {
    let len = file.len() as u64;
    let mut loader = MetadataLoader::try_new(len)?.with_options(options);
    let mut asked = std::iter::once(len.saturating_sub(tail)..len).collect::<Vec<_>>();
    loop {
        for range in asked.drain(..) {
            let bytes = bytes_of(file, &range)?;
            reads.push(range.clone());
            loader.push(range, bytes)?;
        }
        match loader.try_load()? {
            LoadStep::Loaded(parquet) => return Ok(*parquet),
            LoadStep::NeedsRanges(ranges) => asked = ranges,
        }
    }
}

/// The bytes of `range`; a range outside the file is a bug in what asked for it.
fn bytes_of(file: &Bytes, range: &Range<u64>) -> Result<Bytes, SkimError> {
    let (start, end) = (range.start as usize, range.end as usize);
    if start > end || end > file.len() {
        return Err(SkimError::internal(format!(
            "asked for {range:?} of a {}-byte file",
            file.len()
        )));
    }
    Ok(file.slice(start..end))
}

/// Reads all of `request` from `file` as the browser does.
fn read_with(file: &Bytes, options: OpenOptions, request: &ScanRequest) -> Result<Read, SkimError> {
    let mut read = Read::default();
    let parquet = open(file, 64 * 1024, options, &mut read.open_reads)?;
    let plan = plan_scan(&parquet, request)?;
    read.planned_batch_size = plan.tasks.first().map_or(0, |t| t.spec.batch_size);
    let scan = plan.bind(&parquet)?;
    for task in &plan.tasks {
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec)?;
        for r in task.filter_ranges.iter().chain(&task.output_ranges) {
            let range = r.start..r.end;
            decoder.push(range.clone(), bytes_of(file, &range)?)?;
        }
        let output = loop {
            match decoder.run()? {
                TaskRun::Done(output) => break output,
                TaskRun::NeedsRanges(ranges) => {
                    for range in ranges {
                        decoder.push(range.clone(), bytes_of(file, &range)?)?;
                    }
                }
            }
        };
        read.rows += output.rows;
        let reader = StreamReader::try_new(std::io::Cursor::new(output.ipc), None)
            .map_err(|e| SkimError::internal(e.to_string()))?;
        for batch in reader {
            let batch = batch.map_err(|e| SkimError::internal(e.to_string()))?;
            read.batches += 1;
            read.largest_batch_bytes = read.largest_batch_bytes.max(batch.get_array_memory_size());
        }
    }
    Ok(read)
}

fn read(file: &Bytes) -> Result<Read, SkimError> {
    read_with(file, OpenOptions::default(), &ScanRequest::default())
}

/// Runs one case: `run` must end in `expected` (an error code, or "OK"), never panic, and pass
/// `check` (more about the outcome). Records the case and asserts it.
fn case_checked(
    name: &str,
    expected: &str,
    run: impl FnOnce() -> Result<Read, SkimError>,
    check: impl FnOnce(&Result<Read, SkimError>) -> Result<(), String>,
) {
    let outcome = catch_unwind(AssertUnwindSafe(run));
    let (code, detail) = match &outcome {
        Ok(Ok(read)) => ("OK".to_owned(), format!("{} rows", read.rows)),
        Ok(Err(e)) => (e.code().to_owned(), e.to_string()),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            ("PANIC".to_owned(), message)
        }
    };
    let checked = match &outcome {
        Ok(result) if code == expected => check(result),
        _ => Ok(()),
    };
    let ok = code == expected && checked.is_ok();
    println!("{name}: {code}: {detail}");
    let ledger = if ok {
        code.clone()
    } else {
        format!("expected {expected}, got {code}: {detail} {checked:?}")
    };
    record_case(SUITE, "file", name, ok, &ledger, 1);
    assert!(
        ok,
        "{name}: expected {expected}, got {code}: {detail} {checked:?}"
    );
}

fn case(name: &str, expected: &str, run: impl FnOnce() -> Result<Read, SkimError>) {
    case_checked(name, expected, run, |_| Ok(()));
}

/// Checks that an error message says `needles` (the limit, what was found, the option).
fn says(
    needles: &'static [&'static str],
) -> impl Fn(&Result<Read, SkimError>) -> Result<(), String> {
    move |result| {
        let text = result
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        match needles.iter().find(|n| !text.contains(**n)) {
            Some(missing) => Err(format!("the message lacks {missing:?}: {text}")),
            None => Ok(()),
        }
    }
}

// ---- files made here ----

/// One Int64 column `v` (0..rows), one row group, snappy, no dictionary, no page index: a
/// simple page layout to patch.
fn int64_file(rows: i64, compression: Compression) -> Bytes {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let column = Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef;
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_offset_index_disabled(true)
        .set_data_page_row_count_limit(1000)
        .set_write_batch_size(1000)
        .build();
    write(schema, vec![column], props)
}

/// Two Int64 columns `a` and `b`, no page index.
fn two_int64_columns() -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Int64, false),
    ]));
    let a = Arc::new(Int64Array::from_iter_values(0..3000)) as ArrayRef;
    let b = Arc::new(Int64Array::from_iter_values((0..3000).map(|v| v * 7))) as ArrayRef;
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_offset_index_disabled(true)
        .set_data_page_row_count_limit(1000)
        .set_write_batch_size(1000)
        .build();
    write(schema, vec![a, b], props)
}

/// One string column `s` of `rows` copies of `distinct` values of `len` bytes each.
fn strings_file(rows: usize, distinct: usize, len: usize, dictionary: bool) -> Bytes {
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
    let values: Vec<String> = (0..distinct).map(|i| format!("{i:0len$}")).collect();
    let column = Arc::new(StringArray::from_iter_values(
        (0..rows).map(|i| values[i % distinct].as_str()),
    )) as ArrayRef;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(dictionary)
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    write(schema, vec![column], props)
}

fn write(schema: Arc<Schema>, columns: Vec<ArrayRef>, props: WriterProperties) -> Bytes {
    let batch = RecordBatch::try_new(schema, columns).expect("batch");
    common::write_parquet(&batch, props)
}

/// A UTF8-annotated BYTE_ARRAY column holding invalid UTF-8, written with the low-level writer
/// (the Arrow writer cannot hold invalid strings).
fn invalid_utf8_file(dictionary: bool) -> Bytes {
    let schema = Arc::new(
        parse_message_type("message m { REQUIRED BYTE_ARRAY s (UTF8); }").expect("schema"),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .build(),
    );
    let values: Vec<ByteArray> = (0..100u8)
        .map(|i| ByteArray::from(vec![b'o', b'k', i % 10 + b'0']))
        .chain(std::iter::once(ByteArray::from(vec![0xff, 0xfe, 0xc3])))
        .collect();
    write_one_column::<ByteArrayType>(schema, props, &values)
}

/// A required `DECIMAL(18,2)` stored as `FIXED_LEN_BYTE_ARRAY(8)` (pyarrow's layout; the Arrow
/// writer would store it as INT64), dictionary-encoded: three values in turn, so the data page's
/// keys (0, 1, 2, …) are one bit-packed run of 2-bit keys; uncompressed, written with the
/// low-level writer.
fn decimal_dictionary_file() -> Bytes {
    let schema = Arc::new(
        parse_message_type("message m { REQUIRED FIXED_LEN_BYTE_ARRAY(8) d (DECIMAL(18,2)); }")
            .expect("schema"),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(true)
            .set_compression(Compression::UNCOMPRESSED)
            .set_statistics_enabled(EnabledStatistics::None)
            .build(),
    );
    let values: Vec<FixedLenByteArray> = (0..384i64)
        .map(|i| FixedLenByteArray::from((i % 3 - 1).to_be_bytes().to_vec()))
        .collect();
    write_one_column::<FixedLenByteArrayType>(schema, props, &values)
}

/// One row group of `values` in the one required column of `schema`, with the low-level writer
/// (which, unlike the Arrow writer, writes any physical layout and any bytes).
fn write_one_column<T: parquet::data_type::DataType>(
    schema: Arc<Type>,
    props: Arc<WriterProperties>,
    values: &[T::T],
) -> Bytes {
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, schema, props).expect("writer");
    let mut row_group = writer.next_row_group().expect("row group");
    while let Some(mut column) = row_group.next_column().expect("column") {
        column
            .typed::<T>()
            .write_batch(values, None, None)
            .expect("values");
        column.close().expect("close column");
    }
    row_group.close().expect("close row group");
    writer.close().expect("close");
    Bytes::from(out)
}

// ---- editing files ----

/// The bytes before the thrift footer, and the footer decoded (without page index).
fn split_footer(file: &Bytes) -> (Vec<u8>, ParquetMetaData) {
    let len = file.len();
    let metadata_len =
        u32::from_le_bytes(file[len - 8..len - 4].try_into().expect("tail")) as usize;
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Skip)
        .parse_and_finish(file)
        .expect("footer");
    (file[..len - 8 - metadata_len].to_vec(), metadata)
}

/// `body` followed by `metadata` as a footer (page index locations kept as they are).
fn with_footer(mut body: Vec<u8>, metadata: &ParquetMetaData) -> Bytes {
    ParquetMetaDataWriter::new(&mut body, metadata)
        .finish()
        .expect("footer");
    Bytes::from(body)
}

/// `file` with column chunk `leaf` of row group `rg` edited in the footer.
fn edit_chunk(
    file: &Bytes,
    rg: usize,
    leaf: usize,
    edit: impl FnOnce(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder,
) -> Bytes {
    let (body, metadata) = split_footer(file);
    let mut row_groups = metadata.row_groups().to_vec();
    let group = row_groups[rg].clone();
    let mut columns = group.columns().to_vec();
    columns[leaf] = edit(columns[leaf].clone().into_builder())
        .build()
        .expect("column chunk");
    row_groups[rg] = group
        .into_builder()
        .set_column_metadata(columns)
        .build()
        .expect("row group");
    let metadata = metadata.into_builder().set_row_groups(row_groups).build();
    with_footer(body, &metadata)
}

/// A ULEB128 varint at `at`: its value and length.
fn varint(bytes: &[u8], at: usize) -> (u64, usize) {
    let mut value = 0;
    for (i, b) in bytes[at..].iter().enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (value, i + 1);
        }
    }
    panic!("no varint at {at}");
}

fn zigzag_varint(v: i32) -> Vec<u8> {
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    let mut out = Vec::new();
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// Where the fields of a v1 data page header are, as the arrow-rs writer lays them out without
/// statistics.
struct PageFields {
    /// The uncompressed size's varint, and its length.
    uncompressed_at: usize,
    uncompressed_len: usize,
    /// The value encoding's varint (one byte for every encoding).
    encoding_at: usize,
    /// Where the page's body starts, and where the page ends (header and body).
    body_at: usize,
    end: usize,
}

/// Reads the layout of the data page header at `at`, asserting every byte it relies on, so that
/// another layout fails the test instead of patching the wrong byte.
fn page_fields(file: &[u8], at: usize) -> PageFields {
    // One `i32` field (0x15: delta 1, type i32) at `pos`: its varint's place, length and value.
    let field = |pos: &mut usize| {
        assert_eq!(file[*pos], 0x15, "page header layout at byte {pos}");
        let (value, n) = varint(file, *pos + 1);
        let value_at = *pos + 1;
        *pos += 1 + n;
        (value_at, n, (value >> 1) as usize)
    };
    let mut pos = at;
    assert_eq!(field(&mut pos).2, 0, "a data page (v1)");
    let (uncompressed_at, uncompressed_len, _) = field(&mut pos);
    let (_, _, compressed) = field(&mut pos);
    assert_eq!(file[pos], 0x2c, "data page header (field 5) at byte {pos}");
    pos += 1;
    field(&mut pos); // num_values
    let (encoding_at, _, _) = field(&mut pos);
    field(&mut pos); // definition level encoding
    field(&mut pos); // repetition level encoding
    assert_eq!(
        &file[pos..pos + 2],
        &[0, 0],
        "end of the header at byte {pos}"
    );
    PageFields {
        uncompressed_at,
        uncompressed_len,
        encoding_at,
        body_at: pos + 2,
        end: pos + 2 + compressed,
    }
}

// ---- the cases ----

#[test]
fn files_that_are_not_parquet_say_so_and_what_they_look_like() {
    let html = Bytes::from_static(
        b"<!DOCTYPE html><html><head><title>404</title></head><body>Not found</body></html>\n",
    );
    case_checked(
        "an HTML page",
        "INVALID_FILE",
        || read(&html),
        says(&["not Parquet", "\"PAR1\"", "an HTML page"]),
    );
    let json =
        Bytes::from_static(b"{\"error\": \"no such key\", \"code\": 404, \"pad\": \"xxxxxx\"}");
    case_checked(
        "a JSON body",
        "INVALID_FILE",
        || read(&json),
        says(&["not Parquet", "JSON"]),
    );
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend([0u8; 60]);
    case_checked(
        "a ZIP archive",
        "INVALID_FILE",
        || read(&Bytes::from(zip)),
        says(&["not Parquet", "00 00 00 00", "a ZIP archive"]),
    );
    // A Parquet file cut short is called that, not "not Parquet".
    let file = sample_file();
    case_checked(
        "a Parquet file missing its last byte",
        "INVALID_FILE",
        || read(&file.slice(..file.len() - 1)),
        says(&["cut short", "(00 50 41 52)"]),
    );
    case_checked(
        "a Parquet file missing its last 100 bytes",
        "INVALID_FILE",
        || read(&file.slice(..file.len() - 100)),
        says(&["not Parquet, or not all of one"]),
    );
}

#[test]
fn truncated_files_are_invalid() {
    let file = sample_file();
    let len = file.len();
    let metadata_len =
        u32::from_le_bytes(file[len - 8..len - 4].try_into().expect("tail")) as usize;
    let footer_start = len - 8 - metadata_len;
    case("empty file", "INVALID_FILE", || read(&Bytes::new()));
    case("truncated in the leading magic", "INVALID_FILE", || {
        read(&file.slice(..2))
    });
    case("truncated in the trailing magic", "INVALID_FILE", || {
        read(&file.slice(..len - 1))
    });
    case(
        "truncated in the footer length field",
        "INVALID_FILE",
        || read(&file.slice(..len - 6)),
    );
    case("truncated inside the footer", "INVALID_FILE", || {
        read(&file.slice(..footer_start + metadata_len / 2))
    });
    case(
        "footer shorter than its length field (middle bytes cut, tail kept)",
        "INVALID_FILE",
        || {
            let mut cut = file[..footer_start + metadata_len / 3].to_vec();
            cut.extend_from_slice(&file[footer_start + 2 * metadata_len / 3..]);
            read(&Bytes::from(cut))
        },
    );
    case(
        "footer length field larger than the file",
        "INVALID_FILE",
        || {
            let mut bad = file.to_vec();
            bad[len - 8..len - 4].copy_from_slice(&(len as u32 + 100).to_le_bytes());
            read(&Bytes::from(bad))
        },
    );
    case(
        "truncated inside the pages (footer re-appended)",
        "INVALID_FILE",
        || {
            let mut cut = file[..footer_start / 2].to_vec();
            cut.extend_from_slice(&file[footer_start..]);
            read(&Bytes::from(cut))
        },
    );
    // Without an offset index the decoder walks the chunk from its footer length.
    let plain = int64_file(5000, Compression::SNAPPY);
    let (_, metadata) = split_footer(&plain);
    let chunk = metadata.row_group(0).column(0);
    let (start, chunk_len) = chunk.byte_range();
    case(
        "column chunk ends inside a page header",
        "INVALID_FILE",
        || {
            // 5 pages of 1000 values: cut 3 bytes into the second page's header.
            let second = page_fields(&plain, start as usize).end;
            page_fields(&plain, second);
            let cut = (second + 3) as i64 - start as i64;
            read(&edit_chunk(&plain, 0, 0, |c| {
                c.set_total_compressed_size(cut)
            }))
        },
    );
    case(
        "column chunk ends inside a page body",
        "INVALID_FILE",
        || {
            read(&edit_chunk(&plain, 0, 0, |c| {
                c.set_total_compressed_size(chunk_len as i64 - 10)
            }))
        },
    );
}

#[test]
fn corrupt_footers_are_invalid() {
    let file = sample_file();
    let len = file.len();
    let metadata_len =
        u32::from_le_bytes(file[len - 8..len - 4].try_into().expect("tail")) as usize;
    let footer_start = len - 8 - metadata_len;
    case(
        "corrupt thrift: an invalid field type",
        "INVALID_FILE",
        || {
            let mut bad = file.to_vec();
            bad[footer_start] = 0xfe;
            read(&Bytes::from(bad))
        },
    );
    case(
        "corrupt thrift: the footer is noise",
        "INVALID_FILE",
        || {
            let mut bad = file.to_vec();
            let mut rng = common::Rng(0x5eed);
            for b in &mut bad[footer_start..len - 8] {
                *b = rng.next() as u8;
            }
            read(&Bytes::from(bad))
        },
    );
    case(
        "corrupt thrift: length field shorter than the footer",
        "INVALID_FILE",
        || {
            let mut bad = file.to_vec();
            bad[len - 8..len - 4].copy_from_slice(&(metadata_len as u32 / 2).to_le_bytes());
            read(&Bytes::from(bad))
        },
    );
    case("not a Parquet file (JSON)", "INVALID_FILE", || {
        read(&parquet_testing(
            "_KEY_MATERIAL_FOR_external_key_material_java.parquet.encrypted.json",
        ))
    });
}

#[test]
fn wrong_offsets_and_lengths_are_invalid() {
    let file = sample_file();
    let (_, metadata) = split_footer(&file);
    let (id_start, _) = metadata.row_group(0).column(0).byte_range();
    let plain = int64_file(5000, Compression::SNAPPY);
    let (_, plain_metadata) = split_footer(&plain);
    let (plain_start, plain_len) = plain_metadata.row_group(0).column(0).byte_range();
    // arrow-rs `assert!`s that offsets are not negative (ColumnChunkMetaData::byte_range).
    case("negative column chunk offset", "INVALID_FILE", || {
        read(&edit_chunk(&file, 0, 1, |c| {
            c.set_data_page_offset(-100)
                .set_dictionary_page_offset(None)
        }))
    });
    case("negative column chunk length", "INVALID_FILE", || {
        read(&edit_chunk(&file, 0, 1, |c| {
            c.set_total_compressed_size(-1)
        }))
    });
    case(
        "column chunk past the end of the file",
        "INVALID_FILE",
        || {
            let past = file.len() as i64 + 1000;
            read(&edit_chunk(&file, 1, 0, |c| {
                c.set_data_page_offset(past)
                    .set_dictionary_page_offset(None)
            }))
        },
    );
    case(
        "offset index pages outside their column chunk (chunk moved)",
        "INVALID_FILE",
        || {
            read(&edit_chunk(&file, 0, 1, |c| {
                c.set_data_page_offset(id_start as i64)
                    .set_dictionary_page_offset(None)
            }))
        },
    );
    case(
        "column chunk offset into the middle of another column's pages",
        "INVALID_FILE",
        || {
            let into = plain_start as i64 + 100;
            read(&edit_chunk(&plain, 0, 0, |c| {
                c.set_data_page_offset(into)
                    .set_total_compressed_size(plain_len as i64 - 100)
            }))
        },
    );
    // Without an offset index the reader walks a chunk by its length: here into the pages of
    // the next column, valid pages of the same type.
    let two = two_int64_columns();
    let (_, two_metadata) = split_footer(&two);
    let both = two_metadata.row_group(0).column(0).compressed_size()
        + two_metadata.row_group(0).column(1).compressed_size();
    case(
        "column chunk length overlapping the next column chunk",
        "INVALID_FILE",
        || {
            read(&edit_chunk(&two, 0, 0, |c| {
                c.set_total_compressed_size(both)
            }))
        },
    );
    case(
        "column chunk value count disagrees with its pages",
        "INVALID_FILE",
        || {
            let values = plain_metadata.row_group(0).column(0).num_values();
            read(&edit_chunk(&plain, 0, 0, |c| c.set_num_values(values - 1)))
        },
    );
    case(
        "page index past the end of the file",
        "INVALID_FILE",
        || {
            let past = file.len() as i64 + 10;
            read(&edit_chunk(&file, 2, 1, |c| {
                c.set_column_index_offset(Some(past))
            }))
        },
    );
}

/// A gzip page whose header understates its decompressed size (8000 bytes, declared 64): gzip,
/// brotli and LZ4 frames are streams, so the declared size does not bound them; the patched
/// arrow-rs (crate/patches/parquet) stops one byte past it instead of decompressing to the end.
#[test]
fn understated_page_sizes_stop_decompression() {
    let file = int64_file(1000, Compression::GZIP(Default::default()));
    let (mut body, metadata) = split_footer(&file);
    let (start, _) = metadata.row_group(0).column(0).byte_range();
    let fields = page_fields(&file, start as usize);
    let declared = zigzag_varint(64);
    assert_eq!(
        declared.len(),
        fields.uncompressed_len,
        "a varint of the same length"
    );
    body[fields.uncompressed_at..fields.uncompressed_at + declared.len()]
        .copy_from_slice(&declared);
    let lying = with_footer(body, &metadata);
    case_checked(
        "gzip page decompressing past its declared size: stopped there",
        "INVALID_FILE",
        || read(&lying),
        says(&["declared uncompressed size of 64 bytes"]),
    );
}

#[test]
fn bombs_are_refused_with_too_large() {
    // A 100-byte page that declares 2 GiB: arrow-rs would allocate (and zero) 2 GiB before
    // decompressing it.
    let file = int64_file(500, Compression::SNAPPY);
    let (body, metadata) = split_footer(&file);
    let chunk = metadata.row_group(0).column(0);
    let (start, _) = chunk.byte_range();
    let PageFields {
        uncompressed_at,
        uncompressed_len,
        ..
    } = page_fields(&file, start as usize);
    let bomb = {
        let mut patched = body[..uncompressed_at].to_vec();
        let huge = zigzag_varint(i32::MAX);
        patched.extend_from_slice(&huge);
        patched.extend_from_slice(&body[uncompressed_at + uncompressed_len..]);
        let grown = (huge.len() - uncompressed_len) as i64;
        let (_, metadata) = split_footer(&file);
        let patched_chunk = chunk
            .clone()
            .into_builder()
            .set_total_compressed_size(chunk.compressed_size() + grown)
            .build()
            .expect("chunk");
        let group = metadata
            .row_group(0)
            .clone()
            .into_builder()
            .set_column_metadata(vec![patched_chunk])
            .build()
            .expect("row group");
        let metadata = metadata.into_builder().set_row_groups(vec![group]).build();
        with_footer(patched, &metadata)
    };
    case_checked(
        "decompression bomb: a page header declares 2 GiB",
        "TOO_LARGE",
        || read(&bomb),
        says(&["2147483647", "268435456", "maxPageBytes"]),
    );
    case(
        "the file before the patch reads (default maxPageBytes)",
        "OK",
        || {
            read_with(
                &file,
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
    );
    case_checked(
        "a page over a lowered maxPageBytes",
        "TOO_LARGE",
        || {
            read_with(
                &sample_file(),
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        max_page_bytes: 1000,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
        says(&["1000-byte page limit", "maxPageBytes"]),
    );
    // The footer length is checked in the 8-byte tail: the footer itself is never fetched.
    let reads = RefCell::new(Vec::new());
    case_checked(
        "footer over maxMetadataBytes (refused from the tail, before reading it)",
        "TOO_LARGE",
        || {
            let options = OpenOptions {
                max_metadata_bytes: 100,
                ..OpenOptions::default()
            };
            open(&sample_file(), 8, options, &mut reads.borrow_mut()).map(|_| Read::default())
        },
        |result| {
            says(&["100-byte limit", "maxMetadataBytes"])(result)?;
            match reads.borrow().as_slice() {
                [tail] if tail.end - tail.start == 8 => Ok(()),
                other => Err(format!("read more than the tail: {other:?}")),
            }
        },
    );
    case_checked(
        "column chunk over maxChunkBytes (large_string_map: 2 GiB decompressed)",
        "TOO_LARGE",
        || read(&parquet_testing("large_string_map.brotli.parquet")),
        says(&["2147483749", "maxChunkBytes"]),
    );
    // 1000 rows of 4 KiB strings under a 1 MiB batch limit: smaller batches, every row.
    let wide = strings_file(1000, 1000, 4096, false);
    case_checked(
        "wide rows: batches shrink to fit maxBatchBytes",
        "OK",
        || {
            read_with(
                &wide,
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        max_batch_bytes: 1 << 20,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
        |result| match result {
            Ok(r)
                if r.rows == 1000
                    && r.largest_batch_bytes <= 1 << 20
                    && r.planned_batch_size < 1000
                    && r.batches >= 1000 / r.planned_batch_size =>
            {
                Ok(())
            }
            other => Err(format!("{other:?}")),
        },
    );
    // Two 32 KiB values on 1000 rows: 64 KiB on disk (dictionary), 32 MiB decoded.
    case_checked(
        "dictionary bomb: a decoded batch over maxBatchBytes",
        "TOO_LARGE",
        || {
            read_with(
                &strings_file(1000, 2, 32 * 1024, true),
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        max_batch_bytes: 8 << 20,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
        says(&["8388608-byte batch limit", "maxBatchBytes"]),
    );
    case_checked(
        "one row over maxBatchBytes",
        "TOO_LARGE",
        || {
            read_with(
                &wide,
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        max_batch_bytes: 1000,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
        says(&["1000-byte batch limit", "maxBatchBytes"]),
    );
}

#[test]
fn checksums_are_verified_when_present() {
    case_checked(
        "page CRC mismatch (datapage_v1-corrupt-checksum)",
        "INVALID_FILE",
        || read(&parquet_testing("datapage_v1-corrupt-checksum.parquet")),
        says(&["checksum", "verifyChecksums"]),
    );
    case(
        "dictionary page CRC mismatch (rle-dict-uncompressed-corrupt-checksum)",
        "INVALID_FILE",
        || {
            read(&parquet_testing(
                "rle-dict-uncompressed-corrupt-checksum.parquet",
            ))
        },
    );
    case_checked(
        "verifyChecksums: false reads the corrupt-checksum file",
        "OK",
        || {
            read_with(
                &parquet_testing("datapage_v1-corrupt-checksum.parquet"),
                OpenOptions::default(),
                &ScanRequest {
                    limits: DecodeLimits {
                        verify_checksums: false,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            )
        },
        |result| match result {
            Ok(r) if r.rows == 5120 => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    for name in [
        "datapage_v1-snappy-compressed-checksum.parquet",
        "datapage_v1-uncompressed-checksum.parquet",
        "plain-dict-uncompressed-checksum.parquet",
        "rle-dict-snappy-checksum.parquet",
    ] {
        case(&format!("valid page CRCs verify ({name})"), "OK", || {
            read(&parquet_testing(name))
        });
    }
}

#[test]
fn invalid_utf8_in_string_columns_is_invalid() {
    case(
        "invalid UTF-8 in a plain string column",
        "INVALID_FILE",
        || read(&invalid_utf8_file(false)),
    );
    case(
        "invalid UTF-8 in a dictionary-encoded string column",
        "INVALID_FILE",
        || read(&invalid_utf8_file(true)),
    );
}

#[test]
fn dictionary_keys_past_a_fixed_width_dictionary_are_invalid() {
    // The patched arrow-rs gathers fixed-width dictionary values `W` bytes at a time
    // (crate/patches/parquet: `gather_of`). A key past the dictionary's end must be an error
    // that says so, not a read past the dictionary's buffer.
    let file = decimal_dictionary_file();
    case("a fixed-width dictionary, read whole", "OK", || read(&file));
    case_checked(
        "dictionary keys past a FIXED_LEN_BYTE_ARRAY dictionary's end",
        "INVALID_FILE",
        || {
            let body = first_data_page_body(&file);
            // RLE_DICTIONARY keys: their bit width (2: three values), then one bit-packed run
            // (a varint header with its low bit set) of 384 keys in 48 groups of 8.
            assert_eq!(file[body], 2, "2-bit keys at byte {body}");
            let (header, n) = varint(&file, body + 1);
            assert_eq!(
                header,
                (48 << 1) | 1,
                "one bit-packed run at byte {}",
                body + 1
            );
            let mut bad = file.to_vec();
            // The first four keys become 3, past the three values.
            bad[body + 1 + n] = 0xff;
            read(&Bytes::from(bad))
        },
        says(&["dictionary key 3 out of range", "3 values"]),
    );
    // Keys are unsigned 32-bit in the format and `i32` in arrow-rs: one of 2^31 or more reads as
    // negative, and must be refused the same way, not turned into an index.
    case_checked(
        "a dictionary key of 2^31, negative as i32",
        "INVALID_FILE",
        || {
            let body = first_data_page_body(&file);
            // 32-bit keys in one RLE run (a varint header with its low bit clear: 384 << 1)
            // of 0x8000_0000, written over the start of the 2-bit keys (98 bytes long).
            let run = [32, 0x80, 0x06, 0x00, 0x00, 0x00, 0x80];
            let mut bad = file.to_vec();
            bad[body..body + run.len()].copy_from_slice(&run);
            read(&Bytes::from(bad))
        },
        says(&["dictionary key -2147483648 out of range", "3 values"]),
    );
}

/// Where the body of the first data page of the file's first column starts (an uncompressed page:
/// for a required column, its values).
fn first_data_page_body(file: &Bytes) -> usize {
    let (_, metadata) = split_footer(file);
    let chunk = metadata.row_group(0).column(0);
    page_fields(file, chunk.data_page_offset() as usize).body_at
}

#[test]
fn unsupported_encodings_and_codecs_are_unsupported() {
    let file = int64_file(500, Compression::UNCOMPRESSED);
    case("unsupported codec (LZO)", "UNSUPPORTED", || {
        read(&edit_chunk(&file, 0, 0, |c| {
            c.set_compression(Compression::LZO)
        }))
    });
    case(
        "unsupported value encoding (BIT_PACKED data page)",
        "UNSUPPORTED",
        || {
            let (_, metadata) = split_footer(&file);
            let (start, _) = metadata.row_group(0).column(0).byte_range();
            let encoding_at = page_fields(&file, start as usize).encoding_at;
            let mut bad = file.to_vec();
            // Thrift encoding ids, zigzagged: PLAIN (0) becomes BIT_PACKED (4).
            assert_eq!(bad[encoding_at], 0, "PLAIN values");
            bad[encoding_at] = 8;
            read(&Bytes::from(bad))
        },
    );
}

#[test]
fn encrypted_files_are_encrypted() {
    for name in [
        "encrypt_columns_and_footer.parquet.encrypted",
        "encrypt_columns_and_footer_aad.parquet.encrypted",
        "encrypt_columns_and_footer_bloom_filter.parquet.encrypted",
        "encrypt_columns_and_footer_ctr.parquet.encrypted",
        "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
        "encrypt_columns_plaintext_footer.parquet.encrypted",
        "external_key_material_java.parquet.encrypted",
        "uniform_encryption.parquet.encrypted",
    ] {
        case(&format!("encrypted: {name}"), "ENCRYPTED_FILE", || {
            read(&parquet_testing(name))
        });
    }
}

/// The guards must not refuse valid files: every parquet-testing file that is not broken on
/// purpose reads, whole and through its page index (a window of rows).
#[test]
fn valid_files_pass_the_guards() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/parquet-testing/data/"
    );
    let refused = [
        "dict-page-offset-zero.parquet",
        "nation.dict-malformed.parquet",
        "large_string_map.brotli.parquet",
        "datapage_v1-corrupt-checksum.parquet",
        "rle-dict-uncompressed-corrupt-checksum.parquet",
    ];
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("parquet-testing")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".parquet") && !refused.contains(&n.as_str()))
        .collect();
    names.sort();
    let mut failures = Vec::new();
    for name in &names {
        let file = parquet_testing(name);
        let window = ScanRequest {
            offset: Some(7),
            limit: Some(20),
            ..Default::default()
        };
        for request in [ScanRequest::default(), window] {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                read_with(&file, OpenOptions::default(), &request)
            }));
            match outcome {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => failures.push(format!("{name}: {} {e}", e.code())),
                Err(_) => failures.push(format!("{name}: panicked")),
            }
        }
    }
    let ok = failures.is_empty() && names.len() > 50;
    record_case(
        SUITE,
        "file",
        "valid parquet-testing files pass the guards (whole and windowed)",
        ok,
        &if ok {
            format!("{} files read", names.len())
        } else {
            failures.join("; ")
        },
        names.len() as u64,
    );
    assert!(ok, "{} files, refused: {failures:#?}", names.len());
}
