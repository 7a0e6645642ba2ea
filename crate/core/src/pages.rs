//! Page headers checked before arrow-rs decodes a page: declared sizes (decompression bombs),
//! checksums, and the header inconsistencies that arrow-rs 60.1 turns into panics.
//!
//! A task hands arrow-rs's push decoder exactly the ranges it asks for: a whole column chunk
//! (no offset index), or one dictionary region and single data pages (offset index). Each such
//! range starts at a page header and holds whole pages, so before the bytes are pushed
//! [`check_range`] walks the headers in it (header, body, next header…) and refuses:
//!
//! - a page that declares more than `maxPageBytes` compressed or uncompressed (`TOO_LARGE`).
//!   arrow-rs allocates the declared uncompressed size before decompressing (and snappy fills
//!   it), so a 100-byte page claiming 2 GiB would otherwise trap the worker;
//! - a page whose CRC-32 (when the writer stored one, and `verifyChecksums` is on) does not match
//!   its bytes (`INVALID_FILE`). This replaces arrow-rs's `crc` feature, which cannot be turned
//!   off at run time;
//! - headers arrow-rs trusts to the point of panicking (`INVALID_FILE`): negative sizes, a data
//!   page without its data page header (arrow-rs `unwrap`s it when skipping), a
//!   dictionary page of 0 values with a non-empty body (arrow-rs divides by the count), a
//!   fixed-width dictionary shorter than its declared values (arrow-rs slices past its end), an
//!   uncompressed page whose two sizes disagree, a dictionary-encoded data page in a column chunk
//!   with no dictionary page before it (arrow-rs `expect`s one), and — when a whole column chunk
//!   is read — data pages whose value counts do not add up to the chunk's (sibling columns of a
//!   map then decode to different lengths, and arrow-rs `unwrap`s the error).
//!
//! The last needs memory across ranges: [`PageGuard`] remembers, per column chunk, whether a
//! dictionary page was seen (arrow-rs asks for a chunk's dictionary region before its data
//! pages). When a walk stops early, what arrow-rs will see is unknown and that chunk is no
//! longer judged.
//!
//! arrow-rs keeps its `PageHeader` and thrift reader crate-private, so the walk reads the few
//! fields it needs with a minimal reader of the thrift compact protocol (`thrift`): the
//! required sizes, the CRC, the encoding and value counts. It never decides that a page is
//! readable: whatever it cannot parse (garbage, encrypted headers) is left to arrow-rs, which
//! reports it as a typed error; the walk stops there.
//!
//! What no header shows: page *contents*. A corrupt run length in the levels, a dictionary key
//! past the dictionary, a negative delta-encoded length sit inside the (usually compressed) body
//! and only arrow-rs's decoders read them. arrow-rs 60.1 panicked on some such input; the
//! workspace builds it with fixes (crate/patches/parquet), and `tests/mutation_fuzz.rs` allows no
//! panic. The same patch bounds gzip, brotli and LZ4-frame decompression by the declared
//! uncompressed size this walk checks against `maxPageBytes`.

use std::collections::HashMap;

use parquet::basic::{Compression, Type as PhysicalType};
use parquet::file::metadata::ColumnChunkMetaData;

use crate::error::{Result, SkimError};
use crate::thrift::{Thrift, BOOL_FALSE, BOOL_TRUE};

/// Thrift page types.
pub(crate) const DATA_PAGE: i32 = 0;
pub(crate) const DICTIONARY_PAGE: i32 = 2;
pub(crate) const DATA_PAGE_V2: i32 = 3;
/// Thrift ids of the dictionary-index encodings of data pages.
const PLAIN_DICTIONARY: i32 = 2;
const RLE_DICTIONARY: i32 = 8;

/// What the walk enforces, from the task's options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRules {
    /// Largest compressed or uncompressed size a page may declare.
    pub max_page_bytes: u64,
    /// Compare the pages' stored CRC-32 with their bytes.
    pub verify_checksums: bool,
}

/// Whether a column chunk's dictionary page has been seen by the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dictionary {
    Seen,
    /// A walk of this chunk stopped early: no judgement.
    Unknown,
}

/// The page checks of one task: its rules, and what it has seen of each column chunk.
#[derive(Debug)]
pub(crate) struct PageGuard {
    rules: PageRules,
    /// By column chunk start; absent: no dictionary page seen yet.
    dictionaries: HashMap<u64, Dictionary>,
}

