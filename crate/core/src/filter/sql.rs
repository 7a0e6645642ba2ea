//! SQL `WHERE` text → [`Expr`]: a hand-written tokenizer and recursive-descent parser.
//!
//! Grammar (keywords case-insensitive):
//!
//! ```text
//! expr      := or
//! or        := and ("OR" and)*
//! and       := not ("AND" not)*
//! not       := "NOT" not | primary
//! primary   := "(" expr ")"
//!            | func "(" column "," string ")"          func: starts_with | ends_with | contains
//!            | column ["NOT"] "BETWEEN" literal "AND" literal
//!            | column ["NOT"] "IN" "(" literal ("," literal)* ")"
//!            | column "IS" ["NOT"] "NULL"
//!            | column ["NOT"] "LIKE" string
//!            | column cmp literal | literal cmp column    cmp: = == != <> < <= > >=
//! column    := ident ("." ident)*                       ident: [A-Za-z_][A-Za-z0-9_]* | "quoted"
//! literal   := ["-"] number | string | TRUE | FALSE | DATE string | TIMESTAMP string
//! ```
//!
//! Every error names the byte position where the text stopped making sense, what was expected
//! and what was found, so an editor can underline it.

use serde_json::{Number, Value};

use super::ast::{CmpOp, Expr};
use crate::error::SkimError;

/// Parses a `WHERE` clause (without the `WHERE` keyword).
pub fn parse_sql(text: &str) -> Result<Expr, SkimError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        text,
        tokens,
        at: 0,
        depth: 0,
    };
    let expr = parser.expr()?;
    let end = parser.peek();
    if end.kind != Kind::End {
        return Err(parser.error(end, "AND, OR or the end of the filter"));
    }
    Ok(expr)
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Ident(String),
    Number(String),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    Dot,
    Minus,
    End,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    /// Byte offset in the text.
    position: usize,
    /// Whether an identifier was written in double quotes (then never a keyword).
    quoted: bool,
}

fn tokenize(text: &str) -> Result<Vec<Token>, SkimError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let (token, next) = next_token(text, i)?;
        tokens.extend(token);
        i = next;
    }
    tokens.push(Token {
        kind: Kind::End,
        position: text.len(),
        quoted: false,
    });
    Ok(tokens)
}

/// The token starting at byte `start` (< `text.len()`; none for whitespace), and where the next
/// one starts.
fn next_token(text: &str, start: usize) -> Result<(Option<Token>, usize), SkimError> {
    let bytes = text.as_bytes();
    let c = bytes[start];
    let token = |kind| {
        Some(Token {
            kind,
            position: start,
            quoted: false,
        })
    };
    let punctuation = match c {
        b'(' => Some(Kind::LParen),
        b')' => Some(Kind::RParen),
        b',' => Some(Kind::Comma),
        b'-' => Some(Kind::Minus),
        b'.' if !bytes.get(start + 1).is_some_and(u8::is_ascii_digit) => Some(Kind::Dot),
        _ => None,
    };
    if let Some(kind) = punctuation {
        return Ok((token(kind), start + 1));
    }
    Ok(match c {
        b' ' | b'\t' | b'\n' | b'\r' => (None, start + 1),
        b'=' | b'!' | b'<' | b'>' => {
            let (op, len) = operator(text, start)?;
            (token(Kind::Op(op)), start + len)
        }
        b'\'' => {
            let (value, next) = quoted(text, start, b'\'')?;
            (token(Kind::Str(value)), next)
        }
        b'"' => {
            let (value, next) = quoted(text, start, b'"')?;
            let ident = Token {
                kind: Kind::Ident(value),
                position: start,
                quoted: true,
            };
            (Some(ident), next)
        }
        b'0'..=b'9' | b'.' => {
            let end = number_end(bytes, start);
            (token(Kind::Number(text[start..end].to_owned())), end)
        }
        c if c.is_ascii_alphabetic() || c == b'_' => {
            let end = start
                + bytes[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
            (token(Kind::Ident(text[start..end].to_owned())), end)
        }
        _ => {
            let found = text[start..].chars().next().unwrap_or(' ');
            return Err(syntax(
                text,
                start,
                "a column, a value or an operator",
                &format!("'{found}'"),
            ));
        }
    })
}

/// The comparison operator at `start` (one of `= == != <> < <= > >=`, `!=` for `<>`) and its length.
fn operator(text: &str, start: usize) -> Result<(&'static str, usize), SkimError> {
    Ok(match text.get(start..start + 2).unwrap_or("") {
        "==" => ("=", 2),
        "!=" | "<>" => ("!=", 2),
        "<=" => ("<=", 2),
        ">=" => (">=", 2),
        _ => match text.as_bytes().get(start) {
            Some(b'=') => ("=", 1),
            Some(b'<') => ("<", 1),
            Some(b'>') => (">", 1),
            _ => return Err(syntax(text, start, "an operator such as != or =", "'!'")),
        },
    })
}

/// Where a number starting at `start` ends: digits and dots, then an optional signed exponent.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let digits = |from: usize, dots: bool| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || (dots && **b == b'.'))
            .count()
    };
    let mut i = digits(start, true);
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i, false);
    }
    i
}

