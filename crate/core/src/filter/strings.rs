//! String matching (`LIKE`, starts/ends-with, contains) over Arrow string and binary arrays.
//!
//! Written here rather than taken from `arrow-string`, whose `LIKE` compiles patterns to the
//! `regex` crate: that alone roughly doubled the WebAssembly module. A `LIKE` pattern becomes a
//! token list; the common shapes (`abc%`, `%abc`, `%abc%`, no wildcard) reduce to a prefix,
//! suffix, substring or equality test, and the general case runs the classic wildcard matcher
//! with backtracking to the last `%` (linear in practice). `_` matches one UTF-8 character.
//!
//! Substring search (`%abc%`, the usual `LIKE` of a filter) runs once over a whole array's value
//! buffer rather than value by value: `memchr`'s `memmem` finds each occurrence, its offset maps
//! to a row through the (sorted) value offsets, and the search resumes at the next row once a row
//! has matched. An occurrence straddling two values is not a match. On the ClickBench-like
//! `URL LIKE '%google%'` (2M URLs, tests/bench/cache.mjs) a Chromium CPU profile of the two
//! workers put the match at about 210 ms with the former value-by-value loop, 105 ms with this
//! search in scalar WebAssembly, and 15–20 ms with `simd128`, then `memmem`'s SIMD searcher and
//! now the prefilter of `find.rs` (the module as a whole is built without `simd128`).
//!
//! A pattern of literals between `%`s (`%special%requests%`, `a%b%c`: no `_`) is a chain of
//! substring searches rather than the wildcard matcher: each literal at its leftmost occurrence
//! after the one before (leftmost is never worse for the literals after it), the first one
//! searched for over the whole buffer as above and the rest within the rows it lands in. The
//! wildcard matcher took ~150 ns a value (SF1's `l_comment LIKE '%special%requests%deposits%'`,
//! 6M cached values: 900 ms in Node, against 41 ms for `'%deposits%'`), and it is what an explorer
//! user's edited filter waits on.

use arrow_array::cast::AsArray;
use arrow_array::types::ByteArrayType;
use arrow_array::{Array, BooleanArray, GenericByteArray, OffsetSizeTrait};
use arrow_buffer::{ArrowNativeType, BooleanBufferBuilder};
use arrow_schema::{ArrowError, DataType};

use super::bind::StrMatch;
use super::find::Finder;

/// A compiled string predicate.
#[derive(Debug, Clone, PartialEq)]
enum Matcher {
    Equals(Vec<u8>),
    StartsWith(Vec<u8>),
    EndsWith(Vec<u8>),
    Contains(Vec<u8>),
    /// Literals between `%`s: `prefix%middle[0]%…%suffix` (prefix and suffix may be empty).
    Segments {
        prefix: Vec<u8>,
        middle: Vec<Vec<u8>>,
        suffix: Vec<u8>,
    },
    Like(Vec<Token>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Byte(u8),
    /// `_`: one character.
    One,
    /// `%`: any run of characters.
    Any,
}

impl Matcher {
    fn new(kind: StrMatch, text: &str) -> Self {
        let bytes = text.as_bytes().to_vec();
        match kind {
            StrMatch::StartsWith => Self::StartsWith(bytes),
            StrMatch::EndsWith => Self::EndsWith(bytes),
            StrMatch::Contains => Self::Contains(bytes),
            StrMatch::Like => Self::like(text),
        }
    }

    fn like(pattern: &str) -> Self {
        let mut tokens = Vec::new();
        let mut bytes = pattern.bytes();
        while let Some(b) = bytes.next() {
            match b {
                b'%' if tokens.last() != Some(&Token::Any) => tokens.push(Token::Any),
                b'%' => {}
                b'_' => tokens.push(Token::One),
                b'\\' => tokens.push(Token::Byte(bytes.next().unwrap_or(b'\\'))),
                b => tokens.push(Token::Byte(b)),
            }
        }
        let literal = |ts: &[Token]| -> Option<Vec<u8>> {
            ts.iter()
                .map(|t| match t {
                    Token::Byte(b) => Some(*b),
                    _ => None,
                })
                .collect()
        };
        let n = tokens.len();
        let starts_any = tokens.first() == Some(&Token::Any);
        let ends_any = n > 1 && tokens.last() == Some(&Token::Any);
        let inner = &tokens[usize::from(starts_any)..n - usize::from(ends_any)];
        match (starts_any, ends_any, literal(inner)) {
            (false, false, Some(lit)) => Self::Equals(lit),
            (false, true, Some(lit)) => Self::StartsWith(lit),
            (true, false, Some(lit)) => Self::EndsWith(lit),
            (true, true, Some(lit)) => Self::Contains(lit),
            _ => Self::segments(&tokens).unwrap_or(Self::Like(tokens)),
        }
    }

