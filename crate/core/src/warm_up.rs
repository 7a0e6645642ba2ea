//! Warming the code up: one pass over a small embedded file, so that the first query of a fresh
//! WebAssembly instance does not run its code for the first time.
//!
//! Engines compile WebAssembly lazily and in tiers: a function's first call compiles it with a
//! baseline compiler (V8's Liftoff; JavaScriptCore starts in an interpreter), and only code that
//! has run enough is optimized. Measured in Node (V8, the same engine as Chromium) on TPC-H SF1
//! in memory: the first `open` took 18–28 ms and the first 100 rows 25–36 ms; after one pass of
//! this warm-up (about 50 ms, once), 4–6 ms and 6–12 ms — what they take warm. A fresh page pays
//! that on its first query unless the pass runs while the reader would wait anyway: in a worker
//! before its first task, on the page while the footer is on its way.
//!
//! The file (`crate/core/warm-up.parquet`, written by `crate/datagen`'s `warm-up`) has every common
//! column kind, codec and page layout; [`warm_up`] runs what a first query runs on it: the footer
//! and page index, the summary and schema a page shows, two plans (the first rows; a filter with
//! comparisons, `IN` and `LIKE`) and, with [`Depth::Decode`], their tasks, decoded to Arrow IPC.
//! Columns whose codec this build leaves out are not projected.

use bytes::Bytes;

use crate::error::{Result, SkimError};
use crate::ipc::schema_to_ipc;
use crate::metadata::{LoadStep, MetadataLoader, ParquetFile};
use crate::plan::{plan_scan, ReadTask, ScanRequest};
use crate::projection::Projection;
use crate::scan::BoundScan;
use crate::summary::FileSummary;
use crate::task::{TaskDecoder, TaskRun};

/// The embedded file.
const FILE: &[u8] = include_bytes!("../warm-up.parquet");

/// How much of a query to warm up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// What the page runs: open (footer, page index, summary, schema) and planning.
    Plan,
    /// Also what a worker runs: decoding tasks to Arrow IPC.
    Decode,
}

/// Runs one warm-up pass; returns the rows decoded (0 at [`Depth::Plan`]).
pub fn warm_up(depth: Depth) -> Result<u64> {
    let file = open()?;
    serde_json::to_string(&FileSummary::of(&file))
        .map_err(|e| SkimError::internal(e.to_string()))?;
    schema_to_ipc(file.arrow_schema())?;
    let columns = decodable_columns(&file);
    let scans = [
        ScanRequest {
            columns: Some(columns.clone()),
            limit: Some(100),
            ..ScanRequest::default()
        },
        ScanRequest {
            columns: Some(columns),
            filter: Some(crate::parse_sql(
                "id BETWEEN 100 AND 9000 AND small IN (1, 2, 3, 4, 5, 6, 7, 8) AND name <> 'name-7' \
                 AND text LIKE '%fox%' AND amount > 10.50",
            )?),
            ..ScanRequest::default()
        },
    ];
    let mut rows = 0;
    for request in &scans {
        let plan = plan_scan(&file, request)?;
        serde_json::to_string(&plan).map_err(|e| SkimError::internal(e.to_string()))?;
        let projection = Projection::try_new(&file, request.columns.as_deref())?;
        schema_to_ipc(projection.output_schema())?;
        if depth == Depth::Plan {
            continue;
        }
        let scan = plan.bind(&file)?;
        for task in &plan.tasks {
            rows += decode(&scan, task)?;
        }
    }
    Ok(rows)
}

fn open() -> Result<ParquetFile> {
    let len = FILE.len() as u64;
    let mut loader = MetadataLoader::try_new(len)?;
    loader.push(0..len, Bytes::from_static(FILE))?;
    match loader.try_load()? {
        LoadStep::Loaded(file) => Ok(*file),
        LoadStep::NeedsRanges(ranges) => Err(SkimError::internal(format!(
            "the warm-up file is incomplete: the decoder asked for {ranges:?}"
        ))),
    }
}

/// The file's columns whose codec this build decodes.
fn decodable_columns(file: &ParquetFile) -> Vec<String> {
    let Some(row_group) = file.metadata().row_groups().first() else {
        return Vec::new();
    };
    row_group
        .columns()
        .iter()
        .filter(|chunk| {
            let codec = format!("{:?}", chunk.compression()).to_ascii_uppercase();
            let name = codec.split('(').next().unwrap_or_default();
            name == "UNCOMPRESSED" || crate::error::CODECS.contains(&name)
        })
        .map(|chunk| chunk.column_path().string())
        .collect()
}

/// Decodes one task from the embedded bytes, as the scheduler feeds one; returns its rows.
fn decode(scan: &BoundScan, task: &ReadTask) -> Result<u64> {
    let mut decoder = TaskDecoder::try_new(scan, &task.spec)?;
    let slice = |start: u64, end: u64| {
        let bytes = Bytes::from_static(FILE);
        let range = usize::try_from(start).ok()?..usize::try_from(end).ok()?;
        bytes.get(range.clone()).map(|_| bytes.slice(range))
    };
    let push = |decoder: &mut TaskDecoder, start: u64, end: u64| -> Result<()> {
        let data = slice(start, end).ok_or_else(|| {
            SkimError::internal(format!(
                "the warm-up task asked for {start}..{end}, past the file"
            ))
        })?;
        decoder.push(start..end, data)
    };
    let prefetch = if scan.filter().is_some() {
        &task.filter_ranges
    } else {
        &task.output_ranges
    };
    for range in prefetch {
        push(&mut decoder, range.start, range.end)?;
    }
    loop {
        match decoder.run()? {
            TaskRun::Done(output) => return Ok(output.rows),
            TaskRun::NeedsRanges(ranges) => {
                for range in ranges {
                    push(&mut decoder, range.start, range.end)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_decodes_the_first_rows_and_the_filtered_ones() {
        assert_eq!(warm_up(Depth::Plan).expect("planning"), 0);
        let rows = warm_up(Depth::Decode).expect("decoding");
        // 100 first rows, then the rows the filter keeps (deterministic file).
        assert!(rows > 100, "decoded {rows} rows");
        assert_eq!(rows, warm_up(Depth::Decode).expect("again"));
    }

    #[test]
    fn every_column_is_projected_in_the_full_build() {
        let file = open().expect("open");
        let columns = decodable_columns(&file);
        if cfg!(all(
            feature = "snappy",
            feature = "gzip",
            feature = "lz4",
            feature = "zstd"
        )) {
            assert_eq!(columns.len(), 10, "{columns:?}");
        }
    }
}
