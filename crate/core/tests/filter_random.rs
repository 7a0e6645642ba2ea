//! Randomized correctness of filters: random filter expressions over a generated file full of
//! traps — nulls, NaN, ±0, infinities, truncated string statistics, unsigned values above 2^31,
//! dates, decimals, a nested struct with null parents — scanned with every pruning path on, and
//! compared with a plain row-by-row evaluation (written here, independent of the arrow kernels)
//! over the fully decoded, unfiltered data. Deterministic: a fixed-seed generator.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type, UInt32Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int64Array, RecordBatch, StringArray, StructArray, UInt32Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use common::{open, scan_with_io, Rng};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet_skim_core::{Expr, ScanRequest};
use serde_json::{json, Value};

const ROWS: usize = 6_000;

/// One decoded row, as the reference evaluator sees it.
#[derive(Debug, Clone)]
struct Row {
    rid: i64,
    i: Option<i64>,
    f: Option<f64>,
    s: Option<String>,
    d: Option<i32>,
    dec: Option<i128>,
    u: Option<u32>,
    b: Option<bool>,
    /// `st.x`: null when `st` is null.
    x: Option<i32>,
}

const WORDS: [&str; 8] = [
    "apple", "apricot", "banana", "cherry", "date", "fig", "grape", "kiwi",
];

fn generate(rng: &mut Rng) -> Bytes {
    let mut i = Vec::new();
    let mut f = Vec::new();
    let mut s = Vec::new();
    let mut d = Vec::new();
    let mut dec = Vec::new();
    let mut u = Vec::new();
    let mut b = Vec::new();
    let mut x = Vec::new();
    let mut st_valid = Vec::new();
    for row in 0..ROWS {
        // Mostly increasing, so statistics and the page index actually prune.
        i.push((!rng.chance(10)).then(|| (row as i64) * 3 - 5_000 + rng.below(50) as i64));
        f.push((!rng.chance(10)).then(|| match rng.below(20) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::INFINITY,
            4 => f64::NEG_INFINITY,
            _ => (row as f64) / 7.0 - 300.0,
        }));
        s.push((!rng.chance(10)).then(|| {
            // Long shared prefixes: the statistics are truncated to 8 bytes.
            let word = rng.pick(&WORDS);
            format!(
                "{word}-{:0>6}-{}",
                row / 40,
                "z".repeat(rng.below(30) as usize)
            )
        }));
        d.push((!rng.chance(10)).then(|| 8_000 + (row / 3) as i32));
        dec.push((!rng.chance(10)).then(|| (rng.below(200_000) as i128) - 100_000));
        // Straddles 2^31: wrong under a signed sort order.
        u.push(
            (!rng.chance(10))
                .then(|| (2_147_483_000u64 + row as u64 * 500 + rng.below(100)) as u32),
        );
        b.push((!rng.chance(10)).then(|| rng.chance(50)));
        x.push((!rng.chance(10)).then_some((row / 10) as i32));
        st_valid.push(!rng.chance(10));
    }
    let st_fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("rid", DataType::Int64, false),
        Field::new("i", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new("dec", DataType::Decimal128(9, 2), true),
        Field::new("u", DataType::UInt32, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("st", DataType::Struct(st_fields.clone()), true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..ROWS as i64)),
        Arc::new(Int64Array::from(i)),
        Arc::new(Float64Array::from(f)),
        Arc::new(StringArray::from(s)),
        Arc::new(Date32Array::from(d)),
        Arc::new(
            Decimal128Array::from(dec)
                .with_precision_and_scale(9, 2)
                .expect("decimal"),
        ),
        Arc::new(UInt32Array::from(u)),
        Arc::new(BooleanArray::from(b)),
        Arc::new(StructArray::new(
            st_fields,
            vec![Arc::new(Int32Array::from(x)) as ArrayRef],
            Some(NullBuffer::from(st_valid)),
        )),
    ];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).expect("batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1_000))
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(Some(8))
        .set_column_index_truncate_length(Some(8))
        .build();
    common::write_parquet(&batch, props)
}

