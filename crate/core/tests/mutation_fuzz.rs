//! Fuzzing on the host: corrupted files must give typed errors, never panics (in WebAssembly a
//! panic is a trap that kills the worker). Deterministic byte mutations of real files
//! (apache/parquet-testing), in three places:
//!
//! - **footers** (metadata parsing): the thrift footer, its length field, the page index, and
//!   truncations, fed to `MetadataLoader` (from a tail read of 8 bytes or of the whole file),
//!   then summarized and planned, and every task's decoder built. No panic anywhere.
//! - **page headers** (task decoding): bytes at the start of every page, then every task
//!   decoded, whole and through the page index (a window of rows). No panic anywhere: the header
//!   checks of `pages` catch what arrow-rs would trust.
//! - **page contents** (task decoding): bytes anywhere in the data region. What no header shows
//!   (levels, dictionary keys, delta-encoded lengths inside the usually compressed body) only
//!   arrow-rs's decoders read. arrow-rs 60.1.0 panicked on some such inputs (14 of 1,800; 131 of
//!   18,000 at 10×); the workspace builds it with the fixes of crate/patches/parquet (its
//!   README.md lists them), and no panic is allowed here either.
//!
//! Every panic fails its test and is printed with where it fired (parquet-skim or arrow-rs) and
//! the input that caused it, so that it can be replayed.
//!
//! The dev profile builds arrow-rs's `parquet` without overflow checks (workspace Cargo.toml), as
//! the WebAssembly release build ships it: an overflow on hostile input then behaves here as it
//! does in the browser.
//!
//! Each test records its counts in the robustness ledger (`rust-fuzz`, area `fuzz`). For a longer
//! run, `PARQUET_SKIM_FUZZ_SCALE=10 cargo test -p parquet-skim-core --test mutation_fuzz` runs ten
//! times the inputs (the same ones first).

mod common;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use bytes::Bytes;
use common::{parquet_testing, record_case, Rng};
use parquet_skim_core::{
    plan_scan, FileSummary, LoadStep, MetadataLoader, ParquetFile, ScanRequest, SkimError,
    TaskDecoder, TaskRun,
};

const SUITE: &str = "rust-fuzz";

/// Inputs per file are multiplied by `PARQUET_SKIM_FUZZ_SCALE` (default 1).
fn scaled(n: u64) -> u64 {
    let scale = std::env::var("PARQUET_SKIM_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(1);
    n * scale.max(1)
}

thread_local! {
    /// Inside a fuzz input: panics are recorded here instead of printed.
    static FUZZING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// One panic hook for the whole test binary (tests run in parallel): on a thread inside a fuzz
/// input it records where the panic fired and what it said; elsewhere it prints as usual.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !FUZZING.with(Cell::get) {
                return default(info);
            }
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some((at, message)));
        }));
    });
}

/// What the inputs of one test came to.
#[derive(Default)]
struct Tally {
    inputs: u64,
    ok: u64,
    errors: u64,
    /// Error codes seen, with their counts.
    codes: BTreeMap<&'static str, u64>,
    /// Panics, each with where it fired and its input: always a failure.
    panics: Vec<String>,
}

impl Tally {
    /// Runs one input, catching and sorting a panic.
    fn run<T>(&mut self, input: &str, f: impl FnOnce() -> Result<T, SkimError>) {
        self.inputs += 1;
        FUZZING.with(|f| f.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(f));
        FUZZING.with(|f| f.set(false));
        match outcome {
            Ok(Ok(_)) => self.ok += 1,
            Ok(Err(e)) => {
                self.errors += 1;
                *self.codes.entry(e.code()).or_default() += 1;
            }
            Err(_) => {
                let (at, message) = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_default();
                let whose = if at.contains("/registry/") || at.contains("patches/parquet/vendor") {
                    "arrow-rs"
                } else {
                    "parquet-skim"
                };
                let first = message.lines().next().unwrap_or("");
                self.panics
                    .push(format!("{input}: in {whose} at {at}: {first}"));
            }
        }
    }

    fn summary(&self) -> String {
        format!(
            "{} inputs: {} read, {} typed errors {:?}, {} panics",
            self.inputs,
            self.ok,
            self.errors,
            self.codes,
            self.panics.len()
        )
    }

