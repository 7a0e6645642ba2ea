//! Column names → [`Projection`]: which leaf columns to read and in which order to return them.
//!
//! Names are dotted paths (`a`, `a.b`, `a.list.element`), matched against the Parquet schema the
//! way arrow-rs's `ProjectionMask::columns` does: a name selects every leaf below it. Unlike
//! `ProjectionMask::columns`, an unknown name is an error with the nearest names suggested,
//! never a silently smaller result.
//!
//! arrow-rs returns projected columns in file order. Users expect the order they asked for, so a
//! [`Projection`] also carries the permutation of top-level fields applied to every batch.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{FieldRef, Schema, SchemaRef};
use parquet::arrow::{parquet_to_arrow_schema_by_columns, ProjectionMask};
use parquet::basic::ConvertedType;
use parquet::schema::types::{SchemaDescriptor, Type};

use crate::error::{Result, SkimError};
use crate::metadata::ParquetFile;

/// The columns a scan reads and the shape of what it returns.
#[derive(Debug, Clone)]
pub struct Projection {
    mask: ProjectionMask,
    /// Output position → position among the projected top-level fields (file order). `None`
    /// when the requested order is file order.
    order: Option<Vec<usize>>,
    /// The schema of every returned batch.
    output_schema: SchemaRef,
}

impl Projection {
    /// Resolves `columns` (all columns when `None`) against `file`'s schema.
    pub fn try_new(file: &ParquetFile, columns: Option<&[String]>) -> Result<Self> {
        let schema = file.metadata().file_metadata().schema_descr();
        let Some(columns) = columns else {
            return Ok(Self {
                mask: ProjectionMask::all(),
                order: None,
                output_schema: Arc::clone(file.arrow_schema()),
            });
        };
        if columns.is_empty() {
            // Rows without columns: what `count(*)` reads (the planner refuses an empty list
            // from a caller). arrow-rs decodes nothing and yields batches of row counts.
            return Ok(Self {
                mask: ProjectionMask::none(schema.num_columns()),
                order: None,
                output_schema: Arc::new(Schema::new_with_metadata(
                    Vec::<FieldRef>::new(),
                    file.arrow_schema().metadata().clone(),
                )),
            });
        }
        let mut requested_roots: Vec<usize> = Vec::new();
        for name in columns {
            let leaves = leaves_matching(schema, name);
            if leaves.is_empty() {
                return Err(SkimError::UnknownColumn {
                    name: name.clone(),
                    suggestions: suggest(schema, name),
                });
            }
            for leaf in leaves {
                let root = schema.get_column_root_idx(leaf);
                if !requested_roots.contains(&root) {
                    requested_roots.push(root);
                }
            }
        }
        let mask = ProjectionMask::columns(schema, columns.iter().map(String::as_str));
        let file_order: Vec<usize> = requested_roots
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let order: Vec<usize> = requested_roots
            .iter()
            .map(|root| file_order.iter().position(|r| r == root).unwrap_or(0))
            .collect();
        let projected = match whole_roots_of(file, &file_order, &mask) {
            Some(fields) => {
                Schema::new_with_metadata(fields, file.arrow_schema().metadata().clone())
            }
            None => {
                refuse_maps_read_in_part(schema, &mask)?;
                converted(file, &mask)?
            }
        };
        let in_file_order = order.iter().enumerate().all(|(i, &p)| i == p);
        let output_schema = if in_file_order {
            Arc::new(projected)
        } else {
            let fields: Vec<_> = order
                .iter()
                .map(|&p| Arc::clone(&projected.fields()[p]))
                .collect();
            Arc::new(Schema::new_with_metadata(
                fields,
                projected.metadata().clone(),
            ))
        };
        Ok(Self {
            mask,
            order: (!in_file_order).then_some(order),
            output_schema,
        })
    }

    /// The leaf columns to read.
    pub fn mask(&self) -> &ProjectionMask {
        &self.mask
    }

    /// The schema of every batch [`Projection::apply`] returns.
    pub fn output_schema(&self) -> &SchemaRef {
        &self.output_schema
    }

    /// Puts a decoded batch's top-level columns in the requested order.
    pub fn apply(&self, batch: RecordBatch) -> Result<RecordBatch> {
        match &self.order {
            None => Ok(batch),
            Some(order) => batch
                .project(order)
                .map_err(|e| SkimError::from_arrow("reordering projected columns", e)),
        }
    }
}

