//! Files without an offset index: the pages walked from their headers (`page_layout`) give the
//! same locations an offset index would, first rows read only the pages they need, and every
//! answer is the one whole column chunks give.

mod common;

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet_skim_core::page_layout::PageLayouts;
use parquet_skim_core::pushed_bytes::PushedBytes;
use parquet_skim_core::{
    plan_scan, plan_scan_with, BoundScan, ParquetFile, ReadPlan, ScanRequest, TaskDecoder, TaskRun,
};

use common::{open, slice};

const ROWS: i64 = 8_000;
const ROWS_PER_PAGE: usize = 250;

/// id (unique, plain), kind (8 values: dictionary-encoded), text (120 bytes a row, plain), tags
/// (a list: not walkable), in
/// row groups of 4,000 rows and pages of 250; with or without an offset index.
fn file(offset_index: bool) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new_list("tags", Field::new_list_field(DataType::Int64, true), false),
    ]));
    let ids: Vec<i64> = (0..ROWS).collect();
    let tags = ListArray::from_iter_primitive::<Int64Type, _, _>(
        ids.iter().map(|i| Some(vec![Some(*i), Some(i % 3)])),
    );
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("kind-{}", i % 8)),
            )),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("{i:0>120}")),
            )),
            Arc::new(tags),
        ],
    )
    .expect("batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(4_000))
        .set_data_page_row_count_limit(ROWS_PER_PAGE)
        .set_write_batch_size(ROWS_PER_PAGE)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_column_dictionary_enabled("id".into(), false)
        .set_column_dictionary_enabled("text".into(), false)
        .set_offset_index_disabled(!offset_index)
        .build();
    common::write_parquet(&batch, props)
}

/// Walks as the JS side does (`file.ts`): ask, fetch, push, at most `rounds` times; then plans.
/// Returns the plan, the bytes read for walking and the rounds it took.
fn walk_and_plan(
    parquet: &ParquetFile,
    bytes: &Bytes,
    request: &ScanRequest,
    rounds: usize,
) -> (ReadPlan, PushedBytes, usize) {
    let mut layouts = PageLayouts::default();
    let mut held = PushedBytes::default();
    let mut used = 0;
    for _ in 0..rounds {
        let wanted = layouts.wanted(parquet, request).expect("wanted");
        if wanted.is_empty() {
            break;
        }
        used += 1;
        for r in wanted {
            let data = slice(bytes, &(r.start..r.end));
            layouts.insert(r.start, data.clone());
            held.insert(r.start, data);
        }
    }
    layouts.forget_bytes();
    let plan = plan_scan_with(parquet, request, &PushedBytes::default(), &layouts).expect("plan");
    (plan, held, used)
}

/// Runs `plan`'s tasks from `held` and the file; returns the batches and the bytes fetched
/// beyond `held`.
fn run(
    parquet: &ParquetFile,
    bytes: &Bytes,
    plan: &ReadPlan,
    held: &PushedBytes,
) -> (Vec<RecordBatch>, u64) {
    let mut fetched = 0;
    let mut batches = Vec::new();
    let scan = plan.bind(parquet).expect("bind");
    for task in &plan.tasks {
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
        let ranges: Vec<Range<u64>> = task.output_ranges.iter().map(|r| r.start..r.end).collect();
        for r in held.missing(&ranges) {
            fetched += r.end - r.start;
        }
        for r in &ranges {
            decoder.push(r.clone(), slice(bytes, r)).expect("push");
        }
        let output = match decoder.run().expect("run") {
            TaskRun::Done(output) => output,
            TaskRun::NeedsRanges(r) => panic!("unplanned ranges {r:?}"),
        };
        let reader = StreamReader::try_new(std::io::Cursor::new(output.ipc), None).expect("ipc");
        batches.extend(reader.map(|b| b.expect("batch")));
    }
    (batches, fetched)
}

