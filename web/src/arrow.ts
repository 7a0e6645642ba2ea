/**
 * Arrow IPC bytes → apache-arrow objects. The only module that touches apache-arrow's reader.
 */
import { type RecordBatch, RecordBatchReader, type Schema } from 'apache-arrow';

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
