//! Footer bytes → [`ParquetFile`]: the decoded metadata of one file, with no I/O.
//!
//! Opening a file is a conversation with arrow-rs's [`ParquetMetaDataPushDecoder`]: the caller
//! pushes whatever bytes it already has (normally one speculative read of the file's tail) and
//! [`MetadataLoader::try_load`] answers either `NeedsRanges` (the footer or page index lies
//! outside what was pushed) or the loaded file. With a tail read larger than footer + page
//! index, opening costs exactly one request.
//!
//! The decoder reads the footer only; the loader then asks for the page index as one span (every
//! column and offset index the footer names) and has arrow-rs decode the offset indexes from it,
//! while the column indexes stay bytes until a scan's pruning asks for one (`page_index`:
//! decoding them made up a third of a warm open, and only a filter's columns ever use them).
//!
//! Legacy INT96 timestamps are read as microseconds, not arrow-rs's default nanoseconds: Spark and
//! Impala wrote them with microsecond precision, and nanoseconds overflow `i64` outside
//! 1677–2262, which real files contain (`int96_from_spark.parquet`). DuckDB reads them the same way.
//!
//! A [`ParquetFile`] also keeps the *footer bytes*: the metadata and page-index regions of the
//! file. Workers rebuild the same `ParquetFile` from them with the same decoder
//! ([`ParquetFile::try_from_footer`]) instead of receiving a second, hand-written serialization.
//!
//! Hostile footers. Before the decoder is asked for the footer, the 4-byte length in the tail is
//! held against `maxMetadataBytes` ([`OpenOptions`]), and so is the span of the page index before
//! it is asked for (`TOO_LARGE`): a corrupt length never makes the caller fetch, or the decoder
//! allocate, gigabytes. Ranges past the end of the file are refused as `INVALID_FILE` instead of
//! being requested. Once decoded, the layout the footer describes is checked
//! ([`check_layout`]): column chunks and offset-index pages with negative or out-of-file offsets
//! and lengths are `INVALID_FILE` here, rather than an `assert!` in arrow-rs's
//! `ColumnChunkMetaData::byte_range` later (a trap in WebAssembly).

use std::ops::Range;
use std::sync::Arc;

use std::collections::HashSet;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::errors::ParquetError;
use parquet::file::metadata::page_index::PageIndexProvider;
use parquet::file::metadata::{
    FileMetaData, FooterTail, PageIndexPolicy, ParquetMetaData, ParquetMetaDataBuilder,
    ParquetMetaDataPushDecoder,
};
use parquet::DecodeResult;

use crate::error::{Result, SkimError};
use crate::limits::OpenOptions;
use crate::page_index::FilePageIndex;
use crate::pushed_bytes::PushedBytes;
use crate::thrift::Thrift;

/// Size of the Parquet footer tail: 4-byte metadata length + 4-byte magic.
const FOOTER_TAIL_BYTES: u64 = 8;

/// One step of [`MetadataLoader::try_load`].
#[derive(Debug)]
pub enum LoadStep {
    /// Push these byte ranges, then call `try_load` again.
    NeedsRanges(Vec<Range<u64>>),
    /// The metadata is decoded, and the page index's offset indexes (when the file has any).
    Loaded(Box<ParquetFile>),
}

/// Decodes a file's metadata from pushed bytes. Does no I/O.
#[derive(Debug)]
pub struct MetadataLoader {
    file_len: u64,
    decoder: ParquetMetaDataPushDecoder,
    /// Everything pushed so far, kept to cut the footer bytes out of once loaded.
    pushed: PushedBytes,
    options: OpenOptions,
    /// The footer length in the tail has been held against the limit.
    tail_checked: bool,
    /// The decoded footer, while its page index is asked for.
    footer: Option<ParquetMetaData>,
}

impl MetadataLoader {
    /// A loader for a file of `file_len` bytes, with default [`OpenOptions`]. The page index is
    /// read when the file has one (its column indexes decoded on first use).
    pub fn try_new(file_len: u64) -> Result<Self> {
        let decoder = ParquetMetaDataPushDecoder::try_new(file_len)
            .map_err(|e| SkimError::from_parquet("opening the file", e))?
            .with_page_index_policy(PageIndexPolicy::Skip);
        Ok(Self {
            file_len,
            decoder,
            pushed: PushedBytes::default(),
            options: OpenOptions::default(),
            tail_checked: false,
            footer: None,
        })
    }

