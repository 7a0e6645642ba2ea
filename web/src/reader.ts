/**
 * The reader: owns the WebAssembly core, the worker pool and the I/O queue, and opens files.
 *
 * One reader serves many files and scans; create it once ({@link createReader}) and `dispose()`
 * it when done. {@link openParquet} uses a default reader created on first use.
 *
 * In browsers tasks run on a pool of Web Workers (default: `navigator.hardwareConcurrency`);
 * where `Worker` does not exist (Node) or with `workers: 0`, they run inline on the calling
 * thread through the same task host.
 */

import { arrowReadsViews, loadArrow, warmArrowReaderOnce } from './arrow.js';
import type { Dataset, DatasetContext, DatasetOptions } from './dataset/dataset.js';
import { DEFAULT_FOOTER_MEMORY_BYTES, openDataset } from './dataset/open.js';
import type { DatasetSources } from './dataset/sources.js';
import { invalidArgument, ParquetSkimError, toSkimError } from './errors.js';
import { type CheckedOptions, ParquetFile } from './file.js';
import type { FilterAst } from './filter.js';
import type { HttpOptions } from './io/http.js';
import { IoQueue } from './io/io-queue.js';
import { BlobSource, BytesSource, HttpSource, type Source } from './io/source.js';
import { recheck, rechecks } from './recheck.js';
import type { Executor } from './scheduler/executor.js';
import { DEFAULT_INLINE_SCAN_BYTES, DEFAULT_INLINE_TASK_BYTES, HybridExecutor } from './scheduler/hybrid.js';
import { InlineExecutor } from './scheduler/inline.js';
import { WorkerPool } from './scheduler/pool.js';
import {
  type ByteRange,
  type OpenOptions as CoreOpenOptions,
  DEFAULT_PAGE_WALK_MIN_BYTES,
  type DecodeLimits,
} from './wasm/contract.js';
import type { MetadataLoader, ParquetFileHandle } from './wasm/parquet_skim_wasm.js';
import { defaultWasmBuild, type WasmBuild } from './wasm-build.js';
import {
  checkWasmSimd,
  compileWasm,
  EVALUATED_AT,
  instantiateWasm,
  limitWasmMemory,
  type Wasm,
} from './wasm-loader.js';

// In a page, apache-arrow starts loading as the package is evaluated: after the `.wasm` (requested
// when `wasm-loader.ts` was), before the app's first `open()`, which awaits both (arrow.ts). A
// failure is reported to that open, not as an unhandled rejection.
if (typeof document !== 'undefined') loadArrow().catch(() => undefined);

declare global {
  // The one WebAssembly type the public API names (`wasmUrl`). lib.dom and lib.webworker declare it
  // too, and this empty interface merges with theirs; a Node project without those libs gets it
  // from here instead of failing to compile the package's types.
  namespace WebAssembly {
    // biome-ignore lint/suspicious/noEmptyInterface: merged with lib.dom's WebAssembly.Module where present
    interface Module {}
  }
}

