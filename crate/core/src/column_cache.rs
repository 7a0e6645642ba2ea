//! Decoded filter columns that outlive a scan: one LRU cache per worker.
//!
//! The predicate cache inside a task (arrow-rs) saves decoding a filter column twice within one
//! scan. A person exploring a file edits the filter and runs it again over the same columns;
//! this cache saves fetching and decoding those columns again at all. A filtered task whose spec
//! carries a `cacheKey` decodes its filter columns itself (see `task.rs`), keeps the batches, and
//! the worker inserts them here when the task ends; the next task with the same key evaluates
//! its (new) filter on the cached batches and fetches only the output pages that still hold rows.
//!
//! Keys name the bytes exactly — file identity (URL + ETag/Last-Modified/size, or a per-object id
//! for `File`s and buffers), row group, the filter's leaf columns, and the task's row selection —
//! so a changed file can never hit a stale entry: its identity differs.
//!
//! Size is counted by distinct buffers: arrays that share a buffer (string views over one data
//! buffer, slices of one decoded page) count it once, and at its capacity, which is what the
//! allocator holds. The cache never holds more than its budget.
//!
//! Eviction is LRU, made scan-resistant: an insert evicts only entries last used by an earlier
//! scan. Plain LRU under a scan larger than the cache evicts every entry before the next scan can
//! use it (the re-filter then hits nothing); here a scan keeps what fitted first and rejects the
//! rest, so the next scan over the same columns hits as much as the budget allows.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use arrow_array::{new_empty_array, Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{ArrowError, DataType};
use serde::Serialize;

/// Decoded filter columns of one task's rows: batches in row order.
pub type CachedColumns = Arc<Vec<RecordBatch>>;

/// What a worker's cache offers a task as it starts ([`ColumnCache::check_out`]).
#[derive(Debug, Clone, Default)]
pub struct Checkout {
    /// The filter columns held under the task's key: a hit.
    pub cached: Option<CachedColumns>,
    /// Bytes a miss may keep for the cache. A task whose decoded filter columns, extrapolated
    /// from its first batches, would not fit stops keeping them at once: once a scan's own
    /// entries fill the budget, the tasks after them used to hold their columns to the end only
    /// to have them refused (the hits bench's first query at 64 MiB: 133 MB; a task's peak
    /// memory 113 MiB, 97 MiB since).
    pub room: u64,
}

/// Counters of a [`ColumnCache`], as the scan stats report them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub bytes_inserted: u64,
    pub bytes_evicted: u64,
    /// Bytes offered but not kept: an entry larger than the whole budget.
    pub bytes_rejected: u64,
    /// Most bytes held at once over the cache's life.
    pub peak_bytes: u64,
    /// Bytes held now.
    pub bytes: u64,
    pub entries: u64,
    pub budget: u64,
}

/// What one task did with its worker's cross-scan cache (a task result's `cache`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheReport {
    pub key: String,
    /// Its filter columns came from the cache: none were fetched or decoded.
    pub hit: bool,
    /// The task's filter columns are now cached under `key`.
    pub inserted: bool,
    /// Keys evicted for room (or by a smaller budget).
    pub evicted: Vec<String>,
    pub rejected_bytes: u64,
    /// The worker's cache after the task.
    pub stats: CacheStats,
}

struct Entry {
    columns: CachedColumns,
    bytes: u64,
    last_used: u64,
    /// The scan that last used (inserted or hit) it.
    last_scan: u64,
}

/// A byte-bounded LRU of decoded filter columns.
pub struct ColumnCache {
    entries: HashMap<String, Entry>,
    clock: u64,
    stats: CacheStats,
}

impl ColumnCache {
    /// An empty cache holding at most `budget` bytes.
    pub fn new(budget: u64) -> Self {
        Self {
            entries: HashMap::new(),
            clock: 0,
            stats: CacheStats {
                budget,
                ..CacheStats::default()
            },
        }
    }

    /// Changes the budget, evicting least recently used entries until the cache fits it.
    pub fn set_budget(&mut self, budget: u64) -> Vec<String> {
        self.stats.budget = budget;
        self.evict_until(budget, u64::MAX)
    }

