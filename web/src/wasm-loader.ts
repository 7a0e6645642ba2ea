/**
 * Loading the WebAssembly core, once per thread.
 *
 * The main thread compiles the module once ({@link compileWasm}: streaming compile in browsers,
 * `fs` in Node; this engine's build of the two, see `wasm-build.ts`) and posts the compiled
 * `WebAssembly.Module` to each worker — it is structured-cloneable — so N workers do not fetch
 * and compile a multi-megabyte module N times.
 * Every thread then instantiates it with {@link instantiateWasm}.
 */
import { ParquetSkimError } from './errors.js';
import { linkOf } from './io/source.js';
import { noteMemoryLimit, watchFailures } from './trap.js';
import init, * as glue from './wasm/parquet_skim_wasm.js';
import { defaultWasmBuild } from './wasm-build.js';

/** The bindings of the WebAssembly core. */
export type Wasm = typeof glue;

/** `performance.now()` when this module (the package's entry, once bundled) was evaluated. */
export const EVALUATED_AT = performance.now();

/**
 * Where this engine's build sits next to this module (resolved by bundlers through
 * `import.meta.url`: each `new URL` names its file literally, so a bundler emits both).
 */
export function defaultWasmUrl(): URL {
  return defaultWasmBuild() === 'no-simd'
    ? new URL('./wasm/parquet_skim_wasm_bg.wasm', import.meta.url)
    : new URL('./wasm/parquet_skim_wasm_simd_bg.wasm', import.meta.url);
}

/**
 * The smallest module using a 128-bit SIMD instruction (a function returning `v128.const 0`): the
 * engines the package supports and is tested on (README, Using it) all have it, and the `simd`
 * build needs it. (JavaScriptCore gets the `no-simd` build, but engines older than the floor are
 * untested, so they are turned away with this message rather than an opaque failure later.)
 */
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 11,
]);

/** Throws `UNSUPPORTED` when this engine lacks WebAssembly SIMD. */
export function checkWasmSimd(): void {
  if (!WebAssembly.validate(SIMD_PROBE)) {
    throw new ParquetSkimError(
      'UNSUPPORTED',
      'parquet-skim needs WebAssembly SIMD (simd128), which this JavaScript engine lacks; use Chrome or Edge 91+, Firefox 89+, Safari 16.4+ or Node 16.4+',
    );
  }
}

/**
 * The default `.wasm`, requested as soon as this module is evaluated in a page (not in a worker,
 * nor in Node), so that its download and compile overlap whatever the app does before
 * `createReader()`. A reader with another `wasmUrl` does not use it.
 */
const eager: Promise<WebAssembly.Module> | undefined =
  typeof document !== 'undefined' && typeof WebAssembly !== 'undefined' && WebAssembly.validate(SIMD_PROBE)
    ? compileFrom(defaultWasmUrl())
    : undefined;
// A failure is reported to the reader that uses it, not as an unhandled rejection.
eager?.catch(() => undefined);

/** Compiles the core from a URL (default: next to this module), or passes a compiled module through. */
export async function compileWasm(source?: string | URL | WebAssembly.Module): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  checkWasmSimd();
  if (source === undefined && eager !== undefined) return eager;
  return compileFrom(source === undefined ? defaultWasmUrl() : new URL(source, import.meta.url));
}

async function compileFrom(url: URL): Promise<WebAssembly.Module> {
  if (url.protocol === 'file:') {
    // Hidden from bundlers: only Node reaches this branch.
    const fsModule = ['node', 'fs/promises'].join(':');
    const fs = (await import(/* @vite-ignore */ fsModule)) as typeof import('node:fs/promises');
    return WebAssembly.compile(await fs.readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`expected the parquet-skim .wasm at ${url.href}, got HTTP ${response.status}; pass wasmUrl`);
  }
  const isWasmMime = response.headers.get('content-type')?.startsWith('application/wasm') ?? false;
  const module =
    isWasmMime && typeof WebAssembly.compileStreaming === 'function'
      ? await WebAssembly.compileStreaming(response)
      : await WebAssembly.compile(await response.arrayBuffer());
  // The browser records the download as its body ends; the compile usually ends later.
  if (!meterDownload(url)) setTimeout(() => meterDownload(url), 0);
  return module;
}

/**
 * Counts the download of `url` in its origin's link meter (`io/source.ts`), from the browser's
 * record of it (Resource Timing: when its body began and ended, and its bytes): the `.wasm` is a
 * body from its origin like any range read, and a page that opens a file of that origin as it
 * loads reads the footer beside it — alone, the footer measured the share of the link the download
 * left it. Read from the record, not from a second branch of the stream: a branch made the
 * streaming compile end ~10 ms later on a fresh page (`bench/results/2026-12-07-why-requests.md`).
 * Nothing is counted where the record has no timings (another origin without
 * `Timing-Allow-Origin`) or is not there a task after the compile. `true` once the record was found.
 */
function meterDownload(url: URL): boolean {
  const entries = globalThis.performance?.getEntriesByName?.(url.href, 'resource') ?? [];
  const entry = entries[entries.length - 1] as PerformanceResourceTiming | undefined;
  if (entry === undefined) return false;
  if (entry.responseStart > 0 && entry.encodedBodySize > 0) {
    linkOf(url.href).addPast(entry.responseStart, entry.responseEnd, entry.encodedBodySize);
  }
  return true;
}

let instance: Promise<Wasm> | undefined;
let memory: WebAssembly.Memory | undefined;

/** Instantiates the core in this thread (once; later calls return the same bindings). */
export function instantiateWasm(module: WebAssembly.Module): Promise<Wasm> {
  instance ??= init({ module_or_path: module }).then((exports) => {
    memory = exports.memory;
    watchFailures(glue, exports.memory);
    return glue;
  });
  return instance;
}

/** The limit this thread's instance was given, if any (see {@link limitWasmMemory}). */
let limit: number | undefined;

/**
 * Bounds this thread's instance's WebAssembly memory to `bytes` (`ReaderOptions.memoryLimitBytes`).
 * The instance is the thread's, shared by every reader the thread creates: the lowest limit asked
 * holds.
 */
export function limitWasmMemory(wasm: Wasm, bytes: number): void {
  if (limit !== undefined && limit <= bytes) return;
  wasm.setMemoryLimit(bytes);
  limit = bytes;
  noteMemoryLimit(bytes);
}

/**
 * Bytes of this thread's WebAssembly memory (0 before instantiation). A WebAssembly memory never
 * shrinks, so this is also the high-water mark of the core's heap in this thread.
 */
export function wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}