impl PageGuard {
    pub(crate) fn new(rules: PageRules) -> Self {
        Self {
            rules,
            dictionaries: HashMap::new(),
        }
    }

    /// The rules the walk enforces.
    pub(crate) fn rules(&self) -> PageRules {
        self.rules
    }

    /// Walks the page headers of `bytes`, the bytes of file range `start..` inside column chunk
    /// `chunk` (which starts at `chunk_start`), and refuses the first page that breaks the rules
    /// (see the module doc).
    pub(crate) fn check(
        &mut self,
        bytes: &[u8],
        start: u64,
        chunk: &ColumnChunkMetaData,
        chunk_start: u64,
    ) -> Result<()> {
        let mut values = 0i64;
        let complete = check_range(bytes, start, chunk, self.rules, |page| {
            values = values.saturating_add(i64::from(page.data_values.unwrap_or(0)));
            let state = self.dictionaries.get(&chunk_start).copied();
            if page.page_type == DICTIONARY_PAGE {
                self.dictionaries.insert(chunk_start, Dictionary::Seen);
            } else if page.uses_dictionary() && state.is_none() {
                return Err(invalid(format!(
                    "the page of column '{}' at byte {} is dictionary-encoded, but its column \
                     chunk has no dictionary page before it",
                    chunk.column_path().string(),
                    page.at
                )));
            }
            Ok(())
        })?;
        if !complete {
            self.dictionaries.insert(chunk_start, Dictionary::Unknown);
            return Ok(());
        }
        let whole =
            start == chunk_start && i64::try_from(bytes.len()) == Ok(chunk.compressed_size());
        if whole && values != chunk.num_values() {
            return Err(invalid(format!(
                "the data pages of column '{}' at byte {chunk_start} hold {values} values, but \
                 the footer says its column chunk has {}",
                chunk.column_path().string(),
                chunk.num_values()
            )));
        }
        Ok(())
    }
}

/// Walks the page headers of `bytes` (see [`PageGuard::check`]), calling `visit` with each page
/// that passed the checks. Returns whether the walk reached the end of `bytes`.
fn check_range(
    bytes: &[u8],
    start: u64,
    chunk: &ColumnChunkMetaData,
    rules: PageRules,
    mut visit: impl FnMut(&PageHeader) -> Result<()>,
) -> Result<bool> {
    let mut pos = 0usize;
    while pos < bytes.len() {
        let Some(mut header) = PageHeader::parse(&bytes[pos..]) else {
            return Ok(false);
        };
        let at = start + pos as u64;
        header.at = at;
        let column = || chunk.column_path().string();
        let (Ok(compressed), Ok(uncompressed)) = (
            u64::try_from(header.compressed),
            u64::try_from(header.uncompressed),
        ) else {
            return Err(invalid(format!(
                "the page of column '{}' at byte {at} declares a negative size ({} compressed, \
                 {} uncompressed)",
                column(),
                header.compressed,
                header.uncompressed
            )));
        };
        let largest = compressed.max(uncompressed);
        if largest > rules.max_page_bytes {
            return Err(SkimError::TooLarge {
                detail: format!(
                    "the page of column '{}' at byte {at} declares {largest} bytes ({compressed} \
                     compressed, {uncompressed} uncompressed), over the {}-byte page limit; \
                     raise `maxPageBytes` if the file really has pages that large",
                    column(),
                    rules.max_page_bytes
                ),
            });
        }
        let body_start = pos + header.len;
        let body = usize::try_from(compressed)
            .ok()
            .and_then(|n| body_start.checked_add(n))
            .and_then(|end| bytes.get(body_start..end));
        if let (true, Some(expected), Some(body)) = (rules.verify_checksums, header.crc, body) {
            let actual = crc32fast::hash(body);
            // The header stores the CRC as a signed i32: compare the bits.
            if actual != expected as u32 {
                return Err(invalid(format!(
                    "the page of column '{}' at byte {at} fails its checksum (stored CRC-32 \
                     {:08x}, computed {actual:08x}): the page is corrupt. Pass \
                     `verifyChecksums: false` to decode it anyway",
                    column(),
                    expected as u32
                )));
            }
        }
        check_consistency(&header, chunk, at)?;
        visit(&header)?;
        let Some(body) = body else {
            // The body runs past the range: arrow-rs reports the truncation.
            return Ok(false);
        };
        pos = body_start + body.len();
    }
    Ok(true)
}

