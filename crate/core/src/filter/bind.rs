//! [`Expr`] + the file's Arrow schema → [`Predicate`]: columns resolved, literals typed.
//!
//! Each column path resolves through struct fields to one Parquet leaf (filters apply to
//! primitive values; lists and maps are refused with a clear error). Each literal is converted to
//! a one-element Arrow array of exactly the column's type ([`super::literal`]), so `'1995-01-01'` becomes a `Date32`, `0.05` a `Decimal128(15, 2)`, and what
//! does not fit (`2.5` for an integer column, `'abc'` for a date) is a `TYPE_MISMATCH` naming
//! the column, its type and the value. Kernels and statistics then compare like with like.

use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Schema};
use parquet::schema::types::SchemaDescriptor;
use serde_json::Value;

use super::ast::{CmpOp, Expr};
use super::literal::parse_literal;
use crate::error::{Result, SkimError};
use crate::projection::suggest;

/// A column a predicate reads.
#[derive(Debug, Clone)]
pub struct ColumnRef {
    /// Dotted path as written (`a.b`).
    pub name: String,
    /// Field names from the root struct down.
    pub path: Vec<String>,
    /// Index of the Parquet leaf.
    pub leaf_idx: usize,
    /// The leaf's Arrow field (type as decoded).
    pub field: Field,
}

impl ColumnRef {
    /// The type literals are converted to: a dictionary's value type, else the column's.
    pub fn value_type(&self) -> &DataType {
        match self.field.data_type() {
            DataType::Dictionary(_, value) => value,
            other => other,
        }
    }
}

/// String matching kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrMatch {
    Like,
    StartsWith,
    EndsWith,
    Contains,
}

/// A type-checked filter. Literal arrays have one element and the column's value type.
#[derive(Debug, Clone)]
pub enum Predicate {
    And(Vec<Predicate>),
    Or(Vec<Predicate>),
    Not(Box<Predicate>),
    Cmp {
        column: ColumnRef,
        op: CmpOp,
        value: ArrayRef,
    },
    Between {
        column: ColumnRef,
        low: ArrayRef,
        high: ArrayRef,
    },
    In {
        column: ColumnRef,
        values: Vec<ArrayRef>,
    },
    IsNull {
        column: ColumnRef,
        negated: bool,
    },
    Str {
        column: ColumnRef,
        kind: StrMatch,
        /// The pattern (`LIKE` syntax for [`StrMatch::Like`], plain text otherwise).
        text: String,
    },
}

