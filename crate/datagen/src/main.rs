//! Deterministic data for the explorer, the tests and the benchmarks.
//!
//! - `parquet-skim-datagen lineitem --sf 1 --out lineitem.parquet` writes TPC-H lineitem (tpchgen,
//!   the Rust port of dbgen);
//! - `parquet-skim-datagen hits --rows 2000000 --out hits.parquet` writes a ClickBench-hits-like
//!   string-heavy table (see `hits.rs`);
//! - `parquet-skim-datagen big-template --out DIR` writes the template of a > 4 GiB virtual file
//!   (one real row group repeated, with a footer for all copies; see `big.rs`);
//! - `parquet-skim-datagen warm-up --out crate/core/warm-up.parquet` writes the small file the
//!   reader warms its code up with (see `warm_up.rs`).
//!
//! Both with the arrow-rs Parquet writer: page-level statistics so the file has a column index
//! and an offset index, string columns as plain `Utf8`. The same arguments always give the same
//! bytes, so files can be regenerated instead of downloaded, and cached by name.
//!
//! Dictionary encoding is used only where it pays, as DuckDB's writer decides: not for the
//! near-unique columns (keys, prices, comments), whose 1 MiB dictionaries would overflow after a
//! few percent of each row group and then be dead weight that every page-level read fetches.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

mod big;
mod hits;
mod warm_up;

/// Near-unique lineitem columns: a dictionary cannot compress them.
const NO_DICTIONARY: [&str; 5] = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_extendedprice",
    "l_comment",
];
use tpchgen::generators::LineItemGenerator;
use tpchgen_arrow::LineItemArrow;

/// Near-unique hits columns.
const HITS_NO_DICTIONARY: [&str; 4] = ["WatchID", "URL", "Title", "Referer"];

/// Which table.
#[derive(PartialEq)]
enum Table {
    Lineitem,
    Hits,
}

/// What to write and how.
struct Options {
    table: Table,
    rows: usize,
    scale_factor: f64,
    out: PathBuf,
    row_group_rows: usize,
    page_bytes: usize,
    /// Most rows per data page (arrow-rs default 20,000); with a large value, pages are bounded
    /// by `page_bytes` alone.
    page_rows: usize,
    compression: Compression,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("big-template") => match &args[1..] {
            [flag, dir] if flag == "--out" => big::write_template(std::path::Path::new(dir)),
            _ => Err("usage: parquet-skim-datagen big-template --out DIR".into()),
        },
        Some("warm-up") => match &args[1..] {
            [flag, path] if flag == "--out" => warm_up::bytes().and_then(|bytes| {
                std::fs::write(path, &bytes).map_err(|e| format!("writing {path}: {e}"))
            }),
            _ => Err("usage: parquet-skim-datagen warm-up --out PATH".into()),
        },
        _ => parse(args).and_then(|o| write(&o)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("parquet-skim-datagen: {message}");
            ExitCode::from(2)
        }
    }
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let usage = "usage: parquet-skim-datagen lineitem --sf N | hits --rows N, then --out PATH \
                 [--row-group-rows N] [--page-bytes N] [--page-rows N] \
                 [--compression snappy|zstd|uncompressed]";
    let mut args = args.into_iter();
    let table = match args.next().as_deref() {
        Some("lineitem") => Table::Lineitem,
        Some("hits") => Table::Hits,
        _ => return Err(usage.into()),
    };
    let mut options = Options {
        table,
        rows: 2_000_000,
        scale_factor: 1.0,
        out: PathBuf::new(),
        row_group_rows: 1_048_576,
        page_bytes: 1024 * 1024,
        page_rows: 20_000,
        compression: Compression::SNAPPY,
    };
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value; {usage}"))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: '{v}' is not a number"))
        };
        match flag.as_str() {
            "--sf" => options.scale_factor = number(&value)?,
            "--rows" => options.rows = number(&value)? as usize,
            "--out" => options.out = PathBuf::from(value),
            "--row-group-rows" => options.row_group_rows = number(&value)? as usize,
            "--page-bytes" => options.page_bytes = number(&value)? as usize,
            "--page-rows" => options.page_rows = number(&value)? as usize,
            "--compression" => {
                options.compression = match value.as_str() {
                    "snappy" => Compression::SNAPPY,
                    "zstd" => Compression::ZSTD(ZstdLevel::default()),
                    "uncompressed" => Compression::UNCOMPRESSED,
                    other => return Err(format!("unknown compression '{other}'; {usage}")),
                }
            }
            other => return Err(format!("unknown flag '{other}'; {usage}")),
        }
    }
    if options.out.as_os_str().is_empty() {
        return Err(usage.into());
    }
    Ok(options)
}

fn write(options: &Options) -> Result<(), String> {
    match options.table {
        Table::Lineitem => {
            let generator = LineItemGenerator::new(options.scale_factor, 1, 1);
            let batches = LineItemArrow::new(generator)
                .with_batch_size(65_536)
                .map(|b| b.map_err(|e| e.to_string()));
            let schema = plain_strings(&LineItemArrow::schema_ref());
            write_batches(options, &schema, &NO_DICTIONARY, batches, "lineitem")
        }
        Table::Hits => {
            let batches = hits::batches(options.rows, 65_536).map(Ok);
            write_batches(
                options,
                &hits::schema(),
                &HITS_NO_DICTIONARY,
                batches,
                "hits",
            )
        }
    }
}

fn write_batches(
    options: &Options,
    schema: &SchemaRef,
    no_dictionary: &[&str],
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
    name: &str,
) -> Result<(), String> {
    let schema = Arc::clone(schema);
    let mut props = WriterProperties::builder();
    for column in no_dictionary.iter().copied() {
        props = props.set_column_dictionary_enabled(ColumnPath::from(column), false);
    }
    let props = props
        .set_compression(options.compression)
        .set_max_row_group_row_count(Some(options.row_group_rows))
        .set_data_page_size_limit(options.page_bytes)
        .set_data_page_row_count_limit(options.page_rows)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by("parquet-skim-datagen (arrow-rs parquet 60)".into())
        .build();
    let tmp = options.out.with_extension("parquet.partial");
    let file = File::create(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let mut writer = ArrowWriter::try_new(BufWriter::new(file), Arc::clone(&schema), Some(props))
        .map_err(|e| e.to_string())?;
    let mut rows = 0usize;
    for batch in batches {
        let batch = batch?;
        let columns = batch
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| arrow_cast::cast(c, f.data_type()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), columns).map_err(|e| e.to_string())?;
        rows += batch.num_rows();
        writer.write(&batch).map_err(|e| e.to_string())?;
    }
    writer.close().map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, &options.out)
        .map_err(|e| format!("renaming to {}: {e}", options.out.display()))?;
    println!("wrote {rows} {name} rows to {}", options.out.display());
    Ok(())
}

/// The generator's schema with string views replaced by plain strings.
fn plain_strings(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8View => f.as_ref().clone().with_data_type(DataType::Utf8),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}