    /// The same loader with `options` (limits).
    pub fn with_options(mut self, options: OpenOptions) -> Self {
        self.options = options;
        self
    }

    /// Hands bytes `range` of the file to the loader.
    pub fn push(&mut self, range: Range<u64>, data: Bytes) -> Result<()> {
        check_pushed_range(&range, &data, self.file_len)?;
        // Once the footer is decoded, only the page index is still asked for: it is read here.
        if self.footer.is_none() {
            self.decoder
                .push_range(range.clone(), data.clone())
                .map_err(|e| SkimError::from_parquet("reading the footer", e))?;
        }
        self.pushed.insert(range.start, data);
        Ok(())
    }

    /// Decodes as far as the pushed bytes allow: the footer (arrow-rs's decoder), then the page
    /// index, read as one span of bytes ([`page_index_span`]): the offset indexes decoded now,
    /// the column indexes when a scan first asks (see `page_index`).
    pub fn try_load(&mut self) -> Result<LoadStep> {
        self.check_tail()?;
        let metadata = match self.footer.take() {
            Some(metadata) => metadata,
            None => match self.decode_footer()? {
                DecodeResult::NeedsData(ranges) => {
                    self.check_asked(&ranges)?;
                    return Ok(LoadStep::NeedsRanges(ranges));
                }
                DecodeResult::Data(metadata) => metadata,
                DecodeResult::Finished => {
                    return Err(SkimError::internal(
                        "metadata decoder finished without producing metadata",
                    ))
                }
            },
        };
        // The span's bytes are taken once (a copy when several pushes assembled them) and shared
        // by the page index and the regions handed to workers.
        let (metadata, span) = match page_index_span(&metadata) {
            Some(span) => match self.pushed.get(&span) {
                Some(bytes) => (
                    self.with_page_index(metadata, &span, bytes.clone())?,
                    Some((span, bytes)),
                ),
                None => {
                    // Held against the file and the limits only when asked for, as arrow-rs's
                    // decoder asked for it before (pushed bytes are within the file).
                    self.check_asked(std::slice::from_ref(&span))?;
                    self.footer = Some(metadata);
                    return Ok(LoadStep::NeedsRanges(vec![span]));
                }
            },
            None => (metadata, None),
        };
        let thrift = footer_range(&self.pushed, self.file_len)?;
        let mut footer = vec![(thrift.clone(), pushed_bytes(&self.pushed, &thrift)?)];
        footer.extend(span);
        self.pushed = PushedBytes::default();
        ParquetFile::try_new(
            self.file_len,
            Arc::new(metadata),
            footer,
            self.options.view_types,
        )
        .map(|file| LoadStep::Loaded(Box::new(file)))
    }

    /// One step of arrow-rs's footer decoder. Out of line, as are `with_page_index` and
    /// `ParquetFile::try_new`: inlined (fat LTO), `try_load` was 10.5 KB of WebAssembly that V8
    /// optimized whole once a page had opened a few files (see `TaskDecoder::run_step`).
    #[inline(never)]
    fn decode_footer(&mut self) -> Result<DecodeResult<ParquetMetaData>> {
        self.decoder.try_decode().map_err(|e| self.footer_error(e))
    }

