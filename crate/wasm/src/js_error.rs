//! `SkimError` → JS `Error`.
//!
//! The JS error keeps the Rust message and gains `name = "ParquetSkimError"` and `code` (the
//! stable [`SkimError::code`]). The JS package turns it into its typed error class by `code`, so
//! the same error survives a `postMessage` from a worker as plain `{name, code, message}`.

use js_sys::{Error, Reflect};
use parquet_skim_core::SkimError;
use wasm_bindgen::{JsCast, JsValue};

/// The JS form of a core error.
pub fn to_js(error: &SkimError) -> JsValue {
    let js = Error::new(&error.to_string());
    js.set_name("ParquetSkimError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = Reflect::set(
        &js,
        &JsValue::from_str("code"),
        &JsValue::from_str(error.code()),
    );
    if let SkimError::InvalidFilter {
        position: Some(position),
        ..
    } = error
    {
        let _ = Reflect::set(
            &js,
            &JsValue::from_str("position"),
            &(*position as f64).into(),
        );
    }
    js.into()
}

/// Converts a core result for returning to JS.
pub fn js_result<T>(result: Result<T, SkimError>) -> Result<T, JsValue> {
    result.map_err(|e| to_js(&e))
}

/// Text of a thrown JS value (an `Error`'s message, or its string form).
pub fn describe(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<Error>() {
        return String::from(error.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}
