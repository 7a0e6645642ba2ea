//! The JS API of the WebAssembly module: the only `#[wasm_bindgen]` exports.
//!
//! Each export is a thin wrapper: convert arguments, call `parquet-skim-core` or [`Source`],
//! convert the `SkimError` into a JS error with a `code`. Structured results cross as JSON text
//! (plans, summaries, logs: small, and `JSON.parse` is fast) or as `Uint8Array` (bytes, IPC).
//! Positions are `f64` on the JS side and checked to be exact integers below 2^53.
//!
//! Async methods clone an `Rc` before awaiting so no borrow of a JS-owned object spans an await.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use bytes::Bytes;
use js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use parquet_skim_core::column_cache::{CacheStats, ColumnCache};
use parquet_skim_core::{
    bloom_ranges_for, bytes_cache::ByteCache, ipc::schema_to_ipc, plan_scan_with_blooms,
    projection::Projection, FileSummary, LoadStep, MetadataLoader, OpenOptions, ParquetFile,
    ScanRequest, SkimError, TaskDecoder, TaskRun, TaskSpec,
};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::{AbortSignal, Blob};

use crate::http::{HttpOptions, RequestPolicy};
use crate::js_error::{js_result, to_js};
use crate::source::Source;

/// A readable file (URL, Blob or bytes) with its request log.
#[wasm_bindgen(js_name = Source)]
pub struct JsSource {
    inner: Rc<Source>,
}

#[wasm_bindgen(js_class = Source)]
impl JsSource {
    /// A file served over HTTP(S). `headers` alternates names and values. `size`, when known,
    /// avoids the suffix range read (and its CORS preflight). `policy` is JSON
    /// `{retries, retryDelayMs, timeoutMs, maxFullBodyBytes, conditional}`, each optional.
    #[wasm_bindgen(js_name = fromUrl)]
    pub fn from_url(
        url: String,
        headers: Vec<String>,
        credentials: Option<String>,
        size: Option<f64>,
        policy: Option<String>,
    ) -> Result<JsSource, JsValue> {
        if !headers.len().is_multiple_of(2) {
            return Err(to_js(&SkimError::invalid_argument(
                "headers",
                "expected name/value pairs",
            )));
        }
        let headers = headers
            .chunks_exact(2)
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect();
        let size = size
            .map(|s| position("size", s))
            .transpose()
            .map_err(|e| to_js(&e))?;
        let policy: RequestPolicy = match policy {
            None => RequestPolicy::default(),
            Some(json) => serde_json::from_str(&json).map_err(|e| {
                to_js(&SkimError::invalid_argument(
                    "request options",
                    format!(
                        "expected retries, retryDelayMs, timeoutMs, maxFullBodyBytes (whole \
                         numbers >= 0) and conditional (a boolean): {e}"
                    ),
                ))
            })?,
        };
        let defaults = HttpOptions::default();
        let options = HttpOptions {
            headers,
            credentials,
            retries: policy.retries.unwrap_or(defaults.retries),
            retry_delay_ms: policy
                .retry_delay_ms
                .unwrap_or(defaults.retry_delay_ms)
                .max(0.0),
            timeout_ms: policy.timeout_ms.unwrap_or(defaults.timeout_ms),
            full_body_bytes: policy
                .max_full_body_bytes
                .unwrap_or(defaults.full_body_bytes),
            conditional: policy.conditional.unwrap_or(defaults.conditional),
        };
        Ok(Self {
            inner: Rc::new(Source::http(url, options, size)),
        })
    }

    /// A `Blob` or `File`.
    #[wasm_bindgen(js_name = fromBlob)]
    pub fn from_blob(blob: Blob) -> JsSource {
        Self {
            inner: Rc::new(Source::blob(blob)),
        }
    }

