//! Corrupted data pages must give errors, never panics from parquet-skim's own code: a panic in
//! WebAssembly is a trap that kills the worker. Deterministic byte mutations of the data region of
//! real files (the footer is kept, so opening succeeds and every mutation reaches the decoders).
//!
//! arrow-rs itself still panics on a few of these inputs (an `assert!` in its RLE decoder, and
//! integer overflows that only debug builds check). Those are counted and printed, not failed
//! here: in the browser the worker traps, and the pool replaces it, retries once and rejects with
//! `WORKER_CRASHED` (tests/browser/worker-crash.spec.ts uses one of them).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{open, parquet_testing, Rng};
use parquet_skim_core::{plan_scan, ScanRequest, TaskDecoder, TaskRun};

/// Decodes every task of a full scan; `Err` on a decode error, panics propagate.
fn decode_all(file: &Bytes) -> Result<u64, String> {
    let (parquet, _) = open(file, 1 << 20);
    let plan = plan_scan(&parquet, &ScanRequest::default()).map_err(|e| e.to_string())?;
    let mut rows = 0;
    for task in &plan.tasks {
        let mut decoder = TaskDecoder::try_new(&parquet, &task.spec).map_err(|e| e.to_string())?;
        for r in task.filter_ranges.iter().chain(&task.output_ranges) {
            let data = file.slice(r.start as usize..r.end as usize);
            decoder
                .push(r.start..r.end, data)
                .map_err(|e| e.to_string())?;
        }
        match decoder.run().map_err(|e| e.to_string())? {
            TaskRun::Done(output) => rows += output.rows,
            TaskRun::NeedsRanges(_) => return Err("unplanned ranges".into()),
        }
    }
    Ok(rows)
}

#[test]
fn mutated_data_pages_error_without_panicking() {
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    let mut panics = Vec::new();
    // Where each panic happened: ours (this repository's crates) or upstream.
    let location = Arc::new(Mutex::new(String::new()));
    let recorded = Arc::clone(&location);
    std::panic::set_hook(Box::new(move |info| {
        if let (Ok(mut slot), Some(at)) = (recorded.lock(), info.location()) {
            *slot = at.file().to_owned();
        }
    }));
    let (mut errors, mut ok, mut cases) = (0, 0, 0);
    for name in [
        "alltypes_tiny_pages.parquet",
        "delta_binary_packed.parquet",
        "delta_byte_array.parquet",
        "datapage_v2.snappy.parquet",
        "nested_structs.rust.parquet",
        "byte_stream_split_extended.gzip.parquet",
        "rle_boolean_encoding.parquet",
        "nulls.snappy.parquet",
    ] {
        let original = parquet_testing(name);
        let (parquet, _) = open(&original, 1 << 20);
        let footer_start = parquet
            .footer()
            .iter()
            .map(|(r, _)| r.start)
            .min()
            .unwrap_or(0) as usize;
        for _ in 0..150 {
            let mut bytes = original.to_vec();
            let mut edits = Vec::new();
            for _ in 0..1 + rng.next() % 4 {
                let at = 4 + (rng.next() as usize) % footer_start.saturating_sub(4).max(1);
                bytes[at] = rng.next() as u8;
                edits.push((at, bytes[at]));
            }
            let bytes = Bytes::from(bytes);
            cases += 1;
            match catch_unwind(AssertUnwindSafe(|| decode_all(&bytes))) {
                Ok(Ok(_)) => ok += 1,
                Ok(Err(_)) => errors += 1,
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    let at = location.lock().map(|l| l.clone()).unwrap_or_default();
                    panics.push((at, format!("{name} {edits:?}: {message}")));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    let ours: Vec<_> = panics
        .iter()
        .filter(|(at, _)| !at.contains("/registry/"))
        .collect();
    println!(
        "{cases} mutated files: {ok} decoded, {errors} typed errors, {} panics inside arrow-rs, {} in parquet-skim",
        panics.len() - ours.len(),
        ours.len()
    );
    for (at, panic) in &panics {
        println!("  {at}: {panic}");
    }
    assert!(ours.is_empty(), "panics in parquet-skim's code: {ours:?}");
    assert!(
        ok > 100 && errors > 100,
        "the mutations must exercise both outcomes"
    );
}
