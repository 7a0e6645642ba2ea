//! The cross-scan cache: a second scan with an edited filter on the same columns takes them from
//! the worker's cache — it asks for no byte of them — and returns what the fused path returns.
mod common;

use std::collections::HashSet;

use arrow_ipc::reader::StreamReader;
use arrow_schema::SchemaRef;
use common::{open, sample_file, scan, slice};
use parquet_skim_core::column_cache::ColumnCache;
use parquet_skim_core::{parse_sql, ScanRequest, TaskDecoder, TaskOutput, TaskRun};

fn request(filter: &str, file_key: &str) -> ScanRequest {
    ScanRequest {
        columns: Some(vec!["name".into(), "id".into(), "s".into()]),
        filter: Some(parse_sql(filter).expect("parse")),
        file_key: Some(file_key.into()),
        column_cache_bytes: Some(64 << 20),
        ..Default::default()
    }
}

/// Runs a scan as one worker would: cache lookups by `cacheKey`, nothing pushed up front for a
/// hit, every ask answered and recorded; inserts what tasks collected.
fn run(
    parquet: &parquet_skim_core::ParquetFile,
    file: &bytes::Bytes,
    request: &ScanRequest,
    cache: &mut ColumnCache,
) -> (
    Vec<arrow_array::RecordBatch>,
    Vec<std::ops::Range<u64>>,
    usize,
) {
    static SCANS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let scan_id = SCANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let plan = parquet_skim_core::plan_scan(parquet, request).expect("plan");
    let scan = plan.bind(parquet).expect("bind");
    let (mut batches, mut asked, mut hits) = (Vec::new(), Vec::new(), 0);
    for task in &plan.tasks {
        let key = task
            .spec
            .cache_key
            .clone()
            .expect("filtered tasks of a keyed file have a key");
        let checkout = cache.check_out(&key, scan_id);
        let hit = checkout.cached.is_some();
        let mut decoder = TaskDecoder::try_new_cached(&scan, &task.spec, checkout).expect("task");
        if !hit {
            for r in &task.filter_ranges {
                decoder
                    .push(r.start..r.end, slice(file, &(r.start..r.end)))
                    .expect("push");
            }
        }
        let mut rounds = 0;
        let output: TaskOutput = loop {
            match decoder.run().expect("run") {
                TaskRun::Done(output) => break output,
                TaskRun::NeedsRanges(ranges) => {
                    rounds += 1;
                    // A hit spanning several row groups asks for all their output pages at once.
                    assert!(!hit || rounds == 1, "a hit asked in {rounds} rounds");
                    for r in ranges {
                        decoder.push(r.clone(), slice(file, &r)).expect("push");
                        asked.push(r);
                    }
                }
            }
        };
        assert_eq!(output.cache_hit, hit);
        hits += usize::from(hit);
        if let Some(columns) = output.collected {
            cache.insert(key, columns, scan_id);
        }
        let reader = StreamReader::try_new(std::io::Cursor::new(output.ipc), None).expect("ipc");
        batches.extend(reader.map(|b| b.expect("batch")));
    }
    (batches, asked, hits)
}

fn concat(schema: &SchemaRef, batches: &[arrow_array::RecordBatch]) -> arrow_array::RecordBatch {
    arrow_select::concat::concat_batches(schema, batches).expect("concat")
}

#[test]
fn an_edited_filter_reuses_the_decoded_filter_column_without_fetching_it() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let mut cache = ColumnCache::new(64 << 20);
    let name_leaf = 1;
    let name_ranges: Vec<_> = parquet
        .metadata()
        .row_groups()
        .iter()
        .map(|rg| {
            let (start, len) = rg.column(name_leaf).byte_range();
            start..start + len
        })
        .collect();
    let touches_name = |r: &std::ops::Range<u64>| {
        name_ranges
            .iter()
            .any(|n| r.start < n.end && n.start < r.end)
    };

    // First scan: a miss everywhere; the name column is decoded and kept.
    let first = request("name LIKE '%77%'", "sample@v1");
    let (batches, _, hits) = run(&parquet, &file, &first, &mut cache);
    assert_eq!(hits, 0);
    let fused = ScanRequest {
        file_key: None,
        ..first.clone()
    };
    let expected = scan(&parquet, &file, &fused);
    let schema = expected[0].schema();
    assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
    // The sample's three small row groups are one task (see `plan::group_small_tasks`).
    let tasks = parquet_skim_core::plan_scan(&parquet, &first)
        .expect("plan")
        .tasks
        .len();
    assert_eq!(tasks, 1);
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.entries), (1, 1));
    assert!(stats.bytes > 0 && stats.bytes <= stats.budget);

    // Edited filter, same column: every task hits, no byte of `name` is asked for, and the rows
    // equal the fused path's. `name` is also projected: it comes from the cache.
    let edited = request("name LIKE '%123%'", "sample@v1");
    let (batches, asked, hits) = run(&parquet, &file, &edited, &mut cache);
    assert_eq!(hits, 1);
    assert!(!asked.is_empty(), "the other output columns are fetched");
    assert!(
        asked.iter().all(|r| !touches_name(r)),
        "asked for name pages: {asked:?}"
    );
    let expected = scan(
        &parquet,
        &file,
        &ScanRequest {
            file_key: None,
            ..edited.clone()
        },
    );
    assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
    let ids: HashSet<i64> = common::ids(&batches, "id").into_iter().collect();
    assert_eq!(
        ids.len(),
        (0..10_000)
            .filter(|i| i.to_string().contains("123"))
            .count()
    );

    // The same file under another version never hits.
    let changed = request("name LIKE '%123%'", "sample@v2");
    let (_, _, hits) = run(&parquet, &file, &changed, &mut cache);
    assert_eq!(hits, 0);
    assert_eq!(cache.stats().hits, 1);
}

