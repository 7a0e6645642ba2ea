//! The JS API of a decoded file and of a task (opening is [`open`](crate::open)), and the
//! module's free functions.
//!
//! Each export is a thin wrapper: convert arguments, call `parquet-skim-core`, convert the
//! `SkimError` into a JS error with a `code`. Structured results cross as JSON text (plans,
//! summaries: small, and `JSON.parse` is fast) or as `Uint8Array` (bytes, IPC). Positions are
//! `f64` on the JS side and checked to be exact integers below 2^53. Nothing here does I/O: JS
//! reads the bytes (`web/src/io`) and pushes them in.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use js_sys::{Array, Uint8Array};
use parquet_skim_core::{
    bloom_ranges_for, ipc::schema_to_ipc, page_layout::PageLayouts, plan::ByteRange,
    plan_scan_with, projection::Projection, pushed_bytes::PushedBytes, FileSummary, ParquetFile,
    ScanRequest,
};
use wasm_bindgen::prelude::*;

use crate::args::{json, optional_number, parse_json, position};
use crate::js_error::js_result;

/// A file whose metadata is decoded: summary, schema, scan planning.
#[wasm_bindgen(js_name = ParquetFileHandle)]
pub struct JsFile {
    pub(crate) file: Rc<ParquetFile>,
    /// Bloom filter bytes fetched for planning, kept for later scans of the file.
    blooms: RefCell<PushedBytes>,
    /// Page locations learned from page headers (files without an offset index).
    layouts: RefCell<PageLayouts>,
}

impl JsFile {
    pub(crate) fn new(file: ParquetFile) -> Self {
        Self {
            file: Rc::new(file),
            blooms: RefCell::new(PushedBytes::default()),
            layouts: RefCell::new(PageLayouts::default()),
        }
    }
}

#[wasm_bindgen(js_class = ParquetFileHandle)]
impl JsFile {
    /// Rebuilds a file from footer regions (as a worker does): `starts[i]` is where
    /// `buffers[i]` begins in the file; `viewTypes` as the opener had it (`OpenOptions`).
    #[wasm_bindgen(js_name = fromFooter)]
    pub fn from_footer(
        file_len: f64,
        starts: Vec<f64>,
        buffers: Array,
        view_types: bool,
    ) -> Result<JsFile, JsValue> {
        let file_len = js_result(position("fileLen", file_len))?;
        let mut footer = Vec::with_capacity(starts.len());
        for (i, start) in starts.into_iter().enumerate() {
            let start = js_result(position("footer start", start))?;
            let bytes = Uint8Array::new(&buffers.get(i as u32)).to_vec();
            footer.push((start..start + bytes.len() as u64, Bytes::from(bytes)));
        }
        js_result(ParquetFile::try_from_footer(file_len, footer, view_types)).map(JsFile::new)
    }

    /// Size of the file in bytes.
    #[wasm_bindgen(getter, js_name = fileLen)]
    pub fn file_len(&self) -> f64 {
        self.file.file_len() as f64
    }

    /// Rows in the file, from its footer (without building the whole summary).
    #[wasm_bindgen(getter, js_name = numRows)]
    pub fn num_rows(&self) -> f64 {
        self.file.metadata().file_metadata().num_rows() as f64
    }

    /// Bytes of footer and page index read at open (the summary's `footerBytes`).
    #[wasm_bindgen(getter, js_name = footerBytes)]
    pub fn footer_bytes(&self) -> f64 {
        self.file
            .footer()
            .iter()
            .map(|(range, _)| range.end - range.start)
            .sum::<u64>() as f64
    }

    /// Memory the open file holds in this instance (see `ParquetFile::memory_bytes`).
    #[wasm_bindgen(getter, js_name = memoryBytes)]
    pub fn memory_bytes(&self) -> f64 {
        self.file.memory_bytes() as f64
    }

    /// The file's metadata summary as JSON (see `FileSummary`).
    pub fn summary(&self) -> Result<String, JsValue> {
        json(&FileSummary::of(&self.file))
    }

    /// The Arrow schema as an IPC stream with no batches.
    #[wasm_bindgen(js_name = schemaIpc)]
    pub fn schema_ipc(&self) -> Result<Uint8Array, JsValue> {
        js_result(schema_to_ipc(self.file.arrow_schema())).map(|b| Uint8Array::from(&b[..]))
    }