/// Header facts that arrow-rs 60.1 assumes instead of checking.
fn check_consistency(header: &PageHeader, chunk: &ColumnChunkMetaData, at: u64) -> Result<()> {
    let column = || chunk.column_path().string();
    let missing = match header.page_type {
        DATA_PAGE if !header.has_v1_header => Some("data page header"),
        DATA_PAGE_V2 if !header.has_v2_header => Some("data page v2 header"),
        _ => None,
    };
    if let Some(missing) = missing {
        return Err(invalid(format!(
            "the page of column '{}' at byte {at} has no {missing}",
            column()
        )));
    }
    let raw = chunk.compression() == Compression::UNCOMPRESSED || header.v2_uncompressed;
    // Uncompressed, arrow-rs takes the compressed size as the page and never looks at the other.
    if raw && header.compressed != header.uncompressed {
        return Err(invalid(format!(
            "the uncompressed page of column '{}' at byte {at} declares {} bytes stored but {} \
             bytes of data",
            column(),
            header.compressed,
            header.uncompressed
        )));
    }
    if header.page_type != DICTIONARY_PAGE {
        return Ok(());
    }
    let Some(values) = header.dictionary_values else {
        return Ok(());
    };
    let values = u64::try_from(values).map_err(|_| {
        invalid(format!(
            "the dictionary page of column '{}' at byte {at} declares {values} values",
            column()
        ))
    })?;
    let bytes = u64::try_from(header.uncompressed).unwrap_or(0);
    if values == 0 && bytes > 0 {
        return Err(invalid(format!(
            "the dictionary page of column '{}' at byte {at} declares 0 values in {bytes} bytes",
            column()
        )));
    }
    let width = match chunk.column_type() {
        PhysicalType::INT32 | PhysicalType::FLOAT => 4,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
        PhysicalType::INT96 => 12,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            u64::try_from(chunk.column_descr().type_length()).unwrap_or(0)
        }
        PhysicalType::BOOLEAN | PhysicalType::BYTE_ARRAY => 0,
    };
    if values.saturating_mul(width) > bytes {
        return Err(invalid(format!(
            "the dictionary page of column '{}' at byte {at} declares {values} values of \
             {width} bytes in {bytes} bytes",
            column()
        )));
    }
    Ok(())
}

fn invalid(detail: String) -> SkimError {
    SkimError::InvalidFile { detail }
}

/// The fields of a thrift `PageHeader` that the walk checks (and `page_layout` reads).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct PageHeader {
    /// Bytes the header itself takes.
    pub(crate) len: usize,
    /// Where the page starts in the file (set by the walk).
    at: u64,
    pub(crate) page_type: i32,
    uncompressed: i32,
    pub(crate) compressed: i32,
    crc: Option<i32>,
    /// The data page's value encoding (v1 or v2 header).
    encoding: Option<i32>,
    /// The data page's `num_values` (v1 or v2 header): values including nulls.
    pub(crate) data_values: Option<i32>,
    /// `DataPageHeaderV2.num_rows`.
    pub(crate) v2_rows: Option<i32>,
    /// `DictionaryPageHeader.num_values`.
    dictionary_values: Option<i32>,
    /// A data page v2 whose `is_compressed` is false: its body is stored as is.
    v2_uncompressed: bool,
    /// The header has a `DataPageHeader` (field 5), a `DataPageHeaderV2` (field 8).
    has_v1_header: bool,
    has_v2_header: bool,
}

