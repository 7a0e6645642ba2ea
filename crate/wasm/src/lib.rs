//! parquet-skim's WebAssembly boundary: the JS bindings of `parquet-skim-core`.
//!
//! - [`bindings`]: the only `#[wasm_bindgen]` exports; thin wrappers over `parquet-skim-core`
//! - [`js_error`]: `SkimError` → a JS `Error` with `name` and a stable `code`
//! - [`panic`]: keeps a panic's message for the error that reports the trap
//!
//! No I/O here: the JS side reads (`web/src/io`: HTTP range requests, `Blob`s, bytes) and pushes
//! the bytes into a metadata loader or a task, which decode synchronously.

pub mod bindings;
pub mod js_error;
pub mod panic;