/** Options of {@link createReader}. */
export interface ReaderOptions {
  /**
   * Decoding workers (default `navigator.hardwareConcurrency`; `0` decodes on the calling thread).
   * They start with the first task too big for the page (`inlineTaskBytes`), or once the page has
   * answered a first small query: starting them competes with that query for the machine's cores.
   */
  workers?: number;
  /**
   * While no worker is ready, tasks of at most this many planned bytes are decoded on the page's
   * own thread (default 4 MiB: a first page of rows, a lookup). 0 sends every task to a worker.
   */
  inlineTaskBytes?: number;
  /**
   * Once workers are ready, a query whose whole scan plans at most this many bytes (default 2 MiB:
   * a first page of rows, a lookup) is still decoded on the page when the page is idle: a few
   * milliseconds of decoding cost less than the hop to a worker and back. 0 turns this off.
   */
  inlineScanBytes?: number;
  /**
   * Most HTTP requests in flight across all scans (default 64). A browser runs 6 at once per host
   * over HTTP/1.1 and queues the rest itself, starting each as a connection frees; reads of tasks
   * not yet running (prefetches) hold at most 5 of the 6, and one fewer than this bound.
   */
  ioConcurrency?: number;
  /**
   * Ranges closer than this many bytes are fetched as one request (default 64 KiB). Left out,
   * a link measured fast (bytes per millisecond of response bodies in transit, per origin) also
   * reads through larger gaps between runs of wanted bytes at least as large as the gap: up to
   * what it moves in 2 ms, at most 1 MiB. Given, it is the one rule.
   */
  coalesceGapBytes?: number;
  /** Largest coalesced request (default 16 MiB). */
  maxRequestBytes?: number;
  /**
   * Most planned bytes a scan fetches ahead of its consumer (default 256 MiB). Over HTTP, the
   * reads of tasks not yet running start up to 64 MiB ahead of them, within this.
   */
  readAheadBytes?: number;
  /**
   * Most decoded bytes (Arrow IPC) a scan holds ahead of its consumer: results not yet taken,
   * and what the tasks in flight are expected to decode (default 256 MiB). A consumer slower
   * than the scan then holds at most about this much, however wide the rows.
   */
  readAheadDecodedBytes?: number;
  /**
   * With a filter, a task's output pages are fetched together with its filter pages when waiting
   * for the filter could save at most this many bytes of them (default 1 MiB): a lookup then
   * costs one round trip, not two. Where the filter's statistics pruned part of the file, a
   * match is assumed, and what it saves is the output pages finer than one match needs (none,
   * for a file without an offset index: whole column chunks are read) — for at most 16 times
   * this many output bytes per scan, what a wrong assumption can cost; elsewhere, all of them.
   * 0 always waits for the filter to say which pages are needed.
   */
  prefetchOutputBytes?: number;
  /**
   * In a file without an offset index (pyarrow's and DuckDB's defaults), first rows and blocks
   * near the top of a row group read only the pages they need, found by walking the page
   * headers first (a round trip before planning, whose bytes usually hold the part of each page
   * the rows need, and the row group's smaller chunks and lists whole), when the column chunks
   * worth walking — those of at least 1/16 of this — hold at least this many bytes in all
   * (default 1 MiB). Smaller row groups are read whole, as a round trip costs more than the
   * bytes it could save. 0 always walks.
   */
  pageWalkMinBytes?: number;
  /**
   * Bytes of decoded filter columns kept (default 64 MiB; 0 turns both caches off), for two
   * uses: within a scan, to serve the same columns' output instead of decoding them twice (the
   * predicate cache, shared by the tasks running at once); across scans, in the workers, so a
   * later filter over the same file and columns neither fetches nor decodes them again (the
   * cross-scan cache: an eighth for the page's own instance, which decodes small queries, the
   * rest split among the workers; see `ScanStats.columnCache`). Over budget, a task simply
   * decodes again.
   */
  cacheBytes?: number;
  /**
   * Run the core once over a small embedded file when the reader starts — in each worker before
   * its first task, and on this thread (open and plan) as soon as it is idle — so that the first
   * query runs code that has run before (default false). Measured in Chromium (tests/bench/
   * interactive.mjs): the first 100 rows' decode went from 22 to 7 ms and the footer's from about
   * 70 to 27 ms, but the passes cost more than that on two cores, and the cold page got slower
   * (first 100 rows: 410 ms without, 430–497 ms with).
   */
  warmUp?: boolean;
  /**
   * The most WebAssembly memory each instance of the core may grow to, in bytes (default: none
   * but the engine's, 4 GiB): each worker's, and the page's (shared by every reader of the page
   * for the page's lifetime: the lowest limit any asked holds). The memory never shrinks; a task
   * or an open that needs more fails with `OUT_OF_MEMORY` (a worker's task on a second, fresh
   * worker first), as it would at 4 GiB — use it to keep a tab's memory bounded. Each cache then
   * takes at most an eighth of it, a dataset's footers a quarter by default. At least 32 MiB.
   */
  memoryLimitBytes?: number;
  /** Where the `.wasm` is (default: next to this module), or a compiled module. */
  wasmUrl?: string | URL | WebAssembly.Module;
  /** Where the worker script is (default: `worker.js` next to this package's entry module; another origin's works too). */
  workerUrl?: string | URL;
}

/** What {@link Reader.open} accepts. */
export type ParquetSource = string | URL | Blob | ArrayBuffer | ArrayBufferView;

