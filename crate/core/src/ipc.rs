//! Record batches → Arrow IPC stream bytes, the only form in which data leaves the core.
//!
//! One read task produces one IPC *stream* (schema message, then its batches), which the JS side
//! reads with apache-arrow's `RecordBatchReader`. Buffers are not compressed: the bytes cross a
//! `postMessage` on the same machine, where compression only costs CPU.

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::Schema;

use crate::error::{Result, SkimError};

/// An IPC stream holding only `schema`: how a schema reaches apache-arrow JS.
pub fn schema_to_ipc(schema: &Schema) -> Result<Vec<u8>> {
    let writer = StreamWriter::try_new(Vec::new(), schema).map_err(ipc_error)?;
    writer.into_inner().map_err(ipc_error)
}

/// Accumulates batches into one IPC stream.
pub struct IpcStream {
    writer: StreamWriter<Vec<u8>>,
    rows: u64,
}

impl IpcStream {
    /// A stream of batches with `schema`.
    pub fn try_new(schema: &Schema) -> Result<Self> {
        Ok(Self {
            writer: StreamWriter::try_new(Vec::new(), schema).map_err(ipc_error)?,
            rows: 0,
        })
    }

    /// Appends `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows() as u64;
        self.writer.write(batch).map_err(ipc_error)
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes written so far (an estimate of the stream's final size).
    pub fn bytes(&self) -> usize {
        self.writer.get_ref().len()
    }

    /// Ends the stream and returns its bytes.
    pub fn finish(self) -> Result<Vec<u8>> {
        self.writer.into_inner().map_err(ipc_error)
    }
}

fn ipc_error(e: arrow_schema::ArrowError) -> SkimError {
    SkimError::from_arrow("writing Arrow IPC", e)
}
