//! parquet-skim's WebAssembly boundary: JS bindings and the browser side of I/O.
//!
//! - [`bindings`]: the only `#[wasm_bindgen]` exports; thin wrappers over `parquet-skim-core`
//! - [`source`]: where bytes come from (HTTP range requests, `Blob`, in-memory bytes), with the
//!   request log; knows nothing about Parquet
//! - [`http`]: one range request through the global `fetch` (Window, Worker or Node), checked
//!   against what was asked
//! - [`js_error`]: `SkimError` → a JS `Error` with `name` and a stable `code`
//! - [`panic`]: keeps a panic's message for the error that reports the trap
//!
//! Decoding never waits on I/O here: the JS scheduler fetches through a [`source::Source`] and
//! pushes the bytes into a task, which decodes synchronously.

pub mod bindings;
pub mod http;
pub mod js_error;
pub mod panic;
pub mod source;
