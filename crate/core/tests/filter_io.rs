//! Filters on the host, asserting the exact bytes each pruning path reads (in the spirit of
//! arrow-rs's `tests/arrow_reader/io`), and that a filter that prunes nothing loses no row.
//!
//! The sample file: `id` 0..10000 sorted, three row groups (4000, 4000, 2000 rows), pages of 500
//! rows, page index on, no dictionaries.

mod common;

use std::ops::Range;

use common::*;
use parquet_skim_core::{filter::parse_sql, plan_scan, ParquetFile, ScanRequest};

fn request(sql: &str, columns: &[&str]) -> ScanRequest {
    ScanRequest {
        columns: Some(columns.iter().map(|c| c.to_string()).collect()),
        filter: Some(parse_sql(sql).expect("parse")),
        ..Default::default()
    }
}

/// The byte range of page `page` of leaf `column` in row group `rg`.
fn page(parquet: &ParquetFile, rg: usize, column: usize, page: usize) -> Range<u64> {
    let index = parquet.metadata().page_index_for_row_group(rg);
    let loc = &index
        .offset_index(column)
        .expect("offset index")
        .page_locations()[page];
    loc.offset as u64..loc.offset as u64 + loc.compressed_page_size as u64
}

#[test]
fn row_groups_and_pages_are_pruned_and_output_pages_read_on_demand() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    // Rows 4100..=4200: row group 1, its page 0 (rows 4000..4500).
    let request = request("id BETWEEN 4100 AND 4200", &["id", "name"]);
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!(plan.stats.row_groups_pruned_by_stats, 2);
    assert_eq!(plan.stats.pages_total, 8);
    assert_eq!(plan.stats.pages_pruned, 7);
    assert_eq!(plan.stats.rows_scanned, 500);
    assert_eq!(plan.tasks.len(), 1);
    let task = &plan.tasks[0];
    assert_eq!(task.spec.row_group_idx, 1);
    assert_eq!(task.spec.selection, Some(vec![500]));
    // Phase 1: exactly the one page of `id`.
    let filter_ranges: Vec<Range<u64>> =
        task.filter_ranges.iter().map(|r| r.start..r.end).collect();
    assert_eq!(filter_ranges, vec![page(&parquet, 1, 0, 0)]);
    // Phase 2, on demand: exactly the one page of `name` holding the selected rows.
    let (batches, extra) = scan_with_io(&parquet, &file, &request, false);
    assert_eq!(extra, vec![page(&parquet, 1, 1, 0)]);
    assert_eq!(ids(&batches, "id"), (4100..=4200).collect::<Vec<_>>());
}

#[test]
fn pruning_by_statistics_alone_without_page_selection() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    // `s.a` = 2 * id, a nested column; 19000..=19999 are ids 9500..9999 (the last page).
    let request = request("s.a >= 19000", &["id"]);
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!(plan.stats.row_groups_pruned_by_stats, 2);
    assert_eq!(plan.tasks.len(), 1);
    assert_eq!(plan.tasks[0].spec.selection, Some(vec![-1500, 500]));
    let (batches, _) = scan_with_io(&parquet, &file, &request, false);
    assert_eq!(ids(&batches, "id"), (9500..10_000).collect::<Vec<_>>());
}

#[test]
fn a_filter_matching_nothing_reads_no_data() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let plan = plan_scan(&parquet, &request("id > 1000000 OR id < 0", &["name"])).expect("plan");
    assert!(plan.tasks.is_empty());
    assert_eq!(plan.stats.row_groups_pruned_by_stats, 3);
}

#[test]
fn a_filter_that_prunes_nothing_returns_exactly_the_matching_rows() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    // Not prunable (string suffix), keeps every 7th id.
    let request = request("ends_with(name, '7')", &["id", "name"]);
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!(plan.stats.row_groups_pruned_by_stats, 0);
    assert_eq!(plan.stats.pages_pruned, 0);
    let (batches, _) = scan_with_io(&parquet, &file, &request, true);
    let expected: Vec<i64> = (0..ROWS).filter(|i| i % 10 == 7).collect();
    assert_eq!(ids(&batches, "id"), expected);
}

