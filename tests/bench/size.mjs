/**
 * What the package weighs: each `.wasm` (a page downloads one of the two) and the JS of web/dist (entry and worker; not the
 * `apache-arrow.js` shipped for pages without a bundler, which is apache-arrow's), raw, gzip
 * (level 9) and brotli (quality 11) — what a browser downloads from a server that compresses.
 * Writes bench/results/<date>-size.json and prints a Markdown table.
 *
 * Usage: node tests/bench/size.mjs   (after `npm run build`)
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { repo, today } from './lib.mjs';

const dist = path.join(repo, 'web/dist');

async function files(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)])),
  );
  return nested.flat();
}

function sizes(bytes) {
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

const all = await files(dist);
// A page downloads one of the two builds (web/src/wasm-loader.ts picks by engine).
const wasmFile = (name) => readFile(all.find((f) => path.basename(f) === name));
const own = all.filter((f) => f.endsWith('.js') && path.basename(f) !== 'apache-arrow.js');
const js = Buffer.concat(await Promise.all(own.map((f) => readFile(f))));
const result = {
  wasm: sizes(await wasmFile('parquet_skim_wasm_simd_bg.wasm')),
  wasmNoSimd: sizes(await wasmFile('parquet_skim_wasm_bg.wasm')),
  js: sizes(js),
};
const labels = {
  wasm: 'parquet_skim_wasm_simd_bg.wasm (V8, SpiderMonkey)',
  wasmNoSimd: 'parquet_skim_wasm_bg.wasm (JavaScriptCore)',
  js: 'JS (web/dist: index.js, worker.js)',
};
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
console.log('\n| file | raw | gzip | brotli |\n|---|---:|---:|---:|');
for (const [name, s] of Object.entries(result)) {
  console.log(`| ${labels[name]} | ${mb(s.raw)} | ${mb(s.gzip)} | ${mb(s.brotli)} |`);
}
const date = today();
await mkdir(path.join(repo, 'bench/results'), { recursive: true });
const out = path.join(repo, `bench/results/${date}-size.json`);
await writeFile(out, `${JSON.stringify({ date, ...result }, null, 2)}\n`);
console.log(`wrote ${path.relative(repo, out)}`);
