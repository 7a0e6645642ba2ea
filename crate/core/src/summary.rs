//! [`ParquetFile`] → [`FileSummary`]: the metadata a page shows, as plain serializable data.
//!
//! This is for people and tools looking at a file (the explorer, `file.metadata` in JS), not for
//! pruning: pruning reads typed statistics through arrow-rs directly. Statistics values are
//! therefore rendered as display strings (byte arrays as UTF-8 when valid, else `0x…` hex), and
//! 64-bit quantities that can exceed 2^53 are strings too, so JS never rounds them silently.

use parquet::file::metadata::{ColumnChunkMetaData, RowGroupMetaData};
use parquet::file::statistics::Statistics;
use serde::Serialize;

use crate::metadata::ParquetFile;

/// What a page can show about a file without reading any data.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSummary {
    pub file_len: u64,
    pub num_rows: i64,
    pub version: i32,
    pub created_by: Option<String>,
    pub key_value_metadata: Vec<KeyValue>,
    /// Leaf columns in file order (the Parquet schema, flattened).
    pub columns: Vec<LeafColumn>,
    pub row_groups: Vec<RowGroupSummary>,
    /// True when the column index and offset index were found and loaded.
    pub has_page_index: bool,
    /// Bytes of the thrift footer plus the page index, as read at open.
    pub footer_bytes: u64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct KeyValue {
    pub key: String,
    pub value: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafColumn {
    /// Dotted path from the root, e.g. `a.list.element`.
    pub path: String,
    pub physical_type: String,
    pub logical_type: Option<String>,
    pub max_definition_level: i16,
    pub max_repetition_level: i16,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowGroupSummary {
    pub num_rows: i64,
    pub total_byte_size: i64,
    pub compressed_size: i64,
    pub columns: Vec<ColumnChunkSummary>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnChunkSummary {
    pub path: String,
    pub codec: String,
    pub encodings: Vec<String>,
    pub num_values: i64,
    pub compressed_size: i64,
    pub uncompressed_size: i64,
    /// Byte range `[start, end)` of the chunk's pages in the file.
    pub start: u64,
    pub end: u64,
    pub statistics: Option<StatisticsSummary>,
    pub has_column_index: bool,
    pub has_offset_index: bool,
    pub has_bloom_filter: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatisticsSummary {
    pub min: Option<String>,
    pub max: Option<String>,
    pub null_count: Option<u64>,
    pub distinct_count: Option<u64>,
    pub min_is_exact: bool,
    pub max_is_exact: bool,
}

impl FileSummary {
    /// Summarizes `file`. Pure; cost is linear in row groups × columns.
    pub fn of(file: &ParquetFile) -> Self {
        let metadata = file.metadata();
        let file_metadata = metadata.file_metadata();
        let columns = file_metadata
            .schema_descr()
            .columns()
            .iter()
            .map(|c| LeafColumn {
                path: c.path().string(),
                physical_type: c.physical_type().to_string(),
                logical_type: c.logical_type_ref().map(|t| format!("{t:?}")),
                max_definition_level: c.max_def_level(),
                max_repetition_level: c.max_rep_level(),
            })
            .collect();
        let key_value_metadata = file_metadata
            .key_value_metadata()
            .map(|kvs| {
                kvs.iter()
                    .map(|kv| KeyValue {
                        key: kv.key.clone(),
                        value: kv.value.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            file_len: file.file_len(),
            num_rows: file_metadata.num_rows(),
            version: file_metadata.version(),
            created_by: file_metadata.created_by().map(str::to_owned),
            key_value_metadata,
            columns,
            row_groups: metadata
                .row_groups()
                .iter()
                .map(row_group_summary)
                .collect(),
            has_page_index: metadata.page_index().is_some(),
            footer_bytes: file.footer().iter().map(|(r, _)| r.end - r.start).sum(),
        }
    }
}

fn row_group_summary(rg: &RowGroupMetaData) -> RowGroupSummary {
    RowGroupSummary {
        num_rows: rg.num_rows(),
        total_byte_size: rg.total_byte_size(),
        compressed_size: rg.compressed_size(),
        columns: rg.columns().iter().map(column_chunk_summary).collect(),
    }
}

fn column_chunk_summary(c: &ColumnChunkMetaData) -> ColumnChunkSummary {
    let (start, len) = c.byte_range();
    ColumnChunkSummary {
        path: c.column_path().string(),
        codec: c.compression().to_string(),
        encodings: c.encodings().map(|e| e.to_string()).collect(),
        num_values: c.num_values(),
        compressed_size: c.compressed_size(),
        uncompressed_size: c.uncompressed_size(),
        start,
        end: start.saturating_add(len),
        statistics: c.statistics().map(statistics_summary),
        has_column_index: c.column_index_range().is_some(),
        has_offset_index: c.offset_index_range().is_some(),
        has_bloom_filter: c.bloom_filter_offset().is_some(),
    }
}

fn statistics_summary(s: &Statistics) -> StatisticsSummary {
    let (min, max) = match s {
        Statistics::Boolean(v) => render(v.min_opt(), v.max_opt(), ToString::to_string),
        Statistics::Int32(v) => render(v.min_opt(), v.max_opt(), ToString::to_string),
        Statistics::Int64(v) => render(v.min_opt(), v.max_opt(), ToString::to_string),
        Statistics::Int96(v) => render(v.min_opt(), v.max_opt(), |x| format!("{:?}", x.data())),
        Statistics::Float(v) => render(v.min_opt(), v.max_opt(), ToString::to_string),
        Statistics::Double(v) => render(v.min_opt(), v.max_opt(), ToString::to_string),
        Statistics::ByteArray(v) => render(v.min_opt(), v.max_opt(), |x| bytes_text(x.data())),
        Statistics::FixedLenByteArray(v) => {
            render(v.min_opt(), v.max_opt(), |x| bytes_text(x.data()))
        }
    };
    StatisticsSummary {
        min,
        max,
        null_count: s.null_count_opt(),
        distinct_count: s.distinct_count_opt(),
        min_is_exact: s.min_is_exact(),
        max_is_exact: s.max_is_exact(),
    }
}

fn render<T>(
    min: Option<&T>,
    max: Option<&T>,
    show: impl Fn(&T) -> String,
) -> (Option<String>, Option<String>) {
    (min.map(&show), max.map(&show))
}

/// UTF-8 text when valid, else `0x` + lowercase hex.
fn bytes_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_render_as_text_or_hex() {
        assert_eq!(bytes_text(b"abc"), "abc");
        assert_eq!(bytes_text(&[0xff, 0x00]), "0xff00");
    }
}
