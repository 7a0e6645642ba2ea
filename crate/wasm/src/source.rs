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
use std::collections::HashSet;
use std::ops::Range;

use js_sys::{Date, Uint8Array};
use parquet_skim_core::SkimError;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Blob};

use crate::http::{fetch_range, FetchError, HttpOptions, RangeResponse, RangeSpec};
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
    /// What an answer that brought no bytes meant (a refused suffix range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl LogEntry {
    fn new(range: Range<u64>, header: Option<String>, status: Option<u16>, started: f64) -> Self {
        Self {
            start: range.start,
            end: range.end,
            range: header,
            status,
            bytes: range.end - range.start,
            at: started,
            ms: Date::now() - started,
            note: None,
        }
    }
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
    /// How the server got the open's suffix range wrong, if it did.
    suffix_refused: RefCell<Option<String>>,
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
            suffix_refused: RefCell::new(None),
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
    ///
    /// A URL of unknown size is read with one suffix request (`bytes=-n`). A server that gets the
    /// suffix form wrong (see [`crate::http`]) costs the size (named in its answer, or learned
    /// with `bytes=0-3`) and then an explicit range; its origin is remembered, so later opens
    /// there start with `bytes=0-3`.
    pub async fn read_tail(&self, n: u64) -> Result<(u64, Uint8Array), SkimError> {
        if self.file_len.get().is_none() {
            if let Some(whole) = self.learn_size(n).await? {
                *self.tail.borrow_mut() = Some((0, whole.clone()));
                self.refuse_html(&whole)?;
                return Ok((0, whole));
            }
        }
        let len = self
            .file_len
            .get()
            .ok_or_else(|| SkimError::internal("file size unknown after the size probe"))?;
        let start = len.saturating_sub(n);
        let data = match self.cached_in_tail(&(start..len)) {
            Some(tail) => tail,
            None => self
                .read(start..len, None)
                .await
                .map_err(|e| self.after_suffix(e))?,
        };
        *self.tail.borrow_mut() = Some((start, data.clone()));
        self.refuse_html(&data)?;
        Ok((start, data))
    }

    /// An HTML page where a file's tail was expected (a server that sent it without saying
    /// `text/html`) is named as one, rather than left to fail as a corrupt footer.
    fn refuse_html(&self, tail: &Uint8Array) -> Result<(), SkimError> {
        let Kind::Http { url, .. } = &self.kind else {
            return Ok(());
        };
        let len = tail.length();
        let magic = tail.slice(len.saturating_sub(4), len).to_vec();
        let head = tail.slice(0, 64).to_vec();
        if magic == b"PAR1" || magic == b"PARE" || !looks_like_html(&head) {
            return Ok(());
        }
        let start: String = String::from_utf8_lossy(&head)
            .trim_start()
            .chars()
            .take(24)
            .collect();
        Err(SkimError::HtmlPage {
            url: url.clone(),
            evidence: format!("its bytes start with '{start}'"),
        })
    }

    /// Learns the size of a URL's file, reading its last `n` bytes on the way when the server
    /// supports the suffix form (they are kept as the tail). Returns the whole file instead when
    /// the server ignored `Range` and sent all of it (within `maxFullBodyBytes`).
    async fn learn_size(&self, n: u64) -> Result<Option<Uint8Array>, SkimError> {
        let Kind::Http { url, options } = &self.kind else {
            return Err(SkimError::internal(
                "only HTTP sources have an unknown size",
            ));
        };
        // A server that ignores Range answers with the whole file: take it when it is small.
        let whole_file_limit = n.max(options.full_body_bytes);
        let origin = origin_of(url);
        if !suffix_broken_at(&origin) {
            let spec = RangeSpec::Suffix(n);
            let started = Date::now();
            match fetch_range(url, &spec, options, whole_file_limit, None, None).await {
                Ok(response) => {
                    self.accept_first(url, &response, spec.header(), started)?;
                    let whole = response.status == 200;
                    *self.tail.borrow_mut() = Some((response.start, response.data.clone()));
                    return Ok(whole.then_some(response.data));
                }
                Err(FetchError::SuffixNotSupported {
                    status,
                    how,
                    file_len,
                }) => {
                    let note = format!("the server does not support suffix ranges (it {how})");
                    self.log.borrow_mut().push(LogEntry {
                        note: Some(note.clone()),
                        ..LogEntry::new(0..0, Some(spec.header()), Some(status), started)
                    });
                    *self.suffix_refused.borrow_mut() = Some(note);
                    SUFFIX_BROKEN.with_borrow_mut(|origins| origins.insert(origin));
                    if let Some(len) = file_len {
                        self.file_len.set(Some(len));
                        return Ok(None);
                    }
                }
                Err(other) => return Err(other.into_skim(url)),
            }
        }
        // The size from `Content-Range: bytes 0-3/size`: a CORS-safelisted range, so no
        // preflight. Not `bytes=0-0`: Vite reads an end of 0 as "to the end of the file".
        let spec = RangeSpec::Bounded(0..4);
        let started = Date::now();
        let response = fetch_range(url, &spec, options, whole_file_limit, None, None)
            .await
            .map_err(|e| self.after_suffix(e.into_skim(url)))?;
        self.accept_first(url, &response, spec.header(), started)?;
        Ok((response.status == 200).then_some(response.data))
    }

    /// An HTTP status met on the way around a refused suffix range says so.
    fn after_suffix(&self, error: SkimError) -> SkimError {
        let Some(refused) = self.suffix_refused.borrow().clone() else {
            return error;
        };
        match error {
            SkimError::HttpStatus {
                url,
                status,
                range,
                attempts,
                ..
            } => SkimError::HttpStatus {
                note: Some(format!(
                    "{refused}, so the reader read the file's size and tail with explicit ranges"
                )),
                url,
                status,
                range,
                attempts,
            },
            other => other,
        }
    }

    /// Takes the size and version of a file's first answer, and logs it.
    fn accept_first(
        &self,
        url: &str,
        response: &RangeResponse,
        header: String,
        started: f64,
    ) -> Result<(), SkimError> {
        self.file_len.set(Some(response.file_len));
        self.check_version(url, response.version.clone())?;
        let end = response.start + u64::from(response.data.length());
        self.record(
            response.start..end,
            Some(header),
            Some(response.status),
            started,
        );
        Ok(())
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
                let response = fetch_range(url, &spec, options, 0, signal, pinned.as_deref())
                    .await
                    .map_err(|e| e.into_skim(url))?;
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
        self.log
            .borrow_mut()
            .push(LogEntry::new(range, header, status, started));
    }
}

