//! Pruning: which row groups, and which pages of them, may hold rows a [`Predicate`] keeps.
//!
//! The same three-valued test runs over two kinds of statistics — one value per row group (the
//! footer, through arrow-rs's `StatisticsConverter`) and one per data page (the column index) —
//! and answers per unit `false` (cannot match: skip), or `true`/null (may match: read). Only a
//! definite `false` prunes, so every unknown is conservative:
//!
//! - missing statistics, an undefined column order, or values arrow-rs cannot convert → unknown;
//! - min/max are used only as bounds (`min ≤ every value ≤ max`), which truncated string
//!   statistics still are; `!=` prunes only on exact, equal min and max;
//! - float columns are never pruned: Parquet min/max leave out NaN (which sorts above every
//!   number here) and writers disagree on ±0;
//! - `NOT` prunes nothing (the negation of "may match" is not "cannot match").
//!
//! Page pruning works per conjunct of a top-level `AND` that reads one column (pages of different
//! columns do not line up): kept pages become row ranges via the offset index, and the ranges of
//! all conjuncts are intersected into the row group's `RowSelection`.

use std::ops::Range;

use arrow_arith::boolean::{and_kleene, not, or_kleene};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Scalar, UInt64Array};
use arrow_ord::cmp;
use arrow_schema::{ArrowError, DataType};
use arrow_select::take::take;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::RowSelection;
use parquet::file::metadata::ParquetMetaData;

use super::ast::CmpOp;
use super::bind::{ColumnRef, Predicate, StrMatch};
use super::literal::parse_literal;
use crate::error::Result;
use crate::page_index::check_column_index;

/// Statistics of one column over some units (row groups, or pages of one row group).
struct UnitStats {
    mins: ArrayRef,
    maxes: ArrayRef,
    /// Whether each max is exact (not a truncated upper bound).
    max_exact: Option<BooleanArray>,
    null_counts: UInt64Array,
    row_counts: Option<UInt64Array>,
}

/// Where statistics come from.
trait StatsSource {
    fn units(&self) -> usize;
    fn stats(&self, column: &ColumnRef) -> Result<Option<UnitStats>, ArrowError>;
}

/// Row-group statistics from the footer.
struct RowGroupStats<'a> {
    metadata: &'a ParquetMetaData,
}

impl StatsSource for RowGroupStats<'_> {
    fn units(&self) -> usize {
        self.metadata.num_row_groups()
    }

    fn stats(&self, column: &ColumnRef) -> Result<Option<UnitStats>, ArrowError> {
        let file = self.metadata.file_metadata();
        let converter = converter(column, self.metadata)?;
        let groups = self.metadata.row_groups();
        let _ = file;
        Ok(Some(UnitStats {
            mins: converter.row_group_mins(groups).map_err(to_arrow)?,
            maxes: converter.row_group_maxes(groups).map_err(to_arrow)?,
            max_exact: Some(
                converter
                    .row_group_is_max_value_exact(groups)
                    .map_err(to_arrow)?,
            ),
            null_counts: converter.row_group_null_counts(groups).map_err(to_arrow)?,
            row_counts: converter.row_group_row_counts(groups).map_err(to_arrow)?,
        }))
    }
}

/// Page statistics of one row group from the column index.
struct PageStats<'a> {
    metadata: &'a ParquetMetaData,
    row_group_idx: usize,
    pages: usize,
}

impl StatsSource for PageStats<'_> {
    fn units(&self) -> usize {
        self.pages
    }

    fn stats(&self, column: &ColumnRef) -> Result<Option<UnitStats>, ArrowError> {
        let Some(page_index) = self.metadata.page_index() else {
            return Ok(None);
        };
        let converter = converter(column, self.metadata)?;
        let groups = [self.row_group_idx];
        let index = page_index.as_ref();
        let mins = converter.data_page_mins(index, &groups).map_err(to_arrow)?;
        if mins.len() != self.pages {
            return Ok(None);
        }
        Ok(Some(UnitStats {
            maxes: converter
                .data_page_maxes(index, &groups)
                .map_err(to_arrow)?,
            mins,
            // The column index carries no exactness flag; treat maxima as bounds only.
            max_exact: None,
            null_counts: converter
                .data_page_null_counts(index, &groups)
                .map_err(to_arrow)?,
            row_counts: converter
                .data_page_row_counts(index, self.metadata.row_groups(), &groups)
                .map_err(to_arrow)?,
        }))
    }
}