    /// `metadata` with its page index from the pushed bytes of `span`: arrow-rs decodes the
    /// offset indexes, [`FilePageIndex`] keeps the bytes for the column indexes.
    #[inline(never)]
    fn with_page_index(
        &self,
        metadata: ParquetMetaData,
        span: &Range<u64>,
        bytes: Bytes,
    ) -> Result<ParquetMetaData> {
        let mut offsets =
            ParquetMetaDataPushDecoder::try_new_with_metadata(self.file_len, metadata)
                .map_err(|e| SkimError::from_parquet("reading the page index", e))?
                .with_column_index_policy(PageIndexPolicy::Skip)
                .with_offset_index_policy(PageIndexPolicy::Optional);
        offsets
            .push_range(span.clone(), bytes.clone())
            .map_err(|e| self.footer_error(e))?;
        let (metadata, offsets) = match offsets
            .try_decode_page_index()
            .map_err(|e| self.footer_error(e))?
        {
            DecodeResult::Data(decoded) => decoded,
            DecodeResult::NeedsData(ranges) => {
                return Err(SkimError::internal(format!(
                    "the page index decoder asked for {ranges:?} past the span {span:?}"
                )))
            }
            DecodeResult::Finished => {
                return Err(SkimError::internal(
                    "the page index decoder finished without a page index",
                ))
            }
        };
        let index = FilePageIndex::try_new(&metadata, offsets, span.start, bytes)?;
        Ok(ParquetMetaDataBuilder::new_from_metadata(metadata)
            .set_page_index(index.map(|i| Arc::new(i) as Arc<dyn PageIndexProvider>))
            .build())
    }

    /// Sorts a decoder error. A plaintext footer of an encrypted file (`encryption_algorithm`
    /// or `footer_signing_key_metadata` set) is `ENCRYPTED_FILE`, even when arrow-rs (built
    /// without encryption) fails to parse it as something else.
    fn footer_error(&self, error: ParquetError) -> SkimError {
        if let Some(not_parquet) = self.not_parquet() {
            return not_parquet;
        }
        let text = error.to_string();
        let error = SkimError::from_parquet("reading the footer", error);
        if !matches!(error, SkimError::InvalidFile { .. }) || !self.plaintext_footer_encrypted() {
            return error;
        }
        SkimError::EncryptedFile {
            detail: format!(
                "its footer is plaintext but names an encryption algorithm for the columns; \
                 reading the footer: {text}"
            ),
        }
    }

    /// A file whose last four bytes are not a Parquet magic (`PAR1`, or `PARE` for an encrypted
    /// footer) is not a Parquet file, or not all of one: say so, with what it ends with and, when
    /// its head was read too (a small file), what it looks like.
    fn not_parquet(&self) -> Option<SkimError> {
        let start = self.file_len.checked_sub(4)?;
        let magic = self.pushed.get(&(start..self.file_len))?;
        if magic.as_ref() == b"PAR1" || magic.as_ref() == b"PARE" {
            return None;
        }
        let shown: String = magic
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let hex: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
        let ends = format!(
            "it ends with {shown:?} ({}), not the magic bytes \"PAR1\"",
            hex.join(" ")
        );
        let head = self.pushed.get(&(0..self.file_len.min(64)));
        // A file cut short inside its trailing magic still ends with the magic's first bytes.
        let cut_in_magic = [&b"PAR"[..], b"PA", b"P"]
            .iter()
            .any(|part| magic.ends_with(part));
        let detail = match head.as_deref() {
            Some(head) if head.starts_with(b"PAR1") => {
                format!("the file starts like Parquet but {ends}: it was cut short or corrupted")
            }
            _ if cut_in_magic => format!("the file was cut short: {ends}"),
            Some(head) => match looks_like(head) {
                Some(kind) => format!("the file is not Parquet: it looks like {kind}; {ends}"),
                None => format!("the file is not Parquet: {ends}"),
            },
            None => format!("the file is not Parquet, or not all of one: {ends}"),
        };
        Some(SkimError::InvalidFile { detail })
    }

    fn plaintext_footer_encrypted(&self) -> bool {
        let Some(len) = self.footer_len() else {
            return false;
        };
        let end = self.file_len - FOOTER_TAIL_BYTES;
        let Some(footer) = end
            .checked_sub(len)
            .and_then(|start| self.pushed.get(&(start..end)))
        else {
            return false;
        };
        // FileMetaData fields 8 (encryption_algorithm) and 9 (footer_signing_key_metadata).
        let mut encrypted = false;
        Thrift::new(&footer).read_struct(0, |_, id, _| {
            encrypted |= id == 8 || id == 9;
            Some(false)
        });
        encrypted
    }

