/**
 * Starting a decoding worker, from whatever origin the package was loaded.
 *
 * The worker script is `worker.js` next to this package's entry module. Written as
 * `new Worker(new URL('./worker.js', import.meta.url))`, bundlers (Vite, webpack 5, esbuild with
 * plugins) find it and emit it as a worker chunk. Without a bundler the URL is used as it is.
 *
 * A Worker cannot be constructed from a script of another origin — a package loaded from a CDN, say —
 * so then the worker starts from a same-origin `blob:` script whose one line imports the real
 * worker module by its absolute URL (module imports may cross origins, with CORS). The blob is a
 * few bytes per worker started, and is released when the reader's workers end.
 */

/** Options of every decoding worker. */
const WORKER_OPTIONS: WorkerOptions = { type: 'module', name: 'parquet-skim' };

/** A worker from the package's own script, or from `url` (the reader's `workerUrl`). */
export function startWorker(url?: string | URL): { worker: Worker; release(): void } {
  if (url === undefined) {
    // Kept literal, options included, for bundlers: they rewrite it to their emitted worker chunk.
    if (isSameOrigin(import.meta.url)) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'parquet-skim' });
      return { worker, release() {} };
    }
    const base = import.meta.url;
    return fromAnyOrigin(new URL('./worker.js', base));
  }
  return fromAnyOrigin(new URL(url, globalThis.location?.href));
}

function fromAnyOrigin(url: URL): { worker: Worker; release(): void } {
  if (isSameOrigin(url.href) || url.protocol === 'blob:' || url.protocol === 'data:') {
    return { worker: new Worker(url, WORKER_OPTIONS), release() {} };
  }
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: 'text/javascript' }));
  return { worker: new Worker(shim, WORKER_OPTIONS), release: () => URL.revokeObjectURL(shim) };
}

function isSameOrigin(href: string): boolean {
  const origin = globalThis.location?.origin;
  return origin === undefined || new URL(href).origin === origin;
}
