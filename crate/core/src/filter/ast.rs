//! The filter AST: what both front ends produce (the SQL `WHERE` parser in [`super::sql`] and the
//! TS builder `col('x').lt(24)`), as JSON, and what [`super::bind`] type-checks.
//!
//! Tagged by `op`, named fields, literals as plain JSON (numbers, strings, booleans). Literals
//! are untyped here: `"1995-01-01"` becomes a date only when bound to a date column, and integers
//! beyond 2^53 may be written as strings so JS never rounds them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A boolean filter expression.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", deny_unknown_fields)]
pub enum Expr {
    And {
        args: Vec<Expr>,
    },
    Or {
        args: Vec<Expr>,
    },
    Not {
        arg: Box<Expr>,
    },
    Eq {
        column: String,
        value: Value,
    },
    Ne {
        column: String,
        value: Value,
    },
    Lt {
        column: String,
        value: Value,
    },
    Lte {
        column: String,
        value: Value,
    },
    Gt {
        column: String,
        value: Value,
    },
    Gte {
        column: String,
        value: Value,
    },
    Between {
        column: String,
        low: Value,
        high: Value,
    },
    In {
        column: String,
        values: Vec<Value>,
    },
    IsNull {
        column: String,
    },
    IsNotNull {
        column: String,
    },
    /// SQL `LIKE`: `%` any run of characters, `_` one character, `\` escapes.
    Like {
        column: String,
        pattern: String,
    },
    StartsWith {
        column: String,
        value: String,
    },
    EndsWith {
        column: String,
        value: String,
    },
    Contains {
        column: String,
        value: String,
    },
}

/// A comparison operator, for code that treats the six alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
}

impl CmpOp {
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    pub fn flipped(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::Lte => Self::Gte,
            Self::Gt => Self::Lt,
            Self::Gte => Self::Lte,
            other => other,
        }
    }

    /// The AST node comparing `column` with `value`.
    pub fn expr(self, column: String, value: Value) -> Expr {
        match self {
            Self::Eq => Expr::Eq { column, value },
            Self::Ne => Expr::Ne { column, value },
            Self::Lt => Expr::Lt { column, value },
            Self::Lte => Expr::Lte { column, value },
            Self::Gt => Expr::Gt { column, value },
            Self::Gte => Expr::Gte { column, value },
        }
    }
}

impl Expr {
    /// Parses the JSON form.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Every column the expression reads, in first-use order, without duplicates.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit_columns(&mut |c| {
            if !out.contains(&c) {
                out.push(c);
            }
        });
        out
    }

    fn visit_columns<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Self::And { args } | Self::Or { args } => args.iter().for_each(|a| a.visit_columns(f)),
            Self::Not { arg } => arg.visit_columns(f),
            Self::Eq { column, .. }
            | Self::Ne { column, .. }
            | Self::Lt { column, .. }
            | Self::Lte { column, .. }
            | Self::Gt { column, .. }
            | Self::Gte { column, .. }
            | Self::Between { column, .. }
            | Self::In { column, .. }
            | Self::IsNull { column }
            | Self::IsNotNull { column }
            | Self::Like { column, .. }
            | Self::StartsWith { column, .. }
            | Self::EndsWith { column, .. }
            | Self::Contains { column, .. } => f(column),
        }
    }

    /// The top-level conjuncts (`a AND (b AND c)` → `[a, b, c]`).
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Self::And { args } => args.into_iter().flat_map(Expr::conjuncts).collect(),
            other => vec![other],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_form_round_trips() {
        let expr = Expr::And {
            args: vec![
                Expr::Lt {
                    column: "l_quantity".into(),
                    value: json!(24),
                },
                Expr::Between {
                    column: "l_discount".into(),
                    low: json!(0.05),
                    high: json!(0.07),
                },
            ],
        };
        let text = serde_json::to_string(&expr).expect("json");
        assert_eq!(
            text,
            r#"{"op":"and","args":[{"op":"lt","column":"l_quantity","value":24},{"op":"between","column":"l_discount","low":0.05,"high":0.07}]}"#
        );
        assert_eq!(Expr::from_json(&text).expect("parse"), expr);
        assert!(Expr::from_json(r#"{"op":"lt","column":"x","value":1,"extra":2}"#).is_err());
    }

    #[test]
    fn columns_and_conjuncts() {
        let expr = Expr::And {
            args: vec![
                Expr::IsNull { column: "a".into() },
                Expr::And {
                    args: vec![
                        Expr::IsNull { column: "b".into() },
                        Expr::IsNotNull { column: "a".into() },
                    ],
                },
            ],
        };
        assert_eq!(expr.columns(), ["a", "b"]);
        assert_eq!(expr.conjuncts().len(), 3);
    }
}