    /// The footer length in the pushed tail, when the tail is pushed and valid.
    fn footer_len(&self) -> Option<u64> {
        let start = self.file_len.checked_sub(FOOTER_TAIL_BYTES)?;
        let tail = self.pushed.get(&(start..self.file_len))?;
        let tail = FooterTail::try_new(tail.as_ref().try_into().ok()?).ok()?;
        Some(tail.metadata_length() as u64)
    }

    /// Holds the footer length in the tail (once pushed) against `maxMetadataBytes`, before the
    /// decoder asks for, or decodes, that many bytes.
    fn check_tail(&mut self) -> Result<()> {
        if self.tail_checked {
            return Ok(());
        }
        // A tail not pushed yet is checked later; one without the magic is the decoder's to
        // report, and so is a length longer than the file.
        let Some(len) = self.footer_len() else {
            return Ok(());
        };
        self.tail_checked = true;
        let limit = self.options.max_metadata_bytes;
        if len > limit && len + FOOTER_TAIL_BYTES <= self.file_len {
            return Err(SkimError::TooLarge {
                detail: format!(
                    "the footer declares {len} bytes of metadata, over the {limit}-byte limit; \
                     raise `maxMetadataBytes` if the file really has metadata that large"
                ),
            });
        }
        Ok(())
    }

    /// Refuses to ask for bytes past the end of the file, or for a page index larger than
    /// `maxMetadataBytes` (its ranges are read as one span).
    fn check_asked(&self, ranges: &[Range<u64>]) -> Result<()> {
        if let Some(bad) = ranges
            .iter()
            .find(|r| r.end > self.file_len || r.start > r.end)
        {
            return Err(SkimError::InvalidFile {
                detail: format!(
                    "the footer points at bytes {}..{} of a {}-byte file",
                    bad.start, bad.end, self.file_len
                ),
            });
        }
        let span = ranges
            .iter()
            .cloned()
            .reduce(|a, r| a.start.min(r.start)..a.end.max(r.end))
            .map_or(0, |r| r.end - r.start);
        let limit = self.options.max_metadata_bytes;
        if span > limit {
            return Err(SkimError::TooLarge {
                detail: format!(
                    "the file's metadata asks for a {span}-byte read (footer or page index), \
                     over the {limit}-byte limit; raise `maxMetadataBytes` if the file really \
                     has metadata that large"
                ),
            });
        }
        Ok(())
    }
}

/// A decoded Parquet file: metadata, Arrow schema and the footer bytes it was decoded from.
#[derive(Debug, Clone)]
pub struct ParquetFile {
    file_len: u64,
    /// Dotted paths of INT96 leaves, whose Arrow type is changed to microseconds.
    int96_paths: HashSet<String>,
    /// View columns are read as plain strings and binaries (see [`OpenOptions::view_types`]).
    plain_views: bool,
    reader_metadata: ArrowReaderMetadata,
    footer: Vec<(Range<u64>, Bytes)>,
}

impl ParquetFile {
    #[inline(never)] // out of line: see `MetadataLoader::decode_footer`
    fn try_new(
        file_len: u64,
        metadata: Arc<ParquetMetaData>,
        footer: Vec<(Range<u64>, Bytes)>,
        view_types: bool,
    ) -> Result<Self> {
        check_layout(&metadata, file_len)?;
        let metadata = with_consistent_row_count(metadata);
        let to_arrow = |e| SkimError::from_parquet("converting the schema to Arrow", e);
        let int96_paths: HashSet<String> = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .filter(|c| c.physical_type() == parquet::basic::Type::INT96)
            .map(|c| c.path().string())
            .collect();
        let mut reader_metadata =
            ArrowReaderMetadata::try_new(Arc::clone(&metadata), ArrowReaderOptions::new())
                .map_err(to_arrow)?;
        let plain_views = !view_types && has_view_types(reader_metadata.schema().fields());
        if !int96_paths.is_empty() || plain_views {
            let schema = adjusted(reader_metadata.schema(), &int96_paths, plain_views);
            let options = ArrowReaderOptions::new().with_schema(Arc::new(schema));
            reader_metadata = ArrowReaderMetadata::try_new(metadata, options).map_err(to_arrow)?;
        }
        Ok(Self {
            file_len,
            int96_paths,
            plain_views,
            reader_metadata,
            footer,
        })
    }

