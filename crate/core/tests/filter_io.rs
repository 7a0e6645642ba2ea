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
    assert_eq!(task.spec.selection, Some(vec![500, -3500]));
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
