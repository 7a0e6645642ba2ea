/**
 * How the explorer names types. Values are printed with the package's own `formatValue`.
 */
import type { DataType } from 'apache-arrow';

/**
 * A short name for `type`: `type.toString()` for leaf types; for nested types, whose `toString()`
 * spells out the whole subtree, only the head (`Struct`, `List`, `Map`, `FixedSizeList[3]`).
 */
export function typeLabel(type: DataType): string {
  const text = type.toString();
  if ((type.children ?? []).length === 0) return text;
  const head = text.indexOf('<');
  return head > 0 ? text.slice(0, head) : text;
}
