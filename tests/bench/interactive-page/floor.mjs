/**
 * The physical floor of a cold page: load, compile parquet-skim's `.wasm` with `compileStreaming`
 * (the compile floor), and move the byte ranges parquet-skim read with bare `fetch`, in the fewest
 * rounds (what opening read, then every page at once) — compile and I/O side by side. Then the
 * same rounds again, warm (the I/O floor of a warm reader).
 */

import noSimdUrl from '../../../web/dist/wasm/parquet_skim_wasm_bg.wasm?url';
import simdUrl from '../../../web/dist/wasm/parquet_skim_wasm_simd_bg.wasm?url';
import { defaultWasmBuild } from '../../../web/src/wasm-build.ts';
import { beforeWarmRun, finish, loadTimeline, params, url, warmRuns } from './common.mjs';

// The build parquet-skim loads in this engine (the rule is a module of its own, with no imports:
// this page loads nothing else of the package).
const wasmUrl = defaultWasmBuild() === 'no-simd' ? noSimdUrl : simdUrl;

const rounds = JSON.parse(params.get('rounds'));

/** Moves every round; the total ms, and each round's in `roundMs`. */
async function move(suffix = '', roundMs = []) {
  const started = performance.now();
  for (const round of rounds) {
    const roundStarted = performance.now();
    await Promise.all(
      round.map(async (r) => {
        // `no-store`: past Chromium's HTTP cache, which would make requests to one URL wait for
        // each other (see web/src/io/http.ts).
        const headers = { Range: r.range ?? `bytes=${r.start}-${r.end - 1}` };
        const response = await fetch(`${url}${suffix}`, { headers, cache: 'no-store' });
        if (response.status !== 206) throw new Error(`floor: ${response.status} for ${r.start}-${r.end}`);
        await response.arrayBuffer();
      }),
    );
    roundMs.push(performance.now() - roundStarted);
  }
  return performance.now() - started;
}

const compiling = (async () => {
  const started = performance.now();
  await WebAssembly.compileStreaming(fetch(wasmUrl));
  return { started, ms: performance.now() - started };
})();
const [compile, ioMs] = await Promise.all([compiling, move()]);
const coldMs = performance.now();
const warm = [];
const warmRoundMs = [];
for (let i = 0; i < warmRuns; i++) {
  const roundMs = [];
  await beforeWarmRun();
  warm.push(await move(`?warm=${i}`, roundMs));
  warmRoundMs.push(roundMs);
}
// The first move of a fresh page is the floor's "first query": the same bytes, no decoding, so its
// ratio to a warm move bounds what any reader's first query over its repeats can be.
finish({
  coldMs,
  coldQueryMs: ioMs,
  compileMs: compile.ms,
  coldIoMs: ioMs,
  warm,
  warmRoundMs,
  breakdown: loadTimeline(),
});