/// Reads a `quote`-delimited string starting at `start`; a doubled quote is one quote.
fn quoted(text: &str, start: usize, quote: u8) -> Result<(String, usize), SkimError> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = start + 1;
    let mut run = i;
    while i < bytes.len() {
        if bytes[i] == quote {
            out.push_str(&text[run..i]);
            if bytes.get(i + 1) == Some(&quote) {
                out.push(quote as char);
                i += 2;
                run = i;
                continue;
            }
            return Ok((out, i + 1));
        }
        i += 1;
    }
    Err(syntax(
        text,
        start,
        &format!("a closing {}", quote as char),
        "the end of the filter",
    ))
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    at: usize,
    /// Nesting of `(` and `NOT`, bounded so hostile input cannot overflow the stack.
    depth: usize,
}

/// Deepest nesting of parentheses and `NOT` a filter may have.
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Token {
        self.tokens[self.at.min(self.tokens.len() - 1)].clone()
    }

    fn next(&mut self) -> Token {
        let token = self.peek();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        token
    }

    /// Consumes the next token if it is the keyword `word`.
    fn keyword(&mut self, word: &str) -> bool {
        let token = self.peek();
        if is_keyword(&token, word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), SkimError> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.error(self.peek(), word))
        }
    }

    fn expect(&mut self, kind: Kind, what: &str) -> Result<(), SkimError> {
        let token = self.next();
        if token.kind == kind {
            Ok(())
        } else {
            Err(self.error(token, what))
        }
    }

    fn error(&self, token: Token, expected: &str) -> SkimError {
        syntax(self.text, token.position, expected, &describe(&token))
    }

    fn expr(&mut self) -> Result<Expr, SkimError> {
        let mut args = vec![self.and()?];
        while self.keyword("OR") {
            args.push(self.and()?);
        }
        Ok(if args.len() == 1 {
            args.remove(0)
        } else {
            Expr::Or { args }
        })
    }

    fn and(&mut self) -> Result<Expr, SkimError> {
        let mut args = vec![self.not()?];
        while self.keyword("AND") {
            args.push(self.not()?);
        }
        Ok(if args.len() == 1 {
            args.remove(0)
        } else {
            Expr::And { args }
        })
    }

    fn not(&mut self) -> Result<Expr, SkimError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(self.peek(), "less nesting (at most 64 levels of ( and NOT)"));
        }
        let result = if self.keyword("NOT") {
            self.not().map(|arg| Expr::Not { arg: Box::new(arg) })
        } else {
            self.primary()
        };
        self.depth -= 1;
        result
    }

    fn primary(&mut self) -> Result<Expr, SkimError> {
        let token = self.peek();
        if token.kind == Kind::LParen {
            self.next();
            let inner = self.expr()?;
            self.expect(Kind::RParen, "')'")?;
            return Ok(inner);
        }
        if let Some(func) = self.function_name() {
            return self.function(func);
        }
        if self.starts_literal() {
            // `literal cmp column`
            let value = self.literal()?;
            let op = self.comparison()?;
            let column = self.column()?;
            return Ok(op.flipped().expr(column, value));
        }
        let column = self.column()?;
        let negated = self.keyword("NOT");
        if self.keyword("BETWEEN") {
            let low = self.literal()?;
            self.expect_keyword("AND")?;
            let high = self.literal()?;
            return Ok(negate(negated, Expr::Between { column, low, high }));
        }
        if self.keyword("IN") {
            self.expect(Kind::LParen, "'(' after IN")?;
            let mut values = vec![self.literal()?];
            while self.peek().kind == Kind::Comma {
                self.next();
                values.push(self.literal()?);
            }
            self.expect(Kind::RParen, "',' or ')'")?;
            return Ok(negate(negated, Expr::In { column, values }));
        }
        if self.keyword("LIKE") {
            let token = self.next();
            let Kind::Str(pattern) = token.kind.clone() else {
                return Err(self.error(token, "a quoted pattern after LIKE"));
            };
            return Ok(negate(negated, Expr::Like { column, pattern }));
        }
        if negated {
            return Err(self.error(self.peek(), "BETWEEN, IN or LIKE after NOT"));
        }
        if self.keyword("IS") {
            let not_null = self.keyword("NOT");
            self.expect_keyword("NULL")?;
            return Ok(if not_null {
                Expr::IsNotNull { column }
            } else {
                Expr::IsNull { column }
            });
        }
        let op = self.comparison()?;
        if is_keyword(&self.peek(), "NULL") {
            return Err(self.error(self.peek(), "a value (compare with NULL using IS NULL)"));
        }
        let value = self.literal()?;
        Ok(op.expr(column, value))
    }

    fn function_name(&self) -> Option<&'static str> {
        let token = self.peek();
        let next = self.tokens.get(self.at + 1)?;
        if token.quoted || next.kind != Kind::LParen {
            return None;
        }
        let Kind::Ident(name) = &token.kind else {
            return None;
        };
        ["starts_with", "ends_with", "contains"]
            .into_iter()
            .find(|f| name.eq_ignore_ascii_case(f))
    }

    fn function(&mut self, name: &'static str) -> Result<Expr, SkimError> {
        self.next();
        self.expect(Kind::LParen, "'('")?;
        let column = self.column()?;
        self.expect(Kind::Comma, "','")?;
        let token = self.next();
        let Kind::Str(value) = token.kind.clone() else {
            return Err(self.error(
                token,
                &format!("a quoted string as {name}'s second argument"),
            ));
        };
        self.expect(Kind::RParen, "')'")?;
        Ok(match name {
            "starts_with" => Expr::StartsWith { column, value },
            "ends_with" => Expr::EndsWith { column, value },
            _ => Expr::Contains { column, value },
        })
    }

    fn column(&mut self) -> Result<String, SkimError> {
        let mut parts = vec![self.identifier()?];
        while self.peek().kind == Kind::Dot {
            self.next();
            parts.push(self.identifier()?);
        }
        Ok(parts.join("."))
    }

    fn identifier(&mut self) -> Result<String, SkimError> {
        let token = self.next();
        match &token.kind {
            Kind::Ident(name) if token.quoted || !is_reserved(name) => Ok(name.clone()),
            _ => Err(self.error(token, "a column name")),
        }
    }

    fn comparison(&mut self) -> Result<CmpOp, SkimError> {
        let token = self.next();
        Ok(match token.kind {
            Kind::Op("=") => CmpOp::Eq,
            Kind::Op("!=") => CmpOp::Ne,
            Kind::Op("<") => CmpOp::Lt,
            Kind::Op("<=") => CmpOp::Lte,
            Kind::Op(">") => CmpOp::Gt,
            Kind::Op(">=") => CmpOp::Gte,
            _ => {
                return Err(self.error(
                    token,
                    "a comparison (=, !=, <, <=, >, >=), BETWEEN, IN, LIKE or IS NULL",
                ))
            }
        })
    }

    fn starts_literal(&self) -> bool {
        let token = self.peek();
        matches!(token.kind, Kind::Number(_) | Kind::Str(_) | Kind::Minus)
            || ["TRUE", "FALSE", "DATE", "TIMESTAMP"]
                .iter()
                .any(|w| is_keyword(&token, w))
    }

    fn literal(&mut self) -> Result<Value, SkimError> {
        let token = self.next();
        match &token.kind {
            Kind::Minus => {
                let number = self.next();
                match &number.kind {
                    Kind::Number(text) => number_value(self.text, &number, &format!("-{text}")),
                    _ => Err(self.error(number, "a number after '-'")),
                }
            }
            Kind::Number(text) => number_value(self.text, &token, text),
            Kind::Str(text) => Ok(Value::String(text.clone())),
            _ if is_keyword(&token, "TRUE") => Ok(Value::Bool(true)),
            _ if is_keyword(&token, "FALSE") => Ok(Value::Bool(false)),
            _ if is_keyword(&token, "DATE") || is_keyword(&token, "TIMESTAMP") => {
                let text = self.next();
                match &text.kind {
                    Kind::Str(value) => Ok(Value::String(value.clone())),
                    _ => Err(self.error(text, "a quoted date or timestamp")),
                }
            }
            _ => Err(self.error(token, "a value (number, 'string', TRUE, FALSE, DATE '…')")),
        }
    }
}