thread_local! {
    /// Origins whose servers got a suffix range wrong: later opens there learn the size first.
    static SUFFIX_BROKEN: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

fn suffix_broken_at(origin: &str) -> bool {
    SUFFIX_BROKEN.with_borrow(|origins| origins.contains(origin))
}

/// `scheme://host[:port]` of an absolute URL (the whole text when it has no authority).
fn origin_of(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            format!(
                "{}://{}",
                scheme.to_ascii_lowercase(),
                authority.to_ascii_lowercase()
            )
        }
        None => url.to_owned(),
    }
}

/// Whether `head` (the first bytes of a body) starts like an HTML document.
fn looks_like_html(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    [
        "<!doctype html",
        "<html",
        "<head",
        "<body",
        "<meta",
        "<script",
        "<title",
    ]
    .iter()
    .any(|start| text.starts_with(start))
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

#[cfg(test)]
mod tests {
    use super::{looks_like_html, origin_of};

    #[test]
    fn html_pages_are_recognised() {
        assert!(looks_like_html(b"<!DOCTYPE html><html>"));
        assert!(looks_like_html(b"\n  <html lang=\"en\">"));
        assert!(looks_like_html("\u{feff}<!doctype html>".as_bytes()));
        assert!(!looks_like_html(b"PAR1\x15\x00"));
        assert!(!looks_like_html(b"< 3 is not a tag"));
        // Markdown and XML open with comments too.
        assert!(!looks_like_html(
            b"<!--\n  Licensed to the Apache Software Foundation"
        ));
    }

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:5173/data/x.parquet?a=1"),
            "http://127.0.0.1:5173"
        );
        assert_eq!(origin_of("HTTPS://Example.com?x"), "https://example.com");
        assert_eq!(origin_of("https://example.com#frag"), "https://example.com");
        assert_eq!(origin_of("blob:abc"), "blob:abc");
    }
}