    /// Bytes in memory.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: Uint8Array) -> JsSource {
        Self {
            inner: Rc::new(Source::bytes(bytes)),
        }
    }

    /// Reads bytes `start..end`; resolves to a `Uint8Array`. Aborting `signal` aborts the
    /// request and rejects with the signal's reason.
    pub fn read(&self, start: f64, end: f64, signal: Option<AbortSignal>) -> Promise {
        let source = Rc::clone(&self.inner);
        future_to_promise(async move {
            let range = js_result(range(start, end))?;
            match source.read(range, signal.as_ref()).await {
                Ok(data) => Ok(data.into()),
                Err(_) if signal.as_ref().is_some_and(AbortSignal::aborted) => {
                    Err(signal.map(|s| s.reason()).unwrap_or(JsValue::UNDEFINED))
                }
                Err(e) => Err(to_js(&e)),
            }
        })
    }

    /// Reads the metadata with one read of the last `tailBytes` (more only if the footer and page
    /// index are larger); resolves to a `ParquetFileHandle`. `options` is JSON `OpenOptions`
    /// (`{maxMetadataBytes?}`); absent, the defaults.
    pub fn open(&self, tail_bytes: f64, options: Option<String>) -> Promise {
        let source = Rc::clone(&self.inner);
        future_to_promise(async move {
            let tail = js_result(position("footerReadBytes", tail_bytes))?;
            let options: OpenOptions = match options {
                Some(text) => js_result(parse_json("open options", &text))?,
                None => OpenOptions::default(),
            };
            let file = js_result(open(&source, tail.max(8), options).await)?;
            Ok(JsFile::new(file).into())
        })
    }

    /// Every read so far as JSON: `[{start, end, range, status, bytes, ms}]`.
    #[wasm_bindgen(js_name = requestLog)]
    pub fn request_log(&self) -> String {
        serde_json::to_string(&self.inner.log()).unwrap_or_else(|_| "[]".into())
    }

    /// The file's ETag or Last-Modified, once seen.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> Option<String> {
        self.inner.version()
    }
}

async fn open(source: &Source, tail: u64, options: OpenOptions) -> Result<ParquetFile, SkimError> {
    let (start, data) = source.read_tail(tail).await?;
    let file_len = source
        .file_len()
        .ok_or_else(|| SkimError::internal("file size unknown after the tail read"))?;
    let mut loader = MetadataLoader::try_new(file_len)?.with_options(options);
    loader.push(
        start..start + u64::from(data.length()),
        Bytes::from(data.to_vec()),
    )?;
    loop {
        match loader.try_load()? {
            LoadStep::Loaded(file) => return Ok(*file),
            LoadStep::NeedsRanges(ranges) => {
                // One request covering everything asked (footer pieces are adjacent).
                let span = ranges
                    .iter()
                    .cloned()
                    .reduce(|a, r| a.start.min(r.start)..a.end.max(r.end))
                    .ok_or_else(|| SkimError::internal("metadata decoder asked for nothing"))?;
                let data = source.read(span.clone(), None).await?;
                loader.push(span, Bytes::from(data.to_vec()))?;
            }
        }
    }
}

/// A file whose metadata is decoded: summary, schema, scan planning.
#[wasm_bindgen(js_name = ParquetFileHandle)]
pub struct JsFile {
    file: Rc<ParquetFile>,
    /// Bloom filter bytes fetched for planning, kept for later scans of the file.
    blooms: RefCell<ByteCache>,
}

impl JsFile {
    fn new(file: ParquetFile) -> Self {
        Self {
            file: Rc::new(file),
            blooms: RefCell::new(ByteCache::default()),
        }
    }
}

#[wasm_bindgen(js_class = ParquetFileHandle)]
impl JsFile {
    /// Rebuilds a file from footer regions (as a worker does): `starts[i]` is where
    /// `buffers[i]` begins in the file.
    #[wasm_bindgen(js_name = fromFooter)]
    pub fn from_footer(file_len: f64, starts: Vec<f64>, buffers: Array) -> Result<JsFile, JsValue> {
        let file_len = js_result(position("fileLen", file_len))?;
        let mut footer = Vec::with_capacity(starts.len());
        for (i, start) in starts.into_iter().enumerate() {
            let start = js_result(position("footer start", start))?;
            let bytes = Uint8Array::new(&buffers.get(i as u32)).to_vec();
            footer.push((start..start + bytes.len() as u64, Bytes::from(bytes)));
        }
        js_result(ParquetFile::try_from_footer(file_len, footer)).map(JsFile::new)
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

    /// Plans a scan. `request` is JSON `{columns?, offset?, limit?, batchSize?}`; returns the
    /// plan as JSON `{tasks: [{spec, ranges, bytes}], rows}`.
    #[wasm_bindgen(js_name = planScan)]
    pub fn plan_scan(&self, request: &str) -> Result<String, JsValue> {
        let request: ScanRequest = js_result(parse_json("scan options", request))?;
        let plan = js_result(plan_scan_with_blooms(
            &self.file,
            &request,
            &self.blooms.borrow(),
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

fn range(start: f64, end: f64) -> Result<Range<u64>, SkimError> {
    let (start, end) = (position("start", start)?, position("end", end)?);
    if start > end {
        return Err(SkimError::invalid_argument(
            "range",
            format!("expected start <= end, got {start}..{end}"),
        ));
    }
    Ok(start..end)
}