/// The file's own Arrow fields of `roots` (top-level fields, in file order), when each is read
/// whole — every leaf below it selected (`mask`) — and so converts to the field the file's own
/// schema has: a projection then needs no conversion of its own. `None` when a root is read in
/// part (a struct's selected children only) or the file's schema does not have a field per root.
///
/// A conversion costs more than its result suggests: arrow-rs decodes the `ARROW:schema`
/// hint of the footer (base64, then flatbuffers) on every conversion. Every scan converted its
/// projection — on the page to plan, and in each worker to decode — and the conversion's
/// function (18 KB of WebAssembly with the hint's decoding inlined) ran often enough on a fresh
/// page for V8 to optimize it on a background thread while the first query ran: 35–53 ms of
/// compiling on a 2-core machine, the most of any function in a first scan (Chromium, TPC-H SF1
/// from memory, `bench/results/2026-11-29-tier-up.md`).
fn whole_roots_of(
    file: &ParquetFile,
    roots: &[usize],
    mask: &ProjectionMask,
) -> Option<Vec<FieldRef>> {
    let schema = file.metadata().file_metadata().schema_descr();
    let fields = file.arrow_schema().fields();
    let mut wanted = vec![false; schema.root_schema().get_fields().len()];
    if fields.len() != wanted.len() {
        return None;
    }
    for &root in roots {
        *wanted.get_mut(root)? = true;
    }
    let whole = (0..schema.num_columns())
        .filter(|&leaf| wanted.get(schema.get_column_root_idx(leaf)) == Some(&true))
        .all(|leaf| mask.leaf_included(leaf));
    whole.then(|| {
        roots
            .iter()
            .map(|&root| Arc::clone(&fields[root]))
            .collect()
    })
}

/// Refuses a projection that reads a map's keys without its values, or its values without its
/// keys. arrow-rs converts such a map to no field at all (an Arrow map holds both), so the scan
/// would return nothing for a column that was asked for; the projection promises never a
/// silently smaller result. A map is what arrow-rs reads as one: a group annotated `MAP` (or
/// `MAP_KEY_VALUE`) over one repeated group of two fields, where arrow-rs goes by the
/// annotation — not a `LIST`'s repeated group, which it reads as the list's element or struct. Part of a key or of a value (a field of
/// a struct value) is fine, as long as both sides keep at least one leaf.
fn refuse_maps_read_in_part(schema: &SchemaDescriptor, mask: &ProjectionMask) -> Result<()> {
    let mut next_leaf = 0;
    let mut path = Vec::new();
    for field in schema.root_schema().get_fields() {
        selected_leaves(field, mask, &mut next_leaf, &mut path, true)?;
    }
    Ok(())
}

/// How many leaves below `ty` `mask` selects, numbering leaves from `next_leaf` in schema
/// order (the order of [`SchemaDescriptor::columns`]); errs on a map read in part below `ty`.
///
/// `dispatched`: whether arrow-rs reads `ty` by its annotation, as it does every field but the
/// repeated group of a `LIST` (read as the list's element, or its struct) and a map's entries.
fn selected_leaves<'a>(
    ty: &'a Type,
    mask: &ProjectionMask,
    next_leaf: &mut usize,
    path: &mut Vec<&'a str>,
    dispatched: bool,
) -> Result<usize> {
    if ty.is_primitive() {
        *next_leaf += 1;
        return Ok(usize::from(mask.leaf_included(*next_leaf - 1)));
    }
    path.push(ty.name());
    let annotation = ty.get_basic_info().converted_type();
    let is_map = dispatched
        && matches!(
            annotation,
            ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE
        );
    let is_list = dispatched && annotation == ConvertedType::LIST;
    let selected = match ty.get_fields() {
        [entries] if is_map && !entries.is_primitive() && entries.get_fields().len() == 2 => {
            path.push(entries.name());
            let key = selected_leaves(&entries.get_fields()[0], mask, next_leaf, path, true)?;
            let value = selected_leaves(&entries.get_fields()[1], mask, next_leaf, path, true)?;
            path.pop();
            if (key == 0) != (value == 0) {
                let map = path.join(".");
                let (read, left) = if key == 0 {
                    ("values", "keys")
                } else {
                    ("keys", "values")
                };
                return Err(SkimError::invalid_argument(
                    "columns",
                    format!(
                        "the columns asked for read the {read} of the map `{map}` without its \
                         {left}, and a map's keys and values are read together (an Arrow map \
                         holds both); name `{map}` to read the map whole"
                    ),
                ));
            }
            key + value
        }
        children => {
            let mut selected = 0;
            for child in children {
                selected += selected_leaves(child, mask, next_leaf, path, !is_list)?;
            }
            selected
        }
    };
    path.pop();
    Ok(selected)
}