#[test]
fn over_budget_filter_columns_are_not_kept_and_results_do_not_change() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let keyed = request("name LIKE '%5%' AND id > 100", "sample@v1");
    // Decoded columns can outgrow the planner's estimate (their pages' bytes): a keyed task
    // whose worker budget is smaller than what it collects keeps nothing.
    let mut plan = parquet_skim_core::plan_scan(&parquet, &keyed).expect("plan");
    plan.scan.column_cache_bytes = 1024;
    let bound = plan.bind(&parquet).expect("bind");
    for task in &plan.tasks {
        assert!(task.spec.cache_key.is_some());
        let output = common::run_task(&bound, &file, task);
        assert!(output.collected.is_none());
        assert!(output.cache_rejected_bytes > 1024);
    }
    // Planned with that budget, the tasks get no key at all, and read the same rows.
    let tiny = ScanRequest {
        column_cache_bytes: Some(1024),
        ..keyed.clone()
    };
    let plan = parquet_skim_core::plan_scan(&parquet, &tiny).expect("plan");
    assert!(plan.tasks.iter().all(|t| t.spec.cache_key.is_none()));
    let batches = scan(&parquet, &file, &tiny);
    let expected = scan(
        &parquet,
        &file,
        &ScanRequest {
            file_key: None,
            ..tiny.clone()
        },
    );
    let schema = expected[0].schema();
    assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
}

/// Runs the tasks of `request` against `cache` as `scan_id`: per task, whether it kept its
/// filter columns for the cache, and whether the cache took them.
fn kept_and_inserted(
    parquet: &parquet_skim_core::ParquetFile,
    file: &bytes::Bytes,
    request: &ScanRequest,
    cache: &mut ColumnCache,
    scan_id: u64,
) -> Vec<(bool, bool)> {
    let plan = parquet_skim_core::plan_scan(parquet, request).expect("plan");
    let scan = plan.bind(parquet).expect("bind");
    plan.tasks
        .iter()
        .map(|task| {
            let key = task.spec.cache_key.clone().expect("a key");
            let checkout = cache.check_out(&key, scan_id);
            let mut decoder =
                TaskDecoder::try_new_cached(&scan, &task.spec, checkout).expect("task");
            for r in task.filter_ranges.iter().chain(&task.output_ranges) {
                decoder
                    .push(r.start..r.end, slice(file, &(r.start..r.end)))
                    .expect("push");
            }
            let output = match decoder.run().expect("run") {
                TaskRun::Done(output) => output,
                TaskRun::NeedsRanges(ranges) => panic!("asked for {ranges:?}"),
            };
            let kept = output.collected.is_some();
            let inserted = output
                .collected
                .is_some_and(|columns| cache.insert(key.clone(), columns, scan_id).is_empty())
                && cache.contains(&key);
            (kept, inserted)
        })
        .collect()
}

