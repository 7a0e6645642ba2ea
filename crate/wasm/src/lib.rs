//! parquet-skim's WebAssembly boundary: the JS bindings of `parquet-skim-core`.
//!
//! - [`open`]: `MetadataLoader`, a file's metadata decoded from the bytes JS pushes in
//! - [`bindings`]: a decoded file's `#[wasm_bindgen]` API, and the module's free functions;
//!   thin wrappers over `parquet-skim-core`
//! - [`task`]: a scan's API (bound once per scan) and one read task's
//! - [`worker_cache`]: the worker's cross-scan cache, checked out and in by tasks
//! - [`args`]: JSON and positions across the boundary
//! - [`js_error`]: `SkimError` → a JS `Error` with `name` and a stable `code`
//! - [`panic`]: keeps a panic's message for the error that reports the trap
//! - [`allocator`]: the heap (dlmalloc, growing the memory 16 MiB at a time)
//!
//! No I/O here: the JS side reads (`web/src/io`: HTTP range requests, `Blob`s, bytes) and pushes
//! the bytes into a metadata loader or a task, which decode synchronously.

#[cfg(target_arch = "wasm32")]
pub mod allocator;
pub mod args;
pub mod bindings;
pub mod js_error;
pub mod open;
pub mod panic;
pub mod task;
pub mod worker_cache;