/// Bytes of `ranges`.
fn bytes_of(ranges: &[parquet_skim_core::ByteRange]) -> u64 {
    ranges.iter().map(|r| r.end - r.start).sum()
}

#[test]
fn output_bytes_phase_2_may_skip_are_what_one_match_leaves_out() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let len = |r: Range<u64>| r.end - r.start;
    // Narrowed to one page of `id`; `name`'s pages are as fine: one match reads all of them.
    let plan = plan_scan(
        &parquet,
        &request("id BETWEEN 4100 AND 4200", &["id", "name"]),
    )
    .expect("plan");
    let task = &plan.tasks[0];
    assert_eq!(bytes_of(&task.output_ranges), len(page(&parquet, 1, 1, 0)));
    assert_eq!(task.output_skippable_bytes, 0);
    // Two pages of `id` (rows 4000..5000): one match leaves one page of `name` unread, the
    // larger one.
    let plan = plan_scan(
        &parquet,
        &request("id BETWEEN 4400 AND 4600", &["id", "name"]),
    )
    .expect("plan");
    let task = &plan.tasks[0];
    let (first, second) = (len(page(&parquet, 1, 1, 0)), len(page(&parquet, 1, 1, 1)));
    assert_eq!(bytes_of(&task.output_ranges), first + second);
    assert_eq!(task.output_skippable_bytes, first.max(second));
    // Nothing pruned: nothing says a row passes, and every output byte may be skipped.
    let plan =
        plan_scan(&parquet, &request("ends_with(name, '7')", &["id", "name"])).expect("plan");
    assert_eq!(
        plan.stats.pages_pruned + plan.stats.row_groups_pruned_by_stats,
        0
    );
    assert!(!plan.tasks.is_empty());
    for task in &plan.tasks {
        assert!(task.output_skippable_bytes > 0);
        assert_eq!(task.output_skippable_bytes, bytes_of(&task.output_ranges));
    }
}

#[test]
fn offset_and_limit_apply_after_the_filter_and_stop_early() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let mut request = request("starts_with(name, 'name-3') OR id >= 9990", &["id"]);
    request.offset = Some(5);
    request.limit = Some(3);
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!((plan.offset, plan.limit), (5, Some(3)));
    assert!(plan.tasks.iter().all(|t| t.spec.limit == Some(8)));
    let (batches, _) = scan_with_io(&parquet, &file, &request, true);
    // name-3, name-30..name-39, name-300.. in id order: 3, 30, 31, 32, 33, 34, 35, 36, …
    assert_eq!(ids(&batches, "id"), vec![34, 35, 36]);
}

#[test]
fn type_errors_and_unknown_columns_fail_the_plan() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let error = plan_scan(&parquet, &request("id = 'x'", &["id"])).expect_err("mismatch");
    assert_eq!(error.code(), "TYPE_MISMATCH");
    let error = plan_scan(&parquet, &request("nam = 'x'", &["id"])).expect_err("unknown");
    assert_eq!(error.code(), "UNKNOWN_COLUMN");
}

/// Four row groups; row group `r` holds the ids `≡ r (mod 4)` over the whole range, so min/max
/// cannot tell them apart but bloom filters can. `tag` is `"t{id}"`.
fn bloom_file() -> bytes::Bytes {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("tag", DataType::Utf8, false),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1_000))
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_fpp(0.001)
        .build();
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, Arc::clone(&schema), Some(props)).expect("writer");
    for r in 0..4i64 {
        let ids: Vec<i64> = (0..1_000).map(|k| k * 4 + r).collect();
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("t{i}")),
                )),
            ],
        )
        .expect("batch");
        writer.write(&batch).expect("write");
        writer.flush().expect("flush");
    }
    writer.close().expect("close");
    bytes::Bytes::from(out)
}

