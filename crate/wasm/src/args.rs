//! JS arguments and results: JSON text in and out (byte ranges as `ByteRange` objects, like
//! every other value of the contract), positions as `f64`.

use parquet_skim_core::SkimError;
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::js_error::to_js;

/// Parses `text` as the JSON of `what`.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, SkimError> {
    // serde names what it expected and found, and where. The open options (the caller's own few
    // values) are shown too, to point at the one; nothing else is — a scan's options carry the
    // file's URL, which may hold a presigned token.
    serde_json::from_str(text).map_err(|e| {
        let shown = if what == "open options" && text.len() <= 300 {
            format!(", in {text}")
        } else {
            String::new()
        };
        SkimError::invalid_argument(what, format!("expected valid {what}: {e}{shown}"))
    })
}

/// `value` as JSON text for JS.
pub(crate) fn json<T: Serialize + ?Sized>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| to_js(&SkimError::internal(e.to_string())))
}

/// A JS number that must be a byte position or count.
pub(crate) fn position(name: &str, value: f64) -> Result<u64, SkimError> {
    parquet_skim_core::plan::whole(value).ok_or_else(|| {
        SkimError::invalid_argument(
            name,
            format!("expected a whole number from 0 to 2^53-1, got {value}"),
        )
    })
}

/// An optional JS number: `undefined` is absent; anything but a number is refused.
pub(crate) fn optional_number(name: &str, value: &JsValue) -> Result<Option<f64>, SkimError> {
    if value.is_undefined() {
        return Ok(None);
    }
    value.as_f64().map(Some).ok_or_else(|| {
        let found = value
            .js_typeof()
            .as_string()
            .unwrap_or_else(|| "unknown".into());
        SkimError::invalid_argument(
            name,
            format!("expected a number, got a value of type {found}"),
        )
    })
}