/** Options of {@link Reader.open}. */
export interface OpenOptions {
  /** Extra request headers for URLs, e.g. `{ Authorization: 'Bearer …' }`. */
  headers?: Record<string, string> | Array<[string, string]>;
  /** `fetch` credentials mode for URLs (default: the browser's, `same-origin`). */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** The file's size, when known: saves the suffix range read (and its CORS preflight). */
  size?: number;
  /** Bytes read from the end of the file at open (default 512 KiB). */
  footerReadBytes?: number;
  /**
   * Limits against hostile files (decompression bombs, lying sizes); past one, `TOO_LARGE`.
   * `maxMetadataBytes`: footer and page index (default 64 MiB, checked before they are read).
   */
  maxMetadataBytes?: number;
  /**
   * Largest page, compressed or not, per its header (default 256 MiB); checked before it is
   * decompressed. At most 1 GiB, as is `maxBatchBytes`: decoding one needs about 3 GiB of a
   * worker's 4 GiB of WebAssembly memory.
   */
  maxPageBytes?: number;
  /** Largest decompressed column chunk a scan reads (default 1 GiB). */
  maxChunkBytes?: number;
  /**
   * Largest decoded batch (default 512 MiB): batches of wide rows are made smaller to fit, and a
   * batch that still decodes larger (a dictionary bomb) is refused.
   */
  maxBatchBytes?: number;
  /** Verify page CRC32 checksums where the file has them (default true); a mismatch is `INVALID_FILE`. */
  verifyChecksums?: boolean;
  /**
   * Retries of a range read after a transient failure — connection refused or cut mid-body, a
   * timeout, 429/502/503/504 (default 3). Backoff starts at `retryDelayMs` (default 250) and
   * doubles, with jitter; a `Retry-After` the server sends is honoured (capped at 10 s).
   */
  retries?: number;
  /** First backoff between attempts, in milliseconds (default 250). */
  retryDelayMs?: number;
  /** Each attempt's limit, headers and body together, in milliseconds (default 30000; 0: none). Fails with `TIMEOUT`. */
  timeoutMs?: number;
  /**
   * When a server ignores `Range` and sends the whole file (200), accept it if it is at most this
   * many bytes (default 8 MiB); a larger download is aborted with `RANGE_NOT_SUPPORTED`.
   */
  maxFullBodyBytes?: number;
  /**
   * Send `If-Match` (or `If-Unmodified-Since`) with the version seen at open, so the server itself
   * refuses a replaced file (`FILE_CHANGED`). Default: only for same-origin URLs, because these
   * headers are not CORS-safelisted — cross-origin they cost a preflight and the server must allow
   * them. Every response's ETag is compared either way.
   */
  conditional?: boolean;
  /**
   * Ask for several ranges in one request (`Range: bytes=a-b,c-d`), where the server answers with
   * the ranges as parts (`multipart/byteranges`: nginx, Apache, Caddy, Go's file server): a
   * lookup's or a first page's pages spread over a row group come in one or two requests, and
   * the bytes between them are not read. Default: for same-origin URLs (cross-origin, such a
   * `Range` is not CORS-safelisted: every request would need a preflight the server allows).
   * The first such request to an origin finds out what its server does: a server that answers
   * another way (the whole file, the first range only, a refusal) keeps the bytes it sent, gets
   * the rest with one range per request, and is never asked again in this page.
   */
  multiRange?: boolean;
}

/**
 * What a reader has done since it was created: when it started (every time `performance.now()`,
 * milliseconds since the page's — or worker's — time origin) and its workers.
 */
export interface ReaderStats {
  startup: {
    /** The package's entry module was evaluated. */
    evaluatedAt: number;
    /**
     * The build of the core this reader loads: `simd`, or `no-simd` in JavaScriptCore (Safari; see
     * `WasmBuild`); `given` when `wasmUrl` named one.
     */
    wasmBuild: WasmBuild | 'given';
    /**
     * `createReader()` was called; the `.wasm` was compiled (fetch included); the core was
     * instantiated on this thread (`reader.ready` resolved). `null` until then.
     */
    createCalledAt: number;
    compiledAt: number | null;
    createdAt: number | null;
    /**
     * This thread's warm-up pass ended (with `warmUp: true`; see {@link ReaderOptions.warmUp}).
     * `null` until then, or without one.
     */
    warmedAt: number | null;
  };
  workers: {
    /** Alive now, of which `ready` (script loaded, core instantiated). */
    alive: number;
    ready: number;
    /** Started over the reader's life, replacements included. */
    started: number;
    /** When each worker became ready, in order. */
    readyAt: number[];
    /** When each worker finished warming its code up (before its first task), in order. */
    warmedAt: number[];
    /** Tasks a worker started while another of its tasks waited for bytes. */
    tasksInterleaved: number;
    /** Small tasks the page decoded itself (see `inlineTaskBytes` and `inlineScanBytes`). */
    tasksOnPage: number;
    /**
     * Of those, tasks whose WebAssembly trapped on the page and that ran again in a worker (the
     * page then decodes no more; seen in WebKit, about 1 in 1,000 tasks, only with JavaScriptCore's
     * optimizing tier on).
     */
    trapsOnPage: number;
    /**
     * Times a task decoding on the page stopped after its slice (8 ms, a batch at a time) to let
     * the page paint and handle input, then went on.
     */
    pageSlices: number;
  };
  /**
   * Decodes on this page (or, in Node, this process: every reader of it) that failed with an error
   * the JavaScript engine may have caused — the file read as invalid, or an internal error — and
   * so ran again (a task in a worker, opening and planning on the page); `passed`: those whose
   * second run read the file. A pass means the first failure was the engine's (seen in WebKit).
   */
  rechecks: { ran: number; passed: number };
}

