//! Decimals stored as `FIXED_LEN_BYTE_ARRAY` (pyarrow's and arrow-rs's choice for `decimal128`)
//! read back exactly, at every width from 1 to 16 bytes, plain and dictionary-encoded, with
//! negative values, extremes and nulls. The reader's patched arrow-rs converts and gathers these a
//! fixed width at a time (crate/patches/parquet: `be_i128s`, `gather`), so every width is
//! checked against the values written.

mod common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Decimal128Type;
use arrow_array::{Array, Decimal128Array};
use bytes::Bytes;
use common::*;
use parquet::basic::Type as PhysicalType;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::FixedLenByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet_skim_core::ScanRequest;

const ROWS: usize = 3_000;

/// The largest value of `precision` digits.
fn max_of(precision: u8) -> i128 {
    10i128.pow(u32::from(precision)) - 1
}

/// Values of `precision` digits: both extremes, zero, ±1, and a spread of both signs, with a
/// null every 17th row; few distinct values, so a dictionary holds them.
fn column(precision: u8) -> Decimal128Array {
    let max = max_of(precision);
    let pick = [
        0,
        1,
        -1,
        max,
        -max,
        max / 3,
        -max / 7,
        max / 2 + 1,
        -(max / 2) - 1,
    ];
    (0..ROWS)
        .map(|i| (i % 17 != 16).then(|| pick[i % pick.len()]))
        .collect::<Decimal128Array>()
        .with_precision_and_scale(precision, 2)
        .expect("valid precision")
}

/// The `width`-byte big-endian two's complement of `v` (which fits it).
fn be_bytes(v: i128, width: usize) -> FixedLenByteArray {
    FixedLenByteArray::from(v.to_be_bytes()[16 - width..].to_vec())
}

fn check(dictionary: bool) {
    // One column per width, 1..=16 bytes, each with the largest precision that width holds
    // (written with the low-level writer: arrow-rs's own writer stores small precisions as
    // INT32/INT64, pyarrow's as FIXED_LEN_BYTE_ARRAY of the fewest bytes).
    let precision_of = |width: usize| -> u8 {
        let bits = 8 * width as u32 - 1;
        ((bits as f64) * 2f64.log10()).floor() as u8
    };
    let message = (1..=16)
        .map(|w| {
            let p = precision_of(w);
            format!("optional fixed_len_byte_array({w}) d{w} (DECIMAL({p},2));")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let schema =
        Arc::new(parse_message_type(&format!("message m {{ {message} }}")).expect("schema"));
    let props = Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .build(),
    );
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, schema, props).expect("writer");
    let wanted: Vec<Decimal128Array> = (1..=16).map(|w| column(precision_of(w))).collect();
    // Two row groups: rows 0..1,000 and 1,000..3,000.
    for (start, rows) in [(0, 1_000), (1_000, 2_000)] {
        let mut row_group = writer.next_row_group().expect("row group");
        let mut w = 0;
        while let Some(mut column_writer) = row_group.next_column().expect("column") {
            let want = &wanted[w];
            w += 1;
            let (mut values, mut levels) = (Vec::new(), Vec::new());
            for i in start..start + rows {
                if want.is_null(i) {
                    levels.push(0);
                } else {
                    levels.push(1);
                    values.push(be_bytes(want.value(i), w));
                }
            }
            match column_writer.untyped() {
                ColumnWriter::FixedLenByteArrayColumnWriter(typed) => {
                    typed
                        .write_batch(&values, Some(&levels), None)
                        .expect("write");
                }
                _ => panic!("expected a FIXED_LEN_BYTE_ARRAY column"),
            }
            column_writer.close().expect("close column");
        }
        row_group.close().expect("close row group");
    }
    writer.close().expect("close");
    let file = Bytes::from(out);
    let (parquet, _) = open(&file, 64 * 1024);
    let rg = &parquet.metadata().row_groups()[0];
    for (i, chunk) in rg.columns().iter().enumerate() {
        assert_eq!(chunk.column_type(), PhysicalType::FIXED_LEN_BYTE_ARRAY);
        assert_eq!(chunk.column_descr().type_length(), i as i32 + 1);
        let encoded = chunk.dictionary_page_offset().is_some();
        assert_eq!(encoded, dictionary, "column {i}: dictionary {encoded}");
    }

    let out = scan(&parquet, &file, &ScanRequest::default());
    let out = arrow_select::concat::concat_batches(&out[0].schema(), &out).expect("concat");
    for (i, want) in wanted.iter().enumerate() {
        let got = out.column(i).as_primitive::<Decimal128Type>();
        assert_eq!(got.len(), ROWS);
        assert_eq!(
            got.iter().collect::<Vec<_>>(),
            want.iter().collect::<Vec<_>>(),
            "{} bytes, dictionary {dictionary}",
            i + 1
        );
    }
}

#[test]
fn plain_fixed_len_decimals_of_every_width_read_back_exactly() {
    check(false);
}

#[test]
fn dictionary_fixed_len_decimals_of_every_width_read_back_exactly() {
    check(true);
}