#[test]
fn bloom_filters_prune_row_groups_for_equality_and_in() {
    use parquet_skim_core::{
        bloom_ranges_for, page_layout::PageLayouts, plan_scan_with, pushed_bytes::PushedBytes,
    };

    let file = bloom_file();
    let (parquet, _) = open(&file, 512 * 1024);
    assert_eq!(parquet.metadata().num_row_groups(), 4);
    for (sql, expected_ids) in [
        ("id = 2001", vec![2001]),
        ("tag = 't3998'", vec![3998]),
        ("id IN (5, 9) AND tag != 'x'", vec![5, 9]),
    ] {
        let request = request(sql, &["id"]);
        // Without the bloom bytes, statistics alone prune nothing.
        let unaided = plan_scan(&parquet, &request).expect("plan");
        let read: usize = unaided
            .tasks
            .iter()
            .map(|t| t.spec.row_groups().count())
            .sum();
        assert_eq!(read, 4, "{sql}");
        assert!(unaided.learns.blooms && !unaided.learns.pages, "{sql}");
        // The planner asks for one bloom filter per row group; with them, three row groups go.
        let ranges = bloom_ranges_for(&parquet, &request).expect("ranges");
        assert_eq!(ranges.len(), 4, "{sql}");
        let mut blooms = PushedBytes::default();
        for r in &ranges {
            blooms.insert(r.start, slice(&file, &(r.start..r.end)));
        }
        let plan =
            plan_scan_with(&parquet, &request, &blooms, &PageLayouts::default()).expect("plan");
        assert_eq!(plan.stats.row_groups_pruned_by_bloom, 3, "{sql}");
        let scan = plan.bind(&parquet).expect("bind");
        let mut ids: Vec<i64> = Vec::new();
        for task in &plan.tasks {
            let output = run_task(&scan, &file, task);
            let reader =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(output.ipc), None)
                    .expect("ipc");
            for batch in reader {
                let batch = batch.expect("batch");
                ids.extend(common::ids(&[batch], "id"));
            }
        }
        ids.sort_unstable();
        assert_eq!(ids, expected_ids, "{sql}");
    }
}

#[test]
fn no_bloom_filter_is_asked_for_where_none_could_prune() {
    use parquet_skim_core::bloom_ranges_for;

    let file = bloom_file();
    let (parquet, _) = open(&file, 512 * 1024);
    // A range is no point lookup; `id = 5 OR …` is no conjunct of lookups.
    for sql in ["id > 2001", "id = 5 OR id = 9", "tag LIKE 't3%'"] {
        let ranges = bloom_ranges_for(&parquet, &request(sql, &["id"])).expect("ranges");
        assert!(ranges.is_empty(), "{sql}");
        let plan = plan_scan(&parquet, &request(sql, &["id"])).expect("plan");
        assert!(!plan.learns.blooms, "{sql}");
    }
    // A file without bloom filters: nothing to read, whatever the filter.
    let plain = sample_file();
    let (parquet, _) = open(&plain, 512 * 1024);
    let ranges = bloom_ranges_for(&parquet, &request("id = 5", &["id"])).expect("ranges");
    assert!(ranges.is_empty());
    let plan = plan_scan(&parquet, &request("id = 5", &["id"])).expect("plan");
    assert!(!plan.learns.blooms);
}

#[test]
fn bloom_filters_without_a_recorded_length_are_read_to_their_header_s_end() {
    use parquet_skim_core::{
        bloom_ranges_for, page_layout::PageLayouts, plan_scan_with, pushed_bytes::PushedBytes,
    };

    // parquet-mr wrote this filter without `bloom_filter_length`.
    let file = common::parquet_testing("data_index_bloom_encoding_stats.parquet");
    let (parquet, _) = open(&file, 512 * 1024);
    assert_eq!(
        parquet
            .metadata()
            .row_group(0)
            .column(0)
            .bloom_filter_length(),
        None
    );
    let mut blooms = PushedBytes::default();
    for sql in ["String = 'brown cat'", "String = 'today'"] {
        let request = ScanRequest {
            filter: Some(parse_sql(sql).expect("parse")),
            ..Default::default()
        };
        for r in bloom_ranges_for(&parquet, &request).expect("ranges") {
            blooms.insert(r.start, slice(&file, &(r.start..r.end)));
        }
        let plan =
            plan_scan_with(&parquet, &request, &blooms, &PageLayouts::default()).expect("plan");
        let pruned = plan.stats.row_groups_pruned_by_bloom;
        assert_eq!(pruned, usize::from(sql.contains("brown cat")), "{sql}");
    }
}