impl Predicate {
    /// Every column read, in first-use order, each once.
    pub fn columns(&self) -> Vec<&ColumnRef> {
        let mut out: Vec<&ColumnRef> = Vec::new();
        self.visit(&mut |c| {
            if !out.iter().any(|o| o.leaf_idx == c.leaf_idx) {
                out.push(c);
            }
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a ColumnRef)) {
        match self {
            Self::And(args) | Self::Or(args) => args.iter().for_each(|a| a.visit(f)),
            Self::Not(arg) => arg.visit(f),
            Self::Cmp { column, .. }
            | Self::Between { column, .. }
            | Self::In { column, .. }
            | Self::IsNull { column, .. }
            | Self::Str { column, .. } => f(column),
        }
    }
}

/// Type-checks `expr` against a file's Arrow schema and Parquet schema.
pub fn bind(expr: &Expr, schema: &Schema, parquet: &SchemaDescriptor) -> Result<Predicate> {
    let column = |name: &str| resolve(name, schema, parquet);
    Ok(match expr {
        Expr::And { args } => Predicate::And(bind_all(args, schema, parquet)?),
        Expr::Or { args } => Predicate::Or(bind_all(args, schema, parquet)?),
        Expr::Not { arg } => Predicate::Not(Box::new(bind(arg, schema, parquet)?)),
        Expr::Eq { column: c, value } => cmp(column(c)?, CmpOp::Eq, value)?,
        Expr::Ne { column: c, value } => cmp(column(c)?, CmpOp::Ne, value)?,
        Expr::Lt { column: c, value } => cmp(column(c)?, CmpOp::Lt, value)?,
        Expr::Lte { column: c, value } => cmp(column(c)?, CmpOp::Lte, value)?,
        Expr::Gt { column: c, value } => cmp(column(c)?, CmpOp::Gt, value)?,
        Expr::Gte { column: c, value } => cmp(column(c)?, CmpOp::Gte, value)?,
        Expr::Between {
            column: c,
            low,
            high,
        } => {
            let column = column(c)?;
            Predicate::Between {
                low: literal(&column, low)?,
                high: literal(&column, high)?,
                column,
            }
        }
        Expr::In { column: c, values } => {
            let column = column(c)?;
            if values.is_empty() {
                return Err(SkimError::TypeMismatch {
                    detail: format!("IN on '{}' needs at least one value", column.name),
                });
            }
            Predicate::In {
                values: values
                    .iter()
                    .map(|v| literal(&column, v))
                    .collect::<Result<_>>()?,
                column,
            }
        }
        Expr::IsNull { column: c } => Predicate::IsNull {
            column: column(c)?,
            negated: false,
        },
        Expr::IsNotNull { column: c } => Predicate::IsNull {
            column: column(c)?,
            negated: true,
        },
        Expr::Like { column: c, pattern } => string_match(column(c)?, StrMatch::Like, pattern)?,
        Expr::StartsWith { column: c, value } => {
            string_match(column(c)?, StrMatch::StartsWith, value)?
        }
        Expr::EndsWith { column: c, value } => string_match(column(c)?, StrMatch::EndsWith, value)?,
        Expr::Contains { column: c, value } => string_match(column(c)?, StrMatch::Contains, value)?,
    })
}

fn bind_all(args: &[Expr], schema: &Schema, parquet: &SchemaDescriptor) -> Result<Vec<Predicate>> {
    if args.is_empty() {
        return Err(SkimError::InvalidFilter {
            position: None,
            detail: "AND/OR needs at least one argument".into(),
        });
    }
    args.iter().map(|a| bind(a, schema, parquet)).collect()
}

fn cmp(column: ColumnRef, op: CmpOp, value: &Value) -> Result<Predicate> {
    Ok(Predicate::Cmp {
        value: literal(&column, value)?,
        column,
        op,
    })
}

fn string_match(column: ColumnRef, kind: StrMatch, text: &str) -> Result<Predicate> {
    if !is_string(column.value_type()) {
        return Err(SkimError::TypeMismatch {
            detail: format!(
                "'{}' is {}, but string matching needs a string column",
                column.name,
                column.field.data_type()
            ),
        });
    }
    Ok(Predicate::Str {
        column,
        kind,
        text: text.to_owned(),
    })
}

/// Resolves a dotted path through struct fields to a primitive leaf.
pub(crate) fn resolve(
    name: &str,
    schema: &Schema,
    parquet: &SchemaDescriptor,
) -> Result<ColumnRef> {
    let unknown = || SkimError::UnknownColumn {
        name: name.to_owned(),
        suggestions: suggest(parquet, name),
    };
    let path: Vec<String> = name.split('.').map(str::to_owned).collect();
    let mut field = schema.field_with_name(&path[0]).map_err(|_| unknown())?;
    for (depth, part) in path.iter().enumerate().skip(1) {
        let DataType::Struct(children) = field.data_type() else {
            // A column of the file inside a list or a map: many values per row, where a filter
            // (or an aggregate) takes one. Said as such, not as a name the file lacks.
            let in_file = parquet
                .columns()
                .iter()
                .any(|c| c.path().parts().starts_with(&path));
            if !in_file {
                return Err(unknown());
            }
            let outer = path[..depth].join(".");
            return Err(SkimError::TypeMismatch {
                detail: many_per_row(name, &outer, field.data_type()),
            });
        };
        field = children
            .iter()
            .find(|c| c.name() == part)
            .map(|c| c.as_ref())
            .ok_or_else(unknown)?;
    }
    let filterable = match field.data_type() {
        DataType::Dictionary(_, value) => value.is_primitive() || is_string(value),
        other => other.is_primitive() || is_string(other) || matches!(other, DataType::Boolean),
    };
    if !filterable {
        let detail = match field.data_type() {
            DataType::Struct(_) => format!(
                "'{name}' is {}; filters compare primitive values (numbers, strings, dates, \
                 booleans) — name a field inside it instead",
                field.data_type()
            ),
            other if values_per_row(other).is_some() => many_per_row(name, name, other),
            other => format!(
                "'{name}' is {other}; filters and aggregates compare numbers, strings, \
                 binaries, dates, times, timestamps and booleans, not this type"
            ),
        };
        return Err(SkimError::TypeMismatch { detail });
    }
    let leaf_idx = parquet
        .columns()
        .iter()
        .position(|c| c.path().parts() == path.as_slice())
        .ok_or_else(unknown)?;
    Ok(ColumnRef {
        name: name.to_owned(),
        path,
        leaf_idx,
        field: field.clone(),
    })
}

/// For a list or a map: what it is, and how many values it holds per row.
fn values_per_row(t: &DataType) -> Option<(&'static str, String)> {
    match t {
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::ListView(_)
        | DataType::LargeListView(_) => Some(("a list", "any number of values".to_owned())),
        DataType::FixedSizeList(_, n) => Some(("a fixed-size list", format!("{n} values"))),
        DataType::Map(..) => Some(("a map", "any number of entries".to_owned())),
        _ => None,
    }
}

/// Why `name`, which is (or is inside) `outer` of type `outer_type`, cannot be filtered on or
/// aggregated: `outer` holds more than one value per row (a list or a map).
fn many_per_row(name: &str, outer: &str, outer_type: &DataType) -> String {
    let (kind, count) =
        values_per_row(outer_type).unwrap_or(("not a struct", "other values".to_owned()));
    let what = if name == outer {
        format!("'{name}' is {kind}")
    } else {
        format!("'{name}' is inside '{outer}', which is {kind}")
    };
    format!(
        "{what}: it holds {count} per row, and filters and aggregates take one value per row; \
         name a column outside lists and maps (a struct's field is fine), or read '{outer}' and \
         look at its values in your code"
    )
}

fn is_string(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

/// `value` as a one-element array of the column's value type.
fn literal(column: &ColumnRef, value: &Value) -> Result<ArrayRef> {
    let target = column.value_type();
    let mismatch = |why: &str| SkimError::TypeMismatch {
        detail: format!("'{}' is {target}, but the value {value} {why}", column.name),
    };
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) if !is_string(target) => n.to_string(),
        Value::Bool(b) if matches!(target, DataType::Boolean) => b.to_string(),
        Value::Null => return Err(mismatch("is null; use IS NULL / IS NOT NULL")),
        _ => return Err(mismatch("is not of that type (quote strings: 'text')")),
    };
    parse_literal(&text, target).map_err(|why| mismatch(&why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Decimal128Type};
    use arrow_schema::Fields;
    use parquet::arrow::ArrowSchemaConverter;
    use serde_json::json;

    fn schema() -> (Schema, SchemaDescriptor) {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("day", DataType::Date32, true),
            Field::new("name", DataType::Utf8, true),
            Field::new(
                "s",
                DataType::Struct(Fields::from(vec![Field::new("x", DataType::Float64, true)])),
                true,
            ),
            Field::new_list("tags", Field::new_list_field(DataType::Utf8, true), true),
            Field::new("uuid", DataType::FixedSizeBinary(16), true),
        ]);
        let parquet = ArrowSchemaConverter::new()
            .convert(&schema)
            .expect("parquet schema");
        (schema, parquet)
    }

    fn bind_sql(text: &str) -> Result<Predicate> {
        let (schema, parquet) = schema();
        bind(&super::super::sql::parse_sql(text)?, &schema, &parquet)
    }

    #[test]
    fn literals_take_the_column_type() {
        let Predicate::And(args) =
            bind_sql("price >= 0.05 AND day < DATE '1995-01-01' AND s.x > 1").expect("bind")
        else {
            panic!("not an AND")
        };
        let Predicate::Cmp { value, .. } = &args[0] else {
            panic!()
        };
        assert_eq!(value.as_primitive::<Decimal128Type>().value(0), 5);
        let Predicate::Cmp { value, column, .. } = &args[1] else {
            panic!()
        };
        assert_eq!(value.as_primitive::<Date32Type>().value(0), 9131);
        assert_eq!(column.leaf_idx, 2);
        let Predicate::Cmp { column, .. } = &args[2] else {
            panic!()
        };
        assert_eq!((column.path.len(), column.leaf_idx), (2, 4));
    }

    #[test]
    fn mismatches_and_unknown_columns_are_clear() {
        let error = bind_sql("id = 2.5").expect_err("mismatch");
        assert_eq!(error.code(), "TYPE_MISMATCH");
        assert!(error.to_string().contains("'id' is Int64"), "{error}");
        assert_eq!(
            bind_sql("day = 'soon'").expect_err("date").code(),
            "TYPE_MISMATCH"
        );
        assert_eq!(
            bind_sql("name = 5").expect_err("quote").code(),
            "TYPE_MISMATCH"
        );
        assert_eq!(
            bind_sql("id LIKE 'a%'").expect_err("like").code(),
            "TYPE_MISMATCH"
        );
        let list = bind_sql("tags = 'a'").expect_err("list");
        assert_eq!(list.code(), "TYPE_MISMATCH");
        assert!(
            list.to_string()
                .contains("'tags' is a list: it holds any number of values per row"),
            "{list}"
        );
        // A column of the file inside a list: not a name the file lacks (it used to be
        // UNKNOWN_COLUMN, suggesting the very name given).
        let inside = bind_sql("tags.list.item = 'a'").expect_err("inside a list");
        assert_eq!(inside.code(), "TYPE_MISMATCH");
        assert!(
            inside
                .to_string()
                .contains("'tags.list.item' is inside 'tags', which is a list"),
            "{inside}"
        );
        let fixed = bind_sql("uuid = 'a'").expect_err("fixed-size binary");
        assert_eq!(fixed.code(), "TYPE_MISMATCH");
        assert!(
            fixed
                .to_string()
                .contains("'uuid' is FixedSizeBinary(16); filters")
                && !fixed.to_string().contains("per row"),
            "{fixed}"
        );
        assert_eq!(
            bind_sql("tags.list.nope = 'a'")
                .expect_err("no such column")
                .code(),
            "UNKNOWN_COLUMN"
        );
        let unknown = bind_sql("nmae = 'a'").expect_err("unknown");
        assert_eq!(unknown.code(), "UNKNOWN_COLUMN");
        assert!(
            unknown.to_string().contains("did you mean 'name'"),
            "{unknown}"
        );
        assert_eq!(
            bind_sql("s.y = 1").expect_err("nested").code(),
            "UNKNOWN_COLUMN"
        );
        let (schema, parquet) = schema();
        let empty_in = Expr::In {
            column: "id".into(),
            values: vec![],
        };
        assert_eq!(
            bind(&empty_in, &schema, &parquet).expect_err("in").code(),
            "TYPE_MISMATCH"
        );
        let _ = json!(null);
    }
}
