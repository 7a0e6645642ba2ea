//! Filters: from text or JSON to pruning decisions and an arrow-rs `RowFilter`.
//!
//! - [`ast`]: the JSON AST both front ends produce
//! - [`sql`]: SQL `WHERE` text → AST, with positioned errors
//! - [`literal`]: literal text → a typed one-element array
//! - [`bind`]: AST + schema → typed [`Predicate`] (unknown columns, type mismatches)
//! - [`prune`]: row groups by footer statistics, pages by the column index
//! - [`bloom`]: row groups by bloom filters, for `=` and `IN`
//! - [`eval`]: predicate × record batch → boolean mask (arrow kernels)
//! - [`strings`]: `LIKE` and friends without a regex engine
//! - `find`: their substring search over a value buffer (a 64-bit prefilter in the WebAssembly build)
//!
//! [`Filter`] ties them together for one file: the bound predicate, and its top-level conjuncts in
//! the order they should run — cheapest columns first, so later, costlier conjuncts decode only
//! the rows earlier ones kept (late materialization, done by the push decoder's `RowFilter`).

pub mod ast;
pub mod bind;
pub mod bloom;
pub mod eval;
mod find;
pub mod literal;
pub mod prune;
pub mod sql;
pub mod strings;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
use parquet::arrow::ProjectionMask;

pub use ast::Expr;
pub use bind::Predicate;
pub use sql::parse_sql;

use crate::error::{Result, SkimError};
use crate::metadata::ParquetFile;

/// A filter bound to one file.
#[derive(Debug, Clone)]
pub struct Filter {
    predicate: Predicate,
    /// Top-level conjuncts, cheapest first.
    conjuncts: Vec<Predicate>,
}

impl Filter {
    /// Binds `expr` to `file`'s schema and orders its conjuncts by the compressed bytes of the
    /// columns each reads (a proxy for decode cost).
    pub fn try_new(expr: &Expr, file: &ParquetFile) -> Result<Self> {
        let schema_descr = file.metadata().file_metadata().schema_descr();
        let predicate = bind::bind(expr, file.arrow_schema(), schema_descr)?;
        let mut conjuncts = match &predicate {
            Predicate::And(args) => args.clone(),
            other => vec![other.clone()],
        };
        let cost = |p: &Predicate| -> i64 {
            p.columns()
                .iter()
                .map(|c| {
                    file.metadata()
                        .row_groups()
                        .iter()
                        .map(|rg| rg.column(c.leaf_idx).compressed_size())
                        .sum::<i64>()
                })
                .sum()
        };
        conjuncts.sort_by_cached_key(cost);
        Ok(Self {
            predicate,
            conjuncts,
        })
    }

    /// The whole predicate.
    pub fn predicate(&self) -> &Predicate {
        &self.predicate
    }

    /// Leaf columns any conjunct reads.
    pub fn leaves(&self) -> Vec<usize> {
        let mut leaves: Vec<usize> = self
            .predicate
            .columns()
            .iter()
            .map(|c| c.leaf_idx)
            .collect();
        leaves.sort_unstable();
        leaves.dedup();
        leaves
    }

    /// One arrow-rs predicate per conjunct, in cost order. A `RowFilter` is consumed by a
    /// decoder, so this builds a fresh one each call.
    pub fn row_filter(&self, file: &ParquetFile) -> RowFilter {
        let schema_descr = file.metadata().file_metadata().schema_descr();
        let predicates = self
            .conjuncts
            .iter()
            .map(|conjunct| {
                let mask = ProjectionMask::leaves(
                    schema_descr,
                    conjunct.columns().iter().map(|c| c.leaf_idx),
                );
                let conjunct = conjunct.clone();
                Box::new(ArrowPredicateFn::new(mask, move |batch| {
                    eval::evaluate(&conjunct, &batch)
                })) as Box<dyn parquet::arrow::arrow_reader::ArrowPredicate>
            })
            .collect();
        RowFilter::new(predicates)
    }
}

impl Filter {
    /// The filter as one `RowFilter` predicate over all its columns, which shows `on_batch` every
    /// batch of them (all the rows the task reads) before evaluating it — to keep them. Unlike
    /// [`row_filter`](Self::row_filter), a later conjunct's columns are decoded for every row,
    /// not only for the rows that passed the earlier ones.
    pub fn observed_row_filter(
        &self,
        file: &ParquetFile,
        mut on_batch: impl FnMut(&RecordBatch) + Send + 'static,
    ) -> RowFilter {
        let schema_descr = file.metadata().file_metadata().schema_descr();
        let mask = ProjectionMask::leaves(schema_descr, self.leaves());
        let predicate = self.predicate().clone();
        let observed = ArrowPredicateFn::new(mask, move |batch| {
            on_batch(&batch);
            eval::evaluate(&predicate, &batch)
        });
        RowFilter::new(vec![Box::new(observed)])
    }
}

/// Parses the filter a scan request carries: JSON AST.
pub fn parse_filter_json(text: &str) -> Result<Expr> {
    Expr::from_json(text).map_err(|e| SkimError::InvalidFilter {
        position: None,
        detail: format!("expected a filter expression (JSON AST): {e}"),
    })
}

/// Deterministic pseudo-random numbers below a bound (xorshift64, a fixed seed), for the filters'
/// randomized tests.
#[cfg(test)]
fn test_numbers() -> impl FnMut(u64) -> u64 {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    move |bound| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    }
}
