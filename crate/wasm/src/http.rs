//! One HTTP range request through the global `fetch`, checked against what was asked.
//!
//! The global `fetch` is bound directly (not `window.fetch`), so the same code runs on a page,
//! in a Web Worker and in Node. Ranges are sent as `bytes=start-end` whenever the size is known:
//! a suffix range (`bytes=-n`) is not CORS-safelisted and costs a preflight, so it is used only
//! for the very first read of a file whose size nobody told us.
//!
//! Servers lie in practice (proxies drop `Range`), so every `206` is validated: `Content-Range`
//! must be present and cover exactly the asked bytes, and the body must have that length. A `200`
//! (Range ignored) is accepted only when the caller allows the whole body (a file smaller than the
//! open's tail read); otherwise the download is aborted at once and the error says so.
//!
//! The suffix form is the one servers most often get wrong: Vite's dev and preview servers answer
//! `bytes=-n` with `bytes 0-n/size` (a prefix), http-server with `416`, Azure Blob Storage (and
//! Azurite) with `500`. Such answers come back as [`FetchError::SuffixNotSupported`], with the
//! size when the server named it, and the body unread: the caller (the source's open) learns the
//! size and reads the tail with an explicit range instead.
//!
//! A `text/html` answer is never a Parquet file's bytes: it is a page, usually a dev server's
//! `index.html` served for a path that does not exist, and the error says so.
//!
//! Servers also fail: connections drop, bodies stop mid-stream, a load balancer answers 503, a
//! server stalls. Range reads are idempotent, so each is retried ([`HttpOptions::retries`]) with
//! exponential backoff and jitter, honouring `Retry-After`; every attempt has a timeout that
//! covers headers and body (`AbortSignal.timeout`), and the caller's abort cancels both the
//! request and a backoff wait at once. Statuses that will not change (403, 404, 416, 500, …) fail
//! at once. A range the server sent with a `Content-Encoding` (the bytes are not the file's)
//! fails with `CONTENT_ENCODING`; a replaced file fails with `FILE_CHANGED` — from the version
//! check of every response, and from the server itself (412) when preconditions are sent.

use std::ops::Range;

use js_sys::{Array, Promise, Uint8Array};
use parquet_skim_core::SkimError;
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Headers, Request, RequestCredentials, RequestInit, Response,
};