/// A JSON number when exact, else the digits as a string (bound later by column type).
fn number_value(text: &str, token: &Token, digits: &str) -> Result<Value, SkimError> {
    if let Ok(i) = digits.parse::<i64>() {
        return Ok(Value::Number(i.into()));
    }
    let is_integer = digits.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    if is_integer {
        // Too large for i64: keep it exact as text (u64 and decimals bind it).
        return Ok(Value::String(digits.to_owned()));
    }
    digits
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
        .ok_or_else(|| syntax(text, token.position, "a number", &format!("'{digits}'")))
}

fn negate(negated: bool, expr: Expr) -> Expr {
    if negated {
        Expr::Not {
            arg: Box::new(expr),
        }
    } else {
        expr
    }
}

fn is_keyword(token: &Token, word: &str) -> bool {
    !token.quoted && matches!(&token.kind, Kind::Ident(name) if name.eq_ignore_ascii_case(word))
}

fn is_reserved(name: &str) -> bool {
    [
        "AND", "OR", "NOT", "BETWEEN", "IN", "IS", "NULL", "LIKE", "TRUE", "FALSE",
    ]
    .iter()
    .any(|w| name.eq_ignore_ascii_case(w))
}

fn describe(token: &Token) -> String {
    match &token.kind {
        Kind::Ident(name) if token.quoted => format!("\"{name}\""),
        Kind::Ident(name) => format!("'{name}'"),
        Kind::Number(n) => n.clone(),
        Kind::Str(s) => format!("the string '{s}'"),
        Kind::Op(op) => format!("'{op}'"),
        Kind::LParen => "'('".into(),
        Kind::RParen => "')'".into(),
        Kind::Comma => "','".into(),
        Kind::Dot => "'.'".into(),
        Kind::Minus => "'-'".into(),
        Kind::End => "the end of the filter".into(),
    }
}

