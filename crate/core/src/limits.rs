//! Memory limits on hostile files: how much a file may make the reader allocate before it is
//! refused with `TOO_LARGE`.
//!
//! A Parquet file is mostly sizes that the reader believes: the footer's length, each page's
//! declared sizes, each column chunk's totals. A small file can declare gigabytes, and in
//! WebAssembly (4 GiB of memory, `panic = "abort"`) an allocation that fails traps the worker.
//! Each limit is checked where the size is first known, before anything of that size is
//! allocated:
//!
//! | limit (option, default) | checked | where |
//! |---|---|---|
//! | `maxMetadataBytes` (open, 64 MiB) | the footer length in the 8-byte tail, before the footer is read; the span of the page index, before it is read | `metadata` |
//! | `maxChunkBytes` (scan, 1 GiB) | each read column chunk's `total_uncompressed_size` | `plan` |
//! | `maxPageBytes` (scan, 256 MiB) | each page header's compressed and uncompressed sizes, before arrow-rs allocates the page | `pages` |
//! | `maxBatchBytes` (scan, 512 MiB) | a task's estimated decoded bytes per batch, then each decoded batch | here |
//!
//! **Batch memory** is the one size no header states. Before a task starts, its bytes per row
//! are estimated from the footer: for each column read, the larger of its uncompressed bytes per
//! row and its physical width. The task's batch size is then *reduced* (never below one row) so
//! that a batch's estimate stays within half of `maxBatchBytes` (decoders grow their buffers by
//! doubling): a file of very wide rows is still read, in smaller batches, rather than refused. Only when one row alone is estimated over the limit is the task
//! refused. Estimates cannot see through dictionaries (a few long values repeated on every row
//! decode to far more than they occupy), so every decoded batch is measured too and the task is
//! refused (`TOO_LARGE`) when one exceeds the limit, before it is copied into IPC.

use arrow_array::RecordBatch;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ColumnChunkMetaData;
use serde::{Deserialize, Serialize};

use crate::error::{Result, SkimError};

/// Largest footer (thrift metadata), and largest page index, a file may have by default.
pub const DEFAULT_MAX_METADATA_BYTES: u64 = 64 << 20;

/// Largest page (compressed or uncompressed) a task decodes by default.
pub const DEFAULT_MAX_PAGE_BYTES: u64 = 256 << 20;

/// Largest decoded batch a task produces by default.
pub const DEFAULT_MAX_BATCH_BYTES: u64 = 512 << 20;

/// Options of opening a file (decoding its metadata). Every field may be left out.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenOptions {
    /// Largest footer, and largest page index, to read (default
    /// [`DEFAULT_MAX_METADATA_BYTES`]).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    #[serde(default = "default_max_metadata_bytes")]
    pub max_metadata_bytes: u64,
    /// Columns the file's Arrow schema types as string or binary *views* (`Utf8View`,
    /// `BinaryView`: tpchgen-cli, DataFusion, pyarrow's `string_view`) are read as views (true,
    /// the default), or as plain `Utf8`/`Binary`, with the same values, for Arrow readers that
    /// have no view types (apache-arrow JS before 21.2).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    #[serde(default = "default_true")]
    pub view_types: bool,
    /// The decoding limits the caller will give every scan of the file: checked at open, so a bad
    /// one fails the open, not the first scan (each scan request carries them again).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    #[serde(default)]
    pub limits: DecodeLimits,
}

impl OpenOptions {
    /// The options, checked: a footer limit of at least one byte, and the decoding limits.
    pub fn checked(self) -> Result<Self> {
        if self.max_metadata_bytes == 0 {
            return Err(SkimError::invalid_argument(
                "maxMetadataBytes",
                "expected a whole number of bytes >= 1, got 0",
            ));
        }
        self.limits.checked()?;
        Ok(self)
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_metadata_bytes: DEFAULT_MAX_METADATA_BYTES,
            view_types: true,
            limits: DecodeLimits::default(),
        }
    }
}

/// Largest uncompressed column chunk a task decodes by default. WebAssembly has 4 GiB of memory
/// and a decoded chunk is copied at least once (into IPC), so beyond this a file is refused up
/// front (`TOO_LARGE`) instead of running the page out of memory.
pub const DEFAULT_MAX_CHUNK_BYTES: u64 = 1 << 30;

