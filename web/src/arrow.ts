/**
 * apache-arrow, loaded beside the core, and Arrow IPC bytes → apache-arrow objects: the only
 * module that loads apache-arrow (every other one imports its types only).
 *
 * **Loaded, not imported.** A static import made apache-arrow part of the package's module graph:
 * on a page that does not import it itself, the entry module — and with it the `.wasm` request,
 * made when the entry is evaluated — waited for apache-arrow to be fetched, parsed and evaluated
 * (measured, 2026-12-07: the `.wasm` requested at 148–237 ms in Chromium and 77–112 in WebKit,
 * against 110–115 and 33–37 with apache-arrow out of the way). Now a page starts loading it as
 * the package is evaluated, just after the `.wasm` (`reader.ts`); `Reader.open` awaits it with the
 * core, so every API that hands out Arrow objects (a file's schema, a scan's batches, a dataset)
 * runs after it has loaded, and reaches it through {@link arrow}. The formatting helpers
 * (`format.ts`) need only the types' ids, and work on Arrow objects from any apache-arrow, loaded
 * here or not.
 *
 * In a page, a first open also has it read a tiny stream while the core compiles
 * ({@link warmArrowReaderOnce}), so that the first query's IPC → Arrow step does not run
 * apache-arrow's reader for the first time.
 */
import type * as ApacheArrow from 'apache-arrow';
import type { RecordBatch, Schema } from 'apache-arrow';
import { ParquetSkimError } from './errors.js';

/** apache-arrow's module, as this package was given it. */
export type ArrowModule = typeof ApacheArrow;

let loaded: ArrowModule | undefined;
let loading: Promise<ArrowModule> | undefined;

/**
 * apache-arrow, loading it on the first call (once; a failed load is tried again by the next
 * call). Rejects with `UNSUPPORTED` when it cannot be loaded: it is this package's peer
 * dependency.
 */
export function loadArrow(): Promise<ArrowModule> {
  loading ??= import('apache-arrow').then(
    (module) => {
      loaded = module;
      return module;
    },
    (error: unknown) => {
      loading = undefined;
      throw new ParquetSkimError(
        'UNSUPPORTED',
        `apache-arrow could not be loaded (${error instanceof Error ? error.message : String(error)}): parquet-skim returns its tables and needs it beside itself — install it (npm install apache-arrow), or map "apache-arrow" in the page's import map`,
        { cause: error },
      );
    },
  );
  return loading;
}

/** apache-arrow, once {@link loadArrow} has resolved (what `Reader.open` awaits). */
export function arrow(): ArrowModule {
  if (loaded === undefined) {
    throw new ParquetSkimError('INTERNAL', 'internal error: apache-arrow was used before it loaded');
  }
  return loaded;
}

/**
 * Whether the apache-arrow this package was given reads string and binary views (`Utf8View`,
 * `BinaryView`: 21.2 and later). Where it does not, files whose Arrow schema has them (tpchgen-cli's,
 * pyarrow's `string_view`) are read as plain strings and binaries, with the same values — the
 * core's `OpenOptions.viewTypes`, set the same way on the page and in every worker.
 */
export function arrowReadsViews(): boolean {
  const types = arrow().Type as unknown as Record<string, number | undefined>;
  return types.Utf8View !== undefined && types.BinaryView !== undefined;
}

/** The record batches of one IPC stream. */
export function batchesFromIpc(bytes: Uint8Array): RecordBatch[] {
  return arrow().RecordBatchReader.from(bytes).readAll();
}

/** The schema of an IPC stream (batches, if any, are not read). */
export function schemaFromIpc(bytes: Uint8Array): Schema {
  const reader = arrow().RecordBatchReader.from(bytes);
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
    return arrow()
      .RecordBatchReader.from(bytes)
      .readAll()
      .reduce((rows, batch) => rows + batch.numRows, 0);
  } catch {
    // Only a warm-up: the real reads say what is wrong, if anything is.
    return 0;
  }
}

let warmed = false;

/**
 * {@link warmArrowReader}, once per page (not in Node, nor in a worker, which reads no IPC), if
 * apache-arrow has loaded by then:
 * called by `Reader.open` when the file's tail is in while the core is still compiling — in
 * WebKit the usual case (the tail 40–120 ms before the compile ends), in Chromium a rare one. At
 * the page's start instead (a task after its modules ran) it ran while Chromium still awaited the
 * tail and delayed it (2 of 4 cold pages' tails took 116–132 ms instead of 58–72).
 */
export function warmArrowReaderOnce(): void {
  if (warmed || typeof document === 'undefined' || loaded === undefined) return;
  warmed = true;
  warmArrowReader();
}
