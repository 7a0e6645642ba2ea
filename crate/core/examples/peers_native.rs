//! The browser benchmark's parquet-skim queries (tests/bench/peers.mjs), run natively: the same
//! plans and task decoders as the WebAssembly build, on `threads` OS threads instead of Web
//! Workers, reading the file from disk (positioned reads of the planned ranges; the OS page cache
//! is warm after the first run). The WebAssembly-over-native ratio comes from comparing these
//! times with parquet-skim's in-memory runs in Chromium.
//!
//! Like the browser: a 512 KiB footer read, the reader's default 64 MiB cache split the way
//! `web/src/file.ts` splits it (per task for the predicate cache, per worker for the cross-scan
//! cache), row groups split into about two tasks per thread when there are too few, and filter
//! columns pushed before output columns are asked for. Answers are the canonical ones of
//! `tests/bench/peers-page/canonical.mjs`, so they are checked against every browser system.
//!
//! ```sh
//! cargo run --release -p parquet-skim-core --example peers_native -- \
//!   --runs 5 --threads 2 FILE:TABLE:QUERY…
//! ```
//! prints one JSON object per case: `{ file, query, threads, medianMs, runsMs, answer }`.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, TimeUnit};
use bytes::Bytes;
use parquet_skim_core::aggregate::AggregateSpec;
use parquet_skim_core::{
    parse_sql, plan_scan, BoundScan, LoadStep, MetadataLoader, ParquetFile, ReadTask, ScanRequest,
    TaskDecoder, TaskRun,
};

const FOOTER_READ_BYTES: u64 = 512 * 1024;
const CACHE_BYTES: u64 = 64 * 1024 * 1024;
const TASKS_PER_WORKER: u64 = 2;
const MIN_TASK_ROWS: u64 = 65_536;
const LOOKUP_KEY: i64 = 3_000_323;
const Q6_WHERE: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                        AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";
const LINEITEM: [&str; 16] = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_linenumber",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_returnflag",
    "l_linestatus",
    "l_shipdate",
    "l_commitdate",
    "l_receiptdate",
    "l_shipinstruct",
    "l_shipmode",
    "l_comment",
];
const HITS: [&str; 12] = [
    "WatchID",
    "CounterID",
    "EventDate",
    "EventTime",
    "UserID",
    "RegionID",
    "IsMobile",
    "ResolutionWidth",
    "URL",
    "Title",
    "Referer",
    "SearchPhrase",
];

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() {
    if let Err(e) = run_cli() {
        eprintln!("peers_native: {e}");
        std::process::exit(2);
    }
}

fn run_cli() -> Result<(), Error> {
    let usage = "usage: peers_native [--runs N] [--threads N] FILE:TABLE:QUERY...";
    let mut runs = 5usize;
    let mut threads = 2usize;
    let mut cases = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().ok_or(usage)?.parse()?,
            "--threads" => threads = args.next().ok_or(usage)?.parse()?,
            _ => cases.push(arg),
        }
    }
    if cases.is_empty() || threads == 0 {
        return Err(usage.into());
    }
    for case in cases {
        let mut parts = case.rsplitn(3, ':');
        let (query, table, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(q), Some(t), Some(p)) => (q.to_string(), t.to_string(), p.to_string()),
            _ => return Err(format!("bad case '{case}'; {usage}").into()),
        };
        let mut times = Vec::new();
        let mut answer = None::<String>;
        // One warm-up run (the page cache, the allocator), then `runs` timed ones.
        for run in 0..=runs {
            let started = Instant::now();
            let output = run_query(&path, &table, &query, threads)?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let text = answer_of(&table, &query, &output)?;
            if let Some(previous) = &answer {
                if *previous != text {
                    return Err(format!("{case}: answers differ ({previous} vs {text})").into());
                }
            }
            answer = Some(text);
            if run > 0 {
                times.push(ms);
            }
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let line = serde_json::json!({
            "file": path,
            "table": table,
            "query": query,
            "threads": threads,
            "medianMs": sorted[sorted.len() / 2],
            "runsMs": times,
            "answer": answer,
        });
        println!("{line}");
    }
    Ok(())
}

/// What a query returns: Q6's unscaled revenue and scale, or record batches.
enum Output {
    Revenue(i128, i8),
    Batches(Vec<RecordBatch>),
}

fn read_range(file: &File, range: &Range<u64>) -> Result<Bytes, Error> {
    let mut buffer = vec![0u8; (range.end - range.start) as usize];
    file.read_exact_at(&mut buffer, range.start)?;
    Ok(Bytes::from(buffer))
}

