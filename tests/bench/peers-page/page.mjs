/**
 * The benchmark page: `window.peers.setup(args)` loads one system (its JS and WebAssembly, not
 * timed) and prepares one query; `run()` times it — opening the file included — and keeps the
 * output; `answer()` turns the output into the canonical answer (not timed); `dispose()` frees it.
 * tests/bench/peers.mjs drives it, one fresh page per run.
 */
import { answerOf } from './answers.mjs';

const SYSTEMS = {
  'parquet-skim': () => import('./system-skim.mjs'),
  'parquet-wasm': () => import('./system-parquet-wasm.mjs'),
  hyparquet: () => import('./system-hyparquet.mjs'),
  'duckdb-wasm': () => import('./system-duckdb.mjs'),
  floor: () => import('./system-floor.mjs'),
};

let current;

window.peers = {
  async setup(args) {
    const system = await SYSTEMS[args.system]();
    current = { args, prepared: await system.setup(args), output: undefined };
    return current.prepared.info ?? null;
  },
  async run() {
    const started = performance.now();
    current.output = await current.prepared.run();
    return performance.now() - started;
  },
  /** The run's scan statistics, for systems that report them (parquet-skim), else null. */
  stats() {
    return current.output?.stats ?? null;
  },
  /** The canonical answer (null for the I/O floor, which decodes nothing). */
  answer() {
    if (current.output?.floor === true) return null;
    return answerOf(current.args.query, current.args.table, current.output);
  },
  async dispose() {
    await current.prepared.dispose();
    current = undefined;
  },
};
document.body.dataset.ready = 'true';
