/**
 * Which of the core's two builds an engine loads (`web/src/wasm-loader.ts` fetches it; the reader's
 * `stats().startup.wasmBuild` names it). No import of the core here: the package's public types
 * name {@link WasmBuild}.
 */

/**
 * The two builds of the core. `simd`: with WebAssembly's 128-bit SIMD (`memchr`'s substring
 * search, `simdutf8`'s validation, vectorized loops), for engines whose first tier runs SIMD: V8
 * (Chrome, Edge, Node) and SpiderMonkey (Firefox). `no-simd`: without, for JavaScriptCore (Safari
 * and every iOS browser, WebKitGTK), whose first tier is an interpreter that takes no SIMD
 * instruction: there each function holding one was compiled on the page's thread at its first
 * call, and a fresh page's first query waited for ~1,900 of them (.cargo/config.toml). In V8 the
 * `no-simd` build took 1.6–1.9× as long on a re-filter of the hits table's URLs from the cache
 * (`LIKE '%avito%'`: the search is most of it).
 */
export type WasmBuild = 'simd' | 'no-simd';

/**
 * The build for this engine: `no-simd` where the user agent is WebKit's and not Chromium's (every
 * browser on iOS reports AppleWebKit, as Safari does; Chrome and Edge report Chrome/ too), else
 * `simd`.
 */
export function wasmBuildFor(userAgent: string): WasmBuild {
  return /AppleWebKit\//.test(userAgent) && !/(Chrome|Chromium)\//.test(userAgent) ? 'no-simd' : 'simd';
}

/** This engine's build ({@link wasmBuildFor} its user agent; Node has `simd`). */
export function defaultWasmBuild(): WasmBuild {
  return wasmBuildFor(globalThis.navigator?.userAgent ?? '');
}