/** Default predicate-cache budget of a reader. */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/** The least `memoryLimitBytes`: the core's own start-up plus one 16 MiB growth of its heap. */
const MIN_MEMORY_LIMIT_BYTES = 32 * 1024 * 1024;

/** Default bound on planned bytes a scan fetches ahead of its consumer. */
export const DEFAULT_READ_AHEAD_BYTES = 256 * 1024 * 1024;

/** Default bound on decoded bytes a scan holds ahead of its consumer. */
export const DEFAULT_READ_AHEAD_DECODED_BYTES = 256 * 1024 * 1024;

/**
 * Default bound on the output bytes a filtered task may fetch with its filter pages that
 * waiting for the filter would not have (all of them, or those a match would leave unread): a
 * round trip costs more than moving that much on most networks (20 ms at 400 Mbit/s is 1 MB).
 */
export const DEFAULT_PREFETCH_OUTPUT_BYTES = 1024 * 1024;

// The default of `pageWalkMinBytes` is the core's (`page_layout::DEFAULT_PAGE_WALK_MIN_BYTES`,
// which says why), generated into the contract.
export { DEFAULT_PAGE_WALK_MIN_BYTES };

/** Default bytes read from the end of a file at open. */
export const DEFAULT_FOOTER_READ_BYTES = 512 * 1024;

/** Owns the core, the pool and the I/O queue. */
export class Reader {
  private disposed = false;
  private nextFileId = 1;
  /** Aborted by {@link Reader.dispose}, with a `DISPOSED` error as the reason. */
  private readonly lifetime = new AbortController();
  /** The core on this thread, once compiled and instantiated. */
  private core: Wasm | undefined;
  private readonly loading: Promise<Wasm>;

  /** @internal */
  constructor(
    wasm: Promise<Wasm>,
    /** The executor tasks run on (a worker pool, or inline). */
    private readonly executor: Executor,
    private readonly io: IoQueue,
    private readonly tuning: {
      readAheadBytes: number;
      readAheadDecodedBytes: number;
      cacheBytes: number;
      memoryLimitBytes: number | null;
      prefetchOutputBytes: number;
      pageWalkMinBytes: number;
    },
    private readonly startup: ReaderStats['startup'],
  ) {
    this.loading = wasm.then(
      (core) => {
        this.core = core;
        return core;
      },
      (error: unknown) => {
        throw toSkimError(error);
      },
    );
    // Not every caller awaits `ready`: a failed load surfaces at the first open instead.
    this.loading.catch(() => undefined);
  }

  /**
   * Resolves once the WebAssembly core is compiled and instantiated on this thread; rejects with
   * the reason it could not be loaded. `createReader()` does not wait for it, so the first
   * `open()` can read a URL's footer while the core still compiles; `open()` waits by itself.
   */
  get ready(): Promise<void> {
    return this.loading.then(() => undefined);
  }

  /** When the reader started, and what its workers did (see {@link ReaderStats}). */
  stats(): ReaderStats {
    const pool = this.executor instanceof HybridExecutor ? this.executor.workers : undefined;
    const workers = pool?.stats() ?? { alive: 0, ready: 0, started: 0, readyAt: [], warmedAt: [], tasksInterleaved: 0 };
    const hybrid = this.executor instanceof HybridExecutor ? this.executor : undefined;
    const inline = hybrid?.page ?? (this.executor instanceof InlineExecutor ? this.executor : undefined);
    const onPage = {
      tasksOnPage: hybrid?.tasksInline ?? 0,
      trapsOnPage: hybrid?.trapsOnPage ?? 0,
      pageSlices: inline?.slices ?? 0,
    };
    return { startup: { ...this.startup }, workers: { ...workers, ...onPage }, rechecks: { ...rechecks } };
  }

  /** Decoding workers alive now (0 when decoding inline, and before they are started). */
  get workerCount(): number {
    return this.executor instanceof HybridExecutor ? this.executor.workers.workerCount : 0;
  }

