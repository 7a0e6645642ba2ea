/**
 * Arrow IPC bytes → apache-arrow objects. The only module that touches apache-arrow's reader.
 *
 * In a page, a first open also has it read a tiny stream while the core compiles
 * ({@link warmArrowReaderOnce}), so that the first query's IPC → Arrow step does not run
 * apache-arrow's reader for the first time.
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

/**
 * An IPC stream of two rows (int32, int64, float64 and utf8 columns), as apache-arrow's
 * `tableToIPC` writes it: what {@link warmArrowReader} reads.
 */
const WARM_UP_STREAM =
  '/////yABAAAQAAAAAAAKABAADgAHAAgACgAAAAAAAAEQAAAAAAAEAAgACAAAAAQACAAAAAQAAAAEAAAAsAAAAGwAAAA0AAAABAAA' +
  'AHD///8UAAAAAAAAARQAAAAAAAAFFAAAAAEAAABzAAAAAAAAAAQABAAEAAAAnP///xQAAAAAAAABFAAAAAAAAAMYAAAAAQAAAGYA' +
  'AAAAAAAAAAAGAAgABgAGAAAAAAACAND///8UAAAAAAAAARQAAAAAAAACEAAAAAEAAABsAAAAAAAAAMD///8AAAABQAAAABAAGAAE' +
  'AAsAEwAUAAAADAAQAAAAFAAAAAAAAAEUAAAAAAAAAhgAAAABAAAAaQAAAAAAAAAIAAwACAAHAAgAAAAAAAABIAAAAAAAAAD/////' +
  'KAEAABQAAAAAAAAADAAWABQADwAQAAQADAAAAEAAAAAAAAAAAAAAAxAAAAAEAAoAGAAMAAgABAAKAAAAFAAAAKgAAAACAAAAAAAA' +
  'AAAAAAAJAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAIAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAQAAAAAAAAABgA' +
  'AAAAAAAAAAAAAAAAAAAYAAAAAAAAABAAAAAAAAAAKAAAAAAAAAAAAAAAAAAAACgAAAAAAAAAEAAAAAAAAAA4AAAAAAAAAAgAAAAA' +
  'AAAAAAAAAAQAAAACAAAAAAAAAAAAAAAAAAAAAgAAAAAAAAAAAAAAAAAAAAIAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAAAAAAAAA' +
  'AQAAAAIAAAABAAAAAAAAAAIAAAAAAAAAAAAAAAAA4D8AAAAAAAAAQAAAAAABAAAAAwAAAAAAAABhYmMAAAAAAP////8AAAAA';

/**
 * Reads a tiny IPC stream once. apache-arrow's reader runs its code for the first time otherwise
 * in a page's first query: in JavaScriptCore (WebKitGTK 2.50's `jsc` shell) the first read of a
 * first 100 rows' IPC took 15–21 ms, 1.7–3 ms after this read of another stream — the code is
 * shared, not the types. Returns the rows read (2; 0 if the stream could not be read).
 */
export function warmArrowReader(): number {
  try {
    const bytes = Uint8Array.from(atob(WARM_UP_STREAM), (c) => c.charCodeAt(0));
    return RecordBatchReader.from(bytes)
      .readAll()
      .reduce((rows, batch) => rows + batch.numRows, 0);
  } catch {
    // Only a warm-up: the real reads say what is wrong, if anything is.
    return 0;
  }
}

let warmed = false;

/**
 * {@link warmArrowReader}, once per page (not in Node, nor in a worker, which reads no IPC):
 * called by `Reader.open` when the file's tail is in while the core is still compiling — in
 * WebKit the usual case (the tail 40–120 ms before the compile ends), in Chromium a rare one. At
 * the page's start instead (a task after its modules ran) it ran while Chromium still awaited the
 * tail and delayed it (2 of 4 cold pages' tails took 116–132 ms instead of 58–72).
 */
export function warmArrowReaderOnce(): void {
  if (warmed || typeof document === 'undefined') return;
  warmed = true;
  warmArrowReader();
}
