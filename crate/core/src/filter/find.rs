//! Substring search over a whole value buffer (`LIKE '%…%'`): `memchr`'s `memmem`, and in the
//! WebAssembly build without SIMD a prefilter of our own that compares 8 haystack positions at
//! once in plain 64-bit integer code.
//!
//! The package ships two WebAssembly builds (.cargo/config.toml, `.ci/build-wasm.sh`): with
//! `simd128` for engines whose first tier runs SIMD (V8, SpiderMonkey), and without it for
//! JavaScriptCore (Safari), which runs WebAssembly first in an interpreter that takes no SIMD
//! instruction, so each function holding one is compiled by its baseline JIT on the page's thread
//! at its first call (LLVM puts SIMD into ~1,900 of the module's 9,000 functions, and applies one
//! module's target features to all of its functions, so a `#[target_feature]` on this one would
//! bring them all back). `memchr` picks its SIMD searcher at compile time, so without `simd128` it
//! runs its scalar one: `l_comment LIKE '%special%requests%'` over TPC-H SF1 took 27% longer in V8.
//!
//! The prefilter is the packed pair of `memchr`'s SIMD searchers, on 64-bit words (SWAR): two
//! bytes of the needle believed rare (`memchr`'s `Pair`, by its byte-frequency ranking) are
//! compared with 8 haystack positions at once, and a position where both match is compared in
//! full. What is left past the last full step goes to `memmem`. Other targets, the SIMD build
//! included, use `memmem` alone, with its own SIMD.

use memchr::arch::all::packedpair::Pair;
use memchr::memmem;

/// Finds a needle in haystacks; built once per search of a buffer.
#[derive(Debug)]
pub struct Finder {
    scalar: memmem::Finder<'static>,
    /// The two needle offsets the prefilter compares (none for a needle under 2 bytes).
    #[cfg_attr(
        not(all(target_arch = "wasm32", not(target_feature = "simd128"))),
        allow(dead_code)
    )]
    pair: Option<(usize, usize)>,
}

impl Finder {
    pub fn new<B: ?Sized + AsRef<[u8]>>(needle: &B) -> Self {
        let needle = needle.as_ref();
        Self {
            scalar: memmem::Finder::new(needle).into_owned(),
            pair: Pair::new(needle).map(|p| (usize::from(p.index1()), usize::from(p.index2()))),
        }
    }

    pub fn needle(&self) -> &[u8] {
        self.scalar.needle()
    }

    /// The offset of the needle's first occurrence in `haystack`.
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(all(target_arch = "wasm32", not(target_feature = "simd128")))]
        if let Some((i1, i2)) = self.pair {
            return find_pair(haystack, self.needle(), i1, i2, &self.scalar);
        }
        self.scalar.find(haystack)
    }
}

/// Bytes of `word` equal to `byte`: the high bit of each such byte set, the rest clear (exact,
/// no carries between bytes).
#[inline(always)]
fn equal_bytes(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let zeroed = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    !(((zeroed & LOW7) + LOW7) | zeroed | LOW7)
}

/// The 8 haystack bytes from `from`, as a little-endian word (byte `k` of the word is
/// `haystack[from + k]`).
#[inline(always)]
fn word_at(haystack: &[u8], from: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&haystack[from..from + 8]);
    u64::from_le_bytes(bytes)
}

/// The packed-pair search: positions whose bytes at needle offsets `i1` and `i2` equal the
/// needle's there are compared in full, 8 positions a step; the rest goes to `rest`.
#[cfg_attr(
    not(all(target_arch = "wasm32", not(target_feature = "simd128"))),
    allow(dead_code)
)]
fn find_pair(
    haystack: &[u8],
    needle: &[u8],
    i1: usize,
    i2: usize,
    rest: &memmem::Finder,
) -> Option<usize> {
    let (Some(&b1), Some(&b2)) = (needle.get(i1), needle.get(i2)) else {
        return rest.find(haystack);
    };
    let far = i1.max(i2);
    let mut at = 0usize;
    while at + far + 8 <= haystack.len() {
        let mut mask = equal_bytes(word_at(haystack, at + i1), b1)
            & equal_bytes(word_at(haystack, at + i2), b2);
        while mask != 0 {
            let start = at + (mask.trailing_zeros() / 8) as usize;
            if haystack.get(start..start + needle.len()) == Some(needle) {
                return Some(start);
            }
            mask &= mask - 1;
        }
        at += 8;
    }
    rest.find(haystack.get(at..)?).map(|found| at + found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search as the WebAssembly build runs it.
    fn find_lanes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        let rest = memmem::Finder::new(needle);
        match Pair::new(needle) {
            Some(pair) => find_pair(
                haystack,
                needle,
                usize::from(pair.index1()),
                usize::from(pair.index2()),
                &rest,
            ),
            None => rest.find(haystack),
        }
    }

    #[test]
    fn finds_what_memmem_finds_at_every_offset_and_length() {
        // A small alphabet, so that candidates are common and matches land everywhere: at vector
        // starts and ends, across steps, in the tail, overlapping one another.
        let mut next = super::super::test_numbers();
        for _ in 0..3000 {
            let len = next(120) as usize;
            let haystack: Vec<u8> = (0..len).map(|_| b"abcd"[next(4) as usize]).collect();
            let needle_len = 1 + next(9) as usize;
            let needle: Vec<u8> = if len >= needle_len && next(2) == 0 {
                let at = next((len - needle_len + 1) as u64) as usize;
                haystack[at..at + needle_len].to_vec()
            } else {
                (0..needle_len).map(|_| b"abcd"[next(4) as usize]).collect()
            };
            let expected = memmem::find(&haystack, &needle);
            assert_eq!(
                find_lanes(&haystack, &needle),
                expected,
                "{needle:?} in {haystack:?}"
            );
            assert_eq!(Finder::new(&needle).find(&haystack), expected);
        }
    }

    #[test]
    fn equal_bytes_marks_exactly_the_equal_bytes_of_any_value() {
        for byte in 0..=255u8 {
            for base in (0..=255u8).step_by(8) {
                let lanes: [u8; 8] = std::array::from_fn(|k| {
                    base.wrapping_add((k as u8).wrapping_mul(37)) ^ ((k as u8 & 1) * 0x80)
                });
                let mut word = lanes;
                word[3] = byte;
                let expected = word.iter().enumerate().fold(0u64, |mask, (k, &b)| {
                    mask | (u64::from(b == byte) << (8 * k + 7))
                });
                assert_eq!(
                    equal_bytes(u64::from_le_bytes(word), byte),
                    expected,
                    "{word:?} vs {byte}"
                );
            }
        }
    }

    #[test]
    fn a_match_past_the_last_vector_step_is_found_and_a_partial_one_is_not() {
        let mut haystack = vec![b'x'; 40];
        haystack.extend_from_slice(b"needle");
        assert_eq!(find_lanes(&haystack, b"needle"), Some(40));
        haystack.truncate(44);
        assert_eq!(find_lanes(&haystack, b"needle"), None);
        assert_eq!(find_lanes(b"", b"needle"), None);
    }
}