/// The Arrow schema of `mask`'s columns, converted from the Parquet schema (and the footer's
/// `ARROW:schema` hint), with the file's own type adjustments.
fn converted(file: &ParquetFile, mask: &ProjectionMask) -> Result<Schema> {
    let schema = parquet_to_arrow_schema_by_columns(
        file.metadata().file_metadata().schema_descr(),
        mask.clone(),
        file.metadata().file_metadata().key_value_metadata(),
    )
    .map_err(|e| SkimError::from_parquet("converting the projected schema to Arrow", e))?;
    Ok(file.adjust_schema(&schema))
}

/// Leaf indexes whose path starts with the dotted `name`.
fn leaves_matching(schema: &SchemaDescriptor, name: &str) -> Vec<usize> {
    let wanted: Vec<&str> = name.split('.').collect();
    schema
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let parts = c.path().parts();
            wanted.len() <= parts.len() && wanted.iter().zip(parts).all(|(a, b)| *a == b.as_str())
        })
        .map(|(i, _)| i)
        .collect()
}

/// Up to three selectable names closest to `name` by edit distance.
pub(crate) fn suggest(schema: &SchemaDescriptor, name: &str) -> Vec<String> {
    let mut candidates = BTreeSet::new();
    for column in schema.columns() {
        let parts = column.path().parts();
        for len in 1..=parts.len() {
            candidates.insert(parts[..len].join("."));
        }
    }
    let needle = name.to_lowercase();
    let max_distance = (needle.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, String)> = candidates
        .into_iter()
        // Never the name given (a column the file has, refused for another reason).
        .filter(|c| c != name)
        .map(|c| (edit_distance(&needle, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= max_distance)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refused exactly when arrow-rs's conversion drops a root the projection reads: every set
    /// of leaves of maps under lists and structs, a legacy `MAP_KEY_VALUE` list element (read
    /// as a struct, not a map), and a map whose entries hold one field (read as a list).
    #[test]
    fn refuses_a_projection_exactly_when_the_conversion_drops_a_root() {
        use parquet::arrow::parquet_to_arrow_schema_by_columns;
        use parquet::schema::parser::parse_message_type;
        let schemas = [
            "message m { optional group l (LIST) { repeated group list { \
               optional group element (MAP) { repeated group key_value { \
                 required binary key (UTF8); optional int32 value; } } } } \
               optional group s { optional group g (MAP) { repeated group key_value { \
                 required int32 key; optional group value { optional int32 a; optional int32 b; } } } } }",
            "message m { optional group l (LIST) { repeated group m (MAP_KEY_VALUE) { \
               required group entry { required binary key (UTF8); optional int32 value; } } } }",
            "message m { optional group k (MAP) { repeated group key_value { \
               required binary key (UTF8); } } required int32 id; }",
        ];
        let mut refused = 0;
        for text in schemas {
            let descr = SchemaDescriptor::new(Arc::new(parse_message_type(text).expect("schema")));
            let leaves = descr.num_columns();
            for set in 1u32..(1 << leaves) {
                let picked: Vec<usize> = (0..leaves).filter(|l| set & (1 << l) != 0).collect();
                let mask = ProjectionMask::leaves(&descr, picked.iter().copied());
                let roots: BTreeSet<usize> = picked
                    .iter()
                    .map(|&l| descr.get_column_root_idx(l))
                    .collect();
                let converted = parquet_to_arrow_schema_by_columns(&descr, mask.clone(), None)
                    .expect("convert");
                let dropped = converted.fields().len() < roots.len();
                let check = refuse_maps_read_in_part(&descr, &mask);
                assert_eq!(
                    check.is_err(),
                    dropped,
                    "{text}: leaves {picked:?}: {check:?}"
                );
                refused += usize::from(dropped);
            }
        }
        assert!(refused > 0);
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("l_quantty", "l_quantity"), 1);
    }
}