    /// The entry under `key`, counting a hit or a miss; a hit marks it used by `scan`.
    pub fn get(&mut self, key: &str, scan: u64) -> Option<CachedColumns> {
        self.clock += 1;
        match self.entries.get_mut(key) {
            Some(entry) => {
                entry.last_used = self.clock;
                entry.last_scan = entry.last_scan.max(scan);
                self.stats.hits += 1;
                Some(Arc::clone(&entry.columns))
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// What the cache offers a task of `scan` as it starts: the columns under `key`, if held (a
    /// hit, counted as [`get`](Self::get)), and the bytes a miss may keep ([`Checkout::room`]).
    pub fn check_out(&mut self, key: &str, scan: u64) -> Checkout {
        let cached = self.get(key, scan);
        Checkout {
            cached,
            room: self.room_for(scan),
        }
    }

    /// Bytes an insert by `scan` could be given: the budget less what the entries `scan` (or a
    /// later scan) last used hold — entries of earlier scans give way to it ([`insert`](Self::insert)).
    pub fn room_for(&self, scan: u64) -> u64 {
        let held: u64 = self
            .entries
            .values()
            .filter(|e| e.last_scan >= scan)
            .map(|e| e.bytes)
            .sum();
        self.stats.budget.saturating_sub(held)
    }

    /// Whether `key` is cached (without counting or touching it).
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Keeps `columns` (decoded by `scan`) under `key` if room can be made by evicting entries
    /// of earlier scans; returns the keys evicted. Otherwise the columns are rejected.
    pub fn insert(&mut self, key: String, columns: CachedColumns, scan: u64) -> Vec<String> {
        let bytes = memory_size(&columns);
        if let Some(old) = self.entries.remove(&key) {
            self.stats.bytes -= old.bytes;
        }
        // Entries of earlier scans give way; `scan`'s own do not.
        if bytes > self.room_for(scan) {
            self.stats.bytes_rejected += bytes;
            self.stats.entries = self.entries.len() as u64;
            return Vec::new();
        }
        let evicted = self.evict_until(self.stats.budget - bytes, scan);
        self.clock += 1;
        self.entries.insert(
            key,
            Entry {
                columns,
                bytes,
                last_used: self.clock,
                last_scan: scan,
            },
        );
        self.stats.bytes += bytes;
        self.stats.bytes_inserted += bytes;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.stats.bytes);
        self.stats.entries = self.entries.len() as u64;
        evicted
    }

    /// Counts bytes a task decoded but could not keep (over budget while collecting).
    pub fn note_rejected(&mut self, bytes: u64) {
        self.stats.bytes_rejected += bytes;
    }

    /// Drops every entry whose key starts with `prefix` (a closed file's).
    pub fn remove_prefix(&mut self, prefix: &str) -> Vec<String> {
        let keys: Vec<String> = self
            .entries
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for key in &keys {
            if let Some(entry) = self.entries.remove(key) {
                self.stats.bytes -= entry.bytes;
                self.stats.bytes_evicted += entry.bytes;
            }
        }
        self.stats.entries = self.entries.len() as u64;
        keys
    }

    /// The counters now.
    pub fn stats(&self) -> CacheStats {
        self.stats.clone()
    }

    /// Evicts least recently used entries last used before `scan` until at most `limit` bytes
    /// remain (or none is left to evict).
    fn evict_until(&mut self, limit: u64, scan: u64) -> Vec<String> {
        let mut evicted = Vec::new();
        while self.stats.bytes > limit {
            let Some(oldest) = self
                .entries
                .iter()
                .filter(|(_, e)| e.last_scan < scan)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(entry) = self.entries.remove(&oldest) {
                self.stats.bytes -= entry.bytes;
                self.stats.bytes_evicted += entry.bytes;
            }
            evicted.push(oldest);
        }
        self.stats.entries = self.entries.len() as u64;
        evicted
    }
}

/// Bytes the batches hold, each distinct buffer counted once at its capacity.
pub fn memory_size(batches: &[RecordBatch]) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0u64;
    for batch in batches {
        for column in batch.columns() {
            add_buffers(&column.to_data(), &mut seen, &mut total);
        }
    }
    total
}

fn add_buffers(data: &arrow_data::ArrayData, seen: &mut HashSet<usize>, total: &mut u64) {
    let nulls = data.nulls().map(|n| n.buffer());
    for buffer in data.buffers().iter().chain(nulls) {
        // A buffer is identified by its allocation (slices share it), counted at its capacity.
        let key = buffer.data_ptr().as_ptr() as usize;
        if seen.insert(key) {
            *total += buffer.capacity().max(buffer.len()) as u64;
        }
    }
    for child in data.child_data() {
        add_buffers(child, seen, total);
    }
}

/// A cache key: the file's identity, the row group, the filter's leaf columns and the task's
/// row selection (hashed; run lists can be long).
pub fn cache_key(
    file_key: &str,
    row_group: usize,
    leaves: &[usize],
    selection: Option<&[i64]>,
) -> String {
    let selection = match selection {
        None => "all".to_string(),
        Some(runs) => {
            let mut hash = Fnv::default();
            runs.iter().for_each(|run| hash.add(*run));
            format!("{:016x}/{}", hash.0, runs.len())
        }
    };
    format!(
        "{file_key}\u{1f}rg{row_group}\u{1f}c{}\u{1f}s{selection}",
        leaves_text(leaves)
    )
}

/// The cache key of a task spanning several row groups: the file's identity, its first row group
/// and how many, the filter's leaf columns, and a hash of every row group with its selection.
pub fn group_cache_key<'a>(
    file_key: &str,
    row_groups: impl Iterator<Item = (usize, Option<&'a [i64]>)>,
    leaves: &[usize],
) -> String {
    let mut hash = Fnv::default();
    let (mut first, mut count) = (None, 0usize);
    for (row_group, selection) in row_groups {
        first.get_or_insert(row_group);
        count += 1;
        // Unambiguous: the row group, how many runs follow (-1: all rows), the runs.
        hash.add(i64::try_from(row_group).unwrap_or(i64::MAX));
        hash.add(selection.map_or(-1, |runs| i64::try_from(runs.len()).unwrap_or(i64::MAX)));
        selection
            .unwrap_or(&[])
            .iter()
            .for_each(|run| hash.add(*run));
    }
    format!(
        "{file_key}\u{1f}rg{}+{count}\u{1f}c{}\u{1f}g{:016x}",
        first.unwrap_or(0),
        leaves_text(leaves),
        hash.0
    )
}

/// FNV-1a over little-endian `i64`s.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, value: i64) {
        for byte in value.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The filter's leaf columns as a key names them: `1,4`.
fn leaves_text(leaves: &[usize]) -> String {
    leaves
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// One output column taken from cached filter batches: the rows that passed, handed out a
/// batch at a time.
///
/// The rows are kept as filtered parts, one per cached batch, and an output batch takes a slice
/// of a part, or concatenates the slices of the parts it spans. Concatenating every part up front
/// copied each value once more: on the hits bench's broad re-filter, 140,079 `URL`s (8.7 MB)
/// written into a fresh buffer before the IPC writer copied them again. A batch's concatenation
/// is the size of a batch, and dropped once the batch is written (measured: the re-filter's
/// memory grows by 16 MiB instead of 32, and by 16 instead of 48 on the dense edit; see
/// `bench/results/2026-11-28-kept-columns.md`).
pub struct KeptColumn {
    /// Filtered parts not yet taken (the first possibly sliced), none empty.
    parts: VecDeque<ArrayRef>,
    /// The column's type: what a batch of no rows is.
    data_type: DataType,
}

impl KeptColumn {
    /// Column `name` of the cached `batches`, keeping the rows `masks` select (one per batch).
    #[inline(never)] // out of line, as `take` is
    pub fn try_new(
        batches: &[RecordBatch],
        masks: &[BooleanArray],
        name: &str,
    ) -> Result<Self, ArrowError> {
        if batches.len() != masks.len() {
            return Err(ArrowError::InvalidArgumentError(format!(
                "{} cached batches but {} filter masks",
                batches.len(),
                masks.len()
            )));
        }
        let first = batches
            .first()
            .ok_or_else(|| ArrowError::InvalidArgumentError("no cached batches".into()))?;
        let column_of = |batch: &RecordBatch| {
            batch
                .column_by_name(name)
                .cloned()
                .ok_or_else(|| ArrowError::SchemaError(format!("cached batch lacks column {name}")))
        };
        let data_type = column_of(first)?.data_type().clone();
        let mut parts = VecDeque::with_capacity(batches.len());
        for (batch, mask) in batches.iter().zip(masks) {
            let part = arrow_select::filter::filter(column_of(batch)?.as_ref(), mask)?;
            if !part.is_empty() {
                parts.push_back(part);
            }
        }
        Ok(Self { parts, data_type })
    }

    /// Rows not yet taken.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    /// Whether every row has been taken.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The next `n` rows; `None` (and nothing taken) when fewer are left.
    ///
    /// Out of line: inlined (fat LTO) into the task's batch step, the concatenation made that
    /// step bigger, and V8 runs it in its baseline tier for longer while optimizing it.
    #[inline(never)]
    pub fn take(&mut self, n: usize) -> Result<Option<ArrayRef>, ArrowError> {
        if n > self.len() {
            return Ok(None);
        }
        let mut pieces = Vec::new();
        let mut wanted = n;
        while wanted > 0 {
            let Some(part) = self.parts.pop_front() else {
                break;
            };
            if part.len() > wanted {
                pieces.push(part.slice(0, wanted));
                self.parts
                    .push_front(part.slice(wanted, part.len() - wanted));
                wanted = 0;
            } else {
                wanted -= part.len();
                pieces.push(part);
            }
        }
        match pieces.as_slice() {
            [] => Ok(Some(new_empty_array(&self.data_type))),
            [one] => Ok(Some(Arc::clone(one))),
            _ => {
                let refs: Vec<&dyn Array> = pieces.iter().map(AsRef::as_ref).collect();
                arrow_select::concat::concat(&refs).map(Some)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringViewArray};
    use arrow_schema::{DataType, Field, Schema};

    fn batch(rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter_values(0..rows))],
        )
        .expect("batch")
    }

    #[test]
    fn room_is_the_budget_less_what_the_scan_itself_holds() {
        let one = memory_size(&[batch(1000)]);
        let mut cache = ColumnCache::new(one * 3);
        assert_eq!(cache.check_out("a", 1).room, one * 3);
        cache.insert("a".into(), Arc::new(vec![batch(1000)]), 1);
        assert_eq!(cache.check_out("b", 1).room, one * 2);
        // Scan 1's entry gives way to scan 2; a hit in scan 2 makes it scan 2's.
        assert_eq!(cache.check_out("b", 2).room, one * 3);
        let hit = cache.check_out("a", 2);
        assert!(hit.cached.is_some());
        assert_eq!(hit.room, one * 2);
    }

    #[test]
    fn evicts_least_recently_used_and_never_exceeds_the_budget() {
        let one = memory_size(&[batch(1000)]);
        let mut cache = ColumnCache::new(one * 2 + one / 2);
        assert!(cache
            .insert("a".into(), Arc::new(vec![batch(1000)]), 1)
            .is_empty());
        assert!(cache
            .insert("b".into(), Arc::new(vec![batch(1000)]), 1)
            .is_empty());
        assert!(cache.get("a", 2).is_some(), "touch a: b is now the oldest");
        assert_eq!(
            cache.insert("c".into(), Arc::new(vec![batch(1000)]), 2),
            vec!["b"]
        );
        assert!(cache.contains("a") && cache.contains("c") && !cache.contains("b"));
        assert!(cache.get("b", 2).is_none());
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (1, 1, 2));
        assert_eq!(stats.bytes, one * 2);
        assert_eq!(stats.peak_bytes, one * 2);
        assert_eq!(stats.bytes_evicted, one);
        // Larger than the whole budget: rejected, nothing evicted for it.
        assert!(cache
            .insert("big".into(), Arc::new(vec![batch(10_000)]), 3)
            .is_empty());
        assert!(!cache.contains("big"));
        assert_eq!(cache.stats().bytes_rejected, memory_size(&[batch(10_000)]));
        // A smaller budget evicts down to it.
        assert_eq!(cache.set_budget(one).len(), 1);
        assert!(cache.stats().bytes <= one);
        assert_eq!(cache.remove_prefix("").len(), 1);
        assert_eq!(cache.stats().bytes, 0);
    }