/// The rows of an unfiltered scan, decoded into [`Row`]s.
fn decode_rows(batches: &[RecordBatch]) -> Vec<Row> {
    let mut rows = Vec::new();
    for batch in batches {
        let col = |name: &str| batch.column_by_name(name).expect("column").clone();
        let (rid, i, f, s) = (col("rid"), col("i"), col("f"), col("s"));
        let (d, dec, u, b, st) = (col("d"), col("dec"), col("u"), col("b"), col("st"));
        let st = st.as_struct();
        let x = st.column(0);
        for r in 0..batch.num_rows() {
            let get = |a: &ArrayRef| a.is_valid(r);
            rows.push(Row {
                rid: rid.as_primitive::<Int64Type>().value(r),
                i: get(&i).then(|| i.as_primitive::<Int64Type>().value(r)),
                f: get(&f).then(|| f.as_primitive::<Float64Type>().value(r)),
                s: get(&s).then(|| s.as_string::<i32>().value(r).to_owned()),
                d: get(&d).then(|| d.as_primitive::<Date32Type>().value(r)),
                dec: get(&dec).then(|| dec.as_primitive::<Decimal128Type>().value(r)),
                u: get(&u).then(|| u.as_primitive::<UInt32Type>().value(r)),
                b: get(&b).then(|| b.as_boolean().value(r)),
                x: (st.is_valid(r) && x.is_valid(r))
                    .then(|| x.as_primitive::<Int32Type>().value(r)),
            });
        }
    }
    rows
}

/// A literal for `column`, usually drawn from the data so comparisons hit.
fn literal(rng: &mut Rng, rows: &[Row], column: &str) -> Value {
    let row = &rows[rng.below(rows.len() as u64) as usize];
    match column {
        "i" => json!(row.i.unwrap_or(rng.below(20_000) as i64 - 5_000)),
        "f" => json!(row
            .f
            .filter(|v| v.is_finite())
            .unwrap_or(rng.below(1_000) as f64 - 300.0)),
        "s" => json!(row
            .s
            .clone()
            .unwrap_or_else(|| rng.pick(&WORDS).to_string())),
        "d" => json!(date_text(row.d.unwrap_or(8_000 + rng.below(2_000) as i32))),
        "dec" => {
            let v = row.dec.unwrap_or(rng.below(200_000) as i128 - 100_000);
            json!(decimal_text(v))
        }
        "u" => json!(row.u.unwrap_or(2_147_483_000 + rng.below(3_000_000) as u32)),
        "b" => json!(row.b.unwrap_or(true)),
        _ => json!(row.x.unwrap_or(rng.below(600) as i32)),
    }
}

fn random_expr(rng: &mut Rng, rows: &[Row], depth: u32) -> Expr {
    if depth > 0 && rng.chance(40) {
        let args = (0..2 + rng.below(2))
            .map(|_| random_expr(rng, rows, depth - 1))
            .collect();
        return match rng.below(3) {
            0 => Expr::And { args },
            1 => Expr::Or { args },
            _ => Expr::Not {
                arg: Box::new(random_expr(rng, rows, depth - 1)),
            },
        };
    }
    let column = *rng.pick(&["i", "f", "s", "d", "dec", "u", "b", "st.x"]);
    let name = column.to_owned();
    let value = literal(rng, rows, column);
    match rng.below(if column == "s" { 10 } else { 7 }) {
        0 => Expr::Eq {
            column: name,
            value,
        },
        1 => Expr::Ne {
            column: name,
            value,
        },
        2 => Expr::Lt {
            column: name,
            value,
        },
        3 => Expr::Gte {
            column: name,
            value,
        },
        4 => {
            let other = literal(rng, rows, column);
            let (low, high) = if compare_literals(column, &value, &other) {
                (value, other)
            } else {
                (other, value)
            };
            Expr::Between {
                column: name,
                low,
                high,
            }
        }
        5 => Expr::In {
            column: name,
            values: vec![
                value,
                literal(rng, rows, column),
                literal(rng, rows, column),
            ],
        },
        6 => {
            if rng.chance(50) {
                Expr::IsNull { column: name }
            } else {
                Expr::IsNotNull { column: name }
            }
        }
        7 => Expr::StartsWith {
            column: name,
            value: value
                .as_str()
                .unwrap_or("a")
                .chars()
                .take(1 + rng.below(10) as usize)
                .collect(),
        },
        8 => Expr::Like {
            column: name,
            pattern: format!("{}%-0{}%", rng.pick(&WORDS), rng.below(10)),
        },
        _ => Expr::Contains {
            column: name,
            value: format!("0{}", rng.below(100)),
        },
    }
}