/// The decoding limits of a scan: one struct, one default each (a field left out of the JSON
/// takes its default here, and nowhere else; in TypeScript every field is optional).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct DecodeLimits {
    /// Largest uncompressed column chunk to decode (default [`DEFAULT_MAX_CHUNK_BYTES`]).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub max_chunk_bytes: u64,
    /// Largest page (compressed or uncompressed, as its header declares) to decode (default
    /// [`DEFAULT_MAX_PAGE_BYTES`]).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub max_page_bytes: u64,
    /// Largest decoded batch: batches are made smaller to fit, and a task whose batch still
    /// exceeds it is refused (default [`DEFAULT_MAX_BATCH_BYTES`]).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub max_batch_bytes: u64,
    /// Check the CRC-32 of pages that carry one (`INVALID_FILE` on a mismatch; default true).
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub verify_checksums: bool,
}

/// The most `maxPageBytes` and `maxBatchBytes` may be: a page or batch of 1 GiB already needs
/// about 3 GiB of a worker's 4 GiB of WebAssembly memory (decompressed page, decoded arrays with
/// doubling capacity, the IPC copy). `large_string_map` (rows of 1 GiB) with both at 2 GiB − 1
/// exhausted a worker's memory — a trap after 16 s — instead of being refused with `TOO_LARGE`.
pub const MAX_PAGE_OR_BATCH_BYTES: u64 = 1 << 30;

impl DecodeLimits {
    /// The limits, checked (the one place options are validated; the JS package passes them
    /// through): each at least one byte, pages and batches at most [`MAX_PAGE_OR_BATCH_BYTES`].
    pub fn checked(self) -> Result<Self> {
        for (name, value) in [
            ("maxChunkBytes", self.max_chunk_bytes),
            ("maxPageBytes", self.max_page_bytes),
            ("maxBatchBytes", self.max_batch_bytes),
        ] {
            if value == 0 {
                return Err(SkimError::invalid_argument(
                    name,
                    "expected a whole number of bytes >= 1, got 0",
                ));
            }
        }
        for (name, value) in [
            ("maxPageBytes", self.max_page_bytes),
            ("maxBatchBytes", self.max_batch_bytes),
        ] {
            if value > MAX_PAGE_OR_BATCH_BYTES {
                return Err(SkimError::invalid_argument(
                    name,
                    format!(
                        "expected at most {MAX_PAGE_OR_BATCH_BYTES} bytes (1 GiB: decoding one \
                         needs about 3 GiB of a worker's 4 GiB of WebAssembly memory), got {value}"
                    ),
                ));
            }
        }
        Ok(self)
    }
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
            max_batch_bytes: DEFAULT_MAX_BATCH_BYTES,
            verify_checksums: true,
        }
    }
}

pub(crate) fn default_max_metadata_bytes() -> u64 {
    DEFAULT_MAX_METADATA_BYTES
}

pub(crate) fn default_true() -> bool {
    true
}

/// Estimated decoded bytes per row of one column chunk of a row group of `num_rows` rows: the
/// larger of its uncompressed bytes per row and its physical width (plus offsets for binary).
pub(crate) fn bytes_per_row(chunk: &ColumnChunkMetaData, num_rows: u64) -> u64 {
    let uncompressed = u64::try_from(chunk.uncompressed_size()).unwrap_or(0);
    let per_row = uncompressed.div_ceil(num_rows.max(1));
    let width = match chunk.column_type() {
        PhysicalType::BOOLEAN => 1,
        PhysicalType::INT32 | PhysicalType::FLOAT | PhysicalType::BYTE_ARRAY => 4,
        PhysicalType::INT64 | PhysicalType::DOUBLE | PhysicalType::INT96 => 8,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            u64::try_from(chunk.column_descr().type_length()).unwrap_or(0)
        }
    };
    per_row.max(width)
}

/// Estimated decoded bytes of one column chunk of a row group of `num_rows` rows, as Arrow
/// arrays: [`bytes_per_row`] for every row, or for binary columns the value bytes their size
/// statistics count (what a dictionary hides from the uncompressed size) plus offsets, if more.
#[doc(hidden)] // public for the predicate cache's edge test (tests/filter_io.rs)
pub fn decoded_bytes(chunk: &ColumnChunkMetaData, num_rows: u64) -> u64 {
    let estimate = bytes_per_row(chunk, num_rows).saturating_mul(num_rows);
    let values = chunk
        .unencoded_byte_array_data_bytes()
        .and_then(|bytes| u64::try_from(bytes).ok())
        .map_or(0, |bytes| bytes.saturating_add(num_rows.saturating_mul(4)));
    estimate.max(values)
}