    fn print(&self, what: &str) {
        println!("{what}: {}", self.summary());
        for line in &self.panics {
            println!("  panic: {line}");
        }
    }
}

/// A parquet-testing file that opens and decodes whole without error (not an encrypted or a
/// deliberately broken one): its bytes and metadata.
fn readable(name: &str) -> Option<(Bytes, ParquetFile)> {
    let bytes = parquet_testing(name);
    let parquet = try_open(&bytes, 1 << 20).ok()?;
    decode_all(&bytes, &ScanRequest::default()).ok()?;
    Some((bytes, parquet))
}

/// Opens `file` from a tail read of `tail` bytes, following the loader's asks.
fn try_open(file: &Bytes, tail: u64) -> Result<ParquetFile, SkimError> {
    let len = file.len() as u64;
    let mut loader = MetadataLoader::try_new(len)?;
    let mut asked = std::iter::once(len.saturating_sub(tail)..len).collect::<Vec<_>>();
    loop {
        for r in asked.drain(..) {
            if r.start > r.end || r.end > len {
                return Err(SkimError::internal(format!(
                    "asked for {r:?} of {len} bytes"
                )));
            }
            loader.push(r.clone(), file.slice(r.start as usize..r.end as usize))?;
        }
        match loader.try_load()? {
            LoadStep::Loaded(parquet) => return Ok(*parquet),
            LoadStep::NeedsRanges(ranges) => asked = ranges,
        }
    }
}

/// Opens, summarizes and plans `file` (whole, and a window of rows) and builds every task's
/// decoder: everything that reads metadata, nothing that decodes pages.
fn open_and_plan(file: &Bytes, tail: u64) -> Result<usize, SkimError> {
    let parquet = try_open(file, tail)?;
    serde_json::to_string(&FileSummary::of(&parquet))
        .map_err(|e| SkimError::internal(e.to_string()))?;
    let window = ScanRequest {
        offset: Some(3),
        limit: Some(40),
        ..Default::default()
    };
    let mut tasks = 0;
    for request in [ScanRequest::default(), window] {
        let plan = plan_scan(&parquet, &request)?;
        let scan = plan.bind(&parquet)?;
        for task in plan.tasks {
            TaskDecoder::try_new(&scan, &task.spec)?;
            tasks += 1;
        }
    }
    Ok(tasks)
}

/// Opens `file` and decodes every task of `request` from its planned ranges (and whatever else
/// it asks for).
fn decode_all(file: &Bytes, request: &ScanRequest) -> Result<u64, SkimError> {
    let parquet = try_open(file, 1 << 20)?;
    let plan = plan_scan(&parquet, request)?;
    let len = file.len() as u64;
    let scan = plan.bind(&parquet)?;
    let mut rows = 0;
    for task in &plan.tasks {
        let mut decoder = TaskDecoder::try_new(&scan, &task.spec)?;
        let mut asked: Vec<_> = task
            .filter_ranges
            .iter()
            .chain(&task.output_ranges)
            .map(|r| r.start..r.end)
            .collect();
        loop {
            for r in asked.drain(..) {
                if r.start > r.end || r.end > len {
                    return Err(SkimError::internal(format!(
                        "asked for {r:?} of {len} bytes"
                    )));
                }
                decoder.push(r.clone(), file.slice(r.start as usize..r.end as usize))?;
            }
            match decoder.run()? {
                TaskRun::Done(output) => {
                    rows += output.rows;
                    break;
                }
                TaskRun::NeedsRanges(ranges) => asked = ranges,
            }
        }
    }
    Ok(rows)
}

/// Changes the byte at `at`: a random value, a flipped bit, zero, or one more.
fn mutate(bytes: &mut [u8], at: usize, rng: &mut Rng) -> (usize, u8) {
    bytes[at] = match rng.below(4) {
        0 => rng.next() as u8,
        1 => bytes[at] ^ (1 << rng.below(8)),
        2 => 0,
        _ => bytes[at].wrapping_add(1),
    };
    (at, bytes[at])
}

