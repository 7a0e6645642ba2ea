//! A file's page index with one row group's offset indexes replaced: how a task decodes with
//! offsets the footer does not hold. `rebase` lowers a row group's page offsets below 4 GiB;
//! `page_layout` gives a file without an offset index the page locations learned from its page
//! headers. The file's own page index (if any) answers everything else, shared, not copied.

use std::any::Any;
use std::sync::Arc;

use parquet::file::metadata::page_index::PageIndexProvider;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::OffsetIndexMetaData;

/// `inner`, with the offset indexes of row group `row_group_idx` taken from `offsets` (by leaf).
#[derive(Debug)]
pub(crate) struct ReplacedOffsets {
    pub(crate) inner: Option<Arc<dyn PageIndexProvider>>,
    pub(crate) row_group_idx: usize,
    pub(crate) offsets: Vec<Option<OffsetIndexMetaData>>,
}

impl PageIndexProvider for ReplacedOffsets {
    fn has_offset_indexes(&self) -> bool {
        self.offsets.iter().any(Option::is_some)
            || self.inner.as_ref().is_some_and(|i| i.has_offset_indexes())
    }

    fn has_column_indexes(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.has_column_indexes())
    }

    fn column_index(
        &self,
        row_group_idx: usize,
        column_idx: usize,
    ) -> Option<&ColumnIndexMetaData> {
        self.inner.as_ref()?.column_index(row_group_idx, column_idx)
    }

    fn offset_index(
        &self,
        row_group_idx: usize,
        column_idx: usize,
    ) -> Option<&OffsetIndexMetaData> {
        if row_group_idx == self.row_group_idx {
            self.offsets.get(column_idx)?.as_ref()
        } else {
            self.inner.as_ref()?.offset_index(row_group_idx, column_idx)
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
