//! Partial aggregates folded inside a read task: `count`, `sum`, `min`, `max` of a column or of
//! a simple arithmetic expression of columns (`l_extendedprice * (1 - l_discount)`).
//!
//! This is the fusion the task design is for: a worker decodes a batch, filters it (the
//! `RowFilter`), evaluates the expression and folds it into a few numbers before it decodes the
//! next batch — the decoded columns never leave the worker. What leaves is a [`Partial`] per
//! aggregate (JSON, exact: integers and decimals as decimal text), which the scheduler merges.
//!
//! Arithmetic runs on arrow's numeric kernels, so decimal × decimal keeps exact scale
//! (`Decimal128(15,2) × Decimal128(15,2)` is summed as unscaled integers with scale 4). Integers
//! and decimals are summed in `i128`; an overflow is an error, never a wrapped result.

use arrow_arith::numeric;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch, Scalar};
use arrow_schema::{ArrowError, DataType, Schema};
use parquet::schema::types::SchemaDescriptor;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Result, SkimError};
use crate::filter::bind::{resolve, ColumnRef};
use crate::filter::eval::values;
use crate::filter::literal::parse_literal;

/// An aggregate to compute, as JSON: `{"fn": "sum", "expr": {...}}`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AggregateSpec {
    #[serde(rename = "fn")]
    pub function: AggregateFn,
    /// The value aggregated; `count` without one counts rows.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub expr: Option<ValueExpr>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AggregateFn {
    Count,
    Sum,
    Min,
    Max,
}

/// A value expression: a column, a literal, or arithmetic on two of them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ValueExpr {
    Column {
        column: String,
    },
    Literal {
        value: Value,
    },
    Arith {
        op: ArithOp,
        left: Box<ValueExpr>,
        right: Box<ValueExpr>,
    },
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl ValueExpr {
    /// Every column the expression reads.
    pub fn columns(&self, out: &mut Vec<String>) {
        match self {
            Self::Column { column } => {
                if !out.contains(column) {
                    out.push(column.clone());
                }
            }
            Self::Literal { .. } => {}
            Self::Arith { left, right, .. } => {
                left.columns(out);
                right.columns(out);
            }
        }
    }
}

/// The partial result of one aggregate over some rows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Partial {
    /// `int` (integers and decimals, as unscaled integer text), `float`, `string`, or `count`.
    #[cfg_attr(feature = "ts", ts(type = "'int' | 'float' | 'string' | 'count'"))]
    pub kind: String,
    /// Decimal scale of `int` values (0 for integers).
    pub scale: i8,
    /// The Arrow type of the aggregated values, for presenting the result.
    pub data_type: String,
    /// Non-null values folded (rows, for `count` without an expression).
    pub count: u64,
    /// The sum, minimum or maximum so far; `None` before any non-null value.
    pub value: Option<String>,
}

/// Aggregates bound to a file, folding batches.
pub struct Aggregator {
    specs: Vec<(AggregateFn, Option<Bound>)>,
    state: Vec<State>,
}

#[derive(Debug, Clone)]
enum Bound {
    Column(ColumnRef),
    Literal(Value),
    Arith(ArithOp, Box<Bound>, Box<Bound>),
}

#[derive(Debug, Clone, Default)]
struct State {
    count: u64,
    data_type: Option<DataType>,
    int: Option<i128>,
    float: Option<f64>,
    text: Option<String>,
}

impl Aggregator {
    /// Binds `specs` to a file's schema.
    pub fn try_new(
        specs: &[AggregateSpec],
        schema: &Schema,
        parquet: &SchemaDescriptor,
    ) -> Result<Self> {
        fn bind(e: &ValueExpr, schema: &Schema, parquet: &SchemaDescriptor) -> Result<Bound> {
            Ok(match e {
                ValueExpr::Column { column } => Bound::Column(resolve(column, schema, parquet)?),
                ValueExpr::Literal { value } => Bound::Literal(value.clone()),
                ValueExpr::Arith { op, left, right } => Bound::Arith(
                    *op,
                    Box::new(bind(left, schema, parquet)?),
                    Box::new(bind(right, schema, parquet)?),
                ),
            })
        }
        let mut bound = Vec::with_capacity(specs.len());
        for spec in specs {
            let expr = spec
                .expr
                .as_ref()
                .map(|e| bind(e, schema, parquet))
                .transpose()?;
            if expr.is_none() && spec.function != AggregateFn::Count {
                return Err(SkimError::invalid_argument(
                    "aggregates",
                    format!("{:?} needs an expression", spec.function),
                ));
            }
            if matches!(expr, Some(Bound::Literal(_))) {
                return Err(SkimError::invalid_argument(
                    "aggregates",
                    "aggregate a column or an expression of columns, not a constant",
                ));
            }
            bound.push((spec.function, expr));
        }
        Ok(Self {
            state: vec![State::default(); bound.len()],
            specs: bound,
        })
    }

