//! A read whose selection ends inside a page decompresses that page only as far as its rows
//! reach (`crate/patches/parquet`, `file/page_prefix.rs`). These tests hold it to the answer a
//! whole read gives: every selection here is read by arrow-rs's push decoder from the file's
//! bytes and compared with the same rows taken from a read of everything.
//!
//! Files: written here with every encoding and level shape the prefix path handles (PLAIN
//! fixed-width and byte arrays, dictionary indices in bit-packed and RLE runs, nullable and
//! nested definition levels), and with those it leaves whole (booleans, FIXED_LEN_BYTE_ARRAY,
//! lists, v2's DELTA encodings), as v1 and v2 pages, with and without an offset index; and every
//! file of `parquet-testing` that reads. Filtered reads run with the predicate cache off, too
//! small for a batch, and large.

mod common;

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, ListArray,
    RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use arrow_select::concat::concat_batches;
use arrow_select::filter::filter_record_batch;
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, RowFilter, RowSelection, RowSelector,
};
use parquet::arrow::push_decoder::ParquetPushDecoderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::basic::Compression;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::DecodeResult;

use common::{write_parquet, Rng};

const ROWS: usize = 12_000;

fn batch() -> RecordBatch {
    let n = ROWS as i64;
    let ids: Vec<i64> = (0..n).collect();
    let maybe = |i: i64, every: i64| (i % every != 0).then_some(i);
    let inner = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from(ids.clone()))),
        (
            "n32",
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|&i| maybe(i, 7).map(|v| v as i32)),
            )),
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|&i| i as f64 * 0.5),
            )),
        ),
        (
            "text",
            Arc::new(StringArray::from_iter(ids.iter().map(|&i| {
                maybe(i, 5).map(|v| format!("{}-{}", "t".repeat((v % 37) as usize), v))
            }))),
        ),
        (
            "kind",
            Arc::new(StringArray::from_iter(
                ids.iter()
                    .map(|&i| maybe(i, 11).map(|v| format!("kind-{}", v % 13))),
            )),
        ),
        (
            // Runs of one value: RLE runs among the dictionary indices, not only bit-packed ones.
            "runs",
            Arc::new(StringArray::from_iter_values(
                ids.iter()
                    .map(|&i| format!("run-{}", (i / 37 + i / 1_000) % 5)),
            )),
        ),
        (
            "dec",
            Arc::new(
                Decimal128Array::from_iter(
                    ids.iter().map(|&i| maybe(i, 3).map(|v| v as i128 * 1001)),
                )
                .with_precision_and_scale(20, 2)
                .expect("decimal"),
            ),
        ),
        (
            // Required: arrow-rs checks a PLAIN page's length against its value count.
            "dec_req",
            Arc::new(
                Decimal128Array::from_iter_values(ids.iter().map(|&i| i as i128 * 7))
                    .with_precision_and_scale(20, 2)
                    .expect("decimal"),
            ),
        ),
        (
            "flag",
            Arc::new(BooleanArray::from_iter(
                ids.iter().map(|&i| Some(i % 3 == 0)),
            )),
        ),
        (
            "s",
            Arc::new(StructArray::new(
                inner.clone(),
                vec![Arc::new(Int32Array::from_iter(
                    ids.iter().map(|&i| maybe(i, 4).map(|v| v as i32)),
                )) as ArrayRef],
                Some(ids.iter().map(|&i| i % 9 != 0).collect()),
            )),
        ),
        (
            "list",
            Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
                ids.iter()
                    .map(|&i| Some(vec![Some(i as i32); (i % 4) as usize])),
            )),
        ),
    ];
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, a)| {
                Field::new(
                    *name,
                    a.data_type().clone(),
                    a.null_count() > 0 || *name == "s",
                )
            })
            .collect::<Vec<_>>(),
    ));
    RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect()).expect("batch")
}

/// The sample as written with `compression`, pages of ~2,400 rows (more than the 1,024
/// dictionary indices decoded ahead; none aligned to the selections' ends), row groups of
/// 5,000 rows; v1 or v2 pages; with or without an offset index.
fn sample(compression: Compression, v2: bool, offset_index: bool) -> Bytes {
    let mut props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(5_000))
        .set_data_page_row_count_limit(2_333)
        .set_write_batch_size(111)
        .set_statistics_enabled(if offset_index {
            EnabledStatistics::Page
        } else {
            EnabledStatistics::Chunk
        })
        .set_offset_index_disabled(!offset_index)
        .set_column_dictionary_enabled("id".into(), false)
        .set_column_dictionary_enabled("text".into(), false)
        .set_column_dictionary_enabled("n32".into(), false)
        .set_column_dictionary_enabled("dec_req".into(), false);
    if v2 {
        props = props.set_writer_version(WriterVersion::PARQUET_2_0);
    }
    write_parquet(&batch(), props.build())
}