/// `a <= b` for two literals of `column` (to order BETWEEN's bounds).
fn compare_literals(column: &str, a: &Value, b: &Value) -> bool {
    let row = |v: &Value| value_of(column, v);
    matches!(
        row(a).partial_cmp_total(&row(b)),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    )
}

/// A cell value in a form that compares like arrow does.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl Cell {
    fn partial_cmp_total(&self, other: &Cell) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Cell::Int(a), Cell::Int(b)) => Some(a.cmp(b)),
            // IEEE total order: -0 < +0, NaN above everything.
            (Cell::Float(a), Cell::Float(b)) => Some(a.total_cmp(b)),
            (Cell::Str(a), Cell::Str(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (Cell::Bool(a), Cell::Bool(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

fn value_of(column: &str, v: &Value) -> Cell {
    match column {
        "f" => Cell::Float(v.as_f64().expect("float")),
        "s" => Cell::Str(v.as_str().expect("string").to_owned()),
        "b" => Cell::Bool(v.as_bool().expect("bool")),
        "d" => Cell::Int(i128::from(days_of(v.as_str().expect("date")))),
        "dec" => Cell::Int(unscaled(v.as_str().expect("decimal"))),
        _ => Cell::Int(i128::from(v.as_i64().expect("integer"))),
    }
}

fn cell(row: &Row, column: &str) -> Option<Cell> {
    match column {
        "i" => row.i.map(|v| Cell::Int(v.into())),
        "f" => row.f.map(Cell::Float),
        "s" => row.s.clone().map(Cell::Str),
        "d" => row.d.map(|v| Cell::Int(v.into())),
        "dec" => row.dec.map(Cell::Int),
        "u" => row.u.map(|v| Cell::Int(v.into())),
        "b" => row.b.map(Cell::Bool),
        _ => row.x.map(|v| Cell::Int(v.into())),
    }
}

/// SQL three-valued evaluation of `expr` on one row. (`fold`, not `try_fold`: a null operand
/// must not stop an AND that a later `false` decides.)
#[allow(clippy::manual_try_fold)]
fn eval(expr: &Expr, row: &Row) -> Option<bool> {
    use std::cmp::Ordering::*;
    let cmp = |column: &str, value: &Value| -> Option<std::cmp::Ordering> {
        cell(row, column)?.partial_cmp_total(&value_of(column, value))
    };
    let text = |column: &str| match cell(row, column) {
        Some(Cell::Str(s)) => Some(s),
        _ => None,
    };
    match expr {
        Expr::And { args } => args
            .iter()
            .fold(Some(true), |acc, a| match (acc, eval(a, row)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }),
        Expr::Or { args } => args
            .iter()
            .fold(Some(false), |acc, a| match (acc, eval(a, row)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            }),
        Expr::Not { arg } => eval(arg, row).map(|v| !v),
        Expr::Eq { column, value } => cmp(column, value).map(|o| o == Equal),
        Expr::Ne { column, value } => cmp(column, value).map(|o| o != Equal),
        Expr::Lt { column, value } => cmp(column, value).map(|o| o == Less),
        Expr::Lte { column, value } => cmp(column, value).map(|o| o != Greater),
        Expr::Gt { column, value } => cmp(column, value).map(|o| o == Greater),
        Expr::Gte { column, value } => cmp(column, value).map(|o| o != Less),
        Expr::Between { column, low, high } => {
            Some(cmp(column, low)? != Less && cmp(column, high)? != Greater)
        }
        Expr::In { column, values } => {
            cell(row, column)?;
            Some(values.iter().any(|v| cmp(column, v) == Some(Equal)))
        }
        Expr::IsNull { column } => Some(cell(row, column).is_none()),
        Expr::IsNotNull { column } => Some(cell(row, column).is_some()),
        Expr::StartsWith { column, value } => text(column).map(|s| s.starts_with(value.as_str())),
        Expr::EndsWith { column, value } => text(column).map(|s| s.ends_with(value.as_str())),
        Expr::Contains { column, value } => text(column).map(|s| s.contains(value.as_str())),
        Expr::Like { column, pattern } => {
            text(column).map(|s| like(s.as_bytes(), pattern.as_bytes()))
        }
    }
}

/// `%` and `_` matching (the generated patterns have no escapes).
fn like(s: &[u8], p: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'%', rest)) => (0..=s.len()).any(|k| like(&s[k..], rest)),
        Some((b'_', rest)) => !s.is_empty() && like(&s[1..], rest),
        Some((c, rest)) => s.first() == Some(c) && like(&s[1..], rest),
    }
}

fn decimal_text(unscaled: i128) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let v = unscaled.unsigned_abs();
    format!("{sign}{}.{:02}", v / 100, v % 100)
}