/// Small test files: every chunk is worth walking.
fn request(columns: &[&str], offset: u64, limit: u64) -> ScanRequest {
    ScanRequest {
        columns: Some(columns.iter().map(|c| (*c).to_string()).collect()),
        offset: Some(offset),
        limit: Some(limit),
        page_walk_min_bytes: Some(0),
        ..Default::default()
    }
}

fn concat(batches: &[RecordBatch]) -> Option<RecordBatch> {
    let schema = batches.first()?.schema();
    Some(arrow_select::concat::concat_batches(&schema, batches).expect("concat"))
}

#[test]
fn walked_pages_are_the_writers_offset_index() {
    let plain = file(false);
    let indexed = file(true);
    let (parquet, _) = open(&plain, 64 * 1024);
    let (twin, _) = open(&indexed, 64 * 1024);
    assert!(parquet.metadata().page_index().is_none());
    // With every byte at hand the walks run to the chunks' ends.
    let mut layouts = PageLayouts::default();
    layouts.insert(0, plain.clone());
    let req = request(&["id", "kind"], 0, 10);
    layouts.wanted(&parquet, &req).expect("wanted");
    let plan = plan_scan_with(&parquet, &req, &PushedBytes::default(), &layouts).expect("plan");
    let learned = plan.tasks[0]
        .spec
        .learned_pages
        .clone()
        .expect("learned pages");
    let index = twin.metadata().page_index().expect("twin has a page index");
    assert_eq!(learned.len(), 2);
    for pages in &learned {
        let locations = index
            .offset_index(0, pages.leaf)
            .expect("offset index")
            .page_locations();
        let starts: Vec<u64> = locations.iter().map(|l| l.offset as u64).collect();
        let rows: Vec<u64> = locations.iter().map(|l| l.first_row_index as u64).collect();
        assert_eq!(pages.starts, starts, "leaf {}", pages.leaf);
        assert_eq!(pages.first_rows, rows, "leaf {}", pages.leaf);
        assert_eq!(pages.rows, 4_000);
        let (start, len) = parquet
            .metadata()
            .row_group(0)
            .column(pages.leaf)
            .byte_range();
        assert_eq!(pages.end, start + len);
    }
    // The task's ranges are the twin's: the dictionary, then the first page.
    assert_eq!(
        plan.tasks[0].output_ranges,
        plan_scan(&twin, &req).expect("twin plan").tasks[0].output_ranges
    );
}

#[test]
fn first_rows_read_their_pages_not_whole_chunks() {
    let plain = file(false);
    let (parquet, _) = open(&plain, 64 * 1024);
    // Row groups hold 4,000 rows: 3,990 + 20 ends 10 rows into the second one.
    for (offset, limit) in [
        (0, 100),
        (700, 300),
        (3_990, 20),
        (100, 1_500),
        (2_500, 100),
    ] {
        let req = request(&["id", "kind", "text"], offset, limit);
        let (plan, held, rounds) = walk_and_plan(&parquet, &plain, &req, 3);
        // The first plan says whether a walk can help: the caller asks for one only then.
        let first = plan_scan(&parquet, &req).expect("plan");
        assert_eq!(
            first.learns.pages,
            rounds > 0,
            "offset {offset} limit {limit}"
        );
        assert!(!first.learns.blooms);
        let (batches, fetched) = run(&parquet, &plain, &plan, &held);
        let (expected, _) = common::scan_with_io(&parquet, &plain, &req, true);
        assert_eq!(
            concat(&batches),
            concat(&expected),
            "offset {offset} limit {limit}"
        );
        let whole: u64 = plan_scan(&parquet, &req)
            .expect("plan")
            .tasks
            .iter()
            .flat_map(|t| &t.output_ranges)
            .map(|r| r.end - r.start)
            .sum();
        let read = held.bytes() + fetched;
        if offset % 4_000 + limit <= 1_000 {
            assert!(rounds >= 1, "offset {offset}: walked");
            // The pages before the last row wanted, a quarter more, and the ask's granularity.
            let most = if limit <= 300 {
                whole / 2
            } else {
                whole * 3 / 4
            };
            assert!(
                read < most,
                "offset {offset} limit {limit}: read {read} of {whole}"
            );
        } else if offset + limit <= 4_000 {
            // Past the first quarter of the row group: whole chunks, as before.
            assert_eq!(rounds, 0, "offset {offset}");
            assert_eq!(fetched, whole);
        }
    }
    // With an offset index there is nothing to walk; with a filter, no rows to walk to.
    let indexed = file(true);
    let (parquet, _) = open(&indexed, 64 * 1024);
    let plan = plan_scan(&parquet, &request(&["id", "kind", "text"], 0, 100)).expect("plan");
    assert!(!plan.learns.pages);
    let (parquet, _) = open(&plain, 64 * 1024);
    let filtered = ScanRequest {
        filter: Some(parquet_skim_core::parse_sql("id < 50").expect("sql")),
        ..request(&["id", "kind", "text"], 0, 100)
    };
    let plan = plan_scan(&parquet, &filtered).expect("plan");
    assert!(!plan.learns.pages && !plan.learns.blooms);
}