fn open(file: &File) -> Result<ParquetFile, Error> {
    let len = file.metadata()?.len();
    let mut loader = MetadataLoader::try_new(len)?;
    let tail = len.saturating_sub(FOOTER_READ_BYTES)..len;
    loader.push(tail.clone(), read_range(file, &tail)?)?;
    loop {
        match loader.try_load()? {
            LoadStep::Loaded(parquet) => return Ok(*parquet),
            LoadStep::NeedsRanges(ranges) => {
                for r in ranges {
                    let data = read_range(file, &r)?;
                    loader.push(r, data)?;
                }
            }
        }
    }
}

fn request_for(table: &str, query: &str, threads: u64) -> Result<ScanRequest, Error> {
    let columns = |names: &[&str]| Some(names.iter().map(|s| s.to_string()).collect());
    let mut request = ScanRequest {
        predicate_cache_bytes: Some(CACHE_BYTES / (threads * TASKS_PER_WORKER)),
        file_key: Some("native".into()),
        column_cache_bytes: Some(CACHE_BYTES / threads),
        scan_id: Some(1),
        ..ScanRequest::default()
    };
    match (table, query) {
        ("lineitem", "q6") => {
            request.filter = Some(parse_sql(Q6_WHERE)?);
            request.aggregates = Some(vec![serde_json::from_str::<AggregateSpec>(
                r#"{"fn":"sum","expr":{"op":"mul","left":{"column":"l_extendedprice"},"right":{"column":"l_discount"}}}"#,
            )?]);
        }
        ("lineitem", "lookup") => {
            request.filter = Some(parse_sql(&format!("l_orderkey = {LOOKUP_KEY}"))?);
        }
        ("lineitem", "contains") => {
            request.columns = columns(&["l_orderkey", "l_comment"]);
            request.filter = Some(parse_sql("l_comment LIKE '%special%requests%'")?);
        }
        ("hits", "contains") => {
            request.columns = columns(&["URL", "Title"]);
            request.filter = Some(parse_sql("URL LIKE '%google%'")?);
        }
        (_, "first100") => request.limit = Some(100),
        ("lineitem", "scan3") => {
            request.columns = columns(&["l_quantity", "l_shipdate", "l_returnflag"]);
        }
        _ => return Err(format!("no query '{query}' on '{table}'").into()),
    }
    Ok(request)
}

/// Runs one task: its planned ranges pushed (filter columns first, then the output columns when
/// there is no filter; with one, the decoder asks for the output pages it still needs).
fn run_task(
    file: &File,
    scan: &BoundScan,
    task: &ReadTask,
) -> Result<parquet_skim_core::TaskOutput, Error> {
    let mut decoder = TaskDecoder::try_new(scan, &task.spec)?;
    let upfront = if scan.filter().is_some() {
        &task.filter_ranges
    } else {
        &task.output_ranges
    };
    for r in upfront {
        let range = r.start..r.end;
        let data = read_range(file, &range)?;
        decoder.push(range, data)?;
    }
    loop {
        match decoder.run()? {
            TaskRun::Done(output) => return Ok(output),
            TaskRun::NeedsRanges(ranges) => {
                for r in ranges {
                    let data = read_range(file, &r)?;
                    decoder.push(r, data)?;
                }
            }
        }
    }
}