    /// The schema a scan with `request` (JSON scan options) returns, as an IPC stream with no
    /// batches: what an empty result still has.
    #[wasm_bindgen(js_name = scanSchemaIpc)]
    pub fn scan_schema_ipc(&self, request: &str) -> Result<Uint8Array, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let projection = js_result(Projection::try_new(&self.file, request.columns.as_deref()))?;
        js_result(schema_to_ipc(projection.output_schema())).map(|b| Uint8Array::from(&b[..]))
    }

    /// Bloom filter ranges that would help plan `request` and are not fetched yet, as the JSON
    /// of `ByteRange[]`. Fetch them, `pushBloom` each, then `planScan`.
    #[wasm_bindgen(js_name = bloomRanges)]
    pub fn bloom_ranges(&self, request: &str) -> Result<String, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let ranges = js_result(bloom_ranges_for(&self.file, &request))?;
        let blooms = self.blooms.borrow();
        let missing: Vec<ByteRange> = ranges
            .into_iter()
            .filter(|r| blooms.get(&(r.start..r.end)).is_none())
            .collect();
        json(&missing)
    }

    /// Keeps fetched bloom filter bytes starting at `start` for planning.
    #[wasm_bindgen(js_name = pushBloom)]
    pub fn push_bloom(&self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        self.blooms
            .borrow_mut()
            .insert(start, Bytes::from(data.to_vec()));
        Ok(())
    }

    /// The bytes to read so that `request`'s column chunks without an offset index have their
    /// pages walked as far as its rows, as the JSON of `ByteRange[]`; empty when nothing (more)
    /// is to learn. Fetch them, `pushPageBytes` each, and ask again (a few rounds), then
    /// `planScan`.
    #[wasm_bindgen(js_name = pageRanges)]
    pub fn page_ranges(&self, request: &str) -> Result<String, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let ranges = js_result(self.layouts.borrow_mut().wanted(&self.file, &request))?;
        json(&ranges)
    }

    /// Keeps bytes read for `pageRanges`, starting at `start`, until the next `planScan`.
    #[wasm_bindgen(js_name = pushPageBytes)]
    pub fn push_page_bytes(&self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        self.layouts
            .borrow_mut()
            .insert(start, Bytes::from(data.to_vec()));
        Ok(())
    }

    /// Where each footer region starts.
    #[wasm_bindgen(js_name = footerStarts)]
    pub fn footer_starts(&self) -> Vec<f64> {
        self.file
            .footer()
            .iter()
            .map(|(r, _)| r.start as f64)
            .collect()
    }

    /// The footer regions' bytes (copies, ready to transfer to a worker).
    #[wasm_bindgen(js_name = footerBuffers)]
    pub fn footer_buffers(&self) -> Array {
        self.file
            .footer()
            .iter()
            .map(|(_, bytes)| JsValue::from(Uint8Array::from(&bytes[..])))
            .collect()
    }

    /// Plans a scan. `request` is a `ScanRequest` as JSON (columns, offset, limit, batch size,
    /// filter, `limits`, cache settings); returns the `ReadPlan` as JSON: `{scan, tasks: [{spec,
    /// filterRanges, outputRanges, outputSkippableBytes, rowsScanned}], rows, offset, limit,
    /// stats}` — `scan` is what every task shares (bound once per thread by `new Scan(file,
    /// scan)`), a task's `spec` only what differs (`new Task(scan, spec)`).
    #[wasm_bindgen(js_name = planScan)]
    pub fn plan_scan(&self, request: &str) -> Result<String, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let mut layouts = self.layouts.borrow_mut();
        // What the bytes read for walking teach is learned by now; the scan's tasks get the
        // bytes themselves from JS.
        layouts.forget_bytes();
        let plan = js_result(plan_scan_with(
            &self.file,
            &request,
            &self.blooms.borrow(),
            &layouts,
        ))?;
        json(&plan)
    }
}

/// Runs when the module is instantiated: installs the panic hook.
#[wasm_bindgen(start)]
pub fn start() {
    crate::panic::install_hook();
}

/// The message of the last panic in this instance (taken), to explain a trap.
#[wasm_bindgen(js_name = takePanicMessage)]
pub fn take_panic_message() -> Option<String> {
    crate::panic::take_message()
}

/// The size of the last allocation this instance could not make (taken), to explain a trap: the
/// memory was full (see `allocator`). `undefined` when none failed.
#[wasm_bindgen(js_name = takeAllocationFailure)]
pub fn take_allocation_failure() -> Option<f64> {
    #[cfg(target_arch = "wasm32")]
    return crate::allocator::take_failure().map(|bytes| bytes as f64);
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// Bounds this instance's WebAssembly memory to `bytes` (`ReaderOptions.memoryLimitBytes`):
/// past it, allocations fail as at the engine's own limit.
#[wasm_bindgen(js_name = setMemoryLimit)]
pub fn set_memory_limit(bytes: f64) -> Result<(), JsValue> {
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(crate::js_error::to_js(
            &parquet_skim_core::error::SkimError::invalid_argument(
                "memoryLimitBytes",
                format!("expected a whole number of bytes, found {bytes}"),
            ),
        ));
    }
    #[cfg(target_arch = "wasm32")]
    crate::allocator::set_limit(if bytes >= usize::MAX as f64 {
        usize::MAX
    } else {
        bytes as usize
    });
    Ok(())
}

/// Runs one warm-up pass over the small embedded file (see `parquet_skim_core::warm_up`):
/// `decode` false runs what the page runs (open, plan), true also decodes, as a worker does.
/// Returns the milliseconds it took.
#[wasm_bindgen(js_name = warmUp)]
pub fn warm_up(decode: bool) -> Result<f64, JsValue> {
    use parquet_skim_core::warm_up::{warm_up, Depth};
    let started = js_sys::Date::now();
    js_result(warm_up(if decode { Depth::Decode } else { Depth::Plan }))?;
    Ok(js_sys::Date::now() - started)
}

/// Parses a SQL `WHERE` clause into the filter AST (JSON text). Errors carry a `position`.
#[wasm_bindgen(js_name = parseFilter)]
pub fn parse_filter(sql: &str) -> Result<String, JsValue> {
    let expr = js_result(parquet_skim_core::parse_sql(sql))?;
    json(&expr)
}

/// Checks a scan's `offset`, `limit`, `batchSize` (absent: `undefined`) and, for an aggregate,
/// how many aggregates it asks for, by the core's rule (`check_scan_options`), before the
/// package serializes them: throws `INVALID_ARGUMENT` naming the option.
#[wasm_bindgen(js_name = checkScanOptions)]
pub fn check_scan_options(
    offset: JsValue,
    limit: JsValue,
    batch_size: JsValue,
    aggregates: Option<u32>,
) -> Result<(), JsValue> {
    js_result((|| {
        parquet_skim_core::check_scan_options(
            optional_number("offset", &offset)?,
            optional_number("limit", &limit)?,
            optional_number("batchSize", &batch_size)?,
            aggregates.map(|n| n as usize),
        )
    })())
}