#[test]
fn row_groups_too_small_to_pay_for_a_round_trip_are_read_whole() {
    let plain = file(false);
    let (parquet, _) = open(&plain, 64 * 1024);
    let walkable = request(&["id", "text"], 0, 10);
    let chunks: u64 = [0, 2]
        .iter()
        .map(|&leaf| {
            parquet
                .metadata()
                .row_group(0)
                .column(leaf)
                .compressed_size() as u64
        })
        .sum();
    let threshold = |bytes| ScanRequest {
        page_walk_min_bytes: Some(bytes),
        ..walkable.clone()
    };
    let mut layouts = PageLayouts::default();
    let text = parquet.metadata().row_group(0).column(2).compressed_size() as u64;
    let wanted = layouts.wanted(&parquet, &threshold(text)).expect("wanted");
    assert_eq!(wanted.len(), 2, "both chunks are walked: {wanted:?}");
    assert!(layouts
        .wanted(&parquet, &threshold(chunks + 1))
        .expect("wanted")
        .is_empty());
    let (plan, _, rounds) = walk_and_plan(&parquet, &plain, &threshold(chunks + 1), 3);
    assert_eq!(rounds, 0);
    assert_eq!(plan.tasks[0].spec.learned_pages, None);
}

#[test]
fn chunks_too_small_to_count_are_read_in_the_walks_round() {
    let plain = file(false);
    let (parquet, _) = open(&plain, 64 * 1024);
    let size = |leaf: usize| {
        parquet
            .metadata()
            .row_group(0)
            .column(leaf)
            .compressed_size() as u64
    };
    // `text` alone reaches the threshold, `id` counts too, `kind` (dictionary indices of 8
    // values) is under a sixteenth of it.
    let threshold = size(2);
    assert!(size(0) >= threshold / 16 && size(1) < threshold / 16);
    let req = ScanRequest {
        page_walk_min_bytes: Some(threshold),
        ..request(&["id", "kind", "text"], 0, 100)
    };
    let (plan, held, rounds) = walk_and_plan(&parquet, &plain, &req, 3);
    assert_eq!(rounds, 1);
    let (batches, fetched) = run(&parquet, &plain, &plan, &held);
    let (expected, _) = common::scan_with_io(&parquet, &plain, &req, true);
    assert_eq!(concat(&batches), concat(&expected));
    assert_eq!(fetched, 0, "`kind` was left for after planning");
    let learned = plan.tasks[0]
        .spec
        .learned_pages
        .clone()
        .expect("learned pages");
    assert_eq!(
        learned.iter().map(|l| l.leaf).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    // Whole: its one read held every page.
    assert_eq!(
        learned[1].end,
        size(1) + parquet.metadata().row_group(0).column(1).byte_range().0
    );

    // A row group the counted chunks do not pay for is still not walked, small chunks or not.
    let req = ScanRequest {
        page_walk_min_bytes: Some(size(0) + size(2) + 1),
        ..req
    };
    let (plan, _, rounds) = walk_and_plan(&parquet, &plain, &req, 3);
    assert_eq!(rounds, 0);
    assert_eq!(plan.tasks[0].spec.learned_pages, None);
}

#[test]
fn lists_and_unreadable_headers_are_read_whole() {
    let plain = file(false);
    let (parquet, _) = open(&plain, 64 * 1024);
    let req = request(&["id", "tags"], 0, 10);
    let tags = 3;
    let (plan, held, rounds) = walk_and_plan(&parquet, &plain, &req, 3);
    let learned = plan.tasks[0]
        .spec
        .learned_pages
        .clone()
        .expect("learned pages");
    assert_eq!(learned.iter().map(|l| l.leaf).collect::<Vec<_>>(), vec![0]);
    assert!(learned.iter().all(|l| l.leaf != tags));
    let (batches, fetched) = run(&parquet, &plain, &plan, &held);
    let (expected, _) = common::scan_with_io(&parquet, &plain, &req, true);
    assert_eq!(concat(&batches), concat(&expected));
    // The list is read whole in the walk's one round, beside `id`'s first page: the task
    // fetches nothing more.
    assert_eq!(rounds, 1);
    assert_eq!(fetched, 0, "the list's chunk was left for after planning");
    let (start, len) = parquet.metadata().row_group(0).column(tags).byte_range();
    let whole = std::iter::once(start..start + len).collect::<Vec<_>>();
    assert!(held.missing(&whole).is_empty(), "the list's chunk is held");

    // Garbage where `id`'s first header should be: its walk stops, the chunk is read whole.
    let mut broken = plain.to_vec();
    let (start, len) = parquet.metadata().row_group(0).column(0).byte_range();
    broken[start as usize..start as usize + 64].fill(0xff);
    let broken = Bytes::from(broken);
    let (plan, _, _) = walk_and_plan(&parquet, &broken, &request(&["id"], 0, 10), 3);
    assert_eq!(plan.tasks[0].spec.learned_pages, None);
    let ranges: Vec<(u64, u64)> = plan.tasks[0]
        .output_ranges
        .iter()
        .map(|r| (r.start, r.end))
        .collect();
    assert_eq!(ranges, vec![(start, start + len)]);
}

#[test]
fn a_list_chunk_over_the_whole_ask_is_left_for_its_task() {
    use parquet_skim_core::page_layout::MAX_WHOLE_ASK;
    // One row group: `id` (walked) and a list of incompressible integers over MAX_WHOLE_ASK.
    let rows = 300_000i64;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new_list("tags", Field::new_list_field(DataType::Int64, true), false),
    ]));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state as i64
    };
    let tags = ListArray::from_iter_primitive::<Int64Type, _, _>(
        (0..rows).map(|_| Some((0..4).map(|_| Some(next())).collect::<Vec<_>>())),
    );
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef,
            Arc::new(tags),
        ],
    )
    .expect("batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows as usize))
        .set_dictionary_enabled(false)
        .set_offset_index_disabled(true)
        .build();
    let bytes = common::write_parquet(&batch, props);
    let (parquet, _) = open(&bytes, 64 * 1024);
    let (start, len) = parquet.metadata().row_group(0).column(1).byte_range();
    assert!(len > MAX_WHOLE_ASK, "the list chunk holds {len} bytes");
    let req = request(&["id", "tags"], 0, 10);
    let (plan, held, rounds) = walk_and_plan(&parquet, &bytes, &req, 3);
    assert_eq!(rounds, 1);
    let whole = std::iter::once(start..start + len).collect::<Vec<_>>();
    assert_eq!(
        held.missing(&whole),
        whole,
        "the walk read none of the list"
    );
    let (batches, fetched) = run(&parquet, &bytes, &plan, &held);
    assert!(
        fetched >= len,
        "the task read the list whole: {fetched} bytes"
    );
    let (expected, _) = common::scan_with_io(&parquet, &bytes, &req, true);
    assert_eq!(concat(&batches), concat(&expected));
}

