/**
 * How the explorer names types. Values are printed with the package's own `formatValue`.
 */
import { type DataType, DateUnit, type Field, TimeUnit, Type } from 'apache-arrow';

const UNITS: Record<number, string> = {
  [TimeUnit.SECOND]: 's',
  [TimeUnit.MILLISECOND]: 'ms',
  [TimeUnit.MICROSECOND]: 'µs',
  [TimeUnit.NANOSECOND]: 'ns',
};

/** A type id that newer apache-arrow versions have (string and binary views, large lists). */
const newerType = (name: string): number | undefined => (Type as unknown as Record<string, number | undefined>)[name];

/**
 * `type` as a reader names it: `int64`, `decimal(15, 2)`, `date`, `timestamp[µs, UTC]`, `string`,
 * `list<string>`, `struct<a: int32, b: string>`, `map<string, int64>` — not apache-arrow's
 * `toString()` (`Decimal[15e+2]`, `Timestamp<MICROSECOND, UTC>`).
 */
export function typeName(type: DataType): string {
  const t = type as DataType & Record<string, unknown>;
  const children = (type.children ?? []) as Field[];
  const child = (i: number) => (children[i] === undefined ? '?' : typeName(children[i].type));
  const unit = () => UNITS[t.unit as number] ?? String(t.unit);
  switch (type.typeId) {
    case Type.Null:
      return 'null';
    case Type.Bool:
      return 'bool';
    case Type.Int:
      return `${t.isSigned ? 'int' : 'uint'}${t.bitWidth}`;
    case Type.Float:
      return ['float16', 'float32', 'float64'][t.precision as number] ?? 'float';
    case Type.Decimal:
      return `decimal(${t.precision}, ${t.scale})`;
    case Type.Utf8:
      return 'string';
    case Type.LargeUtf8:
      return 'large string';
    case Type.Binary:
      return 'binary';
    case Type.LargeBinary:
      return 'large binary';
    case Type.FixedSizeBinary:
      return `binary[${t.byteWidth}]`;
    case Type.Date:
      return t.unit === DateUnit.DAY ? 'date' : 'date (ms)';
    case Type.Time:
      return `time[${unit()}]`;
    case Type.Timestamp:
      return `timestamp[${unit()}${typeof t.timezone === 'string' && t.timezone !== '' ? `, ${t.timezone}` : ''}]`;
    case Type.Duration:
      return `duration[${unit()}]`;
    case Type.List:
      return `list<${child(0)}>`;
    case Type.FixedSizeList:
      return `list<${child(0)}>[${t.listSize}]`;
    case Type.Struct:
      return `struct<${children.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')}>`;
    case Type.Map: {
      const entries = (children[0]?.type.children ?? []) as Field[];
      const [key, value] = entries.map((f) => typeName(f.type));
      return `map<${key ?? '?'}, ${value ?? '?'}>`;
    }
    case Type.Dictionary:
      return `dictionary<${typeName(t.indices as DataType)}, ${typeName(t.dictionary as DataType)}>`;
    case Type.Union:
      return `union<${children.map((f) => typeName(f.type)).join(', ')}>`;
  }
  if (type.typeId === newerType('Utf8View')) return 'string view';
  if (type.typeId === newerType('BinaryView')) return 'binary view';
  if (type.typeId === newerType('LargeList')) return `large list<${child(0)}>`;
  return type.toString();
}

/**
 * A short name for `type`: {@link typeName}, with a struct's, map's or union's fields left out
 * (`struct<…>`: they are listed under it).
 */
export function typeLabel(type: DataType): string {
  const name = typeName(type);
  if (type.typeId !== Type.Struct && type.typeId !== Type.Union) return name;
  const head = name.indexOf('<');
  return head > 0 ? `${name.slice(0, head)}<…>` : name;
}
