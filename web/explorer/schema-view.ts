/**
 * The schema panel: the file's Arrow schema as a tree of fields.
 *
 * Design note: each field is one list item — name, type as a reader names it (`values.ts`; for
 * a struct only `struct<…>`, since the children are listed below it; the full text is in the
 * tooltip), and a mark for non-nullable fields. Nested types (struct, list, map, union) list their children in an indented
 * sub-list, recursively, so the tree mirrors how the columns nest in the file.
 */
import type { Field, Schema } from 'apache-arrow';
import { el, truncate } from './dom.js';
import { typeLabel, typeName } from './values.js';

/** Longest type text shown before cutting. */
const MAX_TYPE_CHARS = 72;

/** Replaces the contents of `list` with the fields of `schema`. */
export function renderSchema(list: HTMLElement, schema: Schema): void {
  list.replaceChildren(...schema.fields.map(fieldItem));
}

function fieldItem(field: Field): HTMLLIElement {
  const row = el(
    'div',
    { className: 'field-row' },
    el('span', { className: 'field-name', text: field.name }),
    el('span', {
      className: 'field-type',
      text: truncate(typeLabel(field.type), MAX_TYPE_CHARS),
      title: typeName(field.type),
    }),
  );
  if (!field.nullable) row.append(el('span', { className: 'field-flag', text: 'not null' }));
  const item = el('li', {}, row);
  const children = (field.type.children ?? []) as Field[];
  if (children.length > 0) item.append(el('ul', {}, ...children.map(fieldItem)));
  return item;
}