fn converter<'a>(
    column: &'a ColumnRef,
    metadata: &'a ParquetMetaData,
) -> Result<StatisticsConverter<'a>, ArrowError> {
    let file = metadata.file_metadata();
    Ok(
        StatisticsConverter::from_column_index(column.leaf_idx, &column.field, file.schema_descr())
            .map_err(to_arrow)?
            .with_missing_null_counts_as_zero(false)
            .with_column_orders(file.column_orders().map(Vec::as_slice)),
    )
}

fn to_arrow(e: parquet::errors::ParquetError) -> ArrowError {
    ArrowError::ExternalError(Box::new(e))
}

/// Per row group: `false` when no row of it can match.
pub fn row_groups_may_match(predicate: &Predicate, metadata: &ParquetMetaData) -> Vec<bool> {
    let source = RowGroupStats { metadata };
    keep_mask(&may_match(predicate, &source), source.units())
}

/// Outcome of page pruning in one row group.
#[derive(Debug, Clone, PartialEq)]
pub struct PagePruning {
    /// Rows to read, or `None` when every row may match.
    pub selection: Option<RowSelection>,
    /// Data pages of the filter columns considered / skipped.
    pub pages_total: usize,
    pub pages_pruned: usize,
}

/// Prunes the pages of `row_group_idx` by the column index; see the module docs. A column index
/// it reads that cannot be decoded is `INVALID_FILE` (column indexes decode on first use:
/// `page_index`).
pub fn prune_pages(
    predicate: &Predicate,
    metadata: &ParquetMetaData,
    row_group_idx: usize,
) -> Result<PagePruning> {
    let mut outcome = PagePruning {
        selection: None,
        pages_total: 0,
        pages_pruned: 0,
    };
    let Some(page_index) = metadata.page_index() else {
        return Ok(outcome);
    };
    let rows = usize::try_from(metadata.row_group(row_group_idx).num_rows()).unwrap_or(0);
    let conjuncts: Vec<&Predicate> = match predicate {
        Predicate::And(args) => args.iter().collect(),
        other => vec![other],
    };
    for conjunct in conjuncts {
        let columns = conjunct.columns();
        let [column] = columns.as_slice() else {
            continue;
        };
        let Some(locations) = page_index
            .offset_index(row_group_idx, column.leaf_idx)
            .map(|o| o.page_locations())
        else {
            continue;
        };
        check_column_index(metadata, row_group_idx, column.leaf_idx)?;
        let source = PageStats {
            metadata,
            row_group_idx,
            pages: locations.len(),
        };
        let keep = keep_mask(&may_match(conjunct, &source), locations.len());
        outcome.pages_total += locations.len();
        outcome.pages_pruned += keep.iter().filter(|k| !**k).count();
        let ranges = locations
            .iter()
            .enumerate()
            .filter(|(i, _)| keep[*i])
            .map(|(i, loc)| {
                let start = usize::try_from(loc.first_row_index).unwrap_or(0);
                let end = locations.get(i + 1).map_or(rows, |next| {
                    usize::try_from(next.first_row_index).unwrap_or(rows)
                });
                start..end.min(rows)
            });
        let selection = RowSelection::from_consecutive_ranges(merge(ranges).into_iter(), rows);
        outcome.selection = Some(match outcome.selection {
            None => selection,
            Some(previous) => previous.intersection(&selection),
        });
    }
    Ok(outcome)
}

