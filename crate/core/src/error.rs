//! Errors of parquet-skim, each with a stable `code`.
//!
//! Callers (the JS package, tests, users) branch on [`SkimError::code`], never on message text.
//! Messages follow one shape: what was expected, what was found, and what to do about it.
//!
//! arrow-rs reports most failures as `ParquetError::General(String)`; [`SkimError::from_parquet`]
//! sorts them into causes (corrupt file, unsupported feature, encryption) so the JS side gets a
//! typed error instead of a string to match with regexes. The original arrow-rs text is kept in
//! the message because it is often the only precise account of what was wrong.

use std::fmt;

use arrow_schema::ArrowError;
use parquet::errors::ParquetError;

/// Every code a parquet-skim error can carry — the core's and the JS package's (HTTP, workers),
/// declared here once: the package's `ErrorCode` type is generated from this list. Codes never
/// change meaning.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The bytes are not a valid Parquet file (bad magic, truncated, corrupt metadata or pages).
    InvalidFile,
    /// The file (or the requested columns) is encrypted with Parquet modular encryption.
    EncryptedFile,
    /// The file is valid but uses a feature this build cannot read (codec, encoding, type); or,
    /// from `createReader`, the JavaScript engine lacks WebAssembly SIMD.
    Unsupported,
    /// A column chunk, page or batch is past its decoding limit (decompression bomb, or too big
    /// for wasm32).
    TooLarge,
    /// The filter text does not parse; `position` is the offset where it stopped making sense.
    InvalidFilter,
    /// A filter compares a column with a value of another type (or a non-primitive column).
    TypeMismatch,
    /// A requested column does not exist; the message suggests the nearest names.
    UnknownColumn,
    /// An option is malformed or out of range.
    InvalidArgument,
    /// The files of a dataset disagree: a column's types cannot be widened to one, or a path's
    /// partition value does not fit its column's type. The message names the column and the files.
    SchemaMismatch,
    /// The server answered a range request with an error status (403, 404, 416, 500, …).
    HttpStatus,
    /// The server ignored the `Range` header and sent the whole file.
    RangeNotSupported,
    /// The server's `Content-Range` is missing (not exposed via CORS?) or wrong.
    BadContentRange,
    /// No complete answer within `timeoutMs`, on every attempt.
    Timeout,
    /// The server sent a range with a `Content-Encoding` (gzip, …): the bytes are not the file's.
    ContentEncoding,
    /// The file changed (ETag, Last-Modified or size) between two reads.
    FileChanged,
    /// A request failed before an answer: connection, DNS, CORS, or a body cut short.
    Network,
    /// A worker crashed twice on the same task.
    WorkerCrashed,
    /// The reader was disposed while work was pending.
    Disposed,
    /// The WebAssembly memory of the page's core or of a worker is full (the engine's 4 GiB, or
    /// `memoryLimitBytes`): an allocation failed, and the instance trapped. The message gives the
    /// size asked, the memory in use, and what to lower.
    OutOfMemory,
    /// A bug in parquet-skim.
    Internal,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 20] = [
        Self::InvalidFile,
        Self::EncryptedFile,
        Self::Unsupported,
        Self::TooLarge,
        Self::InvalidFilter,
        Self::TypeMismatch,
        Self::UnknownColumn,
        Self::InvalidArgument,
        Self::SchemaMismatch,
        Self::HttpStatus,
        Self::RangeNotSupported,
        Self::BadContentRange,
        Self::Timeout,
        Self::ContentEncoding,
        Self::FileChanged,
        Self::Network,
        Self::WorkerCrashed,
        Self::Disposed,
        Self::OutOfMemory,
        Self::Internal,
    ];

    /// The code as text, e.g. `INVALID_FILE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidFile => "INVALID_FILE",
            Self::EncryptedFile => "ENCRYPTED_FILE",
            Self::Unsupported => "UNSUPPORTED",
            Self::TooLarge => "TOO_LARGE",
            Self::InvalidFilter => "INVALID_FILTER",
            Self::TypeMismatch => "TYPE_MISMATCH",
            Self::UnknownColumn => "UNKNOWN_COLUMN",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::SchemaMismatch => "SCHEMA_MISMATCH",
            Self::HttpStatus => "HTTP_STATUS",
            Self::RangeNotSupported => "RANGE_NOT_SUPPORTED",
            Self::BadContentRange => "BAD_CONTENT_RANGE",
            Self::Timeout => "TIMEOUT",
            Self::ContentEncoding => "CONTENT_ENCODING",
            Self::FileChanged => "FILE_CHANGED",
            Self::Network => "NETWORK",
            Self::WorkerCrashed => "WORKER_CRASHED",
            Self::Disposed => "DISPOSED",
            Self::OutOfMemory => "OUT_OF_MEMORY",
            Self::Internal => "INTERNAL",
        }
    }
}

