//! Where a file's bytes come from: an HTTP(S) URL, a `Blob`/`File`, or bytes in memory.
//!
//! A [`Source`] answers "give me bytes `start..end`" and nothing else: it knows nothing about
//! Parquet. Every read is recorded in the request log (range, status, bytes, milliseconds),
//! which tests and the explorer read to see exactly what a query cost.
//!
//! The tail read at open is kept: later reads inside it (a small file's pages, the last row
//! group's columns) are answered from memory, not fetched again.
//!
//! For URLs the source remembers the file's size and version (ETag, else Last-Modified) from the
//! first response, so later reads use `bytes=start-end` (no CORS preflight) and a file replaced
//! between two reads fails with `FILE_CHANGED` instead of mixing two versions.

use std::cell::{Cell, RefCell};
use std::ops::Range;

use js_sys::{Date, Uint8Array};
use parquet_skim_core::SkimError;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Blob};

use crate::http::{fetch_range, HttpOptions, RangeSpec};
use crate::js_error::describe;

/// One read, as the request log records it.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// Half-open byte range read.
    pub start: u64,
    pub end: u64,
    /// The `Range` header sent (HTTP only).
    pub range: Option<String>,
    /// HTTP status (HTTP only).
    pub status: Option<u16>,
    /// Bytes received.
    pub bytes: u64,
    /// When the read started (milliseconds since the Unix epoch).
    pub at: f64,
    /// Wall time from request to complete body, in milliseconds.
    pub ms: f64,
}

enum Kind {
    Http { url: String, options: HttpOptions },
    Blob(Blob),
    Bytes(Uint8Array),
}

/// A readable file.
pub struct Source {
    kind: Kind,
    file_len: Cell<Option<u64>>,
    version: RefCell<Option<String>>,
    log: RefCell<Vec<LogEntry>>,
    /// The bytes of the tail read and where they start.
    tail: RefCell<Option<(u64, Uint8Array)>>,
}

impl Source {
    /// A file served over HTTP(S). `file_len` may be given to skip the suffix read.
    pub fn http(url: String, options: HttpOptions, file_len: Option<u64>) -> Self {
        Self::new(Kind::Http { url, options }, file_len)
    }

    /// A `Blob` or `File`.
    pub fn blob(blob: Blob) -> Self {
        let len = blob.size() as u64;
        Self::new(Kind::Blob(blob), Some(len))
    }

    /// Bytes already in memory (kept on the JS heap; slices are copied in on read).
    pub fn bytes(bytes: Uint8Array) -> Self {
        // As a number: js-sys's `length()` is a `u32`, which wraps at 4 GiB.
        let len = bytes.unchecked_ref::<LargeBytes>().length() as u64;
        Self::new(Kind::Bytes(bytes), Some(len))
    }

    fn new(kind: Kind, file_len: Option<u64>) -> Self {
        Self {
            kind,
            file_len: Cell::new(file_len),
            version: RefCell::new(None),
            log: RefCell::new(Vec::new()),
            tail: RefCell::new(None),
        }
    }

    /// The file's size, once known.
    pub fn file_len(&self) -> Option<u64> {
        self.file_len.get()
    }

    /// The file's version (ETag or Last-Modified), once seen.
    pub fn version(&self) -> Option<String> {
        self.version.borrow().clone()
    }

    /// Every read so far.
    pub fn log(&self) -> Vec<LogEntry> {
        self.log.borrow().clone()
    }

    /// Reads the last `n` bytes (all of a smaller file) and learns the file's size.
    /// Returns where the bytes start.
    pub async fn read_tail(&self, n: u64) -> Result<(u64, Uint8Array), SkimError> {
        if let Some(len) = self.file_len.get() {
            let start = len.saturating_sub(n);
            let data = self.read(start..len, None).await?;
            *self.tail.borrow_mut() = Some((start, data.clone()));
            return Ok((start, data));
        }
        let Kind::Http { url, options } = &self.kind else {
            return Err(SkimError::internal(
                "only HTTP sources have an unknown size",
            ));
        };
        let spec = RangeSpec::Suffix(n);
        let started = Date::now();
        // A server that ignores Range answers with the whole file: take it when it is small.
        let whole_file_limit = n.max(options.full_body_bytes);
        let response = fetch_range(url, &spec, options, whole_file_limit, None, None).await?;
        self.file_len.set(Some(response.file_len));
        self.check_version(url, response.version)?;
        let end = response.start + u64::from(response.data.length());
        self.record(
            response.start..end,
            Some(spec.header()),
            Some(response.status),
            started,
        );
        *self.tail.borrow_mut() = Some((response.start, response.data.clone()));
        Ok((response.start, response.data))
    }