    /// Rebuilds a file from the footer bytes of another [`ParquetFile`] (see
    /// [`ParquetFile::footer`]), as a worker does. The bytes passed the opener's limits and are
    /// in memory already, so no metadata limit applies; `view_types` must be the opener's.
    pub fn try_from_footer(
        file_len: u64,
        footer: Vec<(Range<u64>, Bytes)>,
        view_types: bool,
    ) -> Result<Self> {
        let mut loader = MetadataLoader::try_new(file_len)?.with_options(OpenOptions {
            max_metadata_bytes: u64::MAX,
            view_types,
            ..OpenOptions::default()
        });
        for (range, bytes) in footer {
            loader.push(range, bytes)?;
        }
        match loader.try_load()? {
            LoadStep::Loaded(file) => Ok(*file),
            LoadStep::NeedsRanges(ranges) => Err(SkimError::internal(format!(
                "footer bytes are incomplete: the decoder still needs {ranges:?}"
            ))),
        }
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The decoded Parquet metadata (with the page index when present; see `page_index`).
    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        self.reader_metadata.metadata()
    }

    /// Metadata plus Arrow schema, as the push decoder wants it.
    pub fn reader_metadata(&self) -> &ArrowReaderMetadata {
        &self.reader_metadata
    }

    /// The whole file's Arrow schema.
    pub fn arrow_schema(&self) -> &SchemaRef {
        self.reader_metadata.schema()
    }

    /// `schema` (a projection of this file's) with the same type adjustments as the file's own
    /// Arrow schema.
    pub fn adjust_schema(&self, schema: &Schema) -> Schema {
        if self.int96_paths.is_empty() && !self.plain_views {
            return schema.clone();
        }
        adjusted(schema, &self.int96_paths, self.plain_views)
    }

    /// The byte regions holding the metadata and page index, with their bytes.
    pub fn footer(&self) -> &[(Range<u64>, Bytes)] {
        &self.footer
    }

    /// Memory the open file holds, in bytes: its decoded metadata (arrow-rs's estimate, which
    /// leaves out allocator overhead) and the footer bytes kept for workers. A file of many row
    /// groups holds several times its footer: lineitem written by pyarrow per month (~180 row
    /// groups × 16 columns, a 292 KB footer) holds ~1.3 MB. A dataset bounds the sum over the
    /// files it keeps open by this.
    pub fn memory_bytes(&self) -> u64 {
        let footer: usize = self.footer.iter().map(|(_, bytes)| bytes.len()).sum();
        // arrow-rs sizes only its own page index type: ours is estimated by itself.
        let page_index = self
            .metadata()
            .page_index()
            .and_then(|index| index.as_any().downcast_ref::<FilePageIndex>())
            .map_or(0, FilePageIndex::memory_bytes);
        (self.metadata().memory_size() + footer + page_index) as u64
    }

    /// The same file described by `metadata` (an edited copy of this file's: see `rebase`), read
    /// with the same Arrow schema.
    pub(crate) fn with_metadata(&self, metadata: Arc<ParquetMetaData>) -> Result<Self> {
        let options = if self.int96_paths.is_empty() && !self.plain_views {
            ArrowReaderOptions::new()
        } else {
            ArrowReaderOptions::new().with_schema(Arc::clone(self.arrow_schema()))
        };
        let reader_metadata = ArrowReaderMetadata::try_new(metadata, options)
            .map_err(|e| SkimError::from_parquet("converting the schema to Arrow", e))?;
        Ok(Self {
            reader_metadata,
            ..self.clone()
        })
    }
}

