//! [`Predicate`] × [`RecordBatch`] → [`BooleanArray`], with arrow's compute kernels.
//!
//! SQL semantics: a comparison with a null is null, `AND`/`OR` are three-valued (Kleene), and a
//! row is kept only where the result is `true`. Floats compare in IEEE total order, NaN above every
//! number (as DuckDB and arrow do), which the pruning code must — and does — respect.
//!
//! Columns are found by path in the batch: the root by name, then struct children, with a null
//! struct making its children null. Dictionary columns are compared through their values.

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, StructArray};
use arrow_buffer::NullBuffer;
use arrow_ord::cmp;
use arrow_schema::ArrowError;
use arrow_select::take::take;

use super::ast::CmpOp;
use super::bind::{ColumnRef, Predicate};
use super::strings::string_match;

/// Evaluates `predicate` over every row of `batch`.
pub fn evaluate(predicate: &Predicate, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
    match predicate {
        Predicate::And(args) => fold(args, batch, and_kleene),
        Predicate::Or(args) => fold(args, batch, or_kleene),
        Predicate::Not(arg) => not(&evaluate(arg, batch)?),
        Predicate::Cmp { column, op, value } => compare(&values(batch, column)?, *op, value),
        Predicate::Between { column, low, high } => {
            let array = values(batch, column)?;
            and_kleene(
                &compare(&array, CmpOp::Gte, low)?,
                &compare(&array, CmpOp::Lte, high)?,
            )
        }
        Predicate::In {
            column,
            values: list,
        } => {
            let array = values(batch, column)?;
            let mut result: Option<BooleanArray> = None;
            for value in list {
                let hit = compare(&array, CmpOp::Eq, value)?;
                result = Some(match result {
                    None => hit,
                    Some(acc) => or_kleene(&acc, &hit)?,
                });
            }
            result.ok_or_else(|| ArrowError::InvalidArgumentError("IN without values".into()))
        }
        Predicate::IsNull { column, negated } => {
            let array = values(batch, column)?;
            if *negated {
                is_not_null(&array)
            } else {
                is_null(&array)
            }
        }
        Predicate::Str { column, kind, text } => {
            string_match(values(batch, column)?.as_ref(), *kind, text)
        }
    }
}

fn fold(
    args: &[Predicate],
    batch: &RecordBatch,
    combine: fn(&BooleanArray, &BooleanArray) -> Result<BooleanArray, ArrowError>,
) -> Result<BooleanArray, ArrowError> {
    let mut iter = args.iter();
    let first = iter
        .next()
        .ok_or_else(|| ArrowError::InvalidArgumentError("empty AND/OR".into()))?;
    let mut acc = evaluate(first, batch)?;
    for arg in iter {
        acc = combine(&acc, &evaluate(arg, batch)?)?;
    }
    Ok(acc)
}

/// `array op value` for a one-element `value` of the same type.
pub fn compare(array: &dyn Array, op: CmpOp, value: &ArrayRef) -> Result<BooleanArray, ArrowError> {
    let value = Scalar::new(value.clone());
    match op {
        CmpOp::Eq => cmp::eq(&array, &value),
        CmpOp::Ne => cmp::neq(&array, &value),
        CmpOp::Lt => cmp::lt(&array, &value),
        CmpOp::Lte => cmp::lt_eq(&array, &value),
        CmpOp::Gt => cmp::gt(&array, &value),
        CmpOp::Gte => cmp::gt_eq(&array, &value),
    }
}

/// The values of `column` in `batch`: nested fields with their parents' nulls applied,
/// dictionaries unpacked.
pub(crate) fn values(batch: &RecordBatch, column: &ColumnRef) -> Result<ArrayRef, ArrowError> {
    let missing = || {
        ArrowError::InvalidArgumentError(format!("column '{}' is not in the batch", column.name))
    };
    let mut array = batch
        .column_by_name(&column.path[0])
        .ok_or_else(missing)?
        .clone();
    let mut nulls: Option<NullBuffer> = array.logical_nulls();
    for part in &column.path[1..] {
        let parent: &StructArray = array.as_struct_opt().ok_or_else(missing)?;
        let child = parent.column_by_name(part).ok_or_else(missing)?.clone();
        nulls = NullBuffer::union(nulls.as_ref(), child.logical_nulls().as_ref());
        array = child;
    }
    if column.path.len() > 1
        && nulls.as_ref().map(NullBuffer::null_count) != Some(array.null_count())
    {
        let data = array.to_data().into_builder().nulls(nulls).build()?;
        array = arrow_array::make_array(data);
    }
    if let Some(dictionary) = array.as_any_dictionary_opt() {
        array = take(dictionary.values().as_ref(), dictionary.keys(), None)?;
    }
    Ok(array)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, StringArray};
    use arrow_schema::{DataType, Field, Fields, Schema};
    use parquet::arrow::ArrowSchemaConverter;

    use super::super::{bind::bind, sql::parse_sql};
    use super::*;

    fn batch() -> RecordBatch {
        let s_fields = Fields::from(vec![Field::new("x", DataType::Float64, true)]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int32, true),
            Field::new("t", DataType::Utf8, true),
            Field::new("s", DataType::Struct(s_fields.clone()), true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4)])),
                Arc::new(StringArray::from(vec![
                    Some("apple"),
                    Some("banana"),
                    None,
                    Some("cherry"),
                ])),
                Arc::new(StructArray::new(
                    s_fields,
                    vec![Arc::new(Float64Array::from(vec![
                        Some(1.5),
                        Some(f64::NAN),
                        Some(0.0),
                        None,
                    ])) as ArrayRef],
                    Some(NullBuffer::from(vec![true, true, false, true])),
                )),
            ],
        )
        .expect("batch")
    }

    /// Rows where `sql` is true.
    fn rows(sql: &str) -> Vec<usize> {
        let batch = batch();
        let parquet = ArrowSchemaConverter::new()
            .convert(&batch.schema())
            .expect("schema");
        let predicate =
            bind(&parse_sql(sql).expect("parse"), &batch.schema(), &parquet).expect("bind");
        let result = evaluate(&predicate, &batch).expect("evaluate");
        (0..result.len())
            .filter(|&i| result.is_valid(i) && result.value(i))
            .collect()
    }

    #[test]
    fn comparisons_use_sql_null_semantics() {
        assert_eq!(rows("n > 1"), [2, 3]);
        assert_eq!(rows("n != 3"), [0, 3]);
        assert_eq!(rows("NOT n = 3"), [0, 3]);
        assert_eq!(rows("n = 3 OR n IS NULL"), [1, 2]);
        assert_eq!(rows("n BETWEEN 2 AND 4 AND t IS NOT NULL"), [3]);
        assert_eq!(rows("n IN (1, 4)"), [0, 3]);
        assert_eq!(rows("n NOT IN (1, 4)"), [2]);
    }

    #[test]
    fn strings_and_nested_fields() {
        assert_eq!(rows("t LIKE '%an%'"), [1]);
        assert_eq!(rows("t LIKE '_pple'"), [0]);
        assert_eq!(rows("starts_with(t, 'ch') OR ends_with(t, 'le')"), [0, 3]);
        assert_eq!(rows("contains(t, 'err')"), [3]);
        // Row 2's struct is null, so s.x is null there even though its child slot holds 0.0.
        assert_eq!(rows("s.x >= 0"), [0, 1]);
        assert_eq!(rows("s.x IS NULL"), [2, 3]);
        // NaN sorts above every number.
        assert_eq!(rows("s.x > 100"), [1]);
    }
}
