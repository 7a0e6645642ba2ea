/**
 * Arrow IPC bytes → apache-arrow objects. The only module that touches apache-arrow's reader.
 */
import { type RecordBatch, RecordBatchReader, type Schema, Type } from 'apache-arrow';

/**
 * Whether the apache-arrow this package was given reads string and binary views (`Utf8View`,
 * `BinaryView`: 21.2 and later). Where it does not, files whose Arrow schema has them (tpchgen-cli's,
 * pyarrow's `string_view`) are read as plain strings and binaries, with the same values — the
 * core's `OpenOptions.viewTypes`, set the same way on the page and in every worker.
 */
export const ARROW_READS_VIEWS: boolean =
  (Type as unknown as Record<string, number | undefined>).Utf8View !== undefined &&
  (Type as unknown as Record<string, number | undefined>).BinaryView !== undefined;

/** The record batches of one IPC stream. */
export function batchesFromIpc(bytes: Uint8Array): RecordBatch[] {
  return RecordBatchReader.from(bytes).readAll();
}

/** The schema of an IPC stream (batches, if any, are not read). */
export function schemaFromIpc(bytes: Uint8Array): Schema {
  const reader = RecordBatchReader.from(bytes);
  reader.open();
  return reader.schema;
}