    /// `tokens` as literals between `%`s, if it has no `_` (and at least one inner `%`: the
    /// shapes with none are reduced above).
    fn segments(tokens: &[Token]) -> Option<Self> {
        let mut groups: Vec<Vec<u8>> = vec![Vec::new()];
        for token in tokens {
            match token {
                Token::Byte(b) => groups.last_mut()?.push(*b),
                Token::Any => groups.push(Vec::new()),
                Token::One => return None,
            }
        }
        // `%` is never doubled in `tokens`, so only the first and last groups can be empty.
        let suffix = groups.pop()?;
        if groups.is_empty() {
            return None;
        }
        let prefix = groups.remove(0);
        Some(Self::Segments {
            prefix,
            middle: groups,
            suffix,
        })
    }

    fn matches(&self, value: &[u8]) -> bool {
        match self {
            Self::Equals(lit) => value == lit.as_slice(),
            Self::StartsWith(lit) => value.starts_with(lit),
            Self::EndsWith(lit) => value.ends_with(lit),
            Self::Contains(lit) => contains(value, lit),
            Self::Segments {
                prefix,
                middle,
                suffix,
            } => {
                let finders: Vec<Finder> = middle.iter().map(Finder::new).collect();
                starts_with_segments(value, prefix, &finders, suffix)
            }
            Self::Like(tokens) => like(value, tokens),
        }
    }
}

/// Whether `value` is `prefix`, then each of `middle` in order, then `suffix`, anything between.
fn starts_with_segments(value: &[u8], prefix: &[u8], middle: &[Finder], suffix: &[u8]) -> bool {
    value.len() >= prefix.len() + suffix.len()
        && value.starts_with(prefix)
        && value.ends_with(suffix)
        && segments_from(value, prefix.len(), middle, suffix.len())
}

/// Whether each of `middle` occurs in order in `value[at..len - suffix_len]`, each at its leftmost
/// occurrence after the one before.
fn segments_from(value: &[u8], mut at: usize, middle: &[Finder], suffix_len: usize) -> bool {
    let Some(end) = value.len().checked_sub(suffix_len) else {
        return false;
    };
    for finder in middle {
        let Some(window) = value.get(at..end) else {
            return false;
        };
        match finder.find(window) {
            Some(found) => at += found + finder.needle().len(),
            None => return false,
        }
    }
    true
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Length of the UTF-8 character starting with `b` (1 for invalid lead bytes).
fn char_len(b: u8) -> usize {
    match b {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Wildcard matching with backtracking to the last `%`.
fn like(value: &[u8], tokens: &[Token]) -> bool {
    let (mut v, mut t) = (0usize, 0usize);
    let mut resume: Option<(usize, usize)> = None; // (token after %, value position)
    while v < value.len() {
        match tokens.get(t) {
            Some(Token::Any) => {
                t += 1;
                resume = Some((t, v));
                continue;
            }
            Some(Token::One) => {
                v += char_len(value[v]);
                t += 1;
                continue;
            }
            Some(Token::Byte(b)) if *b == value[v] => {
                v += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        // Mismatch: let the last % absorb one more character, or fail.
        match resume {
            Some((after_any, start)) => {
                let next = start + char_len(value[start]);
                resume = Some((after_any, next));
                t = after_any;
                v = next;
            }
            None => return false,
        }
    }
    tokens[t.min(tokens.len())..]
        .iter()
        .all(|tok| *tok == Token::Any)
}

/// Rows of `array` where `needle` occurs and `rest(value, end)` holds for its leftmost occurrence
/// in the value (`end`: where that occurrence ends in it), searching the value buffer for `needle`
/// in one pass; nulls stay null.
fn occurrence_in_buffer<T: ByteArrayType>(
    array: &GenericByteArray<T>,
    needle: &[u8],
    rest: impl Fn(&[u8], usize) -> bool,
) -> BooleanArray
where
    T::Offset: OffsetSizeTrait,
{
    let offsets = array.value_offsets();
    let rows = array.len();
    // Every value contains the empty string.
    let mut bits = BooleanBufferBuilder::new(rows);
    bits.append_n(rows, needle.is_empty());
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else {
        return BooleanArray::new(bits.finish(), array.nulls().cloned());
    };
    if needle.is_empty() {
        return BooleanArray::new(bits.finish(), array.nulls().cloned());
    }
    let (start, end) = (first.as_usize(), last.as_usize());
    let values = &array.value_data()[start..end];
    let finder = Finder::new(needle);
    // `row`: the first row whose value ends after the search position.
    let mut row = 0usize;
    let mut at = 0usize;
    while let Some(found) = finder.find(&values[at..]) {
        let hit = start + at + found;
        while row < rows && offsets[row + 1].as_usize() <= hit {
            row += 1;
        }
        if row == rows {
            break;
        }
        let row_end = offsets[row + 1].as_usize();
        if hit + needle.len() <= row_end {
            // The row's leftmost occurrence (the search resumes at a row's start at the latest).
            let row_start = offsets[row].as_usize();
            let value = &array.value_data()[row_start..row_end];
            if rest(value, hit + needle.len() - row_start) {
                bits.set_bit(row, true);
            }
            // The row is decided: go on from the next row's start.
            row += 1;
            at = row_end - start;
        } else {
            // The occurrence straddles two values: search again from the next byte.
            at += found + 1;
        }
    }
    BooleanArray::new(bits.finish(), array.nulls().cloned())
}

/// `array` matched against `text` (a `LIKE` pattern for [`StrMatch::Like`]); nulls stay null.
pub fn string_match(
    array: &dyn Array,
    kind: StrMatch,
    text: &str,
) -> Result<BooleanArray, ArrowError> {
    let m = Matcher::new(kind, text);
    if let Matcher::Contains(needle) = &m {
        if let Some(found) = in_buffer(array, needle, |_, _| true) {
            return Ok(found);
        }
        // Views: value by value, with one finder (`memmem::find` builds a searcher per call).
        let finder = Finder::new(needle);
        return by_value(array, |v: Option<&[u8]>| {
            v.map(|v| finder.find(v).is_some())
        });
    }
    if let Matcher::Segments {
        prefix,
        middle,
        suffix,
    } = &m
    {
        let finders: Vec<Finder> = middle.iter().map(Finder::new).collect();
        // No prefix: the first literal is searched for over the whole buffer, the rest (and the
        // suffix) checked in the rows it lands in.
        if let (true, Some((first, rest))) = (prefix.is_empty(), finders.split_first()) {
            let check = |value: &[u8], end: usize| {
                value.ends_with(suffix)
                    && end + suffix.len() <= value.len()
                    && segments_from(value, end, rest, suffix.len())
            };
            if let Some(found) = in_buffer(array, first.needle(), check) {
                return Ok(found);
            }
        }
        let test = |v: Option<&[u8]>| v.map(|v| starts_with_segments(v, prefix, &finders, suffix));
        return by_value(array, test);
    }
    let test = |v: Option<&[u8]>| v.map(|v| m.matches(v));
    by_value(array, test)
}

/// [`occurrence_in_buffer`] on an array with one value buffer and offsets (UTF-8 and binary, both
/// offset widths); `None` for other types (views), which are matched value by value.
fn in_buffer(
    array: &dyn Array,
    needle: &[u8],
    rest: impl Fn(&[u8], usize) -> bool,
) -> Option<BooleanArray> {
    Some(match array.data_type() {
        DataType::Utf8 => occurrence_in_buffer(array.as_string::<i32>(), needle, rest),
        DataType::LargeUtf8 => occurrence_in_buffer(array.as_string::<i64>(), needle, rest),
        DataType::Binary => occurrence_in_buffer(array.as_binary::<i32>(), needle, rest),
        DataType::LargeBinary => occurrence_in_buffer(array.as_binary::<i64>(), needle, rest),
        _ => return None,
    })
}

/// `test` on each value of the string or binary `array` (None for a null).
fn by_value(
    array: &dyn Array,
    test: impl Fn(Option<&[u8]>) -> Option<bool>,
) -> Result<BooleanArray, ArrowError> {
    Ok(match array.data_type() {
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| test(v.map(str::as_bytes)))
            .collect(),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|v| test(v.map(str::as_bytes)))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| test(v.map(str::as_bytes)))
            .collect(),
        DataType::Binary => array.as_binary::<i32>().iter().map(test).collect(),
        DataType::LargeBinary => array.as_binary::<i64>().iter().map(test).collect(),
        DataType::BinaryView => array.as_binary_view().iter().map(test).collect(),
        other => {
            return Err(ArrowError::InvalidArgumentError(format!(
                "string matching needs a string column, got {other}"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like_str(value: &str, pattern: &str) -> bool {
        Matcher::new(StrMatch::Like, pattern).matches(value.as_bytes())
    }

    #[test]
    fn common_patterns_reduce_to_simple_tests() {
        assert_eq!(Matcher::like("abc%"), Matcher::StartsWith(b"abc".to_vec()));
        assert_eq!(Matcher::like("%abc"), Matcher::EndsWith(b"abc".to_vec()));
        assert_eq!(Matcher::like("%%abc%"), Matcher::Contains(b"abc".to_vec()));
        assert_eq!(Matcher::like("a\\%c"), Matcher::Equals(b"a%c".to_vec()));
        assert!(matches!(Matcher::like("a_c%"), Matcher::Like(_)));
        assert_eq!(
            Matcher::like("%special%requests%"),
            Matcher::Segments {
                prefix: Vec::new(),
                middle: vec![b"special".to_vec(), b"requests".to_vec()],
                suffix: Vec::new(),
            }
        );
        assert_eq!(
            Matcher::like("a%b\\%c%d"),
            Matcher::Segments {
                prefix: b"a".to_vec(),
                middle: vec![b"b%c".to_vec()],
                suffix: b"d".to_vec(),
            }
        );
        assert!(matches!(Matcher::like("%a%_%"), Matcher::Like(_)));
    }

    /// Literals between `%`s (buffer-wide and value by value) against the wildcard matcher, on
    /// values and patterns over a small alphabet (with a two-byte character), anchored or not,
    /// for every array type, sliced arrays and nulls.
    #[test]
    fn segment_patterns_agree_with_the_wildcard_matcher() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let letters = ["a", "b", "ab", "é", "ba"];
        let mut checked = 0;
        for round in 0..2000 {
            let rows = next(30) as usize;
            let values: Vec<Option<String>> = (0..rows)
                .map(|_| {
                    (next(8) != 0)
                        .then(|| (0..next(10)).map(|_| letters[next(5) as usize]).collect())
                })
                .collect();
            let mut pattern = String::new();
            for part in 0..(2 + next(4)) {
                if part > 0 || next(2) == 0 {
                    pattern.push('%');
                }
                for _ in 0..next(3) {
                    pattern.push_str(letters[next(5) as usize]);
                }
            }
            if next(2) == 0 {
                pattern.push('%');
            }
            if !matches!(Matcher::like(&pattern), Matcher::Segments { .. }) {
                continue;
            }
            checked += 1;
            // The wildcard matcher, on the same tokens.
            let mut wildcard = Vec::new();
            for b in pattern.bytes() {
                wildcard.push(if b == b'%' {
                    Token::Any
                } else {
                    Token::Byte(b)
                });
            }
            let expected: BooleanArray = values
                .iter()
                .map(|v| v.as_deref().map(|v| like(v.as_bytes(), &wildcard)))
                .collect();
            let utf8 = arrow_array::StringArray::from(values.clone());
            let large = arrow_array::LargeStringArray::from(values.clone());
            let view = arrow_array::StringViewArray::from(values.clone());
            let binary = arrow_array::BinaryArray::from_iter(
                values.iter().map(|v| v.as_deref().map(str::as_bytes)),
            );
            for array in [&utf8 as &dyn Array, &large, &view, &binary] {
                let got = string_match(array, StrMatch::Like, &pattern).expect("match");
                assert_eq!(got, expected, "round {round}: {values:?} LIKE {pattern:?}");
            }
            if rows > 2 {
                let (from, len) = (1, rows - 2);
                let got =
                    string_match(&utf8.slice(from, len), StrMatch::Like, &pattern).expect("match");
                assert_eq!(got, expected.slice(from, len), "round {round}: slice");
            }
        }
        assert!(checked > 500, "{checked} segment patterns checked");
    }

    #[test]
    fn like_semantics() {
        assert!(like_str("https://www.google.com/x", "%google%"));
        assert!(!like_str("https://www.gogle.com/x", "%google%"));
        assert!(like_str("abc", "a_c"));
        assert!(like_str("aéc", "a_c"), "_ is one character, not one byte");
        assert!(!like_str("abbc", "a_c"));
        assert!(like_str("aXbYbZc", "a%b%c"));
        assert!(like_str("mississippi", "%iss%ppi"));
        assert!(!like_str("mississippi", "%iss%ppx"));
        assert!(like_str("", "%"));
        assert!(!like_str("", "_"));
        assert!(like_str("50%", "50\\%"));
        assert!(!like_str("500", "50\\%"));
        assert!(like_str("abc", "%%"));
        assert!(like_str("ab", "a%b%"));
        assert!(like_str("ab", "a%b"));
        assert!(!like_str("a", "a%a"), "prefix and suffix do not overlap");
        assert!(like_str("aa", "a%a"));
        assert!(like_str("xspecialyrequestsz", "%special%requests%"));
        assert!(!like_str("xrequestsyspecial", "%special%requests%"));
        assert!(like_str("abcabd", "%ab%d"));
        assert!(!like_str("abdc", "%ab%d"), "the suffix is at the end");
    }

    /// The buffer-wide search against a value-by-value one: occurrences straddling values,
    /// repeated and overlapping occurrences, empty values, nulls, sliced arrays, both offset
    /// widths and binary.
    #[test]
    fn substring_search_over_the_buffer_agrees_with_per_value_search() {
        let mut next = super::super::test_numbers();
        for round in 0..300 {
            let rows = next(40) as usize;
            let values: Vec<Option<String>> = (0..rows)
                .map(|_| {
                    (next(8) != 0).then(|| {
                        (0..next(9))
                            .map(|_| ['a', 'b', 'g', 'o'][next(4) as usize])
                            .collect()
                    })
                })
                .collect();
            let needle: String = (0..next(4))
                .map(|_| ['a', 'b', 'g', 'o'][next(4) as usize])
                .collect();
            let pattern = format!("%{needle}%");
            let expected: BooleanArray = values
                .iter()
                .map(|v| v.as_deref().map(|v| v.contains(needle.as_str())))
                .collect();
            let utf8 = arrow_array::StringArray::from(values.clone());
            let large = arrow_array::LargeStringArray::from(values.clone());
            let binary = arrow_array::BinaryArray::from_iter(
                values.iter().map(|v| v.as_deref().map(str::as_bytes)),
            );
            for array in [&utf8 as &dyn Array, &large, &binary] {
                let got = string_match(array, StrMatch::Like, &pattern).expect("match");
                assert_eq!(got, expected, "round {round}: {values:?} LIKE {pattern:?}");
            }
            // A slice starts at a non-zero value offset.
            if rows > 2 {
                let (from, len) = (1, rows - 2);
                let got = string_match(&utf8.slice(from, len), StrMatch::Contains, &needle)
                    .expect("match");
                assert_eq!(
                    got,
                    expected.slice(from, len),
                    "round {round}: slice of {values:?}"
                );
            }
        }
    }

    #[test]
    fn arrays_keep_nulls() {
        let array = arrow_array::StringArray::from(vec![Some("apple"), None, Some("grape")]);
        let result = string_match(&array, StrMatch::EndsWith, "pe").expect("match");
        assert_eq!(
            result,
            BooleanArray::from(vec![Some(false), None, Some(true)])
        );
    }
}