    /// Folds one (already filtered) batch. Out of line, so that a task's `take_batch` stays small
    /// enough for V8 not to optimize it whole in a first scan (`bench/results/2026-11-29-tier-up.md`).
    #[inline(never)]
    pub fn fold(&mut self, batch: &RecordBatch) -> Result<()> {
        for ((function, expr), state) in self.specs.iter().zip(self.state.iter_mut()) {
            let Some(expr) = expr else {
                state.count += batch.num_rows() as u64;
                continue;
            };
            // Errors here come from the expression (a constant that does not fit, division by
            // zero, overflow), not from the file.
            let array = evaluate(expr, batch).map_err(|e| {
                SkimError::invalid_argument("aggregates", format!("computing an aggregate: {e}"))
            })?;
            fold_array(*function, &array, state)?;
        }
        Ok(())
    }

    /// The partial results, in spec order.
    pub fn partials(&self) -> Vec<Partial> {
        self.specs
            .iter()
            .zip(&self.state)
            .map(|((function, expr), state)| partial(*function, expr.is_some(), state))
            .collect()
    }
}

fn evaluate(expr: &Bound, batch: &RecordBatch) -> Result<ArrayRef, ArrowError> {
    match expr {
        Bound::Column(column) => values(batch, column),
        Bound::Literal(_) => Err(ArrowError::InvalidArgumentError("a constant alone".into())),
        Bound::Arith(op, left, right) => {
            let apply = |l: &dyn arrow_array::Datum, r: &dyn arrow_array::Datum| match op {
                ArithOp::Add => numeric::add(l, r),
                ArithOp::Sub => numeric::sub(l, r),
                ArithOp::Mul => numeric::mul(l, r),
                ArithOp::Div => numeric::div(l, r),
            };
            match (left.as_ref(), right.as_ref()) {
                (Bound::Literal(v), other) => {
                    let array = evaluate(other, batch)?;
                    let scalar = Scalar::new(literal_like(v, &array)?);
                    apply(&scalar, &array)
                }
                (other, Bound::Literal(v)) => {
                    let array = evaluate(other, batch)?;
                    let scalar = Scalar::new(literal_like(v, &array)?);
                    apply(&array, &scalar)
                }
                (l, r) => apply(&evaluate(l, batch)?, &evaluate(r, batch)?),
            }
        }
    }
}

/// A literal as a one-element array of `like`'s type (`1` next to a `Decimal128(15,2)` is `1.00`).
fn literal_like(value: &Value, like: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    parse_literal(&text, like.data_type()).map_err(|why| {
        ArrowError::InvalidArgumentError(format!(
            "the constant {value} {why} ({})",
            like.data_type()
        ))
    })
}

