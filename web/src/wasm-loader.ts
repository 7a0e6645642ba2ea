/**
 * Loading the WebAssembly core, once per thread.
 *
 * The main thread compiles the module once ({@link compileWasm}: streaming compile in browsers,
 * `fs` in Node) and posts the compiled `WebAssembly.Module` to each worker — it is
 * structured-cloneable — so N workers do not fetch and compile a multi-megabyte module N times.
 * Every thread then instantiates it with {@link instantiateWasm}.
 */
import init, * as glue from './wasm/parquet_skim_wasm.js';

/** The bindings of the WebAssembly core. */
export type Wasm = typeof glue;

/** Where the `.wasm` sits next to this module (resolved by bundlers through `import.meta.url`). */
export function defaultWasmUrl(): URL {
  return new URL('./wasm/parquet_skim_wasm_bg.wasm', import.meta.url);
}

/** Compiles the core from a URL (default: next to this module), or passes a compiled module through. */
export async function compileWasm(source?: string | URL | WebAssembly.Module): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  const url = source === undefined ? defaultWasmUrl() : new URL(source, import.meta.url);
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
  if (isWasmMime && typeof WebAssembly.compileStreaming === 'function') {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

let instance: Promise<Wasm> | undefined;
let memory: WebAssembly.Memory | undefined;

/** Instantiates the core in this thread (once; later calls return the same bindings). */
export function instantiateWasm(module: WebAssembly.Module): Promise<Wasm> {
  instance ??= init({ module_or_path: module }).then((exports) => {
    memory = exports.memory;
    return glue;
  });
  return instance;
}

/**
 * Bytes of this thread's WebAssembly memory (0 before instantiation). A WebAssembly memory never
 * shrinks, so this is also the high-water mark of the core's heap in this thread.
 */
export function wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}
