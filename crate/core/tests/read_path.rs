//! The core read path on the host, with exact I/O expectations: open from a tail read, plan a
//! scan, run its tasks from the planned bytes only, and compare with what was written.

mod common;

use arrow_array::{cast::AsArray, types::Int64Type};
use arrow_schema::DataType;
use bytes::Bytes;
use common::*;
use parquet::arrow::parquet_to_arrow_schema_by_columns;
use parquet::file::properties::WriterProperties;
use parquet_skim_core::projection::Projection;
use parquet_skim_core::{plan_scan, FileSummary, MetadataLoader, ParquetFile, ScanRequest};
use std::sync::Arc;

#[test]
fn a_large_tail_read_opens_in_one_read() {
    let file = sample_file();
    let (parquet, reads) = open(&file, 512 * 1024);
    assert_eq!(reads.len(), 1, "reads: {reads:?}");
    let summary = FileSummary::of(&parquet);
    assert!(summary.has_page_index);
    assert_eq!(summary.num_rows, ROWS);
    assert_eq!(summary.row_groups.len(), 3);
    assert_eq!(summary.columns.len(), 4);
    assert_eq!(summary.columns[2].path, "s.a");
}

#[test]
fn a_small_tail_read_asks_for_metadata_then_page_index() {
    let file = sample_file();
    let (parquet, reads) = open(&file, 8);
    // tail, thrift metadata, page index
    assert_eq!(reads.len(), 3, "reads: {reads:?}");
    assert!(parquet.metadata().page_index().is_some());
}

#[test]
fn workers_rebuild_the_file_from_footer_bytes() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let rebuilt = ParquetFile::try_from_footer(parquet.file_len(), parquet.footer().to_vec(), true)
        .expect("rebuild");
    assert!(rebuilt.metadata().page_index().is_some());
    assert_eq!(rebuilt.arrow_schema(), parquet.arrow_schema());
    let footer_bytes: u64 = parquet.footer().iter().map(|(r, _)| r.end - r.start).sum();
    assert!(footer_bytes < file.len() as u64 / 4);
    // What it holds: at least the footer it keeps, and more for more row groups.
    assert!(parquet.memory_bytes() > footer_bytes);
    assert!(rebuilt.memory_bytes() > footer_bytes);
}

#[test]
fn memory_held_grows_with_the_row_groups_described() {
    let batch = |rows: i64| {
        let ids = arrow_array::Int64Array::from_iter_values(0..rows);
        arrow_array::RecordBatch::try_from_iter([("id", Arc::new(ids) as arrow_array::ArrayRef)])
            .expect("batch")
    };
    let held = |row_group_rows: usize| {
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(row_group_rows))
            .build();
        let file = write_parquet(&batch(4096), props);
        let (parquet, _) = open(&file, 512 * 1024);
        assert_eq!(parquet.metadata().num_row_groups(), 4096 / row_group_rows);
        parquet.memory_bytes()
    };
    let (one, many) = (held(4096), held(64));
    // 64 row groups describe 64 column chunks where one describes one.
    assert!(
        many > 20 * one,
        "{many} bytes for 64 row groups, {one} for one"
    );
}

#[test]
fn full_scan_returns_every_row_in_order() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let batches = scan(&parquet, &file, &ScanRequest::default());
    assert_eq!(ids(&batches, "id"), (0..ROWS).collect::<Vec<_>>());
}

