/**
 * Bundles the npm package into a handful of files (run by .ci/build.sh after tsc has written the
 * type declarations):
 *
 * - `dist/index.js`: the package's entry, every module of `src/` and the wasm-bindgen glue in one
 *   ES module. `apache-arrow` stays an import, so an app and the package share one copy of it.
 * - `dist/worker.js`: the decoding worker, self-contained (it needs no apache-arrow).
 * - `dist/wasm/parquet_skim_wasm_simd_bg.wasm` and `dist/wasm/parquet_skim_wasm_bg.wasm`: the core
 *   with and without WebAssembly SIMD (one glue loads either; `src/wasm-loader.ts` picks by engine),
 *   where `new URL(…, import.meta.url)` finds them.
 * - `dist/apache-arrow.js`: apache-arrow (the version installed here) as one minified ES module, for
 *   pages without a bundler: an import map names it, so loading the package takes a few requests
 *   instead of apache-arrow's hundred-odd modules. Bundlers never see it.
 *
 * The package's source maps carry their sources, so devtools and bundlers find them without `src/`
 * shipped. Type declarations are tsc's (`dist/types`), internals stripped.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const web = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(web, 'dist');
const require = createRequire(import.meta.url);

const common = { platform: 'browser', logLevel: 'warn' };
const output = { format: 'esm', sourcemap: true, comments: { legal: true } };

await build({
  ...common,
  input: path.join(web, 'src/index.ts'),
  external: ['apache-arrow'],
  output: { ...output, file: path.join(dist, 'index.js') },
});
await build({
  ...common,
  input: path.join(web, 'src/worker.ts'),
  output: { ...output, file: path.join(dist, 'worker.js') },
});
// apache-arrow's ESM entry for browsers, resolved from this package's own dependency.
const arrowDir = path.dirname(require.resolve('apache-arrow'));
await build({
  ...common,
  input: path.join(arrowDir, 'Arrow.dom.mjs'),
  output: { ...output, file: path.join(dist, 'apache-arrow.js'), minify: true, sourcemap: false },
});
await mkdir(path.join(dist, 'wasm'), { recursive: true });
for (const file of ['parquet_skim_wasm_simd_bg.wasm', 'parquet_skim_wasm_bg.wasm']) {
  await copyFile(path.join(web, 'src/wasm', file), path.join(dist, 'wasm', file));
}
