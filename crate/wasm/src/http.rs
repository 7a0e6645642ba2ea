//! One HTTP range request through the global `fetch`, checked against what was asked.
//!
//! The global `fetch` is bound directly (not `window.fetch`), so the same code runs on a page,
//! in a Web Worker and in Node. Ranges are sent as `bytes=start-end` whenever the size is known:
//! a suffix range (`bytes=-n`) is not CORS-safelisted and costs a preflight, so it is used only
//! for the very first read of a file whose size nobody told us.
//!
//! Servers lie in practice (dev servers answer `bytes=-8` with `bytes 0-8/…`, proxies drop
//! `Range`), so every `206` is validated: `Content-Range` must be present and cover exactly the
//! asked bytes, and the body must have that length. A `200` (Range ignored) is accepted only when
//! the caller allows the whole body (a file smaller than the open's tail read); otherwise the
//! download is aborted at once and the error says so.

use std::ops::Range;

use js_sys::{Array, Promise, Uint8Array};
use parquet_skim_core::SkimError;
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

/// How to make requests: extra headers (e.g. `Authorization`) and the credentials mode.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    pub headers: Vec<(String, String)>,
    pub credentials: Option<String>,
}

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

/// Requests `spec` of `url`. A `200` with a whole body of at most `full_body_limit` bytes is
/// accepted as the whole file; a larger one is aborted. Aborting `signal` aborts the request
/// (the caller turns that into the signal's reason).
pub async fn fetch_range(
    url: &str,
    spec: &RangeSpec,
    options: &HttpOptions,
    full_body_limit: u64,
    signal: Option<&AbortSignal>,
) -> Result<RangeResponse, SkimError> {
    let range_header = spec.header();
    let network = |detail: String| SkimError::Network {
        url: url.to_owned(),
        detail,
    };
    let controller = AbortController::new().map_err(|e| network(describe(&e)))?;
    let request_signal = match signal {
        None => controller.signal(),
        Some(outer) => {
            let both: Array = [outer.clone(), controller.signal()].into_iter().collect();
            AbortSignal::any(&both)
        }
    };
    let request = build_request(url, &range_header, options, &request_signal)?;
    let response: Response = JsFuture::from(global_fetch(&request))
        .await
        .map_err(|e| network(describe(&e)))?
        .dyn_into()
        .map_err(|_| SkimError::internal("fetch resolved to something other than a Response"))?;
    let status = response.status();
    let headers = response.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let version = header("etag").or_else(|| header("last-modified"));
    match status {
        206 => {
            let content_range =
                header("content-range").ok_or_else(|| SkimError::BadContentRange {
                    url: url.to_owned(),
                    detail: "the 206 response has no readable Content-Range header; the server \
                         must send it and, cross-origin, list it in \
                         Access-Control-Expose-Headers"
                        .into(),
                })?;
            let (start, end, file_len) = parse_content_range(&content_range)
                .and_then(|parsed| check_covers(spec, parsed))
                .map_err(|detail| SkimError::BadContentRange {
                    url: url.to_owned(),
                    detail: format!(
                        "asked {range_header}, got Content-Range '{content_range}': {detail}"
                    ),
                })?;
            let data = read_body(&response, url).await?;
            if data.length() as u64 != end - start {
                return Err(network(format!(
                    "expected a body of {} bytes for {content_range}, got {}",
                    end - start,
                    data.length()
                )));
            }
            Ok(RangeResponse {
                status,
                start,
                data,
                file_len,
                version,
            })
        }
        200 => {
            let length = header("content-length").and_then(|v| v.trim().parse::<u64>().ok());
            match length {
                Some(len) if len <= full_body_limit => {
                    let data = read_body(&response, url).await?;
                    let file_len = data.length() as u64;
                    Ok(RangeResponse {
                        status,
                        start: 0,
                        data,
                        file_len,
                        version,
                    })
                }
                _ => {
                    controller.abort();
                    Err(SkimError::RangeNotSupported {
                        url: url.to_owned(),
                        detail: format!(
                            "it answered {range_header} with 200 and the whole body ({}); the \
                             download was aborted",
                            length.map_or("of unknown size".to_owned(), |l| format!("{l} bytes"))
                        ),
                    })
                }
            }
        }
        _ => {
            controller.abort();
            Err(SkimError::HttpStatus {
                url: url.to_owned(),
                status,
                range: range_header,
            })
        }
    }
}

fn build_request(
    url: &str,
    range_header: &str,
    options: &HttpOptions,
    signal: &AbortSignal,
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

async fn read_body(response: &Response, url: &str) -> Result<Uint8Array, SkimError> {
    let network = |detail: String| SkimError::Network {
        url: url.to_owned(),
        detail: format!("reading the body: {detail}"),
    };
    let promise = response.array_buffer().map_err(|e| network(describe(&e)))?;
    let buffer = JsFuture::from(promise)
        .await
        .map_err(|e| network(describe(&e)))?;
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
