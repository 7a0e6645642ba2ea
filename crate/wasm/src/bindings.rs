//! The JS API of the WebAssembly module: the only `#[wasm_bindgen]` exports.
//!
//! Each export is a thin wrapper: convert arguments, call `parquet-skim-core`, convert the
//! `SkimError` into a JS error with a `code`. Structured results cross as JSON text (plans,
//! summaries: small, and `JSON.parse` is fast) or as `Uint8Array` (bytes, IPC). Positions are
//! `f64` on the JS side and checked to be exact integers below 2^53. Nothing here does I/O: JS
//! reads the bytes (`web/src/io`) and pushes them in.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use js_sys::{Array, Object, Reflect, Uint8Array};
use parquet_skim_core::column_cache::{CacheStats, ColumnCache};
use parquet_skim_core::{
    bloom_ranges_for, bytes_cache::ByteCache, ipc::schema_to_ipc, page_layout::PageLayouts,
    plan_scan_with, projection::Projection, FileSummary, LoadStep, MetadataLoader, OpenOptions,
    ParquetFile, ScanRequest, SkimError, TaskDecoder, TaskRun, TaskSpec,
};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::js_error::{js_result, to_js};

/// Decodes a file's metadata from the bytes JS pushes to it: the open's tail read, then whatever
/// else the footer or page index asks for (`needs`). JS does the reading (`web/src/io`), so a
/// URL's tail can be on its way while this module still compiles.
#[wasm_bindgen(js_name = MetadataLoader)]
pub struct JsMetadataLoader {
    loader: MetadataLoader,
    loaded: Option<ParquetFile>,
}

#[wasm_bindgen(js_class = MetadataLoader)]
impl JsMetadataLoader {
    /// A loader for a file of `fileLen` bytes; `options` is JSON `OpenOptions`
    /// (`{maxMetadataBytes?, viewTypes?}`), absent for the defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(file_len: f64, options: Option<String>) -> Result<JsMetadataLoader, JsValue> {
        let file_len = js_result(position("fileLen", file_len))?;
        let options: OpenOptions = match options {
            Some(text) => js_result(parse_json("open options", &text))?,
            None => OpenOptions::default(),
        };
        let loader = js_result(MetadataLoader::try_new(file_len))?.with_options(options);
        Ok(Self {
            loader,
            loaded: None,
        })
    }

    /// Gives the loader bytes `start..start + data.length` of the file.
    pub fn push(&mut self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        let bytes = Bytes::from(data.to_vec());
        js_result(self.loader.push(start..start + bytes.len() as u64, bytes))
    }

    /// Decodes as far as the pushed bytes allow: the ranges still needed as flat
    /// `[start, end, …]`, or none once the metadata is decoded (then `finish`).
    pub fn needs(&mut self) -> Result<Vec<f64>, JsValue> {
        if self.loaded.is_some() {
            return Ok(Vec::new());
        }
        match js_result(self.loader.try_load())? {
            LoadStep::Loaded(file) => {
                self.loaded = Some(*file);
                Ok(Vec::new())
            }
            LoadStep::NeedsRanges(ranges) => Ok(ranges
                .iter()
                .flat_map(|r| [r.start as f64, r.end as f64])
                .collect()),
        }
    }

    /// The decoded file (after `needs` came back empty).
    pub fn finish(&mut self) -> Result<JsFile, JsValue> {
        self.loaded.take().map(JsFile::new).ok_or_else(|| {
            to_js(&SkimError::internal(
                "MetadataLoader.finish before the metadata was decoded",
            ))
        })
    }
}

/// A file whose metadata is decoded: summary, schema, scan planning.
#[wasm_bindgen(js_name = ParquetFileHandle)]
pub struct JsFile {
    file: Rc<ParquetFile>,
    /// Bloom filter bytes fetched for planning, kept for later scans of the file.
    blooms: RefCell<ByteCache>,
    /// Page locations learned from page headers (files without an offset index).
    layouts: RefCell<PageLayouts>,
}