    #[test]
    fn a_scan_larger_than_the_cache_keeps_what_fitted_first() {
        let one = memory_size(&[batch(1000)]);
        let mut cache = ColumnCache::new(one * 2);
        // Scan 1 over four row groups: the first two fit, the others are rejected (plain LRU
        // would have evicted the first two for them).
        for rg in 0..4 {
            assert!(cache.get(&format!("rg{rg}"), 1).is_none());
            assert!(cache
                .insert(format!("rg{rg}"), Arc::new(vec![batch(1000)]), 1)
                .is_empty());
        }
        assert!(cache.contains("rg0") && cache.contains("rg1"));
        assert_eq!(cache.stats().bytes_rejected, 2 * one);
        // Scan 2 (a re-filter) hits those two; its misses cannot evict what it just used.
        let hits = (0..4)
            .filter(|rg| cache.get(&format!("rg{rg}"), 2).is_some())
            .count();
        assert_eq!(hits, 2);
        assert!(cache
            .insert("rg2".into(), Arc::new(vec![batch(1000)]), 2)
            .is_empty());
        assert!(cache.contains("rg0") && cache.contains("rg1") && !cache.contains("rg2"));
        // A scan of other columns later may evict them.
        assert_eq!(
            cache
                .insert("other".into(), Arc::new(vec![batch(1000)]), 3)
                .len(),
            1
        );
        assert!(cache.stats().bytes <= cache.stats().budget);
    }