  /** Opens a Parquet file from a URL, a `Blob`/`File`, or bytes, reading only its footer. */
  async open(source: ParquetSource, options: OpenOptions = {}): Promise<ParquetFile> {
    this.assertOpen();
    const footerReadBytes = options.footerReadBytes ?? DEFAULT_FOOTER_READ_BYTES;
    if (!Number.isSafeInteger(footerReadBytes) || footerReadBytes < 8) {
      throw invalidArgument('footerReadBytes', 'a whole number >= 8', footerReadBytes);
    }
    const limits = decodingLimits(options);
    const startedAt = performance.now();
    const reads = this.makeSource(source, options);
    // The tail is on its way while the core may still compile.
    const tail = reads.readTail(footerReadBytes);
    // The tail in and the core still compiling: apache-arrow's reader runs once meanwhile (arrow.ts).
    tail.then(
      () => {
        if (this.core === undefined) warmArrowReaderOnce();
      },
      () => undefined,
    );
    try {
      // apache-arrow loads beside the core (arrow.ts): the file's schema, its scans' batches are
      // its objects.
      const [wasm] = await Promise.all([this.loading, loadArrow()]);
      const handle = await loadMetadata(wasm, reads, await tail, options.maxMetadataBytes, limits, arrowReadsViews());
      this.assertOpen();
      const fileId = this.nextFileId++;
      return new ParquetFile(
        {
          io: this.io,
          executor: this.executor,
          ...this.tuning,
          assertOpen: () => this.assertOpen(),
          lifetime: this.lifetime.signal,
          parseFilter: (sql) => this.parseFilter(sql),
          checkScanOptions: (options) => this.checkScanOptions(options),
        },
        reads,
        handle,
        fileId,
        fileKeyOf(source, reads.version, handle.fileLen),
        limits,
        startedAt,
      );
    } catch (error) {
      throw toSkimError(error);
    }
  }

  /**
   * Opens many Parquet files as one table: a list of URLs, `File`s (a chosen folder's), `{ path,
   * file }` pairs, or `{ manifest: url }` (a JSON list of paths). Hive partitions in the paths
   * (`year=1994/…`) become columns; every footer is read, `concurrency` at a time, and the files'
   * schemas are unified (see {@link Dataset}).
   */
  async openDataset(sources: DatasetSources, options: DatasetOptions = {}): Promise<Dataset> {
    this.assertOpen();
    const context: DatasetContext = {
      scheduler: {
        io: this.io,
        executor: this.executor,
        readAheadBytes: this.tuning.readAheadBytes,
        readAheadDecodedBytes: this.tuning.readAheadDecodedBytes,
        prefetchOutputBytes: this.tuning.prefetchOutputBytes,
      },
      lifetime: this.lifetime.signal,
      parseFilter: (sql) => this.parseFilter(sql),
      checkScanOptions: (options) => this.checkScanOptions(options),
    };
    // Within a memory limit, the default footer bound leaves room for the rest (a quarter of it).
    const limit = this.tuning.memoryLimitBytes;
    const bounded =
      limit === null || options.footerMemoryBytes !== undefined
        ? options
        : { ...options, footerMemoryBytes: Math.min(DEFAULT_FOOTER_MEMORY_BYTES, Math.floor(limit / 4)) };
    return openDataset(context, (source, fileOptions) => this.open(source, fileOptions), sources, bounded);
  }

  /**
   * Parses a SQL `WHERE` clause into the filter AST without scanning, e.g. to show syntax errors
   * as the user types. Throws an `INVALID_FILTER` error whose `position` is the offending offset.
   */
  parseFilter(sql: string): FilterAst {
    if (this.core === undefined) {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        "reader.parseFilter() needs the reader's WebAssembly core, which is still loading: await reader.ready first (open() waits by itself)",
      );
    }
    try {
      return JSON.parse(this.core.parseFilter(sql)) as FilterAst;
    } catch (error) {
      throw toSkimError(error);
    }
  }

  /** Checks a scan's options with the core (an open file or dataset implies the core is loaded). */
  private checkScanOptions({ offset, limit, batchSize, aggregates }: CheckedOptions): void {
    if (this.core === undefined) throw new ParquetSkimError('INTERNAL', 'a scan ran before the core loaded');
    try {
      this.core.checkScanOptions(offset, limit, batchSize, aggregates);
    } catch (error) {
      throw toSkimError(error);
    }
  }

  /** Ends the reader: requests in flight are aborted, workers terminated, and pending work rejects with `DISPOSED`. */
  dispose(): void {
    if (!this.disposed) {
      this.lifetime.abort(
        new ParquetSkimError('DISPOSED', 'the reader was disposed during the scan; create a new one'),
      );
    }
    this.disposed = true;
    this.executor.dispose();
  }

  private assertOpen(): void {
    if (this.disposed) throw new ParquetSkimError('DISPOSED', 'the reader was disposed; create a new one');
  }

  private makeSource(source: ParquetSource, options: OpenOptions): Source {
    if (typeof source === 'string' || source instanceof URL) {
      const url = resolveUrl(source);
      if (options.size !== undefined && (!Number.isSafeInteger(options.size) || options.size < 0)) {
        throw invalidArgument('size', 'a whole number of bytes', options.size);
      }
      return new HttpSource(url, httpOptions(url, options), options.size);
    }
    if (typeof Blob !== 'undefined' && source instanceof Blob) return new BlobSource(source);
    if (source instanceof ArrayBuffer) return new BytesSource(new Uint8Array(source));
    if (ArrayBuffer.isView(source)) {
      return new BytesSource(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
    }
    throw invalidArgument('source', 'a URL, a Blob/File, an ArrayBuffer or a Uint8Array', source);
  }
}