    /// Reads bytes `range`. Aborting `signal` aborts an HTTP request in flight.
    pub async fn read(
        &self,
        range: Range<u64>,
        signal: Option<&AbortSignal>,
    ) -> Result<Uint8Array, SkimError> {
        let len = self.file_len.get();
        if range.start > range.end || len.is_some_and(|len| range.end > len) {
            return Err(SkimError::invalid_argument(
                "range",
                format!(
                    "expected a range inside the {}-byte file, got {}..{}",
                    len.unwrap_or(0),
                    range.start,
                    range.end
                ),
            ));
        }
        if let Some(data) = self.cached_in_tail(&range) {
            return Ok(data);
        }
        let started = Date::now();
        match &self.kind {
            Kind::Http { url, options } => {
                let spec = RangeSpec::Bounded(range.clone());
                let pinned = self.version();
                let response =
                    fetch_range(url, &spec, options, 0, signal, pinned.as_deref()).await?;
                if len.is_some_and(|len| len != response.file_len) {
                    return Err(SkimError::FileChanged {
                        url: url.clone(),
                        detail: format!(
                            "its size went from {} to {} bytes",
                            len.unwrap_or(0),
                            response.file_len
                        ),
                    });
                }
                self.check_version(url, response.version)?;
                self.record(range, Some(spec.header()), Some(response.status), started);
                Ok(response.data)
            }
            Kind::Blob(blob) => {
                let slice = blob
                    .slice_with_f64_and_f64(range.start as f64, range.end as f64)
                    .map_err(|e| blob_error(&e))?;
                let buffer = JsFuture::from(slice.array_buffer())
                    .await
                    .map_err(|e| blob_error(&e))?;
                let data = Uint8Array::new(&buffer);
                self.record(range, None, None, started);
                Ok(data)
            }
            Kind::Bytes(bytes) => {
                // Offsets as numbers: arrays of 4 GiB and more exist (js-sys's `slice` takes u32).
                let data = bytes
                    .unchecked_ref::<LargeBytes>()
                    .slice(range.start as f64, range.end as f64);
                self.record(range, None, None, started);
                Ok(data)
            }
        }
    }

    /// A copy of `range` when the tail read holds all of it.
    fn cached_in_tail(&self, range: &Range<u64>) -> Option<Uint8Array> {
        let tail = self.tail.borrow();
        let (start, data) = tail.as_ref()?;
        let end = start + u64::from(data.length());
        if range.start < *start || range.end > end {
            return None;
        }
        // Offsets are below the tail's length, a u32.
        Some(data.slice((range.start - start) as u32, (range.end - start) as u32))
    }

    fn check_version(&self, url: &str, seen: Option<String>) -> Result<(), SkimError> {
        let Some(seen) = seen else { return Ok(()) };
        let mut version = self.version.borrow_mut();
        match version.as_deref() {
            Some(known) if known != seen => Err(SkimError::FileChanged {
                url: url.to_owned(),
                detail: format!("its version went from {known} to {seen}"),
            }),
            Some(_) => Ok(()),
            None => {
                *version = Some(seen);
                Ok(())
            }
        }
    }

    fn record(&self, range: Range<u64>, header: Option<String>, status: Option<u16>, started: f64) {
        self.log.borrow_mut().push(LogEntry {
            start: range.start,
            end: range.end,
            range: header,
            status,
            bytes: range.end - range.start,
            at: started,
            ms: Date::now() - started,
        });
    }
}

fn blob_error(e: &wasm_bindgen::JsValue) -> SkimError {
    SkimError::Network {
        url: "blob".into(),
        detail: format!("reading the Blob failed: {}", describe(e)),
    }
}

#[wasm_bindgen]
extern "C" {
    /// A `Uint8Array` with positions as numbers: js-sys's `length` and `slice` take `u32`, which
    /// wraps for arrays of 4 GiB and more.
    #[wasm_bindgen(js_name = Uint8Array)]
    type LargeBytes;
    #[wasm_bindgen(method, getter)]
    fn length(this: &LargeBytes) -> f64;
    #[wasm_bindgen(method)]
    fn slice(this: &LargeBytes, begin: f64, end: f64) -> Uint8Array;
}