fn merge(ranges: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in ranges.filter(|r| !r.is_empty()) {
        match out.last_mut() {
            Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `true` where a unit must be read (the test said true or did not know).
fn keep_mask(result: &Option<BooleanArray>, units: usize) -> Vec<bool> {
    match result {
        Some(mask) if mask.len() == units => (0..units)
            .map(|i| mask.is_null(i) || mask.value(i))
            .collect(),
        _ => vec![true; units],
    }
}

/// The three-valued "may match" test, or `None` for "unknown everywhere".
fn may_match(predicate: &Predicate, source: &dyn StatsSource) -> Option<BooleanArray> {
    let combine = |args: &[Predicate],
                   f: fn(&BooleanArray, &BooleanArray) -> Result<BooleanArray, ArrowError>,
                   unknown_wins: bool| {
        let mut acc: Option<BooleanArray> = None;
        for arg in args {
            match (may_match(arg, source), &acc) {
                // For OR, one unknown operand makes the whole result unknown.
                (None, _) if unknown_wins => return None,
                (None, _) => {}
                (Some(m), None) => acc = Some(m),
                (Some(m), Some(a)) => acc = Some(f(a, &m).ok()?),
            }
        }
        acc
    };
    match predicate {
        Predicate::And(args) => combine(args, and_kleene, false),
        Predicate::Or(args) => combine(args, or_kleene, true),
        Predicate::Not(_) => None,
        leaf => leaf_may_match(leaf, source).ok().flatten(),
    }
}

fn leaf_may_match(
    predicate: &Predicate,
    source: &dyn StatsSource,
) -> Result<Option<BooleanArray>, ArrowError> {
    let column = match predicate {
        Predicate::Cmp { column, .. }
        | Predicate::Between { column, .. }
        | Predicate::In { column, .. }
        | Predicate::IsNull { column, .. }
        | Predicate::Str { column, .. } => column,
        _ => return Ok(None),
    };
    let target = column.value_type();
    if matches!(
        target,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    ) {
        return Ok(None);
    }
    let Some(stats) = source.stats(column)? else {
        return Ok(None);
    };
    let bounds = Bounds {
        mins: unpack(&stats.mins, target)?,
        maxes: unpack(&stats.maxes, target)?,
    };
    match predicate {
        Predicate::Cmp { op, value, .. } => bounds.compare(*op, value, &stats),
        Predicate::Between { low, high, .. } => Ok(Some(and_kleene(
            &bounds.at_least(low)?,
            &bounds.at_most(high)?,
        )?)),
        Predicate::In { values, .. } => bounds.any_within(values),
        Predicate::IsNull { negated: false, .. } => Ok(Some(cmp::gt(
            &stats.null_counts,
            &Scalar::new(UInt64Array::from(vec![0u64])),
        )?)),
        Predicate::IsNull { negated: true, .. } => match &stats.row_counts {
            Some(rows) => Ok(Some(cmp::lt(&stats.null_counts, rows)?)),
            None => Ok(None),
        },
        Predicate::Str { kind, text, .. } => bounds.may_start_with(*kind, text, target),
        _ => Ok(None),
    }
}

/// One column's min and max per unit (row group or page), as values of the column's type.
struct Bounds {
    mins: ArrayRef,
    maxes: ArrayRef,
}

impl Bounds {
    /// min <= v: some value may be at most `v`.
    fn at_most(&self, v: &ArrayRef) -> Result<BooleanArray, ArrowError> {
        cmp::lt_eq(&self.mins, &Scalar::new(v.clone()))
    }

    /// max >= v: some value may be at least `v`.
    fn at_least(&self, v: &ArrayRef) -> Result<BooleanArray, ArrowError> {
        cmp::gt_eq(&self.maxes, &Scalar::new(v.clone()))
    }

    fn compare(
        &self,
        op: CmpOp,
        value: &ArrayRef,
        stats: &UnitStats,
    ) -> Result<Option<BooleanArray>, ArrowError> {
        let scalar = || Scalar::new(value.clone());
        Ok(Some(match op {
            CmpOp::Eq => and_kleene(&self.at_most(value)?, &self.at_least(value)?)?,
            CmpOp::Lt => cmp::lt(&self.mins, &scalar())?,
            CmpOp::Lte => self.at_most(value)?,
            CmpOp::Gt => cmp::gt(&self.maxes, &scalar())?,
            CmpOp::Gte => self.at_least(value)?,
            CmpOp::Ne => {
                let Some(exact) = &stats.max_exact else {
                    return Ok(None);
                };
                let all_equal = and_kleene(
                    &cmp::eq(&self.mins, &scalar())?,
                    &cmp::eq(&self.maxes, &scalar())?,
                )?;
                // Prune only where min == max == v and the max is exact.
                not(&and_kleene(&all_equal, exact)?)?
            }
        }))
    }

    /// Some listed value may lie within [min, max].
    fn any_within(&self, values: &[ArrayRef]) -> Result<Option<BooleanArray>, ArrowError> {
        let mut acc: Option<BooleanArray> = None;
        for v in values {
            let hit = and_kleene(&self.at_most(v)?, &self.at_least(v)?)?;
            acc = Some(match acc {
                None => hit,
                Some(a) => or_kleene(&a, &hit)?,
            });
        }
        Ok(acc)
    }

    /// Some string may match a `LIKE` / starts-with whose fixed prefix is known: max >= prefix
    /// and min < the first string after every string that starts with `prefix`.
    fn may_start_with(
        &self,
        kind: StrMatch,
        text: &str,
        target: &DataType,
    ) -> Result<Option<BooleanArray>, ArrowError> {
        let prefix = match kind {
            StrMatch::StartsWith => text.to_owned(),
            StrMatch::Like => like_prefix(text),
            StrMatch::EndsWith | StrMatch::Contains => String::new(),
        };
        let strings = matches!(
            target,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        );
        if prefix.is_empty() || !strings {
            return Ok(None);
        }
        let as_target = |s: &str| -> Result<ArrayRef, ArrowError> {
            parse_literal(s, target).map_err(ArrowError::InvalidArgumentError)
        };
        let mut result = self.at_least(&as_target(&prefix)?)?;
        if let Some(after) = after_prefix(&prefix) {
            let below = cmp::lt(&self.mins, &Scalar::new(as_target(&after)?))?;
            result = and_kleene(&result, &below)?;
        }
        Ok(Some(result))
    }
}

/// Statistics as plain values of `target` (dictionaries unpacked).
fn unpack(array: &ArrayRef, target: &DataType) -> Result<ArrayRef, ArrowError> {
    match array.as_any_dictionary_opt() {
        Some(dictionary) => take(dictionary.values().as_ref(), dictionary.keys(), None),
        None if array.data_type() == target => Ok(array.clone()),
        None => Err(ArrowError::InvalidArgumentError(format!(
            "statistics of type {} for a {target} column",
            array.data_type()
        ))),
    }
}

/// The literal text before the first wildcard of a LIKE pattern (`\` escapes).
fn like_prefix(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' | '_' => break,
            '\\' => match chars.next() {
                Some(escaped) => out.push(escaped),
                None => break,
            },
            c => out.push(c),
        }
    }
    out
}

/// The smallest string greater than every string starting with `prefix`, if one exists.
fn after_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=0x10FFFF).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_prefixes() {
        assert_eq!(like_prefix("abc%"), "abc");
        assert_eq!(like_prefix("a\\%b_c"), "a%b");
        assert_eq!(like_prefix("%x"), "");
        assert_eq!(after_prefix("abc").as_deref(), Some("abd"));
        assert_eq!(after_prefix("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(after_prefix("\u{10FFFF}"), None);
    }

    #[test]
    fn ranges_merge() {
        assert_eq!(
            merge([0..5, 5..8, 10..12, 11..13].into_iter()),
            vec![0..8, 10..13]
        );
    }
}