#[test]
fn a_task_keeps_no_more_than_the_cache_has_room_for_in_its_scan() {
    // Row groups too big to share a task (grouping stops at 128k rows).
    let rows = 3 * 140_000;
    let ids = arrow_array::Int64Array::from_iter_values(0..rows);
    let names =
        arrow_array::StringArray::from_iter_values((0..rows).map(|i| format!("n{}", i % 997)));
    let batch = arrow_array::RecordBatch::try_from_iter([
        ("id", std::sync::Arc::new(ids) as arrow_array::ArrayRef),
        ("name", std::sync::Arc::new(names) as arrow_array::ArrayRef),
    ])
    .expect("batch");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(140_000))
        .build();
    let file = common::write_parquet(&batch, props);
    let (parquet, _) = open(&file, 512 * 1024);
    let keyed = ScanRequest {
        columns: Some(vec!["id".into()]),
        filter: Some(parse_sql("name LIKE '%5%'").expect("parse")),
        file_key: Some("big@room".into()),
        column_cache_bytes: Some(64 << 20),
        ..Default::default()
    };
    // What one task's filter columns take.
    let mut roomy = ColumnCache::new(64 << 20);
    let all = kept_and_inserted(&parquet, &file, &keyed, &mut roomy, 1);
    assert!(
        all.len() >= 3 && all.iter().all(|&(kept, inserted)| kept && inserted),
        "{all:?}"
    );
    let one = roomy.stats().bytes / all.len() as u64;
    // Room for about one task's: the first keeps and is kept; the others see no room left by
    // their own scan's entry, and keep nothing (they used to keep all, to be refused).
    let mut tight = ColumnCache::new(one + one / 2);
    let outcomes = kept_and_inserted(&parquet, &file, &keyed, &mut tight, 1);
    assert_eq!(outcomes[0], (true, true));
    assert!(
        outcomes[1..].iter().all(|&o| o == (false, false)),
        "{outcomes:?}"
    );
    // A later scan: the earlier scan's entry gives way, so its first task keeps again.
    let edited = ScanRequest {
        filter: Some(parse_sql("name LIKE '%7%'").expect("parse")),
        ..keyed.clone()
    };
    let plan = parquet_skim_core::plan_scan(&parquet, &edited).expect("plan");
    let second_key = plan.tasks[1].spec.cache_key.clone().expect("a key");
    let room = tight.check_out(&second_key, 2).room;
    assert!(
        room >= one + one / 2,
        "{room} bytes of room for a later scan"
    );
}

/// Regression: output columns that are all filter columns come from the kept batches alone
/// (they were once sliced twice). A page selection and a second, cached run agree too.
#[test]
fn output_of_only_filter_columns_under_a_page_selection() {
    let file = common::parquet_testing("alltypes_tiny_pages.parquet");
    let (parquet, _) = open(&file, 512 * 1024);
    let mut cache = ColumnCache::new(64 << 20);
    let request = ScanRequest {
        columns: Some(vec!["id".into()]),
        filter: Some(parse_sql("id BETWEEN 100 AND 200").expect("parse")),
        file_key: Some("tiny".into()),
        column_cache_bytes: Some(64 << 20),
        ..Default::default()
    };
    let plan = parquet_skim_core::plan_scan(&parquet, &request).expect("plan");
    assert!(
        plan.tasks.iter().all(|t| t.spec.selection.is_some()),
        "pages pruned"
    );
    let expected = scan(
        &parquet,
        &file,
        &ScanRequest {
            file_key: None,
            ..request.clone()
        },
    );
    let schema = expected[0].schema();
    for expect_hits in [0, plan.tasks.len()] {
        let (batches, _, hits) = run(&parquet, &file, &request, &mut cache);
        assert_eq!(hits, expect_hits);
        assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
    }
    assert_eq!(concat(&schema, &expected).num_rows(), 101);
}

#[test]
fn tasks_whose_filter_columns_cannot_fit_the_cache_decode_fused_without_a_key() {
    let file = sample_file();
    let (parquet, _) = open(&file, 64 * 1024);
    let req = request("name LIKE '%7%'", "sample");
    // The sample's row groups are one task (see `plan::group_small_tasks`): its `name` columns.
    let name: u64 = parquet
        .metadata()
        .row_groups()
        .iter()
        .map(|rg| rg.column(1).uncompressed_size() as u64)
        .sum();
    let plan_with = |budget: u64| {
        parquet_skim_core::plan_scan(
            &parquet,
            &ScanRequest {
                column_cache_bytes: Some(budget),
                ..req.clone()
            },
        )
        .expect("plan")
    };
    assert!(plan_with(name).tasks[0].spec.cache_key.is_some());
    let small = plan_with(name - 1);
    assert_eq!(small.tasks[0].spec.cache_key, None);
    // It reads the same rows as the keyed task.
    let expected = scan(&parquet, &file, &req);
    let got = scan(
        &parquet,
        &file,
        &ScanRequest {
            column_cache_bytes: Some(name - 1),
            ..req.clone()
        },
    );
    let schema = expected[0].schema();
    assert_eq!(concat(&schema, &got), concat(&schema, &expected));
}

