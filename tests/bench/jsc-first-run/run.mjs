/**
 * What a fresh JavaScriptCore instance (Safari's engine) pays the first time it runs the core:
 * open (footer and page index), plan, bind, build and run the first task, IPC → apache-arrow —
 * each step timed, in a new `jsc` process (WebKitGTK's shell, `/usr/bin/jsc`), then again on the
 * same instance. The first pass is the cold page's first query without the page around it: a
 * step that costs far more the first time is running code for the first time.
 *
 *   jsc tests/bench/jsc-first-run/text-codec.js -m tests/bench/jsc-first-run/run.mjs -- \
 *     <glue.js> <.wasm> <file.parquet> <first100|lookup> [passes] [columns,…] [warm-up]
 *
 * `<glue.js>` and `<.wasm>`: a build's wasm-bindgen glue and module (web/src/wasm/…). JSC
 * options go before the files (`--useWasmIPIntLoopOSR=false …` keeps every function in the
 * interpreter). Found with it (2026-11-28): with `simd128` on, the first task of a first 100 rows
 * took 40–54 ms against 3 on the second pass; without, 10–16 (README, Benchmarks); and that the
 * rest of a first pass's excess is the baseline JIT's compiles running beside it
 * (bench/results/2026-11-28-webkit-first-pass.md).
 *
 * `open` is the sum of `tail` (the first push: the loader's first call), `footer` (footer and
 * page index decoded) and `finish`. `[warm-up]`, `plan` or `decode`: one pass of the core's own
 * warm-up (`warmUp`) after the compile, timed as `warmUpMs`, before the first pass.
 */
const [gluePath, wasmPath, path, query, passes = '2', columns, warmUp] = globalThis.arguments ?? scriptArgs;
const core = await import(gluePath);
const { RecordBatchReader } = await import('../../../web/dist/apache-arrow.js');
const now = () => preciseTime() * 1000;

let started = now();
core.initSync({ module: new Uint8Array(read(wasmPath, 'binary')) });
const compileMs = now() - started;
let warmUpMs;
if (warmUp !== undefined) {
  started = now();
  core.warmUp(warmUp === 'decode');
  warmUpMs = +(now() - started).toFixed(1);
}
const data = new Uint8Array(read(path, 'binary'));
const runs = [];
for (let pass = 0; pass < Number(passes); pass++) {
  const ms = {};
  started = now();
  const lap = (step) => {
    const at = now();
    ms[step] = +(at - started).toFixed(2);
    started = at;
  };
  const tail = Math.max(0, data.length - 524288);
  const loader = new core.MetadataLoader(data.length, undefined);
  loader.push(tail, data.subarray(tail));
  lap('tail');
  for (let needs = JSON.parse(loader.needs()); needs.length > 0; needs = JSON.parse(loader.needs())) {
    for (const r of needs) loader.push(r.start, data.subarray(r.start, r.end));
  }
  lap('footer');
  const file = loader.finish();
  lap('finish');
  ms.open = +(ms.tail + ms.footer + ms.finish).toFixed(2);
  const request =
    query === 'lookup'
      ? { filter: JSON.parse(core.parseFilter('l_orderkey = 3000323')) }
      : { limit: 100, ...(columns ? { columns: columns.split(',') } : {}) };
  const plan = JSON.parse(
    file.planScan(JSON.stringify({ ...request, scanId: pass + 1, predicateCacheBytes: 8 << 20 })),
  );
  lap('plan');
  const scan = new core.Scan(file, JSON.stringify(plan.scan));
  lap('bind');
  const [task] = plan.tasks;
  const decoder = new core.Task(scan, JSON.stringify(task.spec));
  lap('build task');
  for (const r of [...task.filterRanges, ...task.outputRanges]) decoder.push(r.start, data.subarray(r.start, r.end));
  for (;;) {
    const step = JSON.parse(decoder.run());
    if (step.kind === 'done') break;
    if (step.kind === 'needs') for (const r of step.ranges) decoder.push(r.start, data.subarray(r.start, r.end));
  }
  lap('run task');
  const ipc = decoder.takeIpc();
  RecordBatchReader.from(ipc).readAll();
  lap('IPC → Arrow');
  decoder.free();
  scan.free();
  file.free();
  runs.push(ms);
}
print(JSON.stringify({ compileMs: +compileMs.toFixed(1), warmUpMs, runs }));