/// The batch size of a task whose rows are estimated at `row_bytes` each: `batch_size`, or fewer
/// rows so a batch fits half of `max_batch_bytes` (room for buffer growth). Refuses a task whose
/// single row does not fit the limit.
pub(crate) fn fitted_batch_size(
    batch_size: usize,
    row_bytes: u64,
    max_batch_bytes: u64,
    row_group_idx: usize,
) -> Result<usize> {
    if row_bytes > max_batch_bytes {
        return Err(SkimError::TooLarge {
            detail: format!(
                "one row of the columns read from row group {row_group_idx} is estimated at \
                 {row_bytes} bytes decoded, over the {max_batch_bytes}-byte batch limit; project \
                 fewer columns, or raise `maxBatchBytes`"
            ),
        });
    }
    // Half the limit: decoders grow their buffers by doubling, so a batch can hold up to twice
    // its contents in capacity, and that is what the check after decoding measures.
    let fit = (max_batch_bytes / 2)
        .checked_div(row_bytes)
        .map_or(usize::MAX, |rows| {
            usize::try_from(rows).unwrap_or(usize::MAX)
        });
    Ok(batch_size.min(fit).max(1))
}

/// Refuses a decoded batch larger than `max_batch_bytes` (what the estimate could not foresee).
pub(crate) fn check_batch(
    batch: &RecordBatch,
    max_batch_bytes: u64,
    row_group_idx: usize,
) -> Result<()> {
    let bytes = batch.get_array_memory_size() as u64;
    if bytes > max_batch_bytes {
        return Err(SkimError::TooLarge {
            detail: format!(
                "a batch of {} rows of row group {row_group_idx} decoded to {bytes} bytes, over \
                 the {max_batch_bytes}-byte batch limit (values far larger than the file's \
                 sizes suggest, e.g. long dictionary values repeated on every row); use a \
                 smaller `batchSize`, project fewer columns, or raise `maxBatchBytes`",
                batch.num_rows()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_in_one_place() {
        assert!(DecodeLimits::default().checked().is_ok());
        let zero = DecodeLimits {
            max_batch_bytes: 0,
            ..Default::default()
        };
        let err = zero.checked().expect_err("zero");
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().contains("maxBatchBytes"), "{err}");
        let huge = DecodeLimits {
            max_page_bytes: MAX_PAGE_OR_BATCH_BYTES + 1,
            ..Default::default()
        };
        let err = huge.checked().expect_err("huge");
        assert!(err.to_string().contains("maxPageBytes") && err.to_string().contains("1 GiB"));
        // A chunk may be larger than a page or batch.
        let chunk = DecodeLimits {
            max_chunk_bytes: 1 << 40,
            max_page_bytes: MAX_PAGE_OR_BATCH_BYTES,
            ..Default::default()
        };
        assert!(chunk.checked().is_ok());
        let open = OpenOptions {
            max_metadata_bytes: 0,
            ..Default::default()
        };
        assert!(open.checked().is_err());
    }

    #[test]
    fn batches_shrink_to_fit_and_a_row_over_the_limit_is_refused() {
        assert_eq!(fitted_batch_size(8192, 100, 2 << 20, 0), Ok(8192));
        assert_eq!(fitted_batch_size(8192, 1000, 2_000_000, 0), Ok(1000));
        assert_eq!(fitted_batch_size(8192, 0, 10, 0), Ok(8192));
        assert_eq!(fitted_batch_size(8192, 10, 10, 0), Ok(1));
        let refused = fitted_batch_size(8192, 11, 10, 3).expect_err("refused");
        assert_eq!(refused.code(), "TOO_LARGE");
        assert!(refused.to_string().contains("maxBatchBytes"), "{refused}");
    }

    #[test]
    fn open_options_default_when_absent() {
        let options: OpenOptions = serde_json::from_str("{}").expect("options");
        assert_eq!(options, OpenOptions::default());
        let options: OpenOptions =
            serde_json::from_str(r#"{"maxMetadataBytes": 1024}"#).expect("options");
        assert_eq!(options.max_metadata_bytes, 1024);
        assert!(serde_json::from_str::<OpenOptions>(r#"{"maxMetadata": 1}"#).is_err());
    }
}