    #[test]
    fn a_kept_column_hands_out_the_rows_that_passed_in_order_across_its_parts() {
        use arrow_array::StringArray;
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
        let batches: Vec<RecordBatch> = (0..4)
            .map(|b| {
                let values = (0..10).map(|i| format!("v{}", b * 10 + i));
                let array = StringArray::from_iter_values(values);
                RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(array)]).expect("batch")
            })
            .collect();
        // Batch 1 keeps nothing; the others every other row, or all of them.
        let masks: Vec<BooleanArray> = (0..4)
            .map(|b| {
                BooleanArray::from_iter((0..10).map(|i| Some(b != 1 && (b == 3 || i % 2 == 0))))
            })
            .collect();
        let expected: Vec<String> = (0..4)
            .flat_map(|b| (0..10).map(move |i| (b, i)))
            .filter(|&(b, i)| b != 1 && (b == 3 || i % 2 == 0))
            .map(|(b, i)| format!("v{}", b * 10 + i))
            .collect();
        for step in [1, 3, 5, 7, 20] {
            let mut kept = KeptColumn::try_new(&batches, &masks, "s").expect("kept");
            assert_eq!(kept.len(), expected.len());
            let mut got = Vec::new();
            while !kept.is_empty() {
                let n = step.min(kept.len());
                let part = kept.take(n).expect("take").expect("rows left");
                assert_eq!(part.len(), n);
                let strings = part
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .expect("strings");
                got.extend(strings.iter().map(|v| v.unwrap_or_default().to_string()));
            }
            assert_eq!(got, expected, "taken {step} at a time");
            let none = kept.take(0).expect("take").expect("no rows");
            assert_eq!(none.len(), 0);
            assert!(kept.take(1).expect("take").is_none(), "past the last row");
        }
        // Fewer rows left than asked for: nothing is taken.
        let mut kept = KeptColumn::try_new(&batches, &masks, "s").expect("kept");
        assert!(kept.take(expected.len() + 1).expect("take").is_none());
        assert_eq!(kept.len(), expected.len());
        assert!(KeptColumn::try_new(&batches, &masks, "t").is_err());
        assert!(
            KeptColumn::try_new(&batches, &masks[1..], "s").is_err(),
            "a mask short"
        );
    }

    #[test]
    fn shared_buffers_count_once() {
        let long: Vec<String> = (0..1000)
            .map(|i| format!("a string longer than twelve {i}"))
            .collect();
        let views = StringViewArray::from_iter_values(long.iter());
        let schema = Arc::new(Schema::new(vec![Field::new(
            "s",
            DataType::Utf8View,
            false,
        )]));
        let whole = RecordBatch::try_new(schema, vec![Arc::new(views)]).expect("batch");
        let halves = vec![whole.slice(0, 500), whole.slice(500, 500)];
        assert_eq!(
            memory_size(&halves),
            memory_size(std::slice::from_ref(&whole))
        );
        assert!(memory_size(&halves) < 2 * memory_size(std::slice::from_ref(&whole)));
    }

    #[test]
    fn keys_differ_by_file_row_group_columns_and_selection() {
        let base = cache_key("u@etag1", 0, &[1, 2], None);
        assert_ne!(base, cache_key("u@etag2", 0, &[1, 2], None));
        assert_ne!(base, cache_key("u@etag1", 1, &[1, 2], None));
        assert_ne!(base, cache_key("u@etag1", 0, &[1], None));
        assert_ne!(base, cache_key("u@etag1", 0, &[1, 2], Some(&[10, -5])));
        assert_ne!(
            cache_key("f", 0, &[1], Some(&[10, -5])),
            cache_key("f", 0, &[1], Some(&[10, -6]))
        );
    }
}