impl PageHeader {
    /// Reads a header from the front of `bytes`; `None` if it is not one this reader
    /// understands (arrow-rs then reports what is wrong), or `bytes` end inside it.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Self> {
        let mut thrift = Thrift::new(bytes);
        let mut header = PageHeader::default();
        let mut required = [false; 3];
        // Fields are read by id whatever their wire type, as arrow-rs does.
        thrift.read_struct(0, |t, id, kind| {
            Some(match (id, kind) {
                (1..=3, _) => {
                    let value = t.i32()?;
                    match id {
                        1 => header.page_type = value,
                        2 => header.uncompressed = value,
                        _ => header.compressed = value,
                    }
                    required[usize::try_from(id - 1).ok()?] = true;
                    true
                }
                (4, _) => {
                    header.crc = Some(t.i32()?);
                    true
                }
                (5, _) => header.read_v1(t)?,
                (7, _) => header.read_dictionary(t)?,
                (8, _) => header.read_v2(t)?,
                _ => false,
            })
        })?;
        header.len = thrift.pos;
        required.iter().all(|r| *r).then_some(header)
    }

    /// DataPageHeader: num_values, encoding.
    fn read_v1(&mut self, t: &mut Thrift<'_>) -> Option<bool> {
        self.has_v1_header = true;
        t.read_struct(1, |t, id, _| {
            Some(match id {
                1 => {
                    self.data_values = Some(t.i32()?);
                    true
                }
                2 => {
                    self.encoding = Some(t.i32()?);
                    true
                }
                _ => false,
            })
        })
    }

    /// DictionaryPageHeader: num_values.
    fn read_dictionary(&mut self, t: &mut Thrift<'_>) -> Option<bool> {
        t.read_struct(1, |t, id, _| {
            Some(match id {
                1 => {
                    self.dictionary_values = Some(t.i32()?);
                    true
                }
                _ => false,
            })
        })
    }

    /// DataPageHeaderV2: num_values, num_rows, encoding, is_compressed.
    fn read_v2(&mut self, t: &mut Thrift<'_>) -> Option<bool> {
        self.has_v2_header = true;
        t.read_struct(1, |t, id, kind| {
            Some(match (id, kind) {
                (1, _) => {
                    self.data_values = Some(t.i32()?);
                    true
                }
                (3, _) => {
                    self.v2_rows = Some(t.i32()?);
                    true
                }
                (4, _) => {
                    self.encoding = Some(t.i32()?);
                    true
                }
                (7, BOOL_TRUE) => true,
                (7, BOOL_FALSE) => {
                    self.v2_uncompressed = true;
                    true
                }
                (7, _) => return None,
                _ => false,
            })
        })
    }

    /// Whether the header stores the page's CRC-32.
    pub(crate) fn has_crc(&self) -> bool {
        self.crc.is_some()
    }

    /// A data page whose values are dictionary indexes.
    fn uses_dictionary(&self) -> bool {
        self.page_type != DICTIONARY_PAGE
            && self
                .encoding
                .is_some_and(|e| e == PLAIN_DICTIONARY || e == RLE_DICTIONARY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact-protocol header: type, sizes, CRC, and a dictionary header of `values`.
    fn header(page_type: u8, uncompressed: u8, compressed: u8, crc: Option<u8>) -> Vec<u8> {
        // Small non-negative values zigzag to 2*v, one byte each.
        let mut h = vec![
            0x15,
            page_type * 2,
            0x15,
            uncompressed * 2,
            0x15,
            compressed * 2,
        ];
        if let Some(crc) = crc {
            h.extend([0x15, crc * 2]);
        }
        h
    }

    #[test]
    fn reads_sizes_crc_and_dictionary_count_and_skips_the_rest() {
        let mut h = header(2, 40, 30, Some(7));
        // field 5 (data page header, delta 1): num_values 3, encoding 1, a binary (field 6),
        // then stop
        h.extend([0x1c, 0x15, 0x06, 0x15, 0x02, 0x48, 0x02, b'a', b'b', 0x00]);
        // field 7 (dictionary page header, delta 2): num_values = 5, is_sorted = true
        h.extend([0x2c, 0x15, 0x0a, 0x21, 0x00]);
        h.push(0x00);
        let parsed = PageHeader::parse(&h).expect("header");
        assert_eq!(
            parsed,
            PageHeader {
                len: h.len(),
                at: 0,
                page_type: 2,
                uncompressed: 40,
                compressed: 30,
                crc: Some(7),
                encoding: Some(1),
                data_values: Some(3),
                v2_rows: None,
                dictionary_values: Some(5),
                v2_uncompressed: false,
                has_v1_header: true,
                has_v2_header: false,
            }
        );
    }

    #[test]
    fn garbage_and_truncation_read_as_nothing() {
        let mut h = header(0, 10, 10, None);
        h.push(0x00);
        for cut in 0..h.len() {
            assert_eq!(PageHeader::parse(&h[..cut]), None, "cut at {cut}");
        }
        assert_eq!(PageHeader::parse(&[0xff; 64]), None);
        // A list claiming more elements than bytes left.
        assert_eq!(PageHeader::parse(&[0x19, 0xf5, 0xff, 0xff, 0x03]), None);
        // Nesting past the depth limit.
        assert_eq!(PageHeader::parse(&[0x1c; 64]), None);
    }
}