fn fold_array(function: AggregateFn, array: &ArrayRef, state: &mut State) -> Result<()> {
    state
        .data_type
        .get_or_insert_with(|| array.data_type().clone());
    state.count += (array.len() - array.null_count()) as u64;
    if function == AggregateFn::Count {
        return Ok(());
    }
    macro_rules! ints {
        ($t:ty) => {
            fold_ints(
                function,
                array.as_primitive::<$t>().iter().flatten().map(i128::from),
                state,
            )
        };
    }
    match array.data_type() {
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Decimal128(_, _) => ints!(Decimal128Type),
        DataType::Date32 if function != AggregateFn::Sum => ints!(Date32Type),
        DataType::Timestamp(_, _) if function != AggregateFn::Sum => {
            // All timestamp units are i64 underneath.
            let raw = array.to_data();
            let nulls = array.logical_nulls();
            let values = raw.buffer::<i64>(0).iter().take(array.len()).enumerate();
            let valid = values.filter(|(i, _)| !nulls.as_ref().is_some_and(|n| n.is_null(*i)));
            fold_ints(function, valid.map(|(_, v)| i128::from(*v)), state)
        }
        DataType::Float32 | DataType::Float64 | DataType::Float16 => {
            fold_floats(
                function,
                arrow_cast_f64(array)?.into_iter().flatten(),
                state,
            );
            Ok(())
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            if function != AggregateFn::Sum =>
        {
            match array.data_type() {
                DataType::Utf8 => fold_strings(function, array.as_string::<i32>().iter(), state),
                DataType::LargeUtf8 => {
                    fold_strings(function, array.as_string::<i64>().iter(), state)
                }
                _ => fold_strings(function, array.as_string_view().iter(), state),
            }
            Ok(())
        }
        other => Err(SkimError::invalid_argument(
            "aggregates",
            format!("cannot {function:?} values of type {other}"),
        )),
    }
}

/// Folds integers (and decimals, dates, timestamps as their integers) into `state.int`: a sum
/// that overflows 128 bits is an error.
fn fold_ints(
    function: AggregateFn,
    values: impl Iterator<Item = i128>,
    state: &mut State,
) -> Result<()> {
    for v in values {
        state.int = Some(match (function, state.int) {
            (_, None) => v,
            (AggregateFn::Sum, Some(acc)) => {
                acc.checked_add(v)
                    .ok_or_else(|| SkimError::InvalidArgument {
                        name: "aggregates".into(),
                        detail: "the sum overflows 128-bit integers".into(),
                    })?
            }
            (AggregateFn::Min, Some(acc)) => acc.min(v),
            (_, Some(acc)) => acc.max(v),
        });
    }
    Ok(())
}

/// Folds floats into `state.float`; min and max order by `total_cmp` (NaN above every number).
fn fold_floats(function: AggregateFn, values: impl Iterator<Item = f64>, state: &mut State) {
    for v in values {
        state.float = Some(match (function, state.float) {
            (_, None) => v,
            (AggregateFn::Sum, Some(acc)) => acc + v,
            (AggregateFn::Min, Some(acc)) if v.total_cmp(&acc).is_lt() => v,
            (AggregateFn::Max, Some(acc)) if v.total_cmp(&acc).is_gt() => v,
            (_, Some(acc)) => acc,
        });
    }
}

/// Folds strings into `state.text` (min or max, by bytes).
fn fold_strings<'a>(
    function: AggregateFn,
    values: impl Iterator<Item = Option<&'a str>>,
    state: &mut State,
) {
    for v in values.flatten() {
        let better = match &state.text {
            None => true,
            Some(acc) if function == AggregateFn::Min => v < acc.as_str(),
            Some(acc) => v > acc.as_str(),
        };
        if better {
            state.text = Some(v.to_owned());
        }
    }
}

fn arrow_cast_f64(array: &ArrayRef) -> Result<Vec<Option<f64>>> {
    Ok(match array.data_type() {
        DataType::Float16 => array
            .as_primitive::<Float16Type>()
            .iter()
            .map(|v| v.map(f64::from))
            .collect(),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .map(|v| v.map(f64::from))
            .collect(),
        _ => array.as_primitive::<Float64Type>().iter().collect(),
    })
}