fn metadata(file: &Bytes) -> ArrowReaderMetadata {
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(file)
        .expect("footer");
    ArrowReaderMetadata::try_new(Arc::new(meta), ArrowReaderOptions::new()).expect("metadata")
}

/// Every row of `file`, read by the push decoder with `selection` and `limit`, concatenated.
fn read(
    file: &Bytes,
    meta: &ArrowReaderMetadata,
    selection: Option<RowSelection>,
    limit: Option<usize>,
) -> parquet::errors::Result<RecordBatch> {
    read_with(
        ParquetPushDecoderBuilder::new_with_metadata(meta.clone()),
        file,
        meta,
        selection,
        limit,
    )
}

/// [`read`] from `builder`.
fn read_with(
    builder: ParquetPushDecoderBuilder,
    file: &Bytes,
    meta: &ArrowReaderMetadata,
    selection: Option<RowSelection>,
    limit: Option<usize>,
) -> parquet::errors::Result<RecordBatch> {
    let mut builder = builder.with_batch_size(777);
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    if let Some(limit) = limit {
        builder = builder.with_limit(limit);
    }
    let mut decoder = builder.build()?;
    let mut batches = Vec::new();
    loop {
        match decoder.try_decode()? {
            DecodeResult::NeedsData(ranges) => {
                let data = ranges
                    .iter()
                    .map(|r| file.slice(r.start as usize..r.end as usize))
                    .collect();
                decoder.push_ranges(ranges, data)?;
            }
            DecodeResult::Data(batch) => batches.push(batch),
            DecodeResult::Finished => break,
        }
    }
    Ok(concat_batches(meta.schema(), &batches).expect("concat"))
}

/// The rows of `whole` that `selection` (and then `limit`) picks.
fn expected(whole: &RecordBatch, selection: &RowSelection, limit: Option<usize>) -> RecordBatch {
    let mut mask = Vec::with_capacity(whole.num_rows());
    for s in selection.iter() {
        mask.extend(std::iter::repeat_n(!s.skip, s.row_count));
    }
    mask.resize(whole.num_rows(), false);
    let picked = filter_record_batch(whole, &BooleanArray::from(mask)).expect("filter");
    match limit {
        Some(limit) => picked.slice(0, limit.min(picked.num_rows())),
        None => picked,
    }
}