/// Result alias used throughout the core.
pub type Result<T, E = SkimError> = std::result::Result<T, E>;

/// Everything that can go wrong while opening, planning or decoding a Parquet file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkimError {
    /// The bytes are not a valid Parquet file (bad magic, truncated, corrupt thrift or pages).
    InvalidFile { detail: String },
    /// The footer or the requested columns are encrypted and no key was given.
    EncryptedFile { detail: String },
    /// The file is valid but uses a feature this build cannot decode (codec, encoding, type).
    Unsupported { detail: String },
    /// Reading would need more memory than a configured limit (a decompression bomb, or more
    /// than WebAssembly's 4 GiB can hold). The detail names the size found, the limit and the
    /// option that raises it.
    TooLarge { detail: String },
    /// A projected or filtered column does not exist in the file's schema.
    UnknownColumn {
        name: String,
        suggestions: Vec<String>,
    },
    /// The filter text does not parse; `position` is the byte offset where it stopped making sense.
    InvalidFilter {
        position: Option<usize>,
        detail: String,
    },
    /// A filter compares a column with a value of another type.
    TypeMismatch { detail: String },
    /// An option passed by the caller is out of range or malformed.
    InvalidArgument { name: String, detail: String },
    /// A bug in parquet-skim: an invariant did not hold.
    Internal { detail: String },
}

impl SkimError {
    /// The stable machine-readable code of this error. Never changes for a given variant.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// [`code`](Self::code) as an [`ErrorCode`].
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Self::InvalidFile { .. } => ErrorCode::InvalidFile,
            Self::EncryptedFile { .. } => ErrorCode::EncryptedFile,
            Self::Unsupported { .. } => ErrorCode::Unsupported,
            Self::TooLarge { .. } => ErrorCode::TooLarge,
            Self::UnknownColumn { .. } => ErrorCode::UnknownColumn,
            Self::InvalidFilter { .. } => ErrorCode::InvalidFilter,
            Self::TypeMismatch { .. } => ErrorCode::TypeMismatch,
            Self::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Self::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// Shorthand for [`SkimError::InvalidArgument`].
    pub fn invalid_argument(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::InvalidArgument {
            name: name.into(),
            detail: detail.into(),
        }
    }

    /// Shorthand for [`SkimError::Internal`].
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::Internal {
            detail: detail.into(),
        }
    }

    /// Sorts an arrow-rs error into a cause. `context` says what was being done ("reading the
    /// footer", "decoding row group 3") and starts the message.
    pub fn from_parquet(context: &str, error: ParquetError) -> Self {
        let text = error.to_string();
        let lower = text.to_ascii_lowercase();
        if let Some(codec) = left_out_codec(&lower) {
            return Self::Unsupported {
                detail: format!(
                    "{context}: column chunks compressed with {codec}, a codec this build of \
                     parquet-skim leaves out (it decodes {}); use the full build, which decodes \
                     every codec",
                    CODECS.join(", ")
                ),
            };
        }
        let detail = format!("{context}: {text}");
        if lower.contains("encrypt") {
            return Self::EncryptedFile { detail };
        }
        match error {
            ParquetError::NYI(_) => Self::Unsupported { detail },
            ParquetError::General(_) if is_unsupported(&lower) => Self::Unsupported { detail },
            ParquetError::ArrowError(_) if is_unsupported(&lower) => Self::Unsupported { detail },
            _ => Self::InvalidFile { detail },
        }
    }

    /// Sorts an Arrow error (from IPC writing or kernels) into a cause.
    pub fn from_arrow(context: &str, error: ArrowError) -> Self {
        if left_out_codec(&error.to_string().to_ascii_lowercase()).is_some() {
            return Self::from_parquet(context, ParquetError::General(error.to_string()));
        }
        let detail = format!("{context}: {error}");
        match error {
            ArrowError::NotYetImplemented(_) => Self::Unsupported { detail },
            ArrowError::ParquetError(_) | ArrowError::InvalidArgumentError(_) => {
                Self::InvalidFile { detail }
            }
            _ => Self::Internal { detail },
        }
    }
}

/// The Parquet codecs this build decodes, as the format names them (UNCOMPRESSED aside). The full
/// build has all of them; a slimmer one is built with fewer of this crate's codec features.
pub const CODECS: &[&str] = &[
    #[cfg(feature = "snappy")]
    "SNAPPY",
    #[cfg(feature = "gzip")]
    "GZIP",
    #[cfg(feature = "brotli")]
    "BROTLI",
    #[cfg(feature = "lz4")]
    "LZ4",
    #[cfg(feature = "lz4")]
    "LZ4_RAW",
    #[cfg(feature = "zstd")]
    "ZSTD",
];