/// Where a file's footer regions are: (page index start, thrift footer start), by the length
/// field (the page index, when any, lies right before the footer in these files).
fn footer_regions(file: &Bytes) -> Option<(usize, usize)> {
    let len = file.len();
    let metadata_len = u32::from_le_bytes(file.get(len.checked_sub(8)?..len - 4)?.try_into().ok()?);
    let thrift_start = len.checked_sub(8 + metadata_len as usize)?;
    let page_index_start = try_open(file, len as u64)
        .ok()
        .and_then(|p| p.footer().iter().map(|(r, _)| r.start as usize).min())
        .unwrap_or(thrift_start);
    Some((page_index_start.min(thrift_start), thrift_start))
}

#[test]
fn mutated_footers_open_and_plan_without_panicking() {
    install_hook();
    let mut rng = Rng(0xf007_e4f0_0d5e_ed01);
    let mut tally = Tally::default();
    for name in common::parquet_testing_names() {
        let original = parquet_testing(&name);
        let Some((page_index_start, thrift_start)) = footer_regions(&original) else {
            continue;
        };
        let len = original.len();
        for i in 0..scaled(150) {
            let mut bytes = original.to_vec();
            let mut edits = Vec::new();
            match rng.below(10) {
                // Truncated anywhere in the footer regions.
                0 => {
                    let cut =
                        page_index_start + rng.below((len - page_index_start) as u64) as usize;
                    bytes.truncate(cut);
                    edits.push((cut, 0));
                }
                // A wrong length field.
                1 => {
                    let claimed = rng.below(2 * (len - thrift_start) as u64 + 16) as u32;
                    bytes[len - 8..len - 4].copy_from_slice(&claimed.to_le_bytes());
                    edits.push((len - 8, 0));
                }
                // Bytes of the page index (when there is one) or of the thrift footer.
                kind => {
                    let (from, to) = if kind < 4 && page_index_start < thrift_start {
                        (page_index_start, thrift_start)
                    } else {
                        (thrift_start, len - 8)
                    };
                    for _ in 0..1 + rng.below(4) {
                        let at = from + rng.below((to - from).max(1) as u64) as usize;
                        edits.push(mutate(&mut bytes, at, &mut rng));
                    }
                }
            }
            let bytes = Bytes::from(bytes);
            // Half from a tail read of 8 bytes (the loader asks for the rest), half whole.
            let tail = if i % 2 == 0 { 8 } else { len as u64 };
            tally.run(&format!("{name} {edits:?}"), || open_and_plan(&bytes, tail));
        }
    }
    tally.print("mutated footers");
    let ok = tally.panics.is_empty() && tally.ok > 1000 && tally.errors > 1000;
    record_case(
        SUITE,
        "fuzz",
        "mutated footers: open, summarize, plan (metadata parsing)",
        ok,
        &tally.summary(),
        tally.inputs,
    );
    assert!(ok, "{}: {:#?}", tally.summary(), tally.panics);
}

#[test]
fn mutated_page_headers_error_without_panicking() {
    install_hook();
    let mut rng = Rng(0x4ead_e125_0bad_f00d);
    let mut tally = Tally::default();
    let window = ScanRequest {
        offset: Some(50),
        limit: Some(200),
        ..Default::default()
    };
    for name in common::parquet_testing_names() {
        let Some((original, parquet)) = readable(&name) else {
            continue;
        };
        // Where pages start: column chunks, and every page of the offset index.
        let metadata = parquet.metadata();
        let mut starts = Vec::new();
        for (rg_idx, rg) in metadata.row_groups().iter().enumerate() {
            for (leaf, chunk) in rg.columns().iter().enumerate() {
                let start = chunk
                    .dictionary_page_offset()
                    .unwrap_or(chunk.data_page_offset());
                starts.push(start as usize);
                let pages = metadata
                    .page_index()
                    .and_then(|index| index.offset_index(rg_idx, leaf));
                starts.extend(
                    pages
                        .iter()
                        .flat_map(|o| o.page_locations())
                        .map(|p| p.offset as usize),
                );
            }
        }
        for i in 0..scaled(60) {
            let mut bytes = original.to_vec();
            let mut edits = Vec::new();
            for _ in 0..1 + rng.below(2) {
                let at = starts[rng.below(starts.len() as u64) as usize] + rng.below(16) as usize;
                if at < bytes.len() {
                    edits.push(mutate(&mut bytes, at, &mut rng));
                }
            }
            let bytes = Bytes::from(bytes);
            let request = if i % 2 == 0 {
                &window
            } else {
                &ScanRequest::default()
            };
            tally.run(&format!("{name} {edits:?}"), || decode_all(&bytes, request));
        }
    }
    tally.print("mutated page headers");
    let ok = tally.panics.is_empty() && tally.ok > 100 && tally.errors > 1000;
    record_case(
        SUITE,
        "fuzz",
        "mutated page headers: decode every task (task decoding)",
        ok,
        &tally.summary(),
        tally.inputs,
    );
    assert!(ok, "{}: {:#?}", tally.summary(), tally.panics);
}