#[test]
fn the_predicate_cache_serves_projected_filter_columns_within_its_budget() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    // Not prunable: every row group and page is read, so tasks have no page selection.
    let sql = "ends_with(name, '7') OR starts_with(name, 'name-99')";
    let run = |budget: u64| -> (Vec<i64>, u64) {
        let mut request = request(sql, &["name", "id"]);
        request.predicate_cache_bytes = Some(budget);
        // Batches of 500 rows: a budget can hold some of a row group's batches and not others.
        request.batch_size = Some(500);
        let plan = plan_scan(&parquet, &request).expect("plan");
        // Small row groups share a task: one for the whole file (the edge below relies on it).
        assert_eq!(plan.tasks.len(), 1);
        let (mut ids_out, mut from_cache) = (Vec::new(), 0);
        let scan = plan.bind(&parquet).expect("bind");
        for task in &plan.tasks {
            let output = run_task(&scan, &file, task);
            from_cache += output.rows_from_cache;
            let reader =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(output.ipc), None)
                    .expect("ipc");
            for batch in reader {
                ids_out.extend(ids(&[batch.expect("batch")], "id"));
            }
        }
        (ids_out, from_cache)
    };
    let (off, off_cached) = run(0);
    let (on, on_cached) = run(64 << 20);
    let (tiny, tiny_cached) = run(64);
    // `name` decodes to ~9 bytes a value and 4 of offset: ~52 KB for a row group of 4,000 rows.
    // 24 KiB would hold a few of its batches, not all: then the cache is not used at all, since
    // the output would read every batch it missed in full instead of skipping the dropped rows.
    let (part, part_cached) = run(24 << 10);
    assert_eq!(off_cached, 0);
    assert!(on_cached > 0, "no rows served from the cache");
    assert_eq!(tiny_cached, 0, "a 64-byte budget holds no row group whole");
    assert_eq!(
        part_cached, 0,
        "a row group the budget holds in part: no cache"
    );
    assert_eq!(on, off, "results identical with the cache on and off");
    assert_eq!(tiny, off, "over budget the reader falls back to decoding");
    assert_eq!(part, off);
    assert!(!off.is_empty());

    // The rule's edge. The three row groups share one task, so the largest decides: a budget of
    // its estimate admits the task; one byte less, no cache. At the edge arrow-rs, counting the
    // arrays by capacity (reserved from the encoded bytes, 4-byte lengths included), fills the
    // cache part way; 1.3× the estimate holds every row (see `predicate_cache_bytes`).
    let estimate = |rg: usize| {
        let row_group = parquet.metadata().row_group(rg);
        let chunk = row_group
            .columns()
            .iter()
            .find(|c| c.column_path().string() == "name")
            .expect("name chunk");
        parquet_skim_core::limits::decoded_bytes(chunk, row_group.num_rows() as u64)
    };
    let largest = (0..parquet.metadata().num_row_groups())
        .map(estimate)
        .max()
        .expect("row groups");
    let (edge, edge_cached) = run(largest);
    let (below, below_cached) = run(largest - 1);
    let (roomy, roomy_cached) = run(largest * 13 / 10);
    assert!(edge_cached > 0, "a budget of the estimate admits the task");
    // What the estimate misses (see `predicate_cache_bytes`): if arrow-rs ever counts these
    // arrays within it, this fails, and the doc comment's account is out of date.
    assert!(
        edge_cached < on_cached,
        "at the estimate the cache fills part way"
    );
    assert_eq!(below_cached, 0, "below the estimate, no cache");
    assert_eq!(
        roomy_cached, on_cached,
        "with 1.3× the estimate every row is cached"
    );
    assert_eq!(roomy, off);
    assert_eq!(edge, off);
    assert_eq!(below, off);
}