/// What a file's first bytes say it is, for the few formats often mistaken for Parquet.
fn looks_like(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head)
        .trim_start()
        .to_ascii_lowercase();
    let kind = if text.starts_with("<!doctype html") || text.starts_with("<html") {
        "an HTML page (a server's error or index page?)"
    } else if text.starts_with("<?xml") || text.starts_with("<error") {
        "XML (an object store's error response?)"
    } else if text.starts_with('<') {
        "HTML or XML text"
    } else if text.starts_with('{') || text.starts_with('[') {
        "JSON"
    } else if head.starts_with(b"PK\x03\x04") {
        "a ZIP archive"
    } else if head.starts_with(&[0x1f, 0x8b]) {
        "gzip-compressed data"
    } else if head.starts_with(b"ARROW1") {
        "an Arrow IPC file"
    } else if head.starts_with(b"ORC") {
        "an ORC file"
    } else {
        return None;
    };
    Some(kind)
}

/// Refuses a footer whose column chunks or offset-index pages lie (even partly) outside the
/// file, at negative offsets, or outside their column chunk.
///
/// Out of line: its loop over every page of the offset index is one of the two (with arrow-rs's
/// `decode_offset_index`) that made the loader hot on a cold page, and V8 should optimize this
/// loop alone, not the whole inlined `try_load` (18 KB).
#[inline(never)]
fn check_layout(metadata: &ParquetMetaData, file_len: u64) -> Result<()> {
    let invalid = |detail: String| SkimError::InvalidFile { detail };
    for (rg_idx, rg) in metadata.row_groups().iter().enumerate() {
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            let column = || chunk.column_path().string();
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let len = chunk.compressed_size();
            let range = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(start, len)| Some(start..start.checked_add(len)?))
                .filter(|r| r.end <= file_len && chunk.data_page_offset() >= 0);
            let Some(range) = range else {
                return Err(invalid(format!(
                    "column '{}' of row group {rg_idx} is {len} bytes at offset {start} (data \
                     pages at {}), not inside the {file_len}-byte file",
                    column(),
                    chunk.data_page_offset()
                )));
            };
            let Some(offsets) = metadata
                .page_index()
                .and_then(|index| index.offset_index(rg_idx, leaf))
            else {
                continue;
            };
            let mut next_row = 0i64;
            for (page_idx, page) in offsets.page_locations().iter().enumerate() {
                let page_range = u64::try_from(page.offset)
                    .ok()
                    .zip(u64::try_from(page.compressed_page_size).ok())
                    .and_then(|(start, len)| Some(start..start.checked_add(len)?));
                let inside =
                    page_range.is_some_and(|r| r.start >= range.start && r.end <= range.end);
                if !inside || page.first_row_index < next_row {
                    return Err(invalid(format!(
                        "the offset index puts page {page_idx} of column '{}' of row group \
                         {rg_idx} at {} bytes from offset {} (first row {}), outside its \
                         column chunk {}..{} or out of row order",
                        column(),
                        page.compressed_page_size,
                        page.offset,
                        page.first_row_index,
                        range.start,
                        range.end
                    )));
                }
                next_row = page.first_row_index;
            }
        }
    }
    Ok(())
}

