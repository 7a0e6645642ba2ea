//! The JS API of a scan and of one read task. A `Scan` is a plan's scan spec bound to its file,
//! once per scan on each thread that runs its tasks; a `Task` of it: bytes pushed in, `run` until
//! it is done, Arrow IPC out; the worker's cross-scan cache checked out when it starts and in
//! when it is done.

use bytes::Bytes;
use js_sys::Uint8Array;
use parquet_skim_core::plan::ByteRange;
use parquet_skim_core::{BoundScan, ScanSpec, SkimError, TaskDecoder, TaskRun, TaskSpec, TaskStep};
use wasm_bindgen::prelude::*;

use crate::args::{json, parse_json, position};
use crate::bindings::JsFile;
use crate::js_error::{js_result, to_js};
use crate::worker_cache;

/// A scan of one file, bound once: what its tasks share (columns, filter, aggregates, limits).
#[wasm_bindgen(js_name = Scan)]
pub struct JsScan {
    scan: BoundScan,
}

#[wasm_bindgen(js_class = Scan)]
impl JsScan {
    /// Binds `spec` (the JSON of a plan's `scan`) to `file`.
    #[wasm_bindgen(constructor)]
    pub fn new(file: &JsFile, spec: &str) -> Result<JsScan, JsValue> {
        let spec: ScanSpec = js_result(parse_json("scan", spec))?;
        js_result(BoundScan::try_new(&file.file, spec)).map(|scan| JsScan { scan })
    }
}

/// One read task being decoded.
#[wasm_bindgen(js_name = Task)]
pub struct JsTask {
    decoder: TaskDecoder,
    cache_key: Option<String>,
    scan_id: u64,
    evicted: Vec<String>,
    /// The output of a task that is done, until `takeIpc`.
    ipc: Option<Vec<u8>>,
}

#[wasm_bindgen(js_class = Task)]
impl JsTask {
    /// A task of `scan`; `spec` is the JSON of a planned task's `spec`.
    #[wasm_bindgen(constructor)]
    pub fn new(scan: &JsScan, spec: &str) -> Result<JsTask, JsValue> {
        let spec: TaskSpec = js_result(parse_json("task", spec))?;
        let scan = &scan.scan;
        let (checkout, evicted) = worker_cache::check_out(scan.spec(), &spec);
        js_result(TaskDecoder::try_new_cached(scan, &spec, checkout)).map(|decoder| JsTask {
            decoder,
            cache_key: spec.cache_key.clone(),
            scan_id: scan.spec().scan_id,
            evicted,
            ipc: None,
        })
    }

    /// Gives the task bytes `start..start + data.length` of the file.
    pub fn push(&mut self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        let bytes = Bytes::from(data.to_vec());
        js_result(self.decoder.push(start..start + bytes.len() as u64, bytes))
    }

    /// Decodes as far as the pushed bytes allow — at most `maxBatches` batches when given — and
    /// returns the JSON of a `TaskStep`: `needs` (push those ranges, run again), `yielded` (run
    /// again) or `done` (then `takeIpc` has the output).
    pub fn run(&mut self, max_batches: Option<u32>) -> Result<String, JsValue> {
        let step = match max_batches {
            None => js_result(self.decoder.run()).map(Some)?,
            Some(max) => js_result(self.decoder.run_sliced(max as usize))?,
        };
        // The call returned: an allocation that failed in it was handled (the IPC stream's
        // reservation falls back to growing as it goes), and must not explain a later trap.
        #[cfg(target_arch = "wasm32")]
        let _ = crate::allocator::take_failure();
        let step = match step {
            None => TaskStep::Yielded,
            Some(TaskRun::NeedsRanges(ranges)) => TaskStep::Needs {
                ranges: ranges.into_iter().map(ByteRange::from).collect(),
            },
            Some(TaskRun::Done(mut output)) => {
                let cache = self.cache_key.take().map(|key| {
                    let evicted = std::mem::take(&mut self.evicted);
                    worker_cache::check_in(key, &mut output, self.scan_id, evicted)
                });
                self.ipc = Some(std::mem::take(&mut output.ipc));
                TaskStep::Done {
                    rows: output.rows,
                    batches: output.batches,
                    rows_from_cache: output.rows_from_cache,
                    partials: output.partials,
                    cache,
                    pages_read_again: output.pages_read_again,
                }
            }
        };
        json(&step)
    }

    /// The Arrow IPC stream of a task that is done (once).
    #[wasm_bindgen(js_name = takeIpc)]
    pub fn take_ipc(&mut self) -> Result<Uint8Array, JsValue> {
        let ipc = self.ipc.take().ok_or_else(|| {
            to_js(&SkimError::internal(
                "takeIpc before the task was done, or twice",
            ))
        })?;
        Ok(Uint8Array::from(&ipc[..]))
    }
}
