//! The worker's cross-scan cache of decoded filter columns, as tasks use it: checked out when a
//! task starts, what the task collected checked in when it is done, and a report of both for the
//! scan's statistics.

use std::cell::RefCell;

use parquet_skim_core::column_cache::{CacheReport, Checkout, ColumnCache};
use parquet_skim_core::{ScanSpec, TaskOutput, TaskSpec};

thread_local! {
    /// This thread's (worker's) cross-scan cache of decoded filter columns. Its budget is the
    /// one the latest task's scan carries (the reader's share per worker).
    static COLUMN_CACHE: RefCell<ColumnCache> = RefCell::new(ColumnCache::new(0));
}

/// What the cache offers task `spec` (its key's columns, or the room a miss may keep), its
/// budget set to the scan's (the keys evicted by a smaller one are returned, for the report).
pub(crate) fn check_out(scan: &ScanSpec, spec: &TaskSpec) -> (Checkout, Vec<String>) {
    let Some(key) = spec.cache_key.as_deref() else {
        return (Checkout::default(), Vec::new());
    };
    COLUMN_CACHE.with_borrow_mut(|cache| {
        let evicted = cache.set_budget(scan.column_cache_bytes);
        (cache.check_out(key, scan.scan_id), evicted)
    })
}

/// Keeps what a finished task collected under `key` (or notes what it could not keep), and says
/// what the cache did.
pub(crate) fn check_in(
    key: String,
    output: &mut TaskOutput,
    scan_id: u64,
    mut evicted: Vec<String>,
) -> CacheReport {
    let (inserted, stats) = COLUMN_CACHE.with_borrow_mut(|cache| {
        let inserted = match output.collected.take() {
            Some(columns) => {
                evicted.extend(cache.insert(key.clone(), columns, scan_id));
                cache.contains(&key)
            }
            None => {
                cache.note_rejected(output.cache_rejected_bytes);
                false
            }
        };
        (inserted, cache.stats())
    });
    CacheReport {
        key,
        hit: output.cache_hit,
        inserted,
        evicted,
        rejected_bytes: output.cache_rejected_bytes,
        stats,
    }
}
