//! Helpers shared by the integration tests: a sample file with a known layout, and a scan
//! driver that behaves like the JS scheduler and records what it had to read.
#![allow(dead_code)]

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{
    cast::AsArray, types::Int64Type, ArrayRef, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet_skim_core::{
    plan_scan, BoundScan, LoadStep, MetadataLoader, ParquetFile, ReadTask, ScanRequest,
    TaskDecoder, TaskOutput, TaskRun,
};

pub const ROWS: i64 = 10_000;
pub const ROWS_PER_GROUP: usize = 4_000;
pub const ROWS_PER_PAGE: usize = 500;

/// Columns: id (0..ROWS), name ("name-{id}"), s {a: id*2, b: "b{id}"}. Three row groups of 4000,
/// 4000 and 2000 rows, pages of 500 rows, page index on.
pub fn sample_file() -> Bytes {
    let s_fields = Fields::from(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, false),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("s", DataType::Struct(s_fields.clone()), false),
    ]));
    let ids: Vec<i64> = (0..ROWS).collect();
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("name-{i}")),
            )),
            Arc::new(StructArray::new(
                s_fields,
                vec![
                    Arc::new(Int64Array::from_iter_values(ids.iter().map(|i| i * 2))) as ArrayRef,
                    Arc::new(StringArray::from_iter_values(
                        ids.iter().map(|i| format!("b{i}")),
                    )),
                ],
                None,
            )),
        ],
    )
    .expect("valid batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS_PER_GROUP))
        .set_data_page_row_count_limit(ROWS_PER_PAGE)
        .set_write_batch_size(ROWS_PER_PAGE)
        .set_statistics_enabled(EnabledStatistics::Page)
        // Unique values: a dictionary would hold the whole chunk and hide page-level reads.
        .set_dictionary_enabled(false)
        .build();
    write_parquet(&batch, props)
}

/// `batch` written as a Parquet file with `props` (one `ArrowWriter`, closed).
pub fn write_parquet(batch: &RecordBatch, props: WriterProperties) -> Bytes {
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).expect("writer");
    writer.write(batch).expect("write");
    writer.close().expect("close");
    Bytes::from(out)
}

pub fn slice(file: &Bytes, r: &Range<u64>) -> Bytes {
    file.slice(r.start as usize..r.end as usize)
}

/// Opens `file` the way the browser does: one tail read of `tail` bytes, then whatever the
/// loader asks for. Returns the file and every range read.
pub fn open(file: &Bytes, tail: u64) -> (ParquetFile, Vec<Range<u64>>) {
    let len = file.len() as u64;
    let mut loader = MetadataLoader::try_new(len).expect("loader");
    let first = len.saturating_sub(tail)..len;
    let mut reads = vec![first.clone()];
    loader
        .push(first.clone(), slice(file, &first))
        .expect("push");
    loop {
        match loader.try_load().expect("load") {
            LoadStep::Loaded(parquet) => return (*parquet, reads),
            LoadStep::NeedsRanges(ranges) => {
                for r in ranges {
                    loader.push(r.clone(), slice(file, &r)).expect("push");
                    reads.push(r);
                }
            }
        }
    }
}

/// Runs every task of `request` from its planned ranges only; panics if a task asks for more.
pub fn scan(parquet: &ParquetFile, file: &Bytes, request: &ScanRequest) -> Vec<RecordBatch> {
    let (batches, extra) = scan_with_io(parquet, file, request, true);
    assert!(extra.is_empty(), "unplanned reads {extra:?}");
    batches
}