#[test]
fn mutated_page_contents_error_without_panicking() {
    install_hook();
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    let mut tally = Tally::default();
    // Files with the encodings arrow-rs's decoders panicked on (150 inputs each), then every
    // other file that reads whole (40 each).
    let focus = [
        "alltypes_tiny_pages.parquet",
        "delta_binary_packed.parquet",
        "delta_byte_array.parquet",
        "datapage_v2.snappy.parquet",
        "nested_structs.rust.parquet",
        "byte_stream_split_extended.gzip.parquet",
        "rle_boolean_encoding.parquet",
        "nulls.snappy.parquet",
        "map_no_value.parquet",
        "float16_nonzeros_and_nans.parquet",
        "alltypes_dictionary.parquet",
        "list_columns.parquet",
    ];
    let others = common::parquet_testing_names()
        .into_iter()
        .filter(|name| !focus.contains(&name.as_str()));
    let files = focus
        .iter()
        .map(|n| (n.to_string(), 150))
        .chain(others.map(|n| (n, 40)));
    for (name, inputs) in files.collect::<Vec<_>>() {
        let Some((original, parquet)) = readable(&name) else {
            assert!(inputs != 150, "{name}: a focus file must read whole");
            continue;
        };
        let footer_start = parquet
            .footer()
            .iter()
            .map(|(r, _)| r.start)
            .min()
            .unwrap_or(0) as usize;
        for _ in 0..scaled(inputs) {
            let mut bytes = original.to_vec();
            let mut edits = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let at = 4 + rng.below(footer_start.saturating_sub(4).max(1) as u64) as usize;
                edits.push(mutate(&mut bytes, at, &mut rng));
            }
            let bytes = Bytes::from(bytes);
            tally.run(&format!("{name} {edits:?}"), || {
                decode_all(&bytes, &ScanRequest::default())
            });
        }
    }
    tally.print("mutated page contents");
    let ok = tally.panics.is_empty() && tally.ok > 100 && tally.errors > 100;
    record_case(
        SUITE,
        "fuzz",
        "mutated page contents: typed errors, no panic",
        ok,
        &tally.summary(),
        tally.inputs,
    );
    assert!(ok, "{}: {:#?}", tally.summary(), tally.panics);
}

/// Replays one printed input without catching its panic, so that `RUST_BACKTRACE=1` shows where
/// it came from: `PARQUET_SKIM_FUZZ_REPLAY='file.parquet [(7381, 82), (3365, 44)]' cargo test -p
/// parquet-skim-core --test mutation_fuzz replay -- --nocapture` (page contents and headers:
/// the edits are byte positions and the values written there). Does nothing without the variable.
#[test]
fn replay() {
    let Ok(input) = std::env::var("PARQUET_SKIM_FUZZ_REPLAY") else {
        return;
    };
    let (name, edits) = input.split_once(' ').expect("'<file> [(at, value), ...]'");
    let mut bytes = parquet_testing(name).to_vec();
    let numbers: Vec<usize> = edits
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("a number"))
        .collect();
    for pair in numbers.chunks(2) {
        bytes[pair[0]] = pair[1] as u8;
    }
    let bytes = Bytes::from(bytes);
    println!("whole: {:?}", decode_all(&bytes, &ScanRequest::default()));
}