/// Selections ending inside pages: limits at and around page, batch and index-buffer edges;
/// runs of skips and selects; single rows (lookups).
fn selections(rows: usize, seed: u64) -> Vec<(RowSelection, Option<usize>)> {
    let mut out = Vec::new();
    let all = || RowSelection::from(vec![RowSelector::select(rows)]);
    for k in [
        1, 2, 99, 100, 1_000, 1_023, 1_024, 1_025, 2_000, 2_330, 2_331, 2_332, 2_333, 2_334, 2_442,
        3_500, 4_999, 5_000, 5_001, 8_000,
    ] {
        if k <= rows {
            out.push((all(), Some(k)));
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..24 {
        let mut selectors = Vec::new();
        let mut at = 0;
        while at < rows && !rng.chance(15) {
            let run = (1 + rng.below(2_500) as usize).min(rows - at);
            selectors.push(if rng.chance(50) {
                RowSelector::skip(run)
            } else {
                RowSelector::select(run)
            });
            at += run;
        }
        if rows > 0 && selectors.iter().all(|s| s.skip) {
            let row = rng.below(rows as u64) as usize;
            selectors = vec![RowSelector::skip(row), RowSelector::select(1)];
        }
        let limit = rng.chance(30).then(|| 1 + rng.below(900) as usize);
        out.push((RowSelection::from(selectors), limit));
    }
    out
}

fn check_file(name: &str, file: &Bytes, seed: u64) -> usize {
    let meta = metadata(file);
    let Ok(whole) = read(file, &meta, None, None) else {
        return 0;
    };
    let mut checked = 0;
    for (selection, limit) in selections(whole.num_rows(), seed) {
        let got = read(file, &meta, Some(selection.clone()), limit)
            .unwrap_or_else(|e| panic!("{name}: {selection:?} limit {limit:?}: {e}"));
        let want = expected(&whole, &selection, limit);
        assert_eq!(got, want, "{name}: {selection:?} limit {limit:?}");
        checked += 1;
    }
    checked
}

#[test]
fn a_selection_ending_inside_a_page_reads_what_a_whole_read_gives() {
    for (compression, label) in [
        (Compression::SNAPPY, "snappy"),
        (Compression::UNCOMPRESSED, "uncompressed"),
        (Compression::ZSTD(Default::default()), "zstd"),
    ] {
        for v2 in [false, true] {
            for offset_index in [true, false] {
                let name = format!("{label} v2={v2} offset_index={offset_index}");
                let file = sample(compression, v2, offset_index);
                assert!(check_file(&name, &file, 7) > 30, "{name}");
            }
        }
    }
}

#[test]
fn every_parquet_testing_file_reads_the_same_rows_with_a_selection() {
    let names = common::parquet_testing_names();
    let mut read_files = 0;
    let mut snappy_files = 0;
    for (i, name) in names.iter().enumerate() {
        let file = common::parquet_testing(name);
        let Ok(meta) = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Optional)
            .parse_and_finish(&file)
        else {
            continue;
        };
        if ArrowReaderMetadata::try_new(Arc::new(meta.clone()), ArrowReaderOptions::new()).is_err()
        {
            continue;
        }
        if check_file(name, &file, 100 + i as u64) > 0 {
            read_files += 1;
            let snappy = meta
                .row_groups()
                .iter()
                .flat_map(|rg| rg.columns())
                .any(|c| c.compression() == Compression::SNAPPY);
            snappy_files += usize::from(snappy);
        }
    }
    assert!(read_files > 40, "only {read_files} files read");
    eprintln!("{read_files} files read, {snappy_files} with snappy chunks");
    assert!(snappy_files >= 12, "only {snappy_files} snappy files read");
}

/// A filter on `id` (rows whose id is in `keys`, as a lookup is), with every column projected.
fn lookup(
    file: &Bytes,
    meta: &ArrowReaderMetadata,
    keys: &[i64],
    cache_bytes: usize,
    limit: Option<usize>,
) -> RecordBatch {
    let schema = meta.parquet_schema();
    let keys = keys.to_vec();
    let predicate = ArrowPredicateFn::new(ProjectionMask::leaves(schema, [0]), move |batch| {
        let ids = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("id");
        Ok(BooleanArray::from_iter(
            ids.iter()
                .map(|id| Some(id.is_some_and(|id| keys.contains(&id)))),
        ))
    });
    let builder = ParquetPushDecoderBuilder::new_with_metadata(meta.clone())
        .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
        .with_max_predicate_cache_size(cache_bytes);
    read_with(builder, file, meta, None, limit).expect("lookup")
}

#[test]
fn a_filtered_read_reads_what_a_whole_read_gives_with_and_without_the_predicate_cache() {
    for (v2, offset_index) in [(false, true), (false, false), (true, true)] {
        let file = sample(Compression::SNAPPY, v2, offset_index);
        let meta = metadata(&file);
        let whole = read(&file, &meta, None, None).expect("whole");
        let ids = whole
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("id");
        for keys in [
            vec![0],
            vec![3],
            vec![2_400],
            vec![5_001, 5_002, 7_777],
            vec![11_999],
            (100..3_000).step_by(97).collect(),
        ] {
            let mask = BooleanArray::from_iter(
                ids.iter().map(|id| Some(keys.contains(&id.unwrap_or(-1)))),
            );
            let want = filter_record_batch(&whole, &mask).expect("filter");
            // A cache too small for a batch: the output reads whole batches past the selection.
            for cache_bytes in [0, 1_000, 64 << 20] {
                for limit in [None, Some(1), Some(5)] {
                    let got = lookup(&file, &meta, &keys, cache_bytes, limit);
                    let want =
                        limit.map_or(want.clone(), |l| want.slice(0, l.min(want.num_rows())));
                    assert_eq!(got, want, "v2={v2} index={offset_index} keys {keys:?} cache {cache_bytes} limit {limit:?}");
                }
            }
        }
    }
}

// ---- Pages fetched in part: parquet-skim's own read path (plan → task), not arrow-rs alone ----

use parquet_skim_core::{plan_scan, ScanRequest, TaskDecoder, TaskRun};

/// A scan's batches as one batch (`None` when it returned no rows).
fn concat(batches: &[RecordBatch]) -> Option<RecordBatch> {
    let first = batches.first()?;
    Some(concat_batches(&first.schema(), batches).expect("concat"))
}

/// Reads `offset`/`limit` windows of `file` through the plan and its tasks, pushing only the
/// planned ranges (pages in part as planned), and compares each with the same rows of a scan of
/// everything. Returns the pages planned in part and the ranges the tasks asked for beyond the
/// plan.
fn check_windows(name: &str, file: &Bytes, windows: &[(u64, u64)]) -> (usize, usize) {
    let (parquet, _) = common::open(file, 64 * 1024);
    let Some(whole) = concat(&common::scan(&parquet, file, &ScanRequest::default())) else {
        return (0, 0);
    };
    let (mut in_part, mut extra) = (0, 0);
    for &(offset, limit) in windows {
        let request = ScanRequest {
            offset: Some(offset),
            limit: Some(limit),
            ..Default::default()
        };
        let plan = plan_scan(&parquet, &request).expect("plan");
        in_part += plan
            .tasks
            .iter()
            .map(|t| t.spec.pages_in_part.len())
            .sum::<usize>();
        let (batches, asked) = common::scan_with_io(&parquet, file, &request, true);
        extra += asked.len();
        let from = (offset as usize).min(whole.num_rows());
        let want = whole.slice(from, (limit as usize).min(whole.num_rows() - from));
        let got = concat(&batches);
        if want.num_rows() == 0 {
            assert!(got.is_none(), "{name} offset {offset} limit {limit}");
        } else {
            assert_eq!(
                got.as_ref(),
                Some(&want),
                "{name} offset {offset} limit {limit}"
            );
        }
    }
    (in_part, extra)
}

const WINDOWS: [(u64, u64); 9] = [
    (0, 1),
    (0, 100),
    (0, 500),
    (37, 100),
    (2_300, 40),
    (4_990, 20),
    (5_000, 100),
    (11_990, 100),
    (0, 1_200),
];

#[test]
fn pages_fetched_in_part_read_what_whole_pages_give() {
    for v2 in [false, true] {
        let name = format!("snappy v2={v2}");
        let (in_part, extra) =
            check_windows(&name, &sample(Compression::SNAPPY, v2, true), &WINDOWS);
        // The test reads pages in part, and their planned bytes sufficed.
        assert!(in_part >= 5, "{name}: {in_part} pages in part");
        // arrow-rs stores a v2 page uncompressed when snappy does not shrink it (here the
        // dictionary indices), and such a page is read whole: fetched again, and read right.
        if !v2 {
            assert_eq!(extra, 0, "{name}: the parts planned were too short");
        }
    }
    // Codecs and files without an offset index plan every page whole.
    for (compression, offset_index) in [
        (Compression::ZSTD(Default::default()), true),
        (Compression::UNCOMPRESSED, true),
        (Compression::SNAPPY, false),
    ] {
        let file = sample(compression, false, offset_index);
        let (in_part, _) = check_windows(&format!("{compression:?}"), &file, &WINDOWS);
        assert_eq!(in_part, 0, "{compression:?} offset_index={offset_index}");
    }
}

#[test]
fn a_part_too_short_is_fetched_whole_and_the_task_starts_over() {
    let file = sample(Compression::SNAPPY, false, true);
    let (parquet, _) = common::open(&file, 64 * 1024);
    let whole = concat(&common::scan(&parquet, &file, &ScanRequest::default())).expect("rows");
    let request = ScanRequest {
        limit: Some(300),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    let scan = plan.bind(&parquet).expect("bind");
    let task = &plan.tasks[0];
    let pages = &task.spec.pages_in_part;
    assert!(pages.len() >= 3, "{pages:?}");
    // Parts cut inside the header (1, 8 bytes), just past it, and at a few hundred bytes.
    for cut in [1u64, 8, 40, 300] {
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
        let mut rests = Vec::new();
        for r in &task.output_ranges {
            let end = match pages.iter().find(|p| p.start == r.start) {
                Some(page) => {
                    let end = (r.start + cut).min(r.end);
                    rests.push(end..page.end);
                    end
                }
                None => r.end,
            };
            let range = r.start..end;
            decoder
                .push(range.clone(), common::slice(&file, &range))
                .expect("push");
        }
        let output = match decoder.run().expect("run") {
            TaskRun::NeedsRanges(asked) => {
                // The rest of every page in part, once; then the task completes from them.
                assert_eq!(asked, rests, "cut {cut}");
                for r in asked {
                    decoder
                        .push(r.clone(), common::slice(&file, &r))
                        .expect("push");
                }
                match decoder.run().expect("run") {
                    TaskRun::Done(output) => output,
                    TaskRun::NeedsRanges(more) => panic!("cut {cut}: asked again for {more:?}"),
                }
            }
            TaskRun::Done(_) => panic!("cut {cut}: a {cut}-byte part read without its rest"),
        };
        assert_eq!(output.rows, 300, "cut {cut}");
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(output.ipc), None)
                .expect("ipc");
        let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
        assert_eq!(concat(&batches), Some(whole.slice(0, 300)), "cut {cut}");
    }
}

/// A page whose header stores a CRC is verified whole before a row of it is read: the rest of
/// the page is fetched, and a corrupt byte past the planned part fails the read. The file:
/// pyarrow 26, one snappy page of 4,000 random INT32 values with its CRC and an offset index
/// (`pq.write_table(t, path, compression="snappy", write_page_checksum=True,
/// write_page_index=True, use_dictionary=False, write_statistics=False)`; arrow-rs writes no
/// CRCs, and parquet-testing's files with CRCs are pages too small to fetch in part).
#[test]
fn a_page_with_a_checksum_is_verified_whole() {
    let file = Bytes::from_static(include_bytes!("data/crc.snappy.parquet"));
    let (parquet, _) = common::open(&file, 64 * 1024);
    let request = ScanRequest {
        limit: Some(10),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    let page = plan.tasks[0]
        .spec
        .pages_in_part
        .first()
        .copied()
        .expect("a page in part");
    let (batches, asked) = common::scan_with_io(&parquet, &file, &request, true);
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 10);
    assert!(asked.iter().any(|r| r.end == page.end), "{asked:?}");
    // Flip the page's last byte: the whole page is checked, so the read fails.
    let mut corrupt = file.to_vec();
    corrupt[page.end as usize - 1] ^= 0x55;
    let corrupt = Bytes::from(corrupt);
    let scan = plan.bind(&parquet).expect("bind");
    let task = &plan.tasks[0];
    let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
    for r in &task.output_ranges {
        let range = r.start..r.end;
        decoder
            .push(range.clone(), common::slice(&corrupt, &range))
            .expect("push");
    }
    let error = loop {
        match decoder.run() {
            Ok(TaskRun::NeedsRanges(asked)) => {
                for r in asked {
                    decoder
                        .push(r.clone(), common::slice(&corrupt, &r))
                        .expect("push");
                }
            }
            Ok(TaskRun::Done(_)) => panic!("a corrupt page read as valid"),
            Err(error) => break error.to_string(),
        }
    };
    assert!(error.contains("fails its checksum"), "{error}");
}

/// A restart after batches were decoded: the first page's rows and 7 more in batches of 1,000
/// read the first page (~2,300 rows) whole and the second's first 7 rows in part; cut short, the
/// part fails in the third batch, after two were written, and the task's output starts over (it
/// would hold 2,000 rows twice without).
#[test]
fn a_restart_after_batches_were_decoded_starts_the_output_over() {
    let file = sample(Compression::SNAPPY, false, true);
    let (parquet, _) = common::open(&file, 64 * 1024);
    let whole = concat(&common::scan(&parquet, &file, &ScanRequest::default())).expect("rows");
    // The second page of `id` starts at a multiple of the writer's batch (111 rows).
    let meta = metadata(&file);
    let index = meta.metadata().page_index().expect("page index");
    let pages = index.offset_index(0, 0).expect("offset index");
    let second = pages.page_locations()[1].first_row_index as u64;
    let limit = second + 7;
    let request = ScanRequest {
        limit: Some(limit),
        batch_size: Some(1_000),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    let scan = plan.bind(&parquet).expect("bind");
    let task = &plan.tasks[0];
    assert!(!task.spec.pages_in_part.is_empty());
    let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
    for r in &task.output_ranges {
        let in_part = task.spec.pages_in_part.iter().any(|p| p.start == r.start);
        let end = if in_part { r.start + 30 } else { r.end };
        decoder
            .push(r.start..end, common::slice(&file, &(r.start..end)))
            .expect("push");
    }
    let TaskRun::NeedsRanges(asked) = decoder.run().expect("run") else {
        panic!("30-byte parts read without their rests");
    };
    for r in asked {
        decoder
            .push(r.clone(), common::slice(&file, &r))
            .expect("push");
    }
    let TaskRun::Done(output) = decoder.run().expect("run") else {
        panic!("asked twice");
    };
    assert_eq!(output.rows, limit);
    assert_eq!(
        output.pages_read_again,
        task.spec.pages_in_part.len() as u64
    );
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(output.ipc), None)
        .expect("ipc");
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
    assert_eq!(concat(&batches), Some(whole.slice(0, limit as usize)));
}
