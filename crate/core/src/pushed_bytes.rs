//! [`PushedBytes`]: the bytes pushed to a task (or a metadata loader, or the planner's bloom
//! filters), answering the push decoder's exact requests. A buffer, not a cache: nothing in it
//! outlives its owner, and nothing is evicted (the caches are the predicate cache and the
//! workers' cross-scan `column_cache`).
//!
//! arrow-rs's push decoder wants each `NeedsData` range answered by one buffer containing it.
//! What arrives from the network has a different shape: the planner lists one range per page,
//! the I/O layer coalesces nearby ranges into fewer, larger reads, and a column chunk request may
//! straddle two reads. It keeps what was pushed and cuts (or, across a seam, stitches)
//! exactly the requested range — a zero-copy slice in the common case.

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::{Bytes, BytesMut};

/// Pushed byte ranges of one file, keyed by start offset.
#[derive(Debug, Default)]
pub struct PushedBytes {
    chunks: BTreeMap<u64, Bytes>,
    bytes: u64,
}

impl PushedBytes {
    /// Keeps `data`, which holds bytes `start..start + data.len()` of the file.
    pub fn insert(&mut self, start: u64, data: Bytes) {
        if data.is_empty() {
            return;
        }
        self.bytes += data.len() as u64;
        if let Some(old) = self.chunks.insert(start, data) {
            self.bytes -= old.len() as u64;
        }
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bytes of `range`, or `None` when part of it was never pushed.
    pub fn get(&self, range: &Range<u64>) -> Option<Bytes> {
        if range.is_empty() {
            return Some(Bytes::new());
        }
        // Fast path: one chunk covers the range.
        if let Some((start, chunk)) = self.chunks.range(..=range.start).next_back() {
            let end = start + chunk.len() as u64;
            if end >= range.end {
                let from = (range.start - start) as usize;
                return Some(chunk.slice(from..from + (range.end - range.start) as usize));
            }
        }
        self.stitch(range)
    }

    /// Copies `range` together from several chunks that cover it without a gap.
    fn stitch(&self, range: &Range<u64>) -> Option<Bytes> {
        let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
        let mut position = range.start;
        while position < range.end {
            // The chunk that covers `position` and reaches furthest.
            let (start, chunk) = self
                .chunks
                .range(..=position)
                .rev()
                .find(|(s, c)| *s + c.len() as u64 > position)?;
            let end = (start + chunk.len() as u64).min(range.end);
            out.extend_from_slice(&chunk[(position - start) as usize..(end - start) as usize]);
            position = end;
        }
        Some(out.freeze())
    }

    /// The bytes held from `start` on without a gap, at most `max` of them (empty when `start`
    /// is not held).
    pub fn run_from(&self, start: u64, max: u64) -> Bytes {
        let mut end = start;
        let limit = start.saturating_add(max);
        while end < limit {
            let Some((s, chunk)) = self
                .chunks
                .range(..=end)
                .rev()
                .find(|(s, c)| *s + c.len() as u64 > end)
            else {
                break;
            };
            end = (s + chunk.len() as u64).min(limit);
        }
        self.get(&(start..end)).unwrap_or_default()
    }

    /// The parts of `ranges` not held, for asking the I/O layer.
    pub fn missing(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
        ranges
            .iter()
            .filter(|r| self.get(r).is_none())
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> PushedBytes {
        let mut c = PushedBytes::default();
        c.insert(10, Bytes::from_static(b"abcdefghij")); // 10..20
        c.insert(20, Bytes::from_static(b"KLMNO")); // 20..25
        c.insert(40, Bytes::from_static(b"xyz")); // 40..43
        c
    }

    #[test]
    fn slices_within_one_chunk() {
        assert_eq!(cache().get(&(12..15)).as_deref(), Some(&b"cde"[..]));
    }

    #[test]
    fn stitches_across_adjacent_chunks() {
        assert_eq!(cache().get(&(18..23)).as_deref(), Some(&b"ijKLM"[..]));
    }

    #[test]
    fn runs_from_a_start_until_a_gap_or_the_limit() {
        let c = cache();
        assert_eq!(c.run_from(18, 100).as_ref(), b"ijKLMNO");
        assert_eq!(c.run_from(12, 4).as_ref(), b"cdef");
        assert_eq!(c.run_from(25, 10).as_ref(), b"");
        assert_eq!(c.run_from(41, 10).as_ref(), b"yz");
    }

    #[test]
    fn reports_gaps_as_missing() {
        let c = cache();
        assert_eq!(c.get(&(24..41)), None);
        assert_eq!(c.missing(&[10..12, 24..41, 9..11]), vec![24..41, 9..11]);
        assert_eq!(c.bytes(), 18);
    }
}