/**
 * @internal Decodes a file's metadata from the open's tail read, reading more where the footer or
 * page index does not fit in it (one request per ask: their pieces are adjacent). A decode that
 * fails as the engine might make it fail is looked at again from the bytes read (recheck.ts).
 * `viewTypes`: whether the apache-arrow the batches go to reads string and binary views (arrow.ts).
 */
export async function loadMetadata(
  wasm: Wasm,
  source: Source,
  tail: { start: number; data: Uint8Array },
  maxMetadataBytes: number | undefined,
  limits: DecodeLimits,
  viewTypes: boolean,
): Promise<ParquetFileHandle> {
  // Checked by the core (a bad one fails the open), then used by every scan of the file.
  const options: CoreOpenOptions = {
    ...(maxMetadataBytes === undefined ? {} : { maxMetadataBytes }),
    ...(viewTypes ? {} : { viewTypes: false }),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
  const openOptions = Object.keys(options).length === 0 ? undefined : JSON.stringify(options);
  const fileLen = source.fileLen ?? tail.start + tail.data.byteLength;
  // What was read, kept so that a decode that may have been the engine's fault can be looked at
  // again from the start (recheck.ts).
  const chunks = [tail];
  const loaderOf = (): MetadataLoader => {
    const fresh = new wasm.MetadataLoader(fileLen, openOptions);
    for (const chunk of chunks) fresh.push(chunk.start, chunk.data);
    return fresh;
  };
  let loader = loaderOf();
  // A loader that trapped is still borrowed and cannot be freed: it is given up.
  const release = (old: MetadataLoader) => {
    try {
      old.free();
    } catch {
      // Left to the instance (which is suspect anyway after a trap).
    }
  };
  const again = () => {
    const old = loader;
    loader = loaderOf();
    release(old);
  };
  try {
    for (;;) {
      const needs = recheck(() => JSON.parse(loader.needs()) as ByteRange[], again);
      if (needs.length === 0) return loader.finish();
      let start = Number.POSITIVE_INFINITY;
      let end = 0;
      for (const range of needs) {
        start = Math.min(start, range.start);
        end = Math.max(end, range.end);
      }
      const data = await source.read(start, end);
      chunks.push({ start, data });
      loader.push(start, data);
    }
  } finally {
    release(loader);
  }
}

/** Ids of the `Blob`s opened, which have no identity but themselves. */
const blobIds = new WeakMap<Blob, number>();
let nextBlobId = 1;
/**
 * Openings, counted across every reader of this page or process: readers share nothing, but in
 * Node they share one WebAssembly instance — and so its cache — so keys must be unique here.
 */
let nextOpening = 1;

/**
 * The identity of a file's bytes, which keys the workers' cross-scan caches: a URL with its
 * ETag/Last-Modified and size (a changed file gets a new key, so it never hits stale entries);
 * without a validator, or for bytes the caller could still change, this one opening only.
 */
function fileKeyOf(source: ParquetSource, version: string | undefined, size: number): string {
  const opening = nextOpening++;
  if (typeof source === 'string' || source instanceof URL) {
    const url = resolveUrl(source);
    return version === undefined ? `url ${url} ${size} open#${opening}` : `url ${url} ${version} ${size}`;
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    let id = blobIds.get(source);
    if (id === undefined) {
      id = nextBlobId++;
      blobIds.set(source, id);
    }
    return `blob#${id} ${size}`;
  }
  return `bytes open#${opening} ${size}`;
}

/**
 * The decoding limits of an open, as the core takes them (`DecodeLimits`): passed through, not
 * checked here — the core checks them (`OpenOptions::checked`, at open) in one place.
 */
function decodingLimits(options: OpenOptions): DecodeLimits {
  const limits: DecodeLimits = {};
  for (const name of ['maxPageBytes', 'maxChunkBytes', 'maxBatchBytes'] as const) {
    if (options[name] !== undefined) limits[name] = options[name];
  }
  if (options.verifyChecksums !== undefined) limits.verifyChecksums = options.verifyChecksums;
  return limits;
}

/** The request options of an open, checked, with their defaults. */
function httpOptions(url: string, options: OpenOptions): HttpOptions {
  const whole = (name: keyof OpenOptions, max: number, fallback: number): number => {
    const value = options[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
      throw invalidArgument(name, `a whole number from 0 to ${max}`, value);
    }
    return value;
  };
  for (const name of ['conditional', 'multiRange'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') {
      throw invalidArgument(name, 'a boolean', options[name]);
    }
  }
  const credentials = options.credentials;
  if (credentials !== undefined && !['omit', 'same-origin', 'include'].includes(credentials)) {
    throw invalidArgument('credentials', "'omit', 'same-origin' or 'include'", `'${credentials}'`);
  }
  const headers = Array.isArray(options.headers) ? options.headers : Object.entries(options.headers ?? {});
  for (const pair of headers) {
    if (!Array.isArray(pair) || pair.length !== 2 || pair.some((part) => typeof part !== 'string')) {
      throw invalidArgument('headers', 'name/value pairs of strings', JSON.stringify(pair));
    }
  }
  const origin = (globalThis as { location?: { origin: string } }).location?.origin;
  // In Node there is no CORS, so preconditions cost nothing.
  const sameOrigin = origin === undefined || new URL(url).origin === origin;
  return {
    headers: headers as Array<[string, string]>,
    ...(credentials !== undefined ? { credentials } : {}),
    retries: whole('retries', 100, 3),
    retryDelayMs: whole('retryDelayMs', 60_000, 250),
    timeoutMs: whole('timeoutMs', 2 ** 31 - 1, 30_000),
    maxFullBodyBytes: whole('maxFullBodyBytes', Number.MAX_SAFE_INTEGER, 8 * 1024 * 1024),
    conditional: options.conditional ?? sameOrigin,
    multiRange: options.multiRange ?? sameOrigin,
  };
}

function resolveUrl(source: string | URL): string {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  let url: URL;
  try {
    url = new URL(source, base);
  } catch {
    throw invalidArgument('source', 'an absolute URL (or one relative to the page)', source);
  }
  if (url.protocol === 'file:') {
    // fetch() cannot read file: URLs (Node: "not implemented"; browsers: blocked), and this is
    // not a network or CORS problem.
    throw new ParquetSkimError(
      'INVALID_ARGUMENT',
      `invalid option 'source': ${url.href} is a file: URL, which cannot be fetched; in Node pass the file's bytes (await readFile(path)), in a browser a File from an <input> or a drop, or serve the file over HTTP`,
    );
  }
  return url.href;
}

/** `value` (or `fallback` when unset) as a whole number of bytes, at least `min`. */
function byteCount(name: string, value: number | undefined, fallback: number, min: 0 | 1): number {
  const bytes = value ?? fallback;
  if (!Number.isSafeInteger(bytes) || bytes < min) {
    throw invalidArgument(name, `a whole number of bytes >= ${min}`, bytes);
  }
  return bytes;
}

/**
 * This thread's instance of the core. With `warmUp`, the page's part of a first query (open,
 * plan) is warmed up as soon as the thread is idle — while the first open's footer is on its way,
 * typically.
 */
async function instantiate(
  module: Promise<WebAssembly.Module>,
  startup: ReaderStats['startup'],
  warmUp: boolean,
  memoryLimitBytes: number | null,
): Promise<Wasm> {
  const instance = await instantiateWasm(await module);
  if (memoryLimitBytes !== null) limitWasmMemory(instance, memoryLimitBytes);
  startup.createdAt = performance.now();
  if (warmUp) {
    setTimeout(() => {
      try {
        instance.warmUp(false);
        startup.warmedAt = performance.now();
      } catch {
        // No warm-up: the first query just runs cold.
      }
    }, 0);
  }
  return instance;
}

/** Creates a reader. Browsers get a worker pool; Node decodes inline. */
export async function createReader(options: ReaderOptions = {}): Promise<Reader> {
  const hasWorkers = typeof Worker !== 'undefined';
  const defaultWorkers = hasWorkers ? Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 2) : 0;
  const workers = options.workers ?? defaultWorkers;
  if (!Number.isInteger(workers) || workers < 0) throw invalidArgument('workers', 'a whole number >= 0', workers);
  if (workers > 0 && !hasWorkers) throw invalidArgument('workers', '0 where Web Workers do not exist', workers);
  const readAheadBytes = byteCount('readAheadBytes', options.readAheadBytes, DEFAULT_READ_AHEAD_BYTES, 1);
  const readAheadDecodedBytes = byteCount(
    'readAheadDecodedBytes',
    options.readAheadDecodedBytes,
    DEFAULT_READ_AHEAD_DECODED_BYTES,
    1,
  );
  const cacheBytes = byteCount('cacheBytes', options.cacheBytes, DEFAULT_CACHE_BYTES, 0);
  const inlineTaskBytes = byteCount('inlineTaskBytes', options.inlineTaskBytes, DEFAULT_INLINE_TASK_BYTES, 0);
  const inlineScanBytes = byteCount('inlineScanBytes', options.inlineScanBytes, DEFAULT_INLINE_SCAN_BYTES, 0);
  const memoryLimitBytes = options.memoryLimitBytes ?? null;
  if (
    memoryLimitBytes !== null &&
    !(
      Number.isSafeInteger(memoryLimitBytes) &&
      memoryLimitBytes >= MIN_MEMORY_LIMIT_BYTES &&
      memoryLimitBytes <= 2 ** 32
    )
  ) {
    throw invalidArgument(
      'memoryLimitBytes',
      'a whole number of bytes from 32 MiB (33554432) to 4 GiB',
      memoryLimitBytes,
    );
  }
  const warmUp = options.warmUp ?? false;
  if (typeof warmUp !== 'boolean') throw invalidArgument('warmUp', 'a boolean', warmUp);
  const prefetchOutputBytes = byteCount(
    'prefetchOutputBytes',
    options.prefetchOutputBytes,
    DEFAULT_PREFETCH_OUTPUT_BYTES,
    0,
  );
  const pageWalkMinBytes = byteCount('pageWalkMinBytes', options.pageWalkMinBytes, DEFAULT_PAGE_WALK_MIN_BYTES, 0);
  const io = new IoQueue({
    ...(options.ioConcurrency !== undefined ? { concurrency: options.ioConcurrency } : {}),
    ...(options.coalesceGapBytes !== undefined ? { gapBytes: options.coalesceGapBytes } : {}),
    ...(options.maxRequestBytes !== undefined ? { maxRequestBytes: options.maxRequestBytes } : {}),
  });
  // Engines under the supported floor (WebAssembly SIMD marks it): say so now.
  try {
    checkWasmSimd();
  } catch (error) {
    throw toSkimError(error);
  }
  const startup: ReaderStats['startup'] = {
    evaluatedAt: EVALUATED_AT,
    wasmBuild: options.wasmUrl === undefined ? defaultWasmBuild() : 'given',
    createCalledAt: performance.now(),
    compiledAt: null,
    createdAt: null,
    warmedAt: null,
  };
  // Nothing below waits: workers load their script while the core compiles, and the first open
  // reads its footer meanwhile.
  const module = compileWasm(options.wasmUrl).then((compiled) => {
    startup.compiledAt = performance.now();
    return compiled;
  });
  // Not with inline decoding: there the caller's own work is next, and a pass would only delay it.
  const wasm = instantiate(module, startup, warmUp && workers > 0, memoryLimitBytes);
  // Workers start early only to warm up; else lazily (see HybridExecutor).
  const executor =
    workers === 0
      ? new InlineExecutor(wasm)
      : new HybridExecutor(
          new InlineExecutor(wasm),
          new WorkerPool(workers, module, {
            warmUp,
            workerUrl: options.workerUrl,
            lazy: !warmUp,
            memoryLimitBytes,
          }),
          inlineTaskBytes,
          inlineScanBytes,
        );
  return new Reader(
    wasm,
    executor,
    io,
    {
      readAheadBytes,
      readAheadDecodedBytes,
      cacheBytes,
      memoryLimitBytes,
      prefetchOutputBytes,
      pageWalkMinBytes,
    },
    startup,
  );
}

let defaultReader: Promise<Reader> | undefined;

/** Opens a file with a default reader (created on first use with default options). */
export async function openParquet(source: ParquetSource, options: OpenOptions = {}): Promise<ParquetFile> {
  defaultReader ??= createReader();
  return (await defaultReader).open(source, options);
}
