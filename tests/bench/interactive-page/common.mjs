/**
 * What every page of the interactive benchmark shares: its parameters (from the URL), where a
 * fresh page's time went by the Resource Timing API, and how a result is handed to the driver
 * (`window.result`, then `body[data-done]`). Times are `performance.now()`: milliseconds since the
 * navigation started.
 */

/** `?url=…&query=…&table=…&warm=N&gap=MS` (and page-specific ones). */
export const params = new URL(location.href).searchParams;
export const url = params.get('url');
export const query = params.get('query');
export const table = params.get('table') ?? 'lineitem';
/** Warm runs after the cold one, in the same page. */
export const warmRuns = Number(params.get('warm') ?? 3);
/** Idle time before each warm run, the same for every page: 0 runs them back to back. */
const warmGapMs = Number(params.get('gap') ?? 0);

/** Waits out the idle time before a warm run (a user's pause between two queries). */
export function beforeWarmRun() {
  return warmGapMs > 0 ? new Promise((resolve) => setTimeout(resolve, warmGapMs)) : Promise.resolve();
}

/** Requests the page made to load itself: its modules, `.wasm` files and worker scripts. */
export function loadTimeline() {
  const entries = performance.getEntriesByType('resource').filter((e) => !e.name.includes('/sample/'));
  const scripts = entries.filter((e) => /\.m?js(\?|$)/.test(e.name));
  const wasm = entries.filter((e) => /\.wasm(\?|$)/.test(e.name));
  const [navigation] = performance.getEntriesByType('navigation');
  const end = (list) => (list.length === 0 ? null : Math.max(...list.map((e) => e.responseEnd)));
  return {
    htmlEnd: navigation?.responseEnd ?? null,
    moduleRequests: scripts.length,
    moduleBytes: scripts.reduce((n, e) => n + (e.encodedBodySize || 0), 0),
    modulesEnd: end(scripts),
    wasmRequests: wasm.length,
    wasmBytes: wasm.reduce((n, e) => n + (e.encodedBodySize || 0), 0),
    wasmStart: wasm.length === 0 ? null : Math.min(...wasm.map((e) => e.startTime)),
    wasmEnd: end(wasm),
  };
}

/** Hands `result` to the driver. */
export function finish(result) {
  window.result = result;
  document.body.dataset.done = 'true';
}

/** `{ error }` of anything thrown. */
export function failure(error) {
  return { error: `${error?.code ?? error?.name ?? 'Error'}: ${error?.message ?? String(error)}` };
}