fn syntax(text: &str, position: usize, expected: &str, found: &str) -> SkimError {
    SkimError::InvalidFilter {
        position: Some(position),
        detail: format!(
            "expected {expected} at position {position}, found {found}\n  {text}\n  {}^",
            " ".repeat(text[..position.min(text.len())].chars().count())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Expr {
        parse_sql(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn position(text: &str) -> usize {
        match parse_sql(text) {
            Err(SkimError::InvalidFilter {
                position: Some(p), ..
            }) => p,
            other => panic!("{text}: expected a positioned error, got {other:?}"),
        }
    }

    #[test]
    fn tpch_q6() {
        let expr = parse(
            "l_shipdate >= DATE '1994-01-01' AND l_shipdate < date '1995-01-01' \
             AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        );
        let Expr::And { args } = expr else {
            panic!("not an AND")
        };
        assert_eq!(args.len(), 4);
        assert_eq!(
            args[2],
            Expr::Between {
                column: "l_discount".into(),
                low: json!(0.05),
                high: json!(0.07)
            }
        );
        assert_eq!(
            args[3],
            Expr::Lt {
                column: "l_quantity".into(),
                value: json!(24)
            }
        );
    }

    #[test]
    fn precedence_and_negation() {
        assert_eq!(
            parse("a = 1 OR b = 2 AND NOT c IS NULL"),
            Expr::Or {
                args: vec![
                    Expr::Eq {
                        column: "a".into(),
                        value: json!(1)
                    },
                    Expr::And {
                        args: vec![
                            Expr::Eq {
                                column: "b".into(),
                                value: json!(2)
                            },
                            Expr::Not {
                                arg: Box::new(Expr::IsNull { column: "c".into() })
                            },
                        ]
                    },
                ]
            }
        );
        assert_eq!(
            parse("x NOT IN (1, -2, 'a')"),
            Expr::Not {
                arg: Box::new(Expr::In {
                    column: "x".into(),
                    values: vec![json!(1), json!(-2), json!("a")]
                })
            }
        );
    }

    #[test]
    fn literals_columns_and_functions() {
        assert_eq!(
            parse("5 > a.b"),
            Expr::Lt {
                column: "a.b".into(),
                value: json!(5)
            }
        );
        assert_eq!(
            parse(r#""select" <> 'it''s'"#),
            Expr::Ne {
                column: "select".into(),
                value: json!("it's")
            }
        );
        assert_eq!(
            parse("URL LIKE '%google%'"),
            Expr::Like {
                column: "URL".into(),
                pattern: "%google%".into()
            }
        );
        assert_eq!(
            parse("starts_with(Title, 'How') OR CONTAINS(Title, 'x')"),
            Expr::Or {
                args: vec![
                    Expr::StartsWith {
                        column: "Title".into(),
                        value: "How".into()
                    },
                    Expr::Contains {
                        column: "Title".into(),
                        value: "x".into()
                    },
                ]
            }
        );
        assert_eq!(
            parse("big = 18446744073709551615 AND f >= 1.5e3 AND t = TRUE"),
            Expr::And {
                args: vec![
                    Expr::Eq {
                        column: "big".into(),
                        value: json!("18446744073709551615")
                    },
                    Expr::Gte {
                        column: "f".into(),
                        value: json!(1500.0)
                    },
                    Expr::Eq {
                        column: "t".into(),
                        value: json!(true)
                    },
                ]
            }
        );
    }

    #[test]
    fn errors_point_at_the_offending_position() {
        assert_eq!(position("a = 1 AND"), 9);
        assert_eq!(position("a = "), 4);
        assert_eq!(position("a = 1 b = 2"), 6);
        assert_eq!(position("(a = 1"), 6);
        assert_eq!(position("a = NULL"), 4);
        assert_eq!(position("a == 'open"), 5);
        assert_eq!(position("a ? 1"), 2);
        assert_eq!(position("AND = 1"), 0);
        let deep = format!("{}a = 1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(position(&deep), 64);
        assert!(parse_sql(&format!("{}a = 1{}", "(".repeat(60), ")".repeat(60))).is_ok());
        let message = parse_sql("a = 1 AND").expect_err("error").to_string();
        assert!(
            message.contains("expected a column name at position 9"),
            "{message}"
        );
        assert!(message.contains("a = 1 AND\n           ^"), "{message}");
    }
}
