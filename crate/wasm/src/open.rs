//! Opening a file: its metadata decoded from the bytes JS reads and pushes in (the tail first,
//! then whatever the footer or page index asks for).

use bytes::Bytes;
use js_sys::Uint8Array;
use parquet_skim_core::plan::ByteRange;
use parquet_skim_core::{LoadStep, MetadataLoader, OpenOptions, ParquetFile, SkimError};
use wasm_bindgen::prelude::*;

use crate::args::{json, parse_json, position};
use crate::bindings::JsFile;
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
        let options = js_result(options.checked())?;
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

    /// Decodes as far as the pushed bytes allow: the ranges still needed, as the JSON of
    /// `ByteRange[]`, or none once the metadata is decoded (then `finish`).
    pub fn needs(&mut self) -> Result<String, JsValue> {
        if self.loaded.is_some() {
            return json(&[] as &[ByteRange]);
        }
        match js_result(self.loader.try_load())? {
            LoadStep::Loaded(file) => {
                self.loaded = Some(*file);
                json(&[] as &[ByteRange])
            }
            LoadStep::NeedsRanges(ranges) => {
                json(&ranges.into_iter().map(ByteRange::from).collect::<Vec<_>>())
            }
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