#[test]
fn limit_fetches_only_the_first_pages_of_projected_columns() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["id".into(), "name".into()]),
        limit: Some(100),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!(plan.tasks.len(), 1);
    let task = &plan.tasks[0];
    assert_eq!(
        (
            task.spec.row_group_idx,
            task.spec.selection.clone(),
            task.spec.expected_rows
        ),
        (0, Some(vec![100]), Some(100))
    );
    // Exactly the first data page of each projected column (and the dictionary page of `name`,
    // when it has one).
    let page_index = parquet.metadata().page_index_for_row_group(0);
    let first_page = |col: usize| {
        let loc = &page_index
            .offset_index(col)
            .expect("offset index")
            .page_locations()[0];
        loc.offset as u64..loc.offset as u64 + loc.compressed_page_size as u64
    };
    for col in [0usize, 1] {
        let page = first_page(col);
        assert!(
            task.output_ranges
                .iter()
                .any(|r| r.start == page.start && r.end == page.end),
            "first page {page:?} of column {col} not in {:?}",
            task.output_ranges
        );
    }
    let chunk_bytes: u64 = (0..2)
        .map(|c| parquet.metadata().row_group(0).column(c).compressed_size() as u64)
        .sum();
    let task_bytes: u64 = task.output_ranges.iter().map(|r| r.end - r.start).sum();
    assert!(
        task_bytes * 4 < chunk_bytes,
        "{task_bytes} of {chunk_bytes}"
    );
    let batches = scan(&parquet, &file, &request);
    assert_eq!(ids(&batches, "id"), (0..100).collect::<Vec<_>>());
}

#[test]
fn offset_and_limit_cross_row_groups() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["id".into()]),
        offset: Some(3_990),
        limit: Some(4_020),
        batch_size: Some(1_000),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    // The three small row groups are one task (see `plan::group_small_tasks`).
    assert_eq!(plan.tasks.len(), 1);
    let shape: Vec<_> = plan.tasks[0]
        .spec
        .row_groups()
        .map(|(rg, selection)| (rg, selection.map(<[i64]>::to_vec)))
        .collect();
    assert_eq!(
        shape,
        vec![(0, Some(vec![-3_990, 10])), (1, None), (2, Some(vec![10]))]
    );
    assert_eq!(plan.tasks[0].spec.expected_rows, Some(4_020));
    let batches = scan(&parquet, &file, &request);
    assert_eq!(ids(&batches, "id"), (3_990..8_010).collect::<Vec<_>>());
    assert!(batches.iter().all(|b| b.num_rows() <= 1_000));
}

#[test]
fn offset_past_the_end_plans_nothing() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        offset: Some(ROWS as u64),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert!(plan.tasks.is_empty());
    assert_eq!(plan.rows, Some(0));
}

#[test]
fn columns_come_back_in_requested_order_with_nested_paths() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["s.a".into(), "id".into()]),
        limit: Some(10),
        ..Default::default()
    };
    let batches = scan(&parquet, &file, &request);
    let schema = batches[0].schema();
    let names: Vec<_> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["s", "id"]);
    let DataType::Struct(children) = schema.field(0).data_type() else {
        panic!("s is not a struct");
    };
    assert_eq!(children.len(), 1, "only s.a is projected");
    let s = batches[0].column(0).as_struct();
    let a: Vec<i64> = s.column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(a, (0..10).map(|i| i * 2).collect::<Vec<_>>());
}

/// `file` opened from all its bytes, or `None` if it does not open (encrypted, malformed).
fn opened(file: &Bytes) -> Option<ParquetFile> {
    let len = file.len() as u64;
    let mut loader = MetadataLoader::try_new(len).ok()?;
    loader.push(0..len, file.clone()).ok()?;
    match loader.try_load().ok()? {
        parquet_skim_core::LoadStep::Loaded(parquet) => Some(*parquet),
        parquet_skim_core::LoadStep::NeedsRanges(_) => None,
    }
}

