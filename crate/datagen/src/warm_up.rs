//! The small file the reader decodes to warm its code up (`crate/core/src/warm_up.rs` embeds it):
//! every common kind of column, codec and page layout, so that one pass over it runs the code a
//! first real query runs — the footer, the page index, the push decoder, the codecs, the filter
//! kernels, the IPC writer.
//!
//! 400 rows in two row groups, pages of at most 50 rows with page statistics (column index
//! and offset index), the Arrow schema embedded as the arrow-rs writer does. Columns: `id`
//! (int64, plain), `small` (int32, dictionary), `ratio` (float64, zstd), `amount`
//! (decimal(15,2)), `day` (date32), `at` (timestamp µs), `name` (a dictionary string of 40
//! values), `text` (plain strings of 20–60 bytes, zstd), `flag` (bool, gzip), `maybe` (int64 with
//! nulls, lz4_raw). Values come from a fixed linear congruential sequence: the same bytes on
//! every run (a test in this crate checks the committed copy is current).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

const ROWS: usize = 400;
const WORDS: [&str; 8] = [
    "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "again",
];

/// The warm-up file's bytes.
pub fn bytes() -> Result<Vec<u8>, String> {
    let batch = batch().map_err(|e| e.to_string())?;
    let column = |name: &str| ColumnPath::from(name);
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_column_compression(column("ratio"), Compression::ZSTD(ZstdLevel::default()))
        .set_column_compression(column("text"), Compression::ZSTD(ZstdLevel::default()))
        .set_column_compression(column("flag"), Compression::GZIP(GzipLevel::default()))
        .set_column_compression(column("maybe"), Compression::LZ4_RAW)
        .set_column_dictionary_enabled(column("id"), false)
        .set_column_dictionary_enabled(column("text"), false)
        .set_max_row_group_row_count(Some(ROWS / 2))
        .set_data_page_row_count_limit(50)
        .set_write_batch_size(50)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by("parquet-skim-datagen warm-up (arrow-rs parquet 60)".into())
        .build();
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(out)
}

fn batch() -> Result<RecordBatch, arrow_schema::ArrowError> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut ids = Vec::with_capacity(ROWS);
    let mut small = Vec::with_capacity(ROWS);
    let mut ratio = Vec::with_capacity(ROWS);
    let mut amount = Vec::with_capacity(ROWS);
    let mut day = Vec::with_capacity(ROWS);
    let mut at = Vec::with_capacity(ROWS);
    let mut name = Vec::with_capacity(ROWS);
    let mut text = Vec::with_capacity(ROWS);
    let mut flag = Vec::with_capacity(ROWS);
    let mut maybe = Vec::with_capacity(ROWS);
    for row in 0..ROWS {
        let r = next();
        ids.push(row as i64 * 3 + 1);
        small.push((r % 50) as i32);
        ratio.push((r % 1_000) as f64 / 8.0);
        amount.push((r % 10_000_000) as i128);
        day.push(8_000 + (row / 4) as i32);
        at.push(1_600_000_000_000_000 + row as i64 * 1_000_003);
        name.push(format!("name-{}", r % 40));
        let words = 3 + (r % 6) as usize;
        let phrase: Vec<&str> = (0..words)
            .map(|k| WORDS[((r >> (3 * k)) % WORDS.len() as u64) as usize])
            .collect();
        text.push(phrase.join(" "));
        flag.push(r % 3 == 0);
        maybe.push((row % 3 != 0).then_some((r % 1_000) as i64));
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("small", DataType::Int32, false),
        Field::new("ratio", DataType::Float64, false),
        Field::new("amount", DataType::Decimal128(15, 2), false),
        Field::new("day", DataType::Date32, false),
        Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            false,
        ),
        Field::new("name", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("flag", DataType::Boolean, false),
        Field::new("maybe", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(Int32Array::from(small)),
        Arc::new(Float64Array::from(ratio)),
        Arc::new(Decimal128Array::from(amount).with_precision_and_scale(15, 2)?),
        Arc::new(Date32Array::from(day)),
        Arc::new(TimestampMicrosecondArray::from(at)),
        Arc::new(StringArray::from(name)),
        Arc::new(StringArray::from(text)),
        Arc::new(BooleanArray::from(flag)),
        Arc::new(Int64Array::from(maybe)),
    ];
    RecordBatch::try_new(schema, columns)
}

#[cfg(test)]
mod tests {
    /// The copy the core embeds is what this writer writes: regenerate it with
    /// `cargo run -p parquet-skim-datagen -- warm-up --out crate/core/warm-up.parquet`.
    #[test]
    fn the_embedded_warm_up_file_is_current() {
        let committed = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../core/warm-up.parquet"
        ))
        .expect("crate/core/warm-up.parquet");
        let written = super::bytes().expect("writing the warm-up file");
        assert!(
            committed == written,
            "crate/core/warm-up.parquet is stale; regenerate it (see this test's doc)"
        );
    }
}