fn partial(function: AggregateFn, has_expr: bool, state: &State) -> Partial {
    let data_type = state
        .data_type
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let scale = match state.data_type {
        Some(DataType::Decimal128(_, s)) => s,
        _ => 0,
    };
    let (kind, value) = if function == AggregateFn::Count || !has_expr {
        ("count", None)
    } else if let Some(v) = state.int {
        ("int", Some(v.to_string()))
    } else if let Some(v) = state.float {
        // JS `Number()` reads "Infinity", not Rust's "inf".
        let text = match v {
            f64::INFINITY => "Infinity".to_owned(),
            f64::NEG_INFINITY => "-Infinity".to_owned(),
            v => v.to_string(),
        };
        ("float", Some(text))
    } else if let Some(v) = &state.text {
        ("string", Some(v.clone()))
    } else {
        let kind = match state.data_type {
            Some(DataType::Float16 | DataType::Float32 | DataType::Float64) => "float",
            Some(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => "string",
            _ => "int",
        };
        (kind, None)
    };
    Partial {
        kind: kind.into(),
        scale,
        data_type,
        count: state.count,
        value,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Decimal128Array, Float64Array, Int32Array, StringArray};
    use arrow_schema::Field;
    use parquet::arrow::ArrowSchemaConverter;

    use super::*;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("discount", DataType::Decimal128(15, 2), true),
            Field::new("n", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let dec = |v: Vec<Option<i128>>| {
            Decimal128Array::from(v)
                .with_precision_and_scale(15, 2)
                .expect("dec")
        };
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(dec(vec![Some(10_000), Some(2_050), None])),
                Arc::new(dec(vec![Some(5), Some(10), Some(7)])),
                Arc::new(Int32Array::from(vec![Some(3), None, Some(-4)])),
                Arc::new(Float64Array::from(vec![Some(1.5), Some(f64::NAN), None])),
                Arc::new(StringArray::from(vec![Some("b"), Some("a"), None])),
            ],
        )
        .expect("batch")
    }

    fn run(json: &str) -> Vec<Partial> {
        let batch = batch();
        let parquet = ArrowSchemaConverter::new()
            .convert(&batch.schema())
            .expect("schema");
        let specs: Vec<AggregateSpec> = serde_json::from_str(json).expect("specs");
        let mut aggregator = Aggregator::try_new(&specs, &batch.schema(), &parquet).expect("bind");
        aggregator.fold(&batch).expect("fold");
        aggregator.fold(&batch).expect("fold");
        aggregator.partials()
    }

    #[test]
    fn decimal_products_sum_exactly() {
        let partials = run(
            r#"[{"fn":"sum","expr":{"op":"mul","left":{"column":"price"},"right":{"column":"discount"}}},
                {"fn":"sum","expr":{"op":"mul","left":{"column":"price"},"right":{"op":"sub","left":{"value":1},"right":{"column":"discount"}}}},
                {"fn":"count"}, {"fn":"count","expr":{"column":"price"}}]"#,
        );
        // (100.00 × 0.05 + 20.50 × 0.10) × 2 = 14.10, as unscaled 141000 at scale 4.
        assert_eq!(
            (
                partials[0].kind.as_str(),
                partials[0].value.as_deref(),
                partials[0].scale
            ),
            ("int", Some("141000"), 4)
        );
        // (100.00 × 0.95 + 20.50 × 0.90) × 2 = 226.90
        assert_eq!(
            (partials[1].value.as_deref(), partials[1].scale),
            (Some("2269000"), 4)
        );
        assert_eq!((partials[2].kind.as_str(), partials[2].count), ("count", 6));
        assert_eq!(partials[3].count, 4);
    }

    #[test]
    fn min_max_of_ints_floats_and_strings() {
        let p = run(
            r#"[{"fn":"min","expr":{"column":"n"}},{"fn":"max","expr":{"column":"n"}},
                {"fn":"max","expr":{"column":"f"}},{"fn":"min","expr":{"column":"s"}},
                {"fn":"sum","expr":{"op":"add","left":{"column":"n"},"right":{"value":1}}}]"#,
        );
        assert_eq!(p[0].value.as_deref(), Some("-4"));
        assert_eq!(p[1].value.as_deref(), Some("3"));
        assert_eq!(
            p[2].value.as_deref(),
            Some("NaN"),
            "NaN sorts above every number"
        );
        assert_eq!(p[3].value.as_deref(), Some("a"));
        assert_eq!(p[4].value.as_deref(), Some("2"), "(3+1) + (-4+1), twice");
    }

    #[test]
    fn bad_aggregates_are_errors() {
        let batch = batch();
        let parquet = ArrowSchemaConverter::new()
            .convert(&batch.schema())
            .expect("schema");
        let specs: Vec<AggregateSpec> = serde_json::from_str(r#"[{"fn":"sum"}]"#).expect("json");
        assert!(Aggregator::try_new(&specs, &batch.schema(), &parquet).is_err());
        let specs: Vec<AggregateSpec> =
            serde_json::from_str(r#"[{"fn":"sum","expr":{"column":"nope"}}]"#).expect("json");
        assert_eq!(
            Aggregator::try_new(&specs, &batch.schema(), &parquet)
                .err()
                .map(|e| e.code()),
            Some("UNKNOWN_COLUMN")
        );
        let specs: Vec<AggregateSpec> =
            serde_json::from_str(r#"[{"fn":"sum","expr":{"column":"s"}}]"#).expect("json");
        let mut aggregator = Aggregator::try_new(&specs, &batch.schema(), &parquet).expect("bind");
        assert!(aggregator.fold(&batch).is_err());
    }
}