/// A map is read when both its keys and its values are named (alone, each is refused with the
/// map's name to use); a map inside a map's values is held to the same rule.
#[test]
fn a_map_is_read_with_its_keys_and_values_together() {
    let parquet = opened(&parquet_testing("nested_maps.snappy.parquet")).expect("opens");
    let columns = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let whole = Projection::try_new(&parquet, Some(&columns(&["a"]))).expect("whole map");
    let both = Projection::try_new(
        &parquet,
        Some(&columns(&[
            "a.key_value.key",
            "a.key_value.value.key_value.key",
            "a.key_value.value.key_value.value",
        ])),
    )
    .expect("both sides of both maps");
    assert_eq!(both.output_schema(), whole.output_schema());

    let inner_keys_only = Projection::try_new(
        &parquet,
        Some(&columns(&[
            "a.key_value.key",
            "a.key_value.value.key_value.key",
        ])),
    )
    .expect_err("the inner map's keys alone");
    assert_eq!(inner_keys_only.code(), "INVALID_ARGUMENT");
    let message = inner_keys_only.to_string();
    assert!(
        message.contains("the keys of the map `a.key_value.value` without its values")
            && message.contains("name `a.key_value.value` to read the map whole"),
        "{message}"
    );
    let values_only = Projection::try_new(&parquet, Some(&columns(&["a.key_value.value"])))
        .expect_err("the outer map's values alone");
    assert!(
        values_only
            .to_string()
            .contains("the values of the map `a` without its keys"),
        "{values_only}"
    );
}

/// A projection's schema is the same whether it takes the file's own Arrow fields (top-level
/// columns read whole) or converts the Parquet schema again (a struct read in part): on every
/// parquet-testing file that opens (nested, INT96, `ARROW:schema` hints), for each top-level
/// column, each leaf path, and all top-level columns named in reverse. Every column asked for is
/// in the result, in the order asked for; the only projections refused are maps read in part
/// (keys without values, or values without keys), which an Arrow map cannot hold.
#[test]
fn projected_schemas_match_a_conversion_of_the_projection() {
    let (mut files, mut whole, mut partial) = (0, 0, 0);
    let mut refused = Vec::new();
    for name in parquet_testing_names() {
        let Some(parquet) = opened(&parquet_testing(&name)) else {
            continue;
        };
        files += 1;
        let descr = parquet.metadata().file_metadata().schema_descr();
        let roots: Vec<String> = descr
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        let mut requests: Vec<Vec<String>> = roots.iter().map(|r| vec![r.clone()]).collect();
        requests.extend(descr.columns().iter().map(|c| vec![c.path().string()]));
        requests.push(roots.iter().rev().cloned().collect());
        for columns in requests {
            let projection = match Projection::try_new(&parquet, Some(&columns)) {
                Ok(projection) => projection,
                Err(error) => {
                    refused.push(format!("{name}: {columns:?}: {}: {error}", error.code()));
                    continue;
                }
            };
            let mask = projection.mask();
            let converted = parquet.adjust_schema(
                &parquet_to_arrow_schema_by_columns(
                    descr,
                    mask.clone(),
                    parquet.metadata().file_metadata().key_value_metadata(),
                )
                .expect("convert"),
            );
            let got = projection.output_schema();
            assert_eq!(got.metadata(), converted.metadata(), "{name}: {columns:?}");
            assert_eq!(
                got.fields().len(),
                converted.fields().len(),
                "{name}: {columns:?}"
            );
            for field in got.fields() {
                let same: Vec<_> = converted
                    .fields()
                    .iter()
                    .filter(|f| f.name() == field.name())
                    .collect();
                assert_eq!(same, [field], "{name}: {columns:?}");
            }
            // Every column asked for, in the order asked for (top-level names are unique in
            // these files).
            let names: Vec<&str> = got.fields().iter().map(|f| f.name().as_str()).collect();
            let asked: Vec<&str> = columns
                .iter()
                .map(|c| c.split('.').next().unwrap_or(c))
                .collect();
            assert_eq!(names, asked, "{name}");
            let read: Vec<usize> = (0..descr.num_columns())
                .filter(|&leaf| mask.leaf_included(leaf))
                .collect();
            let in_part = (0..descr.num_columns()).any(|leaf| {
                !mask.leaf_included(leaf)
                    && read
                        .iter()
                        .any(|&r| descr.get_column_root_idx(r) == descr.get_column_root_idx(leaf))
            });
            if in_part {
                partial += 1;
            } else {
                whole += 1;
            }
        }
    }
    assert!(files > 40, "{files} files opened");
    // Every map's keys alone and values alone (the leaf paths of every map in these files).
    assert!(refused.len() >= 20, "{refused:#?}");
    for refusal in &refused {
        assert!(
            refusal.contains("INVALID_ARGUMENT") && refusal.contains("of the map `"),
            "{refusal}"
        );
    }
    assert!(
        whole > 100 && partial > 10,
        "{whole} read whole, {partial} in part"
    );
}