/// Some writers leave the footer's `num_rows` at 0 (`repeated_no_annotation.parquet`) while the
/// row groups are right. arrow-rs caps batch sizes at the footer's count, so such a file would
/// decode to nothing: trust the row groups, as pyarrow does.
fn with_consistent_row_count(metadata: Arc<ParquetMetaData>) -> Arc<ParquetMetaData> {
    let rows: i64 = metadata.row_groups().iter().map(|rg| rg.num_rows()).sum();
    let file = metadata.file_metadata();
    if file.num_rows() == rows {
        return metadata;
    }
    let fixed = FileMetaData::new(
        file.version(),
        rows,
        file.created_by().map(str::to_owned),
        file.key_value_metadata().cloned(),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    let rebuilt = ParquetMetaDataBuilder::new(fixed)
        .set_row_groups(metadata.row_groups().to_vec())
        .set_page_index(metadata.page_index().cloned())
        .build();
    Arc::new(rebuilt)
}

/// `schema` as this reader returns it: nanosecond timestamps read from INT96 leaves (`int96`
/// paths) turned into microseconds, and, with `plain_views`, string and binary views turned into
/// plain strings and binaries. Follows structs and lists (whose Parquet paths add a `list` group
/// level).
fn adjusted(schema: &Schema, int96: &HashSet<String>, plain_views: bool) -> Schema {
    let adjust = |f: &Field, prefix: &str| -> Field {
        adjust_field(f, prefix, &|path, data_type| match data_type {
            DataType::Timestamp(TimeUnit::Nanosecond, tz) if int96.contains(path) => {
                Some(DataType::Timestamp(TimeUnit::Microsecond, tz.clone()))
            }
            DataType::Utf8View if plain_views => Some(DataType::Utf8),
            DataType::BinaryView if plain_views => Some(DataType::Binary),
            _ => None,
        })
    };
    let fields: Fields = schema.fields().iter().map(|f| adjust(f, "")).collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `f` with `retype(path, type)` applied to it and every field below it (`None`: keep).
fn adjust_field(
    f: &Field,
    prefix: &str,
    retype: &dyn Fn(&str, &DataType) -> Option<DataType>,
) -> Field {
    let path = if prefix.is_empty() {
        f.name().clone()
    } else {
        format!("{prefix}.{}", f.name())
    };
    let children = |children: &Fields| -> Fields {
        children
            .iter()
            .map(|c| adjust_field(c, &path, retype))
            .collect()
    };
    let list_item = |child: &Field| Arc::new(adjust_field(child, &format!("{path}.list"), retype));
    let data_type = match f.data_type() {
        DataType::Struct(fields) => DataType::Struct(children(fields)),
        DataType::List(child) => DataType::List(list_item(child)),
        DataType::LargeList(child) => DataType::LargeList(list_item(child)),
        DataType::Map(entries, sorted) => {
            DataType::Map(Arc::new(adjust_field(entries, &path, retype)), *sorted)
        }
        other => retype(&path, other).unwrap_or_else(|| other.clone()),
    };
    f.clone().with_data_type(data_type)
}

/// Whether any field, at any depth, is a string or binary view.
fn has_view_types(fields: &Fields) -> bool {
    fields.iter().any(|f| match f.data_type() {
        DataType::Utf8View | DataType::BinaryView => true,
        DataType::Struct(children) => has_view_types(children),
        DataType::List(child) | DataType::LargeList(child) | DataType::Map(child, _) => {
            has_view_types(&Fields::from(vec![Arc::clone(child)]))
        }
        _ => false,
    })
}

/// The thrift footer with its 8-byte tail: with the page index's span when the file has one,
/// the regions a worker needs to decode the same metadata.
fn footer_range(pushed: &PushedBytes, file_len: u64) -> Result<Range<u64>> {
    // The decoder has validated the tail; read the thrift length from it again.
    let tail = pushed_bytes(pushed, &(file_len - FOOTER_TAIL_BYTES..file_len))?;
    let len_bytes: [u8; 4] = tail
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| SkimError::internal("footer tail shorter than 4 bytes"))?;
    let metadata_len = u64::from(u32::from_le_bytes(len_bytes));
    Ok(file_len - FOOTER_TAIL_BYTES - metadata_len..file_len)
}

/// The span of every column and offset index the footer names, read as one.
fn page_index_span(metadata: &ParquetMetaData) -> Option<Range<u64>> {
    metadata
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .flat_map(|c| [c.column_index_range(), c.offset_index_range()])
        .flatten()
        .reduce(|a, r| a.start.min(r.start)..a.end.max(r.end))
}

/// The pushed bytes of `range`, which the decoder has necessarily seen.
fn pushed_bytes(pushed: &PushedBytes, range: &Range<u64>) -> Result<Bytes> {
    pushed
        .get(range)
        .ok_or_else(|| SkimError::internal(format!("footer range {range:?} was never pushed")))
}

/// Rejects a push whose length disagrees with its range or that lies outside the file.
pub(crate) fn check_pushed_range(range: &Range<u64>, data: &Bytes, file_len: u64) -> Result<()> {
    let expected = range.end.saturating_sub(range.start);
    if range.end < range.start || range.end > file_len || data.len() as u64 != expected {
        return Err(SkimError::internal(format!(
            "pushed {} bytes for range {}..{} of a {file_len}-byte file",
            data.len(),
            range.start,
            range.end
        )));
    }
    Ok(())
}
