//! The JS API of a scan and of one read task. A `Scan` is a plan's scan spec bound to its file,
//! once per scan on each thread that runs its tasks; a `Task` of it: bytes pushed in, `run` until
//! it is done, Arrow IPC out; the worker's cross-scan cache checked out when it starts and in
//! when it is done.

use bytes::Bytes;
use js_sys::{Array, Object, Reflect, Uint8Array};
use parquet_skim_core::{BoundScan, ScanSpec, TaskDecoder, TaskRun, TaskSpec};
use wasm_bindgen::prelude::*;

use crate::args::{flat, json, parse_json, position};
use crate::bindings::JsFile;
use crate::js_error::js_result;
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
}

#[wasm_bindgen(js_class = Task)]
impl JsTask {
    /// A task of `scan`; `spec` is the JSON of a planned task's `spec`.
    #[wasm_bindgen(constructor)]
    pub fn new(scan: &JsScan, spec: &str) -> Result<JsTask, JsValue> {
        let spec: TaskSpec = js_result(parse_json("task", spec))?;
        let scan = &scan.scan;
        let (cached, evicted) = worker_cache::check_out(scan.spec(), &spec);
        js_result(TaskDecoder::try_new_cached(scan, &spec, cached)).map(|decoder| JsTask {
            decoder,
            cache_key: spec.cache_key.clone(),
            scan_id: scan.spec().scan_id,
            evicted,
        })
    }

    /// Gives the task bytes `start..start + data.length` of the file.
    pub fn push(&mut self, start: f64, data: Uint8Array) -> Result<(), JsValue> {
        let start = js_result(position("start", start))?;
        let bytes = Bytes::from(data.to_vec());
        js_result(self.decoder.push(start..start + bytes.len() as u64, bytes))
    }

    /// Decodes as far as the pushed bytes allow — at most `maxBatches` batches when given. Returns
    /// `{needs: [start, end, ...]}`, `{yielded: true}` (stopped at `maxBatches`: call again), or
    /// `{ipc: Uint8Array, rows, batches, partials?}` (`partials`: JSON, for aggregate tasks).
    pub fn run(&mut self, max_batches: Option<u32>) -> Result<Object, JsValue> {
        let out = Object::new();
        let step = match max_batches {
            None => js_result(self.decoder.run()).map(Some)?,
            Some(max) => js_result(self.decoder.run_sliced(max as usize))?,
        };
        let Some(step) = step else {
            Reflect::set(&out, &"yielded".into(), &true.into())?;
            return Ok(out);
        };
        match step {
            TaskRun::NeedsRanges(ranges) => {
                let needs: Array = flat(&ranges).into_iter().map(JsValue::from).collect();
                Reflect::set(&out, &"needs".into(), &needs)?;
            }
            TaskRun::Done(mut output) => {
                Reflect::set(&out, &"ipc".into(), &Uint8Array::from(&output.ipc[..]))?;
                Reflect::set(&out, &"rows".into(), &(output.rows as f64).into())?;
                Reflect::set(&out, &"batches".into(), &(output.batches as f64).into())?;
                Reflect::set(
                    &out,
                    &"rowsFromCache".into(),
                    &(output.rows_from_cache as f64).into(),
                )?;
                if let Some(partials) = &output.partials {
                    Reflect::set(&out, &"partials".into(), &json(partials)?.into())?;
                }
                if let Some(key) = self.cache_key.take() {
                    let evicted = std::mem::take(&mut self.evicted);
                    let report = worker_cache::check_in(key, &mut output, self.scan_id, evicted);
                    Reflect::set(&out, &"cache".into(), &json(&report)?.into())?;
                }
            }
        }
        Ok(out)
    }
}