#[test]
fn a_header_lying_about_its_rows_fails_the_task_instead_of_reading_the_rest() {
    let plain = file(false);
    let (parquet, _) = open(&plain, 64 * 1024);
    let req = request(&["id"], 0, 300);
    let (mut plan, held, _) = walk_and_plan(&parquet, &plain, &req, 3);
    let scan = BoundScan::try_new(&parquet, plan.scan.clone()).expect("bind");
    let task = &mut plan.tasks[0];
    let pages = &mut task.spec.learned_pages.as_mut().expect("learned")[0];
    // Claim the first page holds all 300 rows: the decoder runs out of pages it has bytes for.
    pages.starts.truncate(1);
    pages.first_rows.truncate(1);
    pages.end = pages.starts[0] + (task.output_ranges[0].end - task.output_ranges[0].start);
    pages.rows = 300;
    task.output_ranges.truncate(1);
    let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
    for r in &task.output_ranges {
        decoder
            .push(r.start..r.end, slice(&plain, &(r.start..r.end)))
            .expect("push");
    }
    let _ = held;
    let outcome = decoder.run();
    assert!(
        matches!(outcome, Err(_) | Ok(TaskRun::NeedsRanges(_))),
        "a lying header must not decode: {outcome:?}"
    );
}

#[test]
fn parquet_testing_slices_match_whole_chunk_reads() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/parquet-testing/data"
    );
    let mut walked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("parquet-testing")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    entries.sort();
    for path in entries {
        let bytes = Bytes::from(std::fs::read(&path).expect("read"));
        let Ok(parquet) = std::panic::catch_unwind(|| open(&bytes, 1 << 20).0) else {
            continue;
        };
        let rows: i64 = parquet
            .metadata()
            .row_groups()
            .iter()
            .map(|r| r.num_rows())
            .sum();
        for (offset, limit) in [(0, 1), (0, 7), (3, 5), (rows as u64 / 5, 11)] {
            let req = ScanRequest {
                offset: Some(offset),
                limit: Some(limit),
                page_walk_min_bytes: Some(0),
                ..Default::default()
            };
            let Ok(whole_plan) = plan_scan(&parquet, &req) else {
                continue;
            };
            let (plan, held, rounds) = walk_and_plan(&parquet, &bytes, &req, 3);
            walked += usize::from(rounds > 0);
            let name = path.display();
            let walked_out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&parquet, &bytes, &plan, &held).0
            }));
            let whole_out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&parquet, &bytes, &whole_plan, &PushedBytes::default()).0
            }));
            match (walked_out, whole_out) {
                (Ok(a), Ok(b)) => assert_eq!(
                    concat(&a),
                    concat(&b),
                    "{name} offset {offset} limit {limit}"
                ),
                (Err(_), Err(_)) => {}
                (a, b) => panic!(
                    "{name} offset {offset} limit {limit}: walked ok {}, whole ok {}",
                    a.is_ok(),
                    b.is_ok()
                ),
            }
        }
    }
    assert!(walked > 20, "only {walked} slices were walked");
}

