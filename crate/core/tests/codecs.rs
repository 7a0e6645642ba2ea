//! Each codec feature: a parquet-testing file compressed with it reads when the feature is on, and
//! fails with `UNSUPPORTED` naming the codec when it is off (the slimmer builds:
//! `cargo test -p parquet-skim-core --no-default-features --features snappy,zstd`).
//! Brotli's one file there is a decompression bomb (read_path.rs), so tests/data has a small one
//! (pyarrow 26: 300 rows, `id` 0..300 and `s`, brotli), which checks the decoder of
//! crate/patches/brotli on real pages.

mod common;

use arrow_array::{cast::AsArray, types::Int64Type};
use arrow_ipc::reader::StreamReader;
use bytes::Bytes;
use common::*;
use parquet_skim_core::{plan_scan, ScanRequest, SkimError, TaskDecoder, TaskRun};

/// Rows read from every task of a full scan, or the first error.
fn read_all(name: &str) -> Result<u64, SkimError> {
    read_bytes(&parquet_testing(name), |_| {})
}

/// Like [`read_all`], handing each task's Arrow IPC output to `each`.
fn read_bytes(file: &Bytes, mut each: impl FnMut(&[u8])) -> Result<u64, SkimError> {
    let (parquet, _) = open(file, 512 * 1024);
    let plan = plan_scan(&parquet, &ScanRequest::default())?;
    let scan = plan.bind(&parquet)?;
    let mut rows = 0;
    for task in &plan.tasks {
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec)?;
        for r in task.filter_ranges.iter().chain(&task.output_ranges) {
            let bytes = file.slice(r.start as usize..r.end as usize);
            decoder.push(r.start..r.end, bytes)?;
        }
        loop {
            match decoder.run()? {
                TaskRun::Done(output) => {
                    each(&output.ipc);
                    break rows += output.rows;
                }
                TaskRun::NeedsRanges(ranges) => {
                    for r in ranges {
                        let bytes = file.slice(r.start as usize..r.end as usize);
                        decoder.push(r, bytes)?;
                    }
                }
            }
        }
    }
    Ok(rows)
}

fn check(name: &str, built_in: bool, codec: &str, rows: u64) {
    expect(read_all(name), name, built_in, codec, rows);
}

fn expect(read: Result<u64, SkimError>, name: &str, built_in: bool, codec: &str, rows: u64) {
    match read {
        Ok(read) => {
            assert!(built_in, "{name}: read without the {codec} feature");
            assert_eq!(read, rows, "{name}");
        }
        Err(e) => {
            assert!(!built_in, "{name}: {e}");
            assert_eq!(e.code(), "UNSUPPORTED", "{e}");
            let text = e.to_string();
            assert!(text.contains(&format!("compressed with {codec}")), "{text}");
            assert!(text.contains("use the full build"), "{text}");
        }
    }
}

#[test]
fn snappy() {
    check(
        "alltypes_plain.snappy.parquet",
        cfg!(feature = "snappy"),
        "SNAPPY",
        2,
    );
}

#[test]
fn gzip() {
    check(
        "concatenated_gzip_members.parquet",
        cfg!(feature = "gzip"),
        "GZIP",
        513,
    );
}

#[test]
fn lz4_raw() {
    check(
        "lz4_raw_compressed.parquet",
        cfg!(feature = "lz4"),
        "LZ4",
        4,
    );
}

#[test]
fn lz4_hadoop() {
    check(
        "hadoop_lz4_compressed.parquet",
        cfg!(feature = "lz4"),
        "LZ4",
        4,
    );
}

#[test]
fn zstd() {
    check(
        "byte_stream_split.zstd.parquet",
        cfg!(feature = "zstd"),
        "ZSTD",
        300,
    );
}

#[test]
fn brotli() {
    let file = Bytes::from_static(include_bytes!("data/small.brotli.parquet"));
    let mut ids = Vec::new();
    let read = read_bytes(&file, |ipc| {
        for batch in StreamReader::try_new(ipc, None).expect("ipc") {
            let batch = batch.expect("batch");
            let id = batch.column_by_name("id").expect("id");
            ids.extend_from_slice(id.as_primitive::<Int64Type>().values());
        }
    });
    let built_in = cfg!(feature = "brotli");
    expect(read, "small.brotli.parquet", built_in, "BROTLI", 300);
    if built_in {
        assert_eq!(ids, (0..300).collect::<Vec<i64>>());
    }
}