/// The codec named by parquet's "Disabled feature at compile time: <cargo feature>", as the format
/// names it.
fn left_out_codec(lower: &str) -> Option<&'static str> {
    let (_, feature) = lower.split_once("disabled feature at compile time: ")?;
    let feature = feature.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
    Some(match feature {
        "snap" => "SNAPPY",
        "flate2" => "GZIP",
        "brotli" => "BROTLI",
        "lz4" => "LZ4 or LZ4_RAW",
        "zstd" => "ZSTD",
        _ => return None,
    })
}

/// arrow-rs words for "valid, but not decodable by this build".
fn is_unsupported(lower: &str) -> bool {
    [
        "not supported",
        "unsupported",
        "not yet implemented",
        "disabled",
        "not enabled",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

impl fmt::Display for SkimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidFile { detail } => write!(
                f,
                "expected a valid Parquet file, but {detail}. Check that the source is a complete, \
                 uncorrupted Parquet file"
            ),
            Self::EncryptedFile { detail } => write!(
                f,
                "expected unencrypted data, but the file is encrypted ({detail}). parquet-skim \
                 cannot decrypt Parquet modular encryption; decrypt the file first"
            ),
            Self::Unsupported { detail } => write!(
                f,
                "the file uses a feature this build cannot read: {detail}"
            ),
            Self::TooLarge { detail } => write!(f, "refusing to read: {detail}"),
            Self::UnknownColumn { name, suggestions } => {
                write!(f, "expected a column of the file, but found '{name}'")?;
                if suggestions.is_empty() {
                    write!(f, "; list the file's columns with the schema")
                } else {
                    write!(f, "; did you mean {}?", quote_list(suggestions))
                }
            }
            Self::InvalidFilter { detail, .. } => write!(f, "invalid filter: {detail}"),
            Self::TypeMismatch { detail } => write!(f, "filter type mismatch: {detail}"),
            Self::InvalidArgument { name, detail } => {
                write!(f, "invalid option '{name}': {detail}")
            }
            Self::Internal { detail } => {
                write!(
                    f,
                    "internal error in parquet-skim (please report it): {detail}"
                )
            }
        }
    }
}

impl std::error::Error for SkimError {}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_serializes_as_its_text() {
        // The package's `ErrorCode` type is generated from the serde names, the errors it gets
        // carry `as_str`: the two must agree, code by code.
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).expect("json");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
        assert_eq!(
            SkimError::internal("x").error_code().as_str(),
            SkimError::internal("x").code()
        );
    }

    #[test]
    fn codes_are_stable() {
        let e = SkimError::UnknownColumn {
            name: "l_quantty".into(),
            suggestions: vec!["l_quantity".into()],
        };
        assert_eq!(e.code(), "UNKNOWN_COLUMN");
        assert_eq!(
            e.to_string(),
            "expected a column of the file, but found 'l_quantty'; did you mean 'l_quantity'?"
        );
    }

    #[test]
    fn parquet_errors_are_sorted_by_cause() {
        let enc = SkimError::from_parquet(
            "reading the footer",
            ParquetError::General(
                "Parquet file has an encrypted footer but the encryption feature is disabled"
                    .into(),
            ),
        );
        assert_eq!(enc.code(), "ENCRYPTED_FILE");
        let nyi = SkimError::from_parquet("decoding", ParquetError::NYI("BYTE_STREAM_X".into()));
        assert_eq!(nyi.code(), "UNSUPPORTED");
        let eof = SkimError::from_parquet("decoding", ParquetError::EOF("eof".into()));
        assert_eq!(eof.code(), "INVALID_FILE");
        assert!(eof
            .to_string()
            .starts_with("expected a valid Parquet file, but decoding: EOF"));
    }

    #[test]
    fn a_codec_left_out_of_the_build_is_unsupported_and_named() {
        let e = SkimError::from_parquet(
            "decoding",
            ParquetError::General("Disabled feature at compile time: brotli".into()),
        );
        assert_eq!(e.code(), "UNSUPPORTED");
        let text = e.to_string();
        assert!(text.contains("compressed with BROTLI"), "{text}");
        assert!(text.contains(&CODECS.join(", ")), "{text}");
        assert!(text.contains("use the full build"), "{text}");
        let lz4 = SkimError::from_parquet(
            "decoding",
            ParquetError::General("Disabled feature at compile time: lz4".into()),
        );
        assert!(lz4.to_string().contains("LZ4 or LZ4_RAW"), "{lz4}");
    }
}