/// Runs a scan as the JS scheduler does: push phase 1 (and, when `prefetch_output`, phase 2)
/// ranges, answer any further ask from the file, apply offset/limit across tasks. Returns the
/// batches and every range asked for beyond what was pushed.
pub fn scan_with_io(
    parquet: &ParquetFile,
    file: &Bytes,
    request: &ScanRequest,
    prefetch_output: bool,
) -> (Vec<RecordBatch>, Vec<Range<u64>>) {
    let plan = plan_scan(parquet, request).expect("plan");
    let mut batches = Vec::new();
    let mut extra = Vec::new();
    let mut skip = plan.offset as usize;
    let mut left = plan.limit.map_or(usize::MAX, |l| l as usize);
    let scan = plan.bind(parquet).expect("bind");
    for task in &plan.tasks {
        if left == 0 {
            break;
        }
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec).expect("task");
        let pushed = task
            .filter_ranges
            .iter()
            .chain(task.output_ranges.iter().filter(|_| prefetch_output));
        for r in pushed {
            decoder
                .push(r.start..r.end, slice(file, &(r.start..r.end)))
                .expect("push");
        }
        let output = loop {
            match decoder.run().expect("run") {
                TaskRun::Done(output) => break output,
                TaskRun::NeedsRanges(ranges) => {
                    for r in ranges {
                        decoder.push(r.clone(), slice(file, &r)).expect("push");
                        extra.push(r);
                    }
                }
            }
        };
        let reader = StreamReader::try_new(std::io::Cursor::new(output.ipc), None).expect("ipc");
        for batch in reader.map(|b| b.expect("batch")) {
            let from = skip.min(batch.num_rows());
            skip -= from;
            let take = (batch.num_rows() - from).min(left);
            left -= take;
            if take > 0 {
                batches.push(batch.slice(from, take));
            }
        }
    }
    if let Some(rows) = plan.rows {
        assert_eq!(
            batches.iter().map(|b| b.num_rows() as u64).sum::<u64>(),
            rows
        );
    }
    (batches, extra)
}

pub fn ids(batches: &[RecordBatch], column: &str) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            b.column_by_name(column)
                .expect("column")
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

/// A parquet-testing file, read from `../shared` beside the repository.
/// Every parquet-testing file (`.parquet`, encrypted ones included), sorted.
pub fn parquet_testing_names() -> Vec<String> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/parquet-testing/data/"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("parquet-testing")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".parquet") && !n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

pub fn parquet_testing(name: &str) -> Bytes {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/parquet-testing/data/"
    );
    Bytes::from(std::fs::read(format!("{path}{name}")).expect("parquet-testing file"))
}

/// A xorshift generator: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Runs one planned task from all its planned bytes; panics if it asks for more.
pub fn run_task(scan: &BoundScan, file: &Bytes, task: &ReadTask) -> TaskOutput {
    let mut decoder = TaskDecoder::try_new(scan, &task.spec).expect("task");
    for r in task.filter_ranges.iter().chain(&task.output_ranges) {
        decoder
            .push(r.start..r.end, slice(file, &(r.start..r.end)))
            .expect("push");
    }
    match decoder.run().expect("run") {
        TaskRun::Done(output) => output,
        TaskRun::NeedsRanges(r) => panic!("task asked for unplanned ranges {r:?}"),
    }
}

/// Appends one case to the robustness ledger (`tests/.cache/robustness/<suite>.jsonl`, the format
/// of `tests/support/robustness.ts`) and returns `ok`, so the test can assert on it. `npm test`
/// prints the summary of all ledgers at the end.
pub fn record_case(
    suite: &str,
    area: &str,
    case: &str,
    ok: bool,
    detail: &str,
    inputs: u64,
) -> bool {
    use std::io::Write;
    // Tests run on several threads: one lock, and each line in one write, so lines never mix.
    static LEDGER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/.cache/robustness");
    let line = format!(
        "{}\n",
        serde_json::json!({ "area": area, "case": case, "ok": ok, "detail": detail, "inputs": inputs })
    );
    let _guard = LEDGER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("{suite}.jsonl")))?
            .write_all(line.as_bytes())
    });
    if let Err(e) = written {
        eprintln!("robustness ledger not written: {e}");
    }
    ok
}