fn run_query(path: &str, table: &str, query: &str, threads: usize) -> Result<Output, Error> {
    let file = File::open(path)?;
    let parquet = open(&file)?;
    let mut request = request_for(table, query, threads as u64)?;
    let mut plan = plan_scan(&parquet, &request)?;
    let workers = threads as u64;
    if (plan.tasks.len() as u64) < 2 * workers && plan.stats.rows_scanned >= 2 * MIN_TASK_ROWS {
        request.target_task_rows =
            Some(MIN_TASK_ROWS.max(plan.stats.rows_scanned.div_ceil(2 * workers)));
        plan = plan_scan(&parquet, &request)?;
    }
    let scan = plan.bind(&parquet)?;
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let failure = Mutex::new(None::<Error>);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let idx = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = plan.tasks.get(idx) else {
                    break;
                };
                match run_task(&file, &scan, task) {
                    Ok(output) => results.lock().expect("results").push((idx, output)),
                    Err(e) => {
                        *failure.lock().expect("failure") = Some(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("failure") {
        return Err(e);
    }
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|(idx, _)| *idx);
    if request.aggregates.is_some() {
        let (mut total, mut scale) = (0i128, 0i8);
        for (_, output) in &results {
            for partial in output.partials.iter().flatten() {
                scale = partial.scale;
                if let Some(value) = &partial.value {
                    total += value.parse::<i128>()?;
                }
            }
        }
        return Ok(Output::Revenue(total, scale));
    }
    let mut batches = Vec::new();
    let mut skip = plan.offset as usize;
    let mut left = plan.limit.map_or(usize::MAX, |l| l as usize);
    for (_, output) in results {
        let reader = StreamReader::try_new(std::io::Cursor::new(output.ipc), None)?;
        for batch in reader {
            let batch = batch?;
            let from = skip.min(batch.num_rows());
            skip -= from;
            let take = (batch.num_rows() - from).min(left);
            left -= take;
            if take > 0 {
                batches.push(batch.slice(from, take));
            }
        }
    }
    Ok(Output::Batches(batches))
}

/// Cents of a decimal at `scale`, rounded half away from zero (as canonical.mjs `toCents`).
fn to_cents(unscaled: i128, scale: i8) -> i128 {
    if scale <= 2 {
        return unscaled * 10i128.pow((2 - scale) as u32);
    }
    let div = 10i128.pow((scale - 2) as u32);
    let half = div / 2;
    if unscaled >= 0 {
        (unscaled + half) / div
    } else {
        -((-unscaled + half) / div)
    }
}

/// Value `i` of `array` as canonical text (canonical.mjs `canonArrow`).
fn canon(array: &ArrayRef, i: usize) -> Result<String, Error> {
    if array.is_null(i) {
        return Ok("null".into());
    }
    Ok(match array.data_type() {
        DataType::Int64 => array.as_primitive::<Int64Type>().value(i).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(i).to_string(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(i).to_string(),
        DataType::Boolean => array.as_boolean().value(i).to_string(),
        DataType::Decimal128(_, scale) => {
            to_cents(array.as_primitive::<Decimal128Type>().value(i), *scale).to_string()
        }
        DataType::Date32 => array.as_primitive::<Date32Type>().value(i).to_string(),
        DataType::Timestamp(unit, _) => {
            let (ticks, per_second) = match unit {
                TimeUnit::Second => (array.as_primitive::<TimestampSecondType>().value(i), 1),
                TimeUnit::Millisecond => (
                    array.as_primitive::<TimestampMillisecondType>().value(i),
                    1_000,
                ),
                TimeUnit::Microsecond => (
                    array.as_primitive::<TimestampMicrosecondType>().value(i),
                    1_000_000,
                ),
                TimeUnit::Nanosecond => (
                    array.as_primitive::<TimestampNanosecondType>().value(i),
                    1_000_000_000,
                ),
            };
            ticks.div_euclid(per_second).to_string()
        }
        DataType::Utf8 => array.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => array.as_string_view().value(i).to_string(),
        other => return Err(format!("no canonical form for {other}").into()),
    })
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash = 0x811c_9dc5u32;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

fn columns_of<'a>(batch: &'a RecordBatch, names: &[&str]) -> Result<Vec<&'a ArrayRef>, Error> {
    names
        .iter()
        .map(|name| {
            batch
                .column_by_name(name)
                .ok_or_else(|| format!("no column {name} in the result").into())
        })
        .collect()
}

/// The canonical answer (canonical.mjs / answers.mjs `answerOf`).
fn answer_of(table: &str, query: &str, output: &Output) -> Result<String, Error> {
    let batches = match output {
        Output::Revenue(unscaled, scale) => {
            let cents = to_cents(*unscaled, *scale);
            let sign = if cents < 0 { "-" } else { "" };
            let abs = cents.abs();
            return Ok(format!("revenue {sign}{}.{:02}", abs / 100, abs % 100));
        }
        Output::Batches(batches) => batches,
    };
    if query == "scan3" {
        let (mut rows, mut quantity, mut days, mut returned) = (0usize, 0i128, 0i64, 0usize);
        for batch in batches {
            let cols = columns_of(batch, &["l_quantity", "l_shipdate", "l_returnflag"])?;
            let q = cols[0].as_primitive::<Decimal128Type>();
            let DataType::Decimal128(_, scale) = q.data_type() else {
                return Err("l_quantity is not a decimal".into());
            };
            let d = cols[1].as_primitive::<Date32Type>();
            for i in 0..batch.num_rows() {
                quantity += to_cents(q.value(i), *scale);
                days += i64::from(d.value(i));
                if canon(cols[2], i)? == "R" {
                    returned += 1;
                }
            }
            rows += batch.num_rows();
        }
        return Ok(format!(
            "{rows} rows, quantity {quantity}, shipdate {days}, R {returned}"
        ));
    }
    let names: &[&str] = match (table, query) {
        ("lineitem", "contains") => &["l_orderkey", "l_comment"],
        ("hits", "contains") => &["URL", "Title"],
        ("lineitem", _) => &LINEITEM,
        _ => &HITS,
    };
    let (mut rows, mut sum) = (0usize, 0u32);
    for batch in batches {
        let cols = columns_of(batch, names)?;
        for i in 0..batch.num_rows() {
            let values = cols
                .iter()
                .map(|c| canon(c, i))
                .collect::<Result<Vec<_>, _>>()?;
            sum = sum.wrapping_add(fnv1a(values.join("\u{1f}").as_bytes()));
            rows += 1;
        }
    }
    Ok(format!("{rows} rows, hash {sum}"))
}