#[test]
fn unknown_columns_are_typed_errors_with_suggestions() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["nmae".into()]),
        ..Default::default()
    };
    let error = plan_scan(&parquet, &request).expect_err("unknown column");
    assert_eq!(error.code(), "UNKNOWN_COLUMN");
    assert!(error.to_string().contains("did you mean 'name'"), "{error}");
}

#[test]
fn garbage_is_an_invalid_file() {
    let bytes = Bytes::from_static(b"this is not a parquet file at all");
    let len = bytes.len() as u64;
    let mut loader = MetadataLoader::try_new(len).expect("loader");
    loader.push(0..len, bytes).expect("push");
    let error = loader.try_load().expect_err("not parquet");
    assert_eq!(error.code(), "INVALID_FILE", "{error}");
}

#[test]
fn int96_timestamps_are_read_as_microseconds() {
    let file = parquet_testing("int96_from_spark.parquet");
    let (parquet, _) = open(&file, 512 * 1024);
    let expected = DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None);
    assert_eq!(parquet.arrow_schema().field(0).data_type(), &expected);
    let batches = scan(&parquet, &file, &ScanRequest::default());
    assert_eq!(batches[0].schema().field(0).data_type(), &expected);
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
}

#[test]
fn a_footer_row_count_of_zero_does_not_lose_rows() {
    // The footer says 0 rows; the row group says 6 (pyarrow reads 6).
    let file = parquet_testing("repeated_no_annotation.parquet");
    let (parquet, _) = open(&file, 512 * 1024);
    assert_eq!(parquet.metadata().file_metadata().num_rows(), 6);
    let batches = scan(&parquet, &file, &ScanRequest::default());
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
}

#[test]
fn decompression_bombs_are_refused_before_decoding() {
    // Two 1 GiB strings, brotli-compressed into 4 KiB.
    let file = parquet_testing("large_string_map.brotli.parquet");
    let (parquet, _) = open(&file, 512 * 1024);
    let error = plan_scan(&parquet, &ScanRequest::default()).expect_err("too large");
    assert_eq!(error.code(), "TOO_LARGE", "{error}");
}

#[test]
fn large_row_groups_split_into_tasks_at_page_boundaries() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["id".into(), "name".into()]),
        target_task_rows: Some(1_200),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    // 4000-row groups in windows starting at multiples of 1200 moved to the next 500-row page.
    let shape: Vec<_> = plan
        .tasks
        .iter()
        .map(|t| {
            (
                t.spec.row_group_idx,
                t.spec.selection.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (0, vec![1500]),
            (0, vec![-1500, 1500]),
            (0, vec![-3000, 1000]),
            (1, vec![1500]),
            (1, vec![-1500, 1500]),
            (1, vec![-3000, 1000]),
            (2, vec![1500]),
            (2, vec![-1500, 500]),
        ]
    );
    assert_eq!(
        ids(&scan(&parquet, &file, &request), "id"),
        (0..ROWS).collect::<Vec<_>>()
    );
    // Splitting composes with offset/limit and with filters.
    let window = ScanRequest {
        offset: Some(1_000),
        limit: Some(3_500),
        ..request.clone()
    };
    assert_eq!(
        ids(&scan(&parquet, &file, &window), "id"),
        (1_000..4_500).collect::<Vec<_>>()
    );
    let filtered = ScanRequest {
        filter: Some(parquet_skim_core::parse_sql("id >= 5250 AND id < 7100").expect("parse")),
        ..request
    };
    let (batches, _) = common::scan_with_io(&parquet, &file, &filtered, true);
    assert_eq!(ids(&batches, "id"), (5_250..7_100).collect::<Vec<_>>());
}