impl JsFile {
    fn new(file: ParquetFile) -> Self {
        Self {
            file: Rc::new(file),
            blooms: RefCell::new(ByteCache::default()),
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

    /// The file's metadata summary as JSON (see `FileSummary`).
    pub fn summary(&self) -> Result<String, JsValue> {
        serde_json::to_string(&FileSummary::of(&self.file))
            .map_err(|e| to_js(&SkimError::internal(e.to_string())))
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

    /// Bloom filter ranges that would help plan `request` and are not fetched yet, as flat
    /// `[start, end, …]`. Fetch them, `pushBloom` each, then `planScan`.
    #[wasm_bindgen(js_name = bloomRanges)]
    pub fn bloom_ranges(&self, request: &str) -> Result<Vec<f64>, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let ranges = js_result(bloom_ranges_for(&self.file, &request))?;
        let blooms = self.blooms.borrow();
        Ok(ranges
            .into_iter()
            .filter(|r| blooms.get(&(r.start..r.end)).is_none())
            .flat_map(|r| [r.start as f64, r.end as f64])
            .collect())
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
    /// pages walked as far as its rows, as flat `[start, end, …]`; empty when nothing (more) is
    /// to learn. Fetch them, `pushPageBytes` each, and ask again (a few rounds), then `planScan`.
    #[wasm_bindgen(js_name = pageRanges)]
    pub fn page_ranges(&self, request: &str) -> Result<Vec<f64>, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let ranges = js_result(self.layouts.borrow_mut().wanted(&self.file, &request))?;
        Ok(ranges
            .into_iter()
            .flat_map(|r| [r.start as f64, r.end as f64])
            .collect())
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
    /// filter, limits, cache settings); returns the `ReadPlan` as JSON: `{tasks: [{spec,
    /// filterRanges, outputRanges, rowsScanned}], rows, offset, limit, stats}`.
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
        serde_json::to_string(&plan).map_err(|e| to_js(&SkimError::internal(e.to_string())))
    }
}

thread_local! {
    /// This thread's (worker's) cross-scan cache of decoded filter columns. Its budget is the
    /// one the latest task's spec carries (the reader's share per worker).
    static COLUMN_CACHE: RefCell<ColumnCache> = RefCell::new(ColumnCache::new(0));
}

/// What a finished task did with the worker's cross-scan cache.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheReport {
    key: Option<String>,
    hit: bool,
    /// The task's filter columns were kept under `key`.
    inserted: bool,
    /// Keys evicted for room (or by a smaller budget).
    evicted: Vec<String>,
    rejected_bytes: u64,
    stats: CacheStats,
}

/// One read task being decoded.
#[wasm_bindgen(js_name = Task)]
pub struct JsTask {
    decoder: TaskDecoder,
    cache_key: Option<String>,
    scan_id: u64,
    evicted: Vec<String>,
}

#[wasm_bindgen(js_class = Task)]
impl JsTask {
    /// A task of `file`; `spec` is the JSON of a planned task's `spec`.
    #[wasm_bindgen(constructor)]
    pub fn new(file: &JsFile, spec: &str) -> Result<JsTask, JsValue> {
        let spec: TaskSpec = js_result(parse_json("task", spec))?;
        let mut evicted = Vec::new();
        let cached = spec.cache_key.as_deref().and_then(|key| {
            COLUMN_CACHE.with_borrow_mut(|cache| {
                evicted = cache.set_budget(spec.column_cache_bytes);
                cache.get(key, spec.scan_id)
            })
        });
        js_result(TaskDecoder::try_new_cached(&file.file, &spec, cached)).map(|decoder| JsTask {
            decoder,
            cache_key: spec.cache_key.clone(),
            scan_id: spec.scan_id,
            evicted,
        })
    }

    /// Gives the task bytes `start..start + data.length` of the file.
    pub fn push(&mut self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        let bytes = Bytes::from(data.to_vec());
        js_result(self.decoder.push(start..start + bytes.len() as u64, bytes))
    }

    /// Decodes as far as the pushed bytes allow. Returns `{needs: [start, end, ...]}` or
    /// `{ipc: Uint8Array, rows, batches, partials?}` (`partials`: JSON, for aggregate tasks).
    pub fn run(&mut self) -> Result<Object, JsValue> {
        let out = Object::new();
        match js_result(self.decoder.run())? {
            TaskRun::NeedsRanges(ranges) => {
                let flat: Array = ranges
                    .iter()
                    .flat_map(|r| [r.start as f64, r.end as f64])
                    .map(JsValue::from)
                    .collect();
                Reflect::set(&out, &"needs".into(), &flat)?;
            }
            TaskRun::Done(output) => {
                Reflect::set(&out, &"ipc".into(), &Uint8Array::from(&output.ipc[..]))?;
                Reflect::set(&out, &"rows".into(), &(output.rows as f64).into())?;
                Reflect::set(&out, &"batches".into(), &(output.batches as f64).into())?;
                Reflect::set(
                    &out,
                    &"rowsFromCache".into(),
                    &(output.rows_from_cache as f64).into(),
                )?;
                if let Some(partials) = &output.partials {
                    let json = serde_json::to_string(partials)
                        .map_err(|e| to_js(&SkimError::internal(e.to_string())))?;
                    Reflect::set(&out, &"partials".into(), &json.into())?;
                }
                if let Some(key) = self.cache_key.take() {
                    let mut evicted = std::mem::take(&mut self.evicted);
                    let (inserted, stats) = COLUMN_CACHE.with_borrow_mut(|cache| {
                        let inserted = match output.collected {
                            Some(columns) => {
                                evicted.extend(cache.insert(key.clone(), columns, self.scan_id));
                                cache.contains(&key)
                            }
                            None => {
                                cache.note_rejected(output.cache_rejected_bytes);
                                false
                            }
                        };
                        (inserted, cache.stats())
                    });
                    let report = CacheReport {
                        key: Some(key),
                        hit: output.cache_hit,
                        inserted,
                        evicted,
                        rejected_bytes: output.cache_rejected_bytes,
                        stats,
                    };
                    let json = serde_json::to_string(&report)
                        .map_err(|e| to_js(&SkimError::internal(e.to_string())))?;
                    Reflect::set(&out, &"cache".into(), &json.into())?;
                }
            }
        }
        Ok(out)
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
    serde_json::to_string(&expr).map_err(|e| to_js(&SkimError::internal(e.to_string())))
}

fn parse_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, SkimError> {
    serde_json::from_str(text)
        .map_err(|e| SkimError::invalid_argument(what, format!("expected valid {what}: {e}")))
}

/// Largest integer a JS number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A JS number that must be a byte position or count.
fn position(name: &str, value: f64) -> Result<u64, SkimError> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER {
        Ok(value as u64)
    } else {
        Err(SkimError::invalid_argument(
            name,
            format!("expected a whole number from 0 to 2^53-1, got {value}"),
        ))
    }
}