use crate::js_error::describe;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` of whatever scope we run in.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
    /// The global `setTimeout` (pages, workers and Node all have one).
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;
}

/// Which bytes to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeSpec {
    /// `bytes=start-(end-1)`.
    Bounded(Range<u64>),
    /// `bytes=-n`: the last `n` bytes of a file of unknown size.
    Suffix(u64),
}

impl RangeSpec {
    /// The `Range` header value.
    pub fn header(&self) -> String {
        match self {
            Self::Bounded(r) => format!("bytes={}-{}", r.start, r.end.saturating_sub(1)),
            Self::Suffix(n) => format!("bytes=-{n}"),
        }
    }
}

/// How to make requests: extra headers (e.g. `Authorization`), the credentials mode, and how
/// hard to try.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub headers: Vec<(String, String)>,
    pub credentials: Option<String>,
    /// Retries after a transient failure (connection error, cut body, timeout, 429/502/503/504).
    pub retries: u32,
    /// First backoff; each retry doubles it (with ±25% jitter), capped at [`MAX_RETRY_DELAY_MS`].
    pub retry_delay_ms: f64,
    /// Per-attempt limit on the whole exchange, headers and body; 0 for none.
    pub timeout_ms: u32,
    /// A `200` with the whole body (Range ignored) is accepted as the file when it is at most
    /// this long; above it the download is aborted.
    pub full_body_bytes: u64,
    /// Send `If-Match` (or `If-Unmodified-Since`) with the version seen first, so a replaced file
    /// is refused by the server (412). Off for cross-origin URLs by default: these headers are not
    /// CORS-safelisted and would cost a preflight, and many servers do not allow them.
    pub conditional: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            credentials: None,
            retries: 3,
            retry_delay_ms: 250.0,
            timeout_ms: 30_000,
            full_body_bytes: 8 << 20,
            conditional: false,
        }
    }
}

/// [`HttpOptions`]' tunables as JS passes them (JSON), each optional.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestPolicy {
    pub retries: Option<u32>,
    pub retry_delay_ms: Option<f64>,
    pub timeout_ms: Option<u32>,
    pub max_full_body_bytes: Option<u64>,
    pub conditional: Option<bool>,
}

/// The longest wait between two attempts, whatever `Retry-After` asks.
pub const MAX_RETRY_DELAY_MS: f64 = 10_000.0;

/// A validated answer to a range request.
#[derive(Debug)]
pub struct RangeResponse {
    pub status: u16,
    /// The bytes received and where they start in the file.
    pub start: u64,
    pub data: Uint8Array,
    /// The file's size, from `Content-Range` (or the whole body's length after a `200`).
    pub file_len: u64,
    /// `ETag`, else `Last-Modified`: what identifies this version of the file.
    pub version: Option<String>,
}

/// Why one attempt failed: worth another try, or final.
enum Failure {
    /// Connection refused or cut, body cut short, timeout, 429/502/503/504. `wait_ms` is the
    /// server's `Retry-After`, when it sent one.
    Transient {
        error: SkimError,
        wait_ms: Option<f64>,
    },
    Final(SkimError),
    /// A suffix request the server did not answer as one (see [`FetchError::SuffixNotSupported`]).
    Suffix {
        status: u16,
        how: String,
        file_len: Option<u64>,
    },
}

/// Why [`fetch_range`] returned no bytes.
#[derive(Debug)]
pub enum FetchError {
    /// A failure to report as it is.
    Failed(SkimError),
    /// The server did not answer a suffix request (`bytes=-n`) as one: it sent another span
    /// (`how` says which) or refused the form (`416`, `400`, `500`, `501`). `file_len` is the
    /// file's size when the answer named it (`Content-Range: bytes 0-n/size`, or `bytes */size`).
    /// Nothing of the body was read.
    SuffixNotSupported {
        status: u16,
        how: String,
        file_len: Option<u64>,
    },
}

impl FetchError {
    /// The error to report when the caller does not recover.
    pub fn into_skim(self, url: &str) -> SkimError {
        match self {
            Self::Failed(error) => error,
            Self::SuffixNotSupported { how, .. } => SkimError::BadContentRange {
                url: url.to_owned(),
                detail: format!("the server does not support suffix ranges: it {how}"),
            },
        }
    }
}

/// Statuses with which servers refuse the suffix form itself (http-server: 416, Azurite: 500),
/// as opposed to the file (401, 403, 404, 410) or a passing failure (429, 502, 503, 504).
const SUFFIX_REFUSALS: [u16; 5] = [400, 405, 416, 500, 501];

/// Requests `spec` of `url`, retrying transient failures with exponential backoff (range reads
/// are idempotent). A `200` with a whole body of at most `full_body_limit` bytes is accepted as
/// the whole file; a larger one is aborted. `pinned` is the file version seen before, sent as a
/// precondition when [`HttpOptions::conditional`]. Aborting `signal` aborts the request and any
/// backoff wait (the caller turns that into the signal's reason).
pub async fn fetch_range(
    url: &str,
    spec: &RangeSpec,
    options: &HttpOptions,
    full_body_limit: u64,
    signal: Option<&AbortSignal>,
    pinned: Option<&str>,
) -> Result<RangeResponse, FetchError> {
    let mut attempt: u32 = 1;
    loop {
        let failure = match fetch_once(url, spec, options, full_body_limit, signal, pinned).await {
            Ok(response) => return Ok(response),
            Err(failure) => failure,
        };
        let (error, wait_ms) = match failure {
            Failure::Final(error) => return Err(FetchError::Failed(error)),
            Failure::Suffix {
                status,
                how,
                file_len,
            } => {
                return Err(FetchError::SuffixNotSupported {
                    status,
                    how,
                    file_len,
                })
            }
            Failure::Transient { error, wait_ms } => (error, wait_ms),
        };
        if attempt > options.retries || signal.is_some_and(AbortSignal::aborted) {
            return Err(FetchError::Failed(with_attempts(error, attempt)));
        }
        let backoff = options.retry_delay_ms
            * 2f64.powi(attempt.saturating_sub(1).min(16) as i32)
            * (0.75 + 0.5 * js_sys::Math::random());
        sleep(
            backoff.max(wait_ms.unwrap_or(0.0)).min(MAX_RETRY_DELAY_MS),
            signal,
        )
        .await;
        if signal.is_some_and(AbortSignal::aborted) {
            return Err(FetchError::Failed(with_attempts(error, attempt)));
        }
        attempt += 1;
    }
}

/// Records in `error` how many attempts were made.
fn with_attempts(error: SkimError, attempts: u32) -> SkimError {
    match error {
        SkimError::HttpStatus {
            url,
            status,
            range,
            note,
            ..
        } => SkimError::HttpStatus {
            url,
            status,
            range,
            attempts,
            note,
        },
        SkimError::Timeout { url, ms, .. } => SkimError::Timeout { url, ms, attempts },
        SkimError::Network { url, detail } if attempts > 1 => SkimError::Network {
            url,
            detail: format!("{detail} ({attempts} attempts)"),
        },
        other => other,
    }
}

/// Waits `ms`, or until `signal` aborts.
async fn sleep(ms: f64, signal: Option<&AbortSignal>) {
    let promise = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms.clamp(0.0, MAX_RETRY_DELAY_MS) as i32);
        if let Some(signal) = signal {
            // If the listener cannot be added, the wait just runs its course.
            let _ = signal.add_event_listener_with_callback("abort", &resolve);
        }
    });
    // The promise only ever resolves.
    let _ = JsFuture::from(promise).await;
}

/// One attempt at `spec` of `url`.
async fn fetch_once(
    url: &str,
    spec: &RangeSpec,
    options: &HttpOptions,
    full_body_limit: u64,
    signal: Option<&AbortSignal>,
    pinned: Option<&str>,
) -> Result<RangeResponse, Failure> {
    let network = |e: JsValue| {
        Failure::Final(SkimError::Network {
            url: url.to_owned(),
            detail: describe(&e),
        })
    };
    let controller = AbortController::new().map_err(network)?;
    let timeout =
        (options.timeout_ms > 0).then(|| AbortSignal::timeout_with_u32(options.timeout_ms));
    let signals: Array = [Some(controller.signal()), signal.cloned(), timeout.clone()]
        .into_iter()
        .flatten()
        .collect();
    let request_signal = AbortSignal::any(&signals);
    let exchange = Exchange {
        url,
        spec,
        range_header: spec.header(),
        options,
        timeout,
    };
    let request = build_request(
        url,
        &exchange.range_header,
        options,
        &request_signal,
        pinned,
    )
    .map_err(Failure::Final)?;
    let response: Response = JsFuture::from(global_fetch(&request))
        .await
        .map_err(|e| exchange.transient(describe(&e)))?
        .dyn_into()
        .map_err(|_| {
            Failure::Final(SkimError::internal(
                "fetch resolved to something other than a Response",
            ))
        })?;
    let answer = Answer::of(&response);
    let result = match answer.status {
        206 | 200 if answer.is_html() => Err(Failure::Final(SkimError::HtmlPage {
            url: url.to_owned(),
            evidence: format!(
                "{}, Content-Type: {}",
                answer.status,
                answer.content_type.as_deref().unwrap_or_default()
            ),
        })),
        206 => exchange.partial(&response, answer).await,
        200 => exchange.whole(&response, answer, full_body_limit).await,
        status => Err(exchange.refusal(&answer, status, pinned)),
    };
    if result.is_err() {
        // Whatever is left of the body is not wanted.
        controller.abort();
    }
    result
}

/// The headers of an answer that matter here.
struct Answer {
    status: u16,
    content_range: Option<String>,
    content_length: Option<u64>,
    content_type: Option<String>,
    retry_after: Option<String>,
    /// `ETag`, else `Last-Modified`.
    version: Option<String>,
    /// A `Content-Encoding` other than identity (visible same-origin, or when exposed).
    encoding: Option<String>,
}

impl Answer {
    fn of(response: &Response) -> Self {
        let headers = response.headers();
        let header = |name: &str| headers.get(name).ok().flatten();
        Self {
            status: response.status(),
            content_range: header("content-range"),
            content_length: header("content-length").and_then(|v| v.trim().parse().ok()),
            content_type: header("content-type"),
            retry_after: header("retry-after"),
            version: header("etag").or_else(|| header("last-modified")),
            encoding: header("content-encoding")
                .map(|e| e.trim().to_ascii_lowercase())
                .filter(|e| !e.is_empty() && e != "identity"),
        }
    }

    fn is_html(&self) -> bool {
        self.content_type.as_deref().is_some_and(|t| {
            let t = t.trim().to_ascii_lowercase();
            t.starts_with("text/html") || t.starts_with("application/xhtml")
        })
    }
}

/// One request and what it asked for.
struct Exchange<'a> {
    url: &'a str,
    spec: &'a RangeSpec,
    range_header: String,
    options: &'a HttpOptions,
    timeout: Option<AbortSignal>,
}

impl Exchange<'_> {
    /// A failure to get an answer or its body: a timeout when the timer fired, else the network.
    fn transient(&self, detail: String) -> Failure {
        let error = if self.timeout.as_ref().is_some_and(AbortSignal::aborted) {
            SkimError::Timeout {
                url: self.url.to_owned(),
                ms: u64::from(self.options.timeout_ms),
                attempts: 1,
            }
        } else {
            SkimError::Network {
                url: self.url.to_owned(),
                detail,
            }
        };
        Failure::Transient {
            error,
            wait_ms: None,
        }
    }

    fn bad_content_range(&self, detail: String) -> Failure {
        Failure::Final(SkimError::BadContentRange {
            url: self.url.to_owned(),
            detail,
        })
    }

    /// A `206`: the span must be exactly the one asked, and the body that long.
    async fn partial(&self, response: &Response, answer: Answer) -> Result<RangeResponse, Failure> {
        let Some(content_range) = answer.content_range.as_deref() else {
            return Err(self.bad_content_range(
                "the 206 response has no readable Content-Range header; the server must send it \
                 and, cross-origin, list it in Access-Control-Expose-Headers \
                 (Access-Control-Expose-Headers: Content-Range, Content-Length, ETag)"
                    .into(),
            ));
        };
        let checked =
            parse_content_range(content_range).and_then(|parsed| check_covers(self.spec, parsed));
        let (start, end, file_len) = match checked {
            Ok(span) => span,
            Err(_) if matches!(self.spec, RangeSpec::Suffix(_)) => {
                // Vite reads `bytes=-n` as `bytes=0-n`: the size it names is still the file's.
                return Err(Failure::Suffix {
                    status: 206,
                    how: format!(
                        "answered {} with 206 and Content-Range '{content_range}', not the last \
                         bytes of the file",
                        self.range_header
                    ),
                    file_len: content_range_size(content_range),
                });
            }
            Err(detail) => {
                return Err(self.bad_content_range(format!(
                    "asked {}, got Content-Range '{content_range}': {detail}",
                    self.range_header
                )))
            }
        };
        let data = read_body(response)
            .await
            .map_err(|detail| match &answer.encoding {
                Some(encoding) => Failure::Final(SkimError::ContentEncoding {
                    url: self.url.to_owned(),
                    detail: format!(
                    "the range came with Content-Encoding: {encoding} and its body could not be \
                     read ({detail})"
                ),
                }),
                None => self.transient(format!(
                    "reading the body: {detail} (a connection cut mid-body, or a Content-Encoding \
                 the browser could not decode)"
                )),
            })?;
        if data.length() as u64 != end - start {
            return Err(Failure::Final(SkimError::ContentEncoding {
                url: self.url.to_owned(),
                detail: format!(
                    "{content_range} promised {} bytes and the body has {}{}",
                    end - start,
                    data.length(),
                    match &answer.encoding {
                        Some(e) => format!(" after the browser undid Content-Encoding: {e}"),
                        None => " (a Content-Encoding such as gzip, or a proxy rewriting the body)"
                            .to_owned(),
                    }
                ),
            }));
        }
        Ok(RangeResponse {
            status: 206,
            start,
            data,
            file_len,
            version: answer.version,
        })
    }

    /// A `200` (Range ignored): the whole file, accepted up to `limit` bytes.
    async fn whole(
        &self,
        response: &Response,
        answer: Answer,
        limit: u64,
    ) -> Result<RangeResponse, Failure> {
        // With a Content-Encoding, Content-Length counts encoded bytes: no basis to accept.
        match answer.content_length {
            Some(len) if len <= limit && answer.encoding.is_none() => {
                let data = read_body(response)
                    .await
                    .map_err(|detail| self.transient(format!("reading the body: {detail}")))?;
                Ok(RangeResponse {
                    status: 200,
                    start: 0,
                    file_len: data.length() as u64,
                    data,
                    version: answer.version,
                })
            }
            length => Err(Failure::Final(SkimError::RangeNotSupported {
                url: self.url.to_owned(),
                detail: format!(
                    "it answered {} with 200 and the whole body ({}), more than the {limit} bytes \
                     allowed for a whole-file download (`maxFullBodyBytes`); the download was \
                     aborted",
                    self.range_header,
                    length.map_or("of unknown size".to_owned(), |l| format!("{l} bytes"))
                ),
            })),
        }
    }

    /// Any other status.
    fn refusal(&self, answer: &Answer, status: u16, pinned: Option<&str>) -> Failure {
        if status == 412 {
            return Failure::Final(SkimError::FileChanged {
                url: self.url.to_owned(),
                detail: format!(
                    "the server refused the precondition on version {}: it now serves another \
                     version",
                    pinned.unwrap_or("?")
                ),
            });
        }
        if matches!(self.spec, RangeSpec::Suffix(_)) && SUFFIX_REFUSALS.contains(&status) {
            return Failure::Suffix {
                status,
                how: format!("answered {} with {status}", self.range_header),
                // A 416 may name the size: `Content-Range: bytes */size`.
                file_len: answer.content_range.as_deref().and_then(content_range_size),
            };
        }
        let error = SkimError::HttpStatus {
            url: self.url.to_owned(),
            status,
            range: self.range_header.clone(),
            attempts: 1,
            note: None,
        };
        if matches!(status, 429 | 502 | 503 | 504) {
            let wait_ms = answer
                .retry_after
                .as_deref()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|seconds| seconds * 1000.0);
            Failure::Transient { error, wait_ms }
        } else {
            Failure::Final(error)
        }
    }
}

fn build_request(
    url: &str,
    range_header: &str,
    options: &HttpOptions,
    signal: &AbortSignal,
    pinned: Option<&str>,
) -> Result<Request, SkimError> {
    let invalid = |detail: String| SkimError::invalid_argument("headers", detail);
    let headers = Headers::new().map_err(|e| invalid(describe(&e)))?;
    for (name, value) in &options.headers {
        headers
            .set(name, value)
            .map_err(|e| invalid(format!("header '{name}': {}", describe(&e))))?;
    }
    headers
        .set("Range", range_header)
        .map_err(|e| invalid(describe(&e)))?;
    if let Some(version) = pinned.filter(|_| options.conditional) {
        // A strong ETag pins the exact bytes; a weak one cannot be used with If-Match.
        let precondition = if version.starts_with('"') {
            Some("If-Match")
        } else if version.starts_with("W/") {
            None
        } else {
            Some("If-Unmodified-Since")
        };
        if let Some(name) = precondition {
            headers
                .set(name, version)
                .map_err(|e| invalid(format!("{name}: {}", describe(&e))))?;
        }
    }
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_headers(&headers);
    init.set_signal(Some(signal));
    if let Some(credentials) = &options.credentials {
        let mode = match credentials.as_str() {
            "omit" => RequestCredentials::Omit,
            "same-origin" => RequestCredentials::SameOrigin,
            "include" => RequestCredentials::Include,
            other => {
                return Err(SkimError::invalid_argument(
                    "credentials",
                    format!("expected 'omit', 'same-origin' or 'include', got '{other}'"),
                ))
            }
        };
        init.set_credentials(mode);
    }
    Request::new_with_str_and_init(url, &init).map_err(|e| {
        SkimError::invalid_argument(
            "url",
            format!("'{url}' is not a valid request: {}", describe(&e)),
        )
    })
}

async fn read_body(response: &Response) -> Result<Uint8Array, String> {
    let promise = response.array_buffer().map_err(|e| describe(&e))?;
    let buffer = JsFuture::from(promise).await.map_err(|e| describe(&e))?;
    Ok(Uint8Array::new(&buffer))
}

/// `bytes start-last/total` → `(start, last + 1, total)`. A `*` total is rejected: the reader
/// needs the size.
pub fn parse_content_range(value: &str) -> Result<(u64, u64, u64), String> {
    let rest = value
        .trim()
        .strip_prefix("bytes ")
        .ok_or_else(|| "expected the form 'bytes start-end/size'".to_owned())?;
    let (span, total) = rest
        .split_once('/')
        .ok_or_else(|| "expected '/size' after the byte span".to_owned())?;
    let total: u64 = total
        .trim()
        .parse()
        .map_err(|_| format!("expected a numeric size, got '{total}'"))?;
    let (first, last) = span
        .split_once('-')
        .ok_or_else(|| "expected 'start-end'".to_owned())?;
    let first: u64 = first
        .trim()
        .parse()
        .map_err(|_| format!("bad start '{first}'"))?;
    let last: u64 = last
        .trim()
        .parse()
        .map_err(|_| format!("bad end '{last}'"))?;
    if first > last || last >= total {
        return Err(format!(
            "span {first}-{last} is not inside a {total}-byte file"
        ));
    }
    Ok((first, last + 1, total))
}

/// The size a `Content-Range` names (`bytes a-b/size` or `bytes */size`), whatever its span.
pub fn content_range_size(value: &str) -> Option<u64> {
    let (_, size) = value.trim().rsplit_once('/')?;
    size.trim().parse().ok()
}

/// Checks that the received span is exactly what `spec` asked for, given the file size.
pub fn check_covers(
    spec: &RangeSpec,
    (start, end, total): (u64, u64, u64),
) -> Result<(u64, u64, u64), String> {
    let (want_start, want_end) = match spec {
        RangeSpec::Bounded(r) => (r.start, r.end.min(total)),
        RangeSpec::Suffix(n) => (total.saturating_sub(*n), total),
    };
    if (start, end) != (want_start, want_end) {
        return Err(format!(
            "expected bytes {want_start}-{} of {total}",
            want_end.saturating_sub(1)
        ));
    }
    Ok((start, end, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_is_parsed_and_checked() {
        assert_eq!(parse_content_range("bytes 10-19/100"), Ok((10, 20, 100)));
        assert!(parse_content_range("bytes 10-19/*").is_err());
        assert!(parse_content_range("bytes 10-100/100").is_err());
        let suffix = RangeSpec::Suffix(8);
        assert!(check_covers(&suffix, (92, 100, 100)).is_ok());
        // A dev server answering bytes=-8 with the first 9 bytes.
        assert!(check_covers(&suffix, (0, 9, 100)).is_err());
        let bounded = RangeSpec::Bounded(90..120);
        assert!(check_covers(&bounded, (90, 100, 100)).is_ok());
        assert_eq!(RangeSpec::Bounded(0..10).header(), "bytes=0-9");
        assert_eq!(RangeSpec::Suffix(512).header(), "bytes=-512");
    }
}
