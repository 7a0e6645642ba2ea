//! Record batches → Arrow IPC stream bytes, the only form in which data leaves the core.
//!
//! One read task produces one IPC *stream* (schema message, then its batches), which the JS side
//! reads with apache-arrow's `RecordBatchReader`. Buffers are not compressed: the bytes cross a
//! `postMessage` on the same machine, where compression only costs CPU.
//!
//! The stream's bytes grow in one `Vec`. Left to itself it doubles, and a task's output of 13 MB
//! (the hits re-filter's 140,079 `URL`s and `Title`s) was copied again on every doubling, ~13 MB
//! more in all. When the task knows how many rows it will write (no filter: the row groups'
//! rows; a filter run over cached columns: the rows that passed), the stream reserves the rest
//! once its first batch says how many bytes a row takes ([`IpcStream::expect_rows`]).

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
    /// Rows the stream will hold, when the task knows ([`IpcStream::expect_rows`]).
    expected_rows: Option<u64>,
}

/// Most bytes reserved ahead from an expectation: past it the stream grows as without one (the
/// row counts come from the file, so an absurd one must cost little).
const MAX_RESERVE_BYTES: u64 = 64 << 20;

impl IpcStream {
    /// A stream of batches with `schema`.
    pub fn try_new(schema: &Schema) -> Result<Self> {
        Ok(Self {
            writer: StreamWriter::try_new(Vec::new(), schema).map_err(ipc_error)?,
            rows: 0,
            expected_rows: None,
        })
    }

    /// The stream will hold about `rows` rows: after the first batch, room for the rest is
    /// reserved at that batch's bytes per row (an estimate: a wrong one costs a copy, as without).
    pub fn expect_rows(&mut self, rows: u64) {
        self.expected_rows = Some(rows);
    }

    /// Appends `batch`. Out of line: its callers run per batch and are optimized on their own.
    #[inline(never)]
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let before = self.bytes();
        let first = self.rows == 0;
        let rows = batch.num_rows() as u64;
        self.rows += rows;
        self.writer.write(batch).map_err(ipc_error)?;
        if let Some(expected) = self.expected_rows.filter(|_| first && rows > 0) {
            self.reserve_rest(expected, (self.bytes() - before) as u64, rows);
        }
        Ok(())
    }

    /// Room for `expected` rows in all at `batch_bytes / batch_rows` each, plus a sixteenth.
    fn reserve_rest(&mut self, expected: u64, batch_bytes: u64, batch_rows: u64) {
        let rest = expected.saturating_sub(self.rows);
        let bytes = rest
            .saturating_mul(batch_bytes.div_ceil(batch_rows))
            .saturating_mul(17)
            / 16;
        let Ok(bytes) = usize::try_from(bytes.min(MAX_RESERVE_BYTES)) else {
            return;
        };
        // Best effort: without the room (a memory limit near), the stream grows as it would have.
        let _ = self.writer.get_mut().try_reserve_exact(bytes);
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use arrow_ipc::reader::StreamReader;
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;

    fn batch(from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let n: ArrayRef = Arc::new(Int64Array::from_iter_values(from..from + rows));
        let s: ArrayRef = Arc::new(StringArray::from_iter_values(
            (from..from + rows).map(|i| format!("value number {i}")),
        ));
        RecordBatch::try_new(schema, vec![n, s]).expect("batch")
    }

    fn stream_of(batches: &[RecordBatch], expect: Option<u64>) -> (Vec<u8>, Vec<usize>) {
        let mut stream = IpcStream::try_new(&batches[0].schema()).expect("stream");
        if let Some(rows) = expect {
            stream.expect_rows(rows);
        }
        let mut capacities = Vec::new();
        for b in batches {
            stream.write(b).expect("write");
            capacities.push(stream.writer.get_ref().capacity());
        }
        (stream.finish().expect("finish"), capacities)
    }

    #[test]
    fn an_expected_stream_grows_once_and_writes_the_same_bytes() {
        let batches: Vec<RecordBatch> = (0..8).map(|i| batch(i * 1000, 1000)).collect();
        let (plain, _) = stream_of(&batches, None);
        let (reserved, capacities) = stream_of(&batches, Some(8000));
        assert_eq!(plain, reserved);
        // Room for every batch after the first, reserved when the first was written.
        assert!(
            capacities.iter().all(|c| *c == capacities[0]),
            "{capacities:?}"
        );
        assert!(
            capacities[0] >= reserved.len(),
            "{capacities:?} < {}",
            reserved.len()
        );
        let read: Vec<RecordBatch> = StreamReader::try_new(reserved.as_slice(), None)
            .expect("reader")
            .collect::<std::result::Result<_, _>>()
            .expect("batches");
        assert_eq!(read, batches);
    }

    #[test]
    fn an_absurd_expectation_reserves_at_most_the_cap() {
        // ~40 bytes a row: 800 MB, were it not capped.
        let (_, capacities) = stream_of(&[batch(0, 10)], Some(20_000_000));
        assert!(
            capacities[0] as u64 <= MAX_RESERVE_BYTES + 4096,
            "{capacities:?}"
        );
    }
}