#[test]
fn without_an_offset_index_one_match_reads_whole_output_chunks_unless_its_row_group_is_split() {
    let file = file(false);
    let (parquet, _) = open(&file, 1 << 20);
    let output = |task: &parquet_skim_core::ReadTask| -> u64 {
        task.output_ranges.iter().map(|r| r.end - r.start).sum()
    };
    // `id` 4100..4200: the statistics prune the first row group; phase 2 would read the second's
    // output chunks whole for one match, so waiting could save nothing.
    let lookup = ScanRequest {
        columns: Some(vec!["id".into(), "text".into()]),
        filter: Some(
            parquet_skim_core::filter::parse_sql("id BETWEEN 4100 AND 4200").expect("filter"),
        ),
        ..ScanRequest::default()
    };
    let plan = plan_scan(&parquet, &lookup).expect("plan");
    assert_eq!(plan.stats.row_groups_pruned_by_stats, 1);
    assert_eq!(plan.tasks.len(), 1);
    assert!(output(&plan.tasks[0]) > 0);
    assert_eq!(plan.tasks[0].output_skippable_bytes, 0);
    // The same row group split by rows: each part lists the whole chunks, and the match lies in
    // one part only.
    let split = ScanRequest {
        target_task_rows: Some(1_000),
        ..lookup
    };
    let plan = plan_scan(&parquet, &split).expect("plan");
    assert!(plan.tasks.len() > 1);
    for task in &plan.tasks {
        assert_eq!(task.output_skippable_bytes, output(task));
    }
}