/// A miss keeps every row of every filter column, not only the rows an earlier conjunct let
/// through: an edited filter that keeps other rows, served from the cache, equals the fused path.
#[test]
fn a_conjunction_keeps_all_rows_of_its_columns_for_the_next_filter() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let mut cache = ColumnCache::new(64 << 20);
    let first = request("name LIKE '%77%' AND id != 3", "sample@v1");
    let (batches, _, hits) = run(&parquet, &file, &first, &mut cache);
    assert_eq!(hits, 0);
    let fused = |r: &ScanRequest| {
        scan(
            &parquet,
            &file,
            &ScanRequest {
                file_key: None,
                ..r.clone()
            },
        )
    };
    let expected = fused(&first);
    let schema = expected[0].schema();
    assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
    let edited = request("name LIKE '%8%' AND id != 4", "sample@v1");
    let (batches, _, hits) = run(&parquet, &file, &edited, &mut cache);
    assert_eq!(hits, 1);
    let expected = fused(&edited);
    assert_eq!(concat(&schema, &batches), concat(&schema, &expected));
    assert!(!batches.is_empty() && batches.iter().map(|b| b.num_rows()).sum::<usize>() > 0);
}

/// Scans with a limit (first rows) use the cache and fill it: arrow-rs evaluates a task's filter
/// over all its rows before it reads the output up to the limit, so even a frequent filter's
/// first rows keep the filter columns; a hit stops at the limit. The rows equal the fused path's,
/// limit applied the same way.
#[test]
fn first_rows_use_and_fill_the_cache() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let mut cache = ColumnCache::new(64 << 20);
    let limited = |filter: &str, limit: u64| ScanRequest {
        limit: Some(limit),
        ..request(filter, "sample@v1")
    };
    let first_rows = |batches: &[arrow_array::RecordBatch], limit: usize| {
        common::ids(batches, "id")
            .into_iter()
            .take(limit)
            .collect::<Vec<_>>()
    };
    let fused_ids = |r: &ScanRequest| {
        let expected = scan(
            &parquet,
            &file,
            &ScanRequest {
                file_key: None,
                ..r.clone()
            },
        );
        common::ids(&expected, "id")
    };
    let frequent = limited("name LIKE '%1%'", 10);
    let (batches, _, hits) = run(&parquet, &file, &frequent, &mut cache);
    assert_eq!(hits, 0);
    assert_eq!(first_rows(&batches, 10), fused_ids(&frequent));
    assert_eq!(cache.stats().entries, 3);
    // Edited filters' first rows come from the cache, each task stopping at the limit: a rare
    // one (fewer matches than the limit) and a frequent one.
    for (filter, limit) in [("name LIKE '%9999%'", 5), ("name LIKE '%12%'", 7)] {
        let edited = limited(filter, limit);
        let (batches, asked, hits) = run(&parquet, &file, &edited, &mut cache);
        assert_eq!(hits, 3, "{filter}");
        assert_eq!(
            first_rows(&batches, limit as usize),
            fused_ids(&edited),
            "{filter}"
        );
        assert!(batches.iter().all(|b| b.num_rows() <= limit as usize));
        assert!(!asked.is_empty() || batches.is_empty());
    }
}

/// A hit with a limit stops evaluating the filter once the limit's rows have passed; the rows it
/// returns are still the first ones the fused path returns, for limits inside a batch, at a
/// batch's end, across batches and past every match.
#[test]
fn a_hit_with_a_limit_returns_the_first_passing_rows() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let mut cache = ColumnCache::new(64 << 20);
    // Planned as the limited scans are (a limit keeps the small row groups apart, so the keys
    // match), with a limit past every row: the first scan sees every row, and keeps its column.
    let unlimited = ScanRequest {
        batch_size: Some(64),
        limit: Some(1 << 40),
        ..request("name LIKE '%7%'", "sample@limit")
    };
    let (all, _, hits) = run(&parquet, &file, &unlimited, &mut cache);
    assert_eq!(hits, 0);
    let schema = all[0].schema();
    let all = concat(&schema, &all);
    assert!(all.num_rows() > 200, "{} matches", all.num_rows());
    for limit in [1, 7, 64, 150, all.num_rows() as u64 + 10] {
        let limited = ScanRequest {
            limit: Some(limit),
            ..unlimited.clone()
        };
        let (batches, _, hits) = run(&parquet, &file, &limited, &mut cache);
        assert!(hits > 0, "limit {limit}: no hit");
        let got = concat(&schema, &batches);
        let want = (limit as usize).min(all.num_rows());
        assert!(
            got.num_rows() >= want,
            "limit {limit}: {} rows",
            got.num_rows()
        );
        assert_eq!(got.slice(0, want), all.slice(0, want), "limit {limit}");
    }
}