fn unscaled(text: &str) -> i128 {
    let negative = text.starts_with('-');
    let digits: String = text.chars().filter(|c| c.is_ascii_digit()).collect();
    let v: i128 = digits.parse().expect("digits");
    if negative {
        -v
    } else {
        v
    }
}

/// Days since 1970-01-01 → `YYYY-MM-DD` (civil calendar).
fn date_text(days: i32) -> String {
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `YYYY-MM-DD` → days since 1970-01-01 (the inverse of [`date_text`]).
fn days_of(text: &str) -> i32 {
    let mut parts = text
        .split('-')
        .map(|p| p.parse::<i64>().expect("date part"));
    let (y, m, d) = (
        parts.next().expect("year"),
        parts.next().expect("month"),
        parts.next().expect("day"),
    );
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i32
}

#[test]
fn random_filters_match_a_plain_evaluation() {
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let file = generate(&mut rng);
    let (parquet, _) = open(&file, 1 << 20);
    let (all, _) = scan_with_io(&parquet, &file, &ScanRequest::default(), true);
    let rows = decode_rows(&all);
    assert_eq!(rows.len(), ROWS);
    let (mut pruned_groups, mut pruned_pages, mut nonempty, mut cross_checked) = (0, 0, 0, 0);
    for case in 0..400 {
        let expr = random_expr(&mut rng, &rows, 3);
        let expected: BTreeSet<i64> = rows
            .iter()
            .filter(|r| eval(&expr, r) == Some(true))
            .map(|r| r.rid)
            .collect();
        let request = ScanRequest {
            columns: Some(vec!["rid".into()]),
            filter: Some(expr.clone()),
            ..Default::default()
        };
        let plan = parquet_skim_core::plan_scan(&parquet, &request).unwrap_or_else(|e| {
            panic!(
                "case {case}: {e}\n{}",
                serde_json::to_string(&expr).unwrap_or_default()
            )
        });
        pruned_groups += plan.stats.row_groups_pruned_by_stats;
        pruned_pages += plan.stats.pages_pruned;
        let (batches, _) = scan_with_io(&parquet, &file, &request, case % 2 == 0);
        let actual: BTreeSet<i64> = batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect();
        nonempty += usize::from(!expected.is_empty());
        assert_eq!(
            actual,
            expected,
            "case {case}: {}",
            serde_json::to_string(&expr).unwrap_or_default()
        );
        if case % 4 == 0 {
            // The cross-scan path (filter columns decoded apart, output columns taken from them
            // or decoded for the rows that passed) returns exactly the fused path's batches.
            let fused = ScanRequest {
                columns: None,
                ..request.clone()
            };
            let cross = ScanRequest {
                file_key: Some("random".into()),
                column_cache_bytes: Some(if case % 8 == 0 { 1 << 30 } else { 4096 }),
                ..fused.clone()
            };
            let (a, _) = scan_with_io(&parquet, &file, &fused, true);
            let (b, _) = scan_with_io(&parquet, &file, &cross, case % 8 == 0);
            let concat = |batches: &[RecordBatch]| {
                arrow_select::concat::concat_batches(&all[0].schema(), batches).expect("concat")
            };
            assert_eq!(
                concat(&a),
                concat(&b),
                "case {case} cross-scan: {}",
                serde_json::to_string(&expr).unwrap_or_default()
            );
            cross_checked += 1;
        }
    }
    assert_eq!(cross_checked, 100);
    println!("400 random filters agree; {nonempty} non-empty; pruned {pruned_groups} row groups and {pruned_pages} pages in all");
    // The test must exercise pruning, not only the kernels.
    assert!(
        pruned_groups > 50 && pruned_pages > 500,
        "{pruned_groups} groups, {pruned_pages} pages"
    );
    assert!(nonempty > 100);
}

/// Pruning on statistics written by other writers (parquet-mr, Impala, parquet-cpp): for each
/// primitive top-level column of these parquet-testing files, filters with values from the data
/// return exactly what filtering the unfiltered scan with the same predicate returns.
#[test]
fn no_false_pruning_on_other_writers_statistics() {
    use parquet_skim_core::filter::{bind::bind, eval::evaluate};
    let files = [
        "binary_truncated_min_max.parquet",
        "nan_in_stats.parquet",
        "floating_orders_nan_count.parquet",
        "int32_with_null_pages.parquet",
        "alltypes_tiny_pages.parquet",
        "data_index_bloom_encoding_stats.parquet",
        "single_nan.parquet",
        "sort_columns.parquet",
    ];
    let mut checked = 0;
    for name in files {
        let file = common::parquet_testing(name);
        let (parquet, _) = open(&file, 1 << 20);
        let (all, _) = scan_with_io(&parquet, &file, &ScanRequest::default(), true);
        let schema = parquet.arrow_schema().clone();
        for field in schema.fields() {
            let t = field.data_type();
            if !(t.is_primitive()
                || matches!(t, DataType::Utf8 | DataType::Binary | DataType::Boolean))
            {
                continue;
            }
            let column = field.name();
            // Literals: a few values of the column rendered as text (arrow's own display).
            let values: Vec<String> = all
                .iter()
                .flat_map(|b| {
                    let a = b.column_by_name(column).expect("column").clone();
                    let fmt = arrow_cast::display::ArrayFormatter::try_new(&a, &Default::default())
                        .expect("fmt");
                    (0..a.len())
                        .step_by(97)
                        .filter(|&i| a.is_valid(i))
                        .map(|i| fmt.value(i).to_string())
                        .collect::<Vec<_>>()
                })
                .take(5)
                .collect();
            for v in values {
                let value = if t.is_numeric() {
                    serde_json::from_str::<Value>(&v).unwrap_or(json!(v))
                } else {
                    json!(v)
                };
                for expr in [
                    Expr::Eq {
                        column: column.clone(),
                        value: value.clone(),
                    },
                    Expr::Lt {
                        column: column.clone(),
                        value: value.clone(),
                    },
                    Expr::Gte {
                        column: column.clone(),
                        value: value.clone(),
                    },
                    Expr::Ne {
                        column: column.clone(),
                        value: value.clone(),
                    },
                    Expr::IsNull {
                        column: column.clone(),
                    },
                ] {
                    let Ok(predicate) = bind(
                        &expr,
                        &schema,
                        parquet.metadata().file_metadata().schema_descr(),
                    ) else {
                        continue; // e.g. NaN or binary text that is not a literal of the type
                    };
                    let mut expected = 0;
                    for batch in &all {
                        let mask = evaluate(&predicate, batch).expect("evaluate");
                        expected += (0..mask.len())
                            .filter(|&i| mask.is_valid(i) && mask.value(i))
                            .count();
                    }
                    let request = ScanRequest {
                        columns: Some(vec![column.clone()]),
                        filter: Some(expr.clone()),
                        ..Default::default()
                    };
                    let (batches, _) = scan_with_io(&parquet, &file, &request, true);
                    let actual: usize = batches.iter().map(|b| b.num_rows()).sum();
                    assert_eq!(
                        actual,
                        expected,
                        "{name}: {}",
                        serde_json::to_string(&expr).unwrap_or_default()
                    );
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} filters on parquet-testing files agree with the unpruned evaluation");
    assert!(checked > 100, "{checked}");
}