/// Pages walked from their headers are fetched in part too: a first rows' task of a file
/// without an offset index (pyarrow's and DuckDB's defaults: large pages) plans only the first
/// bytes of its pages, which the walk's first round (a chunk's first 64 KiB) already holds, and
/// reads what whole chunks give without asking for more.
#[test]
fn first_rows_of_walked_pages_read_them_in_part() {
    // One snappy page per 4,000-row group and column: id (unique, plain), text (120 bytes a row).
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("text", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (0..ROWS).collect();
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from_iter(ids.iter().map(|i| {
                (i % 11 != 0).then(|| format!("{:0>120}", i * 7919 % 100_003))
            }))),
        ],
    )
    .expect("batch");
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_max_row_group_row_count(Some(4_000))
        .set_data_page_row_count_limit(4_000)
        .set_data_page_size_limit(1 << 24)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .build();
    let bytes = common::write_parquet(&batch, props);
    let (parquet, _) = open(&bytes, 64 * 1024);
    for (offset, limit) in [(0, 100), (37, 200), (4_000, 10), (4_500, 300)] {
        let req = ScanRequest {
            offset: Some(offset),
            limit: Some(limit),
            page_walk_min_bytes: Some(0),
            ..Default::default()
        };
        let (plan, held, rounds) = walk_and_plan(&parquet, &bytes, &req, 3);
        assert!(rounds >= 1, "offset {offset}: walked");
        let in_part: usize = plan.tasks.iter().map(|t| t.spec.pages_in_part.len()).sum();
        assert_eq!(
            in_part, 2,
            "offset {offset} limit {limit}: both columns' pages in part"
        );
        // `run` fails on any ask past the plan: the parts sufficed.
        let (batches, fetched) = run(&parquet, &bytes, &plan, &held);
        assert_eq!(fetched, 0, "offset {offset}: the walk held every part");
        let (expected, _) = common::scan_with_io(&parquet, &bytes, &req, true);
        assert_eq!(
            concat(&batches),
            concat(&expected),
            "offset {offset} limit {limit}"
        );
        // Parts cut to 20 bytes (inside the header): the task asks for the rests and starts
        // over, decoding with the walked pages again.
        let scan = plan.bind(&parquet).expect("bind");
        let mut again = Vec::new();
        for task in &plan.tasks {
            let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
            let mut rests = Vec::new();
            for r in &task.output_ranges {
                let page = task.spec.pages_in_part.iter().find(|p| p.start == r.start);
                let end = page.map_or(r.end, |_| r.start + 20);
                if let Some(page) = page {
                    rests.push(end..page.end);
                }
                decoder
                    .push(r.start..end, slice(&bytes, &(r.start..end)))
                    .expect("push");
            }
            let asked = match decoder.run().expect("run") {
                TaskRun::NeedsRanges(asked) => asked,
                TaskRun::Done(_) => {
                    panic!("offset {offset}: 20-byte parts read without their rests")
                }
            };
            assert_eq!(asked, rests, "offset {offset}");
            for r in asked {
                decoder.push(r.clone(), slice(&bytes, &r)).expect("push");
            }
            let TaskRun::Done(output) = decoder.run().expect("run") else {
                panic!("offset {offset}: asked twice");
            };
            let reader =
                StreamReader::try_new(std::io::Cursor::new(output.ipc), None).expect("ipc");
            again.extend(reader.map(|b| b.expect("batch")));
        }
        assert_eq!(
            concat(&again),
            concat(&batches),
            "offset {offset}: read again"
        );
    }
}