#[test]
fn aggregates_fold_inside_tasks_and_partials_add_up() {
    use parquet_skim_core::aggregate::AggregateSpec;

    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let aggregates: Vec<AggregateSpec> = serde_json::from_str(
        r#"[{"fn":"sum","expr":{"column":"id"}}, {"fn":"count"},
            {"fn":"max","expr":{"op":"mul","left":{"column":"s.a"},"right":{"value":3}}},
            {"fn":"min","expr":{"column":"name"}}]"#,
    )
    .expect("json");
    let request = ScanRequest {
        filter: Some(parquet_skim_core::parse_sql("id >= 3990 AND id < 4010").expect("parse")),
        aggregates: Some(aggregates),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    let row_groups: Vec<usize> = plan
        .tasks
        .iter()
        .flat_map(|t| t.spec.row_groups().map(|(rg, _)| rg))
        .collect();
    assert_eq!(row_groups, [0, 1]);
    let (mut sum, mut count, mut max, mut min) = (0i128, 0u64, i128::MIN, None::<String>);
    let scan = plan.bind(&parquet).expect("bind");
    for task in &plan.tasks {
        let output = run_task(&scan, &file, task);
        let partials = output.partials.expect("partials");
        sum += partials[0]
            .value
            .as_deref()
            .map_or(0, |v| v.parse::<i128>().expect("int"));
        count += partials[1].count;
        max = max.max(
            partials[2]
                .value
                .as_deref()
                .map_or(i128::MIN, |v| v.parse().expect("int")),
        );
        let m = partials[3].value.clone();
        min = match (min, m) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    assert_eq!(sum, (3990..4010).sum::<i128>());
    assert_eq!(count, 20);
    assert_eq!(max, 4009 * 2 * 3);
    assert_eq!(min.as_deref(), Some("name-3990"));
    let error = plan_scan(
        &parquet,
        &ScanRequest {
            limit: Some(5),
            ..request
        },
    )
    .expect_err("limit with aggregates");
    assert_eq!(error.code(), "INVALID_ARGUMENT");
}

#[test]
fn count_star_reads_no_column_of_its_own() {
    use parquet_skim_core::aggregate::AggregateSpec;

    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let count: Vec<AggregateSpec> = serde_json::from_str(r#"[{"fn":"count"}]"#).expect("json");
    let total = |request: &ScanRequest| {
        let plan = plan_scan(&parquet, request).expect("plan");
        let scan = plan.bind(&parquet).expect("bind");
        let rows: u64 = plan
            .tasks
            .iter()
            .map(|task| run_task(&scan, &file, task).partials.expect("partials")[0].count)
            .sum();
        (plan, rows)
    };
    // Without a filter the row counts come from the decoder alone: nothing is fetched.
    let (plan, rows) = total(&ScanRequest {
        aggregates: Some(count.clone()),
        ..Default::default()
    });
    assert_eq!(rows, 10_000);
    assert!(plan
        .tasks
        .iter()
        .all(|t| t.filter_ranges.is_empty() && t.output_ranges.is_empty()));
    // With a filter only its columns are read: no second phase.
    let (plan, rows) = total(&ScanRequest {
        filter: Some(parquet_skim_core::parse_sql("id < 1234 OR id >= 9000").expect("parse")),
        aggregates: Some(count),
        ..Default::default()
    });
    assert_eq!(rows, 1_234 + 1_000);
    assert!(plan.tasks.iter().all(|t| t.output_ranges.is_empty()));
    // A caller's empty column list is still refused.
    let error = plan_scan(
        &parquet,
        &ScanRequest {
            columns: Some(Vec::new()),
            ..Default::default()
        },
    )
    .expect_err("no columns");
    assert_eq!(error.code(), "INVALID_ARGUMENT");
}

#[test]
fn splitting_a_row_group_keeps_a_limit() {
    // Regression: the windows past a limit's last row used to select their whole range.
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        columns: Some(vec!["id".into()]),
        offset: Some(100),
        limit: Some(1_000),
        target_task_rows: Some(600),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    assert_eq!(plan.rows, Some(1_000));
    assert_eq!(
        ids(&scan(&parquet, &file, &request), "id"),
        (100..1_100).collect::<Vec<_>>()
    );
}

/// A file whose Arrow schema has string and binary views (as tpchgen-cli and pyarrow's
/// `string_view` write), a view inside a struct among them.
fn views_file() -> Bytes {
    use arrow_array::{ArrayRef, BinaryViewArray, RecordBatch, StringViewArray, StructArray};
    use arrow_schema::{Field, Fields, Schema};
    use parquet::arrow::ArrowWriter;
    use std::sync::Arc;
    let text = StringViewArray::from(vec![
        Some("short"),
        Some("a string longer than twelve bytes"),
        None,
    ]);
    let blob = BinaryViewArray::from(vec![Some(&b"\x00\x01"[..]), None, Some(&b"bytes"[..])]);
    let inner = Fields::from(vec![Field::new("name", DataType::Utf8View, true)]);
    let nested = StructArray::new(
        inner.clone(),
        vec![Arc::new(StringViewArray::from(vec![Some("x"), Some("y"), None])) as ArrayRef],
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("text", DataType::Utf8View, true),
        Field::new("blob", DataType::BinaryView, true),
        Field::new("nested", DataType::Struct(inner), false),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(text), Arc::new(blob), Arc::new(nested)],
    )
    .expect("batch");
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, schema, None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    Bytes::from(out)
}

#[test]
fn view_columns_read_as_views_or_as_plain_strings_for_arrow_readers_without_views() {
    use arrow_array::RecordBatch;
    use parquet_skim_core::{LoadStep, OpenOptions};
    let file = views_file();
    let types = |batches: &[RecordBatch]| -> Vec<DataType> {
        let schema = batches[0].schema();
        let nested = match schema.field(2).data_type() {
            DataType::Struct(fields) => fields[0].data_type().clone(),
            other => other.clone(),
        };
        vec![
            schema.field(0).data_type().clone(),
            schema.field(1).data_type().clone(),
            nested,
        ]
    };
    let strings = |batches: &[RecordBatch]| -> Vec<Option<String>> {
        let column = arrow_cast::cast(batches[0].column(0), &DataType::Utf8).expect("cast");
        column
            .as_string::<i32>()
            .iter()
            .map(|s| s.map(str::to_string))
            .collect()
    };
    for (view_types, expected) in [
        (
            true,
            [DataType::Utf8View, DataType::BinaryView, DataType::Utf8View],
        ),
        (false, [DataType::Utf8, DataType::Binary, DataType::Utf8]),
    ] {
        let mut loader = MetadataLoader::try_new(file.len() as u64)
            .expect("loader")
            .with_options(OpenOptions {
                view_types,
                ..OpenOptions::default()
            });
        loader
            .push(0..file.len() as u64, file.clone())
            .expect("push");
        let LoadStep::Loaded(parquet) = loader.try_load().expect("load") else {
            panic!("the whole file was pushed");
        };
        assert_eq!(parquet.arrow_schema().field(0).data_type(), &expected[0]);
        let batches = scan(&parquet, &file, &ScanRequest::default());
        assert_eq!(
            types(&batches),
            expected.to_vec(),
            "view_types {view_types}"
        );
        assert_eq!(
            strings(&batches),
            vec![
                Some("short".into()),
                Some("a string longer than twelve bytes".into()),
                None
            ]
        );
        // A worker rebuilding the file from its footer reads it the same way.
        let rebuilt =
            ParquetFile::try_from_footer(parquet.file_len(), parquet.footer().to_vec(), view_types)
                .expect("rebuild");
        assert_eq!(rebuilt.arrow_schema(), parquet.arrow_schema());
    }
}

#[test]
fn a_task_run_in_slices_of_one_batch_returns_what_it_returns_in_one_run() {
    let file = sample_file();
    let (parquet, _) = open(&file, 512 * 1024);
    let request = ScanRequest {
        batch_size: Some(100),
        filter: Some(parquet_skim_core::parse_sql("name LIKE '%3%' OR id > 1500").expect("sql")),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &request).expect("plan");
    let scan = plan.bind(&parquet).expect("bind");
    let mut slices_total = 0;
    for task in &plan.tasks {
        let whole = run_task(&scan, &file, task);
        let mut decoder = parquet_skim_core::TaskDecoder::try_new(&scan, &task.spec).expect("task");
        for r in task.filter_ranges.iter().chain(&task.output_ranges) {
            decoder
                .push(r.start..r.end, slice(&file, &(r.start..r.end)))
                .expect("push");
        }
        let mut slices = 0;
        let sliced = loop {
            slices += 1;
            match decoder.run_sliced(1).expect("run") {
                None => continue,
                Some(parquet_skim_core::TaskRun::Done(output)) => break output,
                Some(parquet_skim_core::TaskRun::NeedsRanges(r)) => {
                    for r in r {
                        let bytes = slice(&file, &r);
                        decoder.push(r, bytes).expect("push");
                    }
                }
            }
        };
        assert_eq!(sliced.ipc, whole.ipc);
        assert_eq!((sliced.rows, sliced.batches), (whole.rows, whole.batches));
        // One slice per batch at least (plus the call that finds the end).
        assert!(
            slices > whole.batches as usize,
            "{slices} slices for {} batches",
            whole.batches
        );
        slices_total += slices;
    }
    assert!(slices_total > plan.tasks.len() * 2);
}

/// Row groups of a few hundred rows (a partitioned writer's) share tasks up to the bounds of
/// `plan::group_small_tasks`; a grouped task decodes exactly what a task per row group would —
/// unfiltered, filtered and aggregated — and a filtered scan with a limit keeps a task per row group.
#[test]
fn small_row_groups_share_a_task_and_decode_the_same_rows() {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use parquet::file::properties::WriterProperties;
    use parquet_skim_core::plan::{GROUP_TASK_BYTES, GROUP_TASK_ROWS};
    use std::sync::Arc;

    let all_ids: Vec<i64> = (0..60_000).collect();
    let names = StringArray::from_iter_values(all_ids.iter().map(|i| format!("n{}", i % 977)));
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(all_ids.clone())) as ArrayRef,
        ),
        ("name", Arc::new(names) as ArrayRef),
    ])
    .expect("batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(300))
        .build();
    let file = common::write_parquet(&batch, props);
    let (parquet, _) = open(&file, 1 << 20);
    assert_eq!(parquet.metadata().num_row_groups(), 200);

    let all = ScanRequest::default();
    let plan = plan_scan(&parquet, &all).expect("plan");
    let spans: Vec<Vec<usize>> = plan
        .tasks
        .iter()
        .map(|t| t.spec.row_groups().map(|(rg, _)| rg).collect())
        .collect();
    assert!(plan.tasks.len() < 20, "{} tasks", plan.tasks.len());
    // Every row group once, in order; each task within the bounds.
    assert_eq!(spans.concat(), (0..200).collect::<Vec<_>>());
    for task in &plan.tasks {
        let bytes: u64 = task
            .filter_ranges
            .iter()
            .chain(&task.output_ranges)
            .map(|r| r.end - r.start)
            .sum();
        assert!(bytes <= GROUP_TASK_BYTES && task.rows_scanned <= GROUP_TASK_ROWS);
        assert_eq!(task.spec.expected_rows, Some(task.rows_scanned));
    }
    assert_eq!(ids(&scan(&parquet, &file, &all), "id"), all_ids);

    let filter = |sql: &str| Some(parquet_skim_core::parse_sql(sql).expect("parse"));
    let filtered = ScanRequest {
        filter: filter("name = 'n5' OR id BETWEEN 30000 AND 30010"),
        ..Default::default()
    };
    let expected: Vec<i64> = all_ids
        .iter()
        .copied()
        .filter(|i| i % 977 == 5 || (30_000..=30_010).contains(i))
        .collect();
    assert_eq!(ids(&scan(&parquet, &file, &filtered), "id"), expected);

    let sum = ScanRequest {
        filter: filter("id >= 1000"),
        aggregates: Some(
            serde_json::from_str(r#"[{"fn":"sum","expr":{"column":"id"}}, {"fn":"count"}]"#)
                .expect("json"),
        ),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &sum).expect("plan");
    assert!(plan.tasks.len() < 20);
    let scan_bound = plan.bind(&parquet).expect("bind");
    let (mut total, mut count) = (0i128, 0u64);
    for task in &plan.tasks {
        let partials = common::run_task(&scan_bound, &file, task)
            .partials
            .expect("partials");
        total += partials[0]
            .value
            .as_deref()
            .map_or(0, |v| v.parse::<i128>().expect("int"));
        count += partials[1].count;
    }
    assert_eq!(total, (1_000..60_000i128).sum::<i128>());
    assert_eq!(count, 59_000);

    // The same filter groups the same row groups, with the same cache keys, whatever is projected.
    let keyed = |columns: Option<Vec<String>>| {
        let plan = plan_scan(
            &parquet,
            &ScanRequest {
                columns,
                // A filter on `id` alone: `name` is an output column, or not.
                filter: filter("id >= 100 AND id != 5000"),
                file_key: Some("f@1".into()),
                column_cache_bytes: Some(64 << 20),
                ..Default::default()
            },
        )
        .expect("plan");
        plan.tasks
            .iter()
            .map(|t| {
                let rgs: Vec<usize> = t.spec.row_groups().map(|(rg, _)| rg).collect();
                (rgs, t.spec.cache_key.clone().expect("a key"))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(keyed(Some(vec!["id".into()])), keyed(None));
    assert_eq!(keyed(Some(vec!["name".into(), "id".into()])), keyed(None));
    assert!(keyed(None).len() < 20);

    // `targetTaskRows` bounds a group's rows too.
    let target = ScanRequest {
        target_task_rows: Some(10_000),
        ..Default::default()
    };
    let plan = plan_scan(&parquet, &target).expect("plan");
    assert!(plan.tasks.iter().all(|t| t.rows_scanned <= 10_000));
    assert!(
        plan.tasks.len() >= 6 && plan.tasks.len() < 20,
        "{}",
        plan.tasks.len()
    );
    assert_eq!(ids(&scan(&parquet, &file, &target), "id"), all_ids);

    // With a filter, row groups the page index pruned in part (a page selection: no predicate
    // cache) and row groups read whole do not share a task.
    let paged = common::sample_file();
    let (sample, _) = open(&paged, 512 * 1024);
    let partly = ScanRequest {
        filter: filter("id < 4200"),
        ..Default::default()
    };
    let plan = plan_scan(&sample, &partly).expect("plan");
    let shape: Vec<(usize, bool, usize)> = plan
        .tasks
        .iter()
        .map(|t| {
            (
                t.spec.row_group_idx,
                t.spec.selection.is_some(),
                t.spec.more_row_groups.len(),
            )
        })
        .collect();
    assert_eq!(shape, [(0, false, 0), (1, true, 0)]);
    assert_eq!(
        ids(&scan(&sample, &paged, &partly), "id"),
        (0..4200).collect::<Vec<_>>()
    );

    // First rows of a filter: a task per row group, stopping at the limit.
    let limited = ScanRequest {
        limit: Some(5),
        ..filtered.clone()
    };
    let plan = plan_scan(&parquet, &limited).expect("plan");
    assert!(plan.tasks.iter().all(|t| t.spec.more_row_groups.is_empty()));
    assert_eq!(
        ids(&scan(&parquet, &file, &limited), "id"),
        expected[..5].to_vec()
    );
}
