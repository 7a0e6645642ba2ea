/**
 * The browser test harness: puts the public API and test helpers on `window.harness` for
 * Playwright's `page.evaluate`. Everything runs for real: the package as an app imports it, its
 * Web Workers, its WebAssembly, range requests to the test server.
 */

import { tableFromIPC } from 'apache-arrow';
import * as skim from 'parquet-skim';
import { canonicalTable, compareTables } from '../../support/canonical.ts';

/** Runs parquet-skim inside a module worker (inline decoding there) and reports what it read. */
function openInWorker(url: string, columns: string[]): Promise<{ rows: number; requests: number }> {
  const worker = new Worker(new URL('./in-worker.ts', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ ok: boolean; rows?: number; requests?: number; error?: string }>) => {
      worker.terminate();
      if (event.data.ok) resolve({ rows: event.data.rows ?? 0, requests: event.data.requests ?? 0 });
      else reject(new Error(event.data.error));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message));
    };
    worker.postMessage({ url, columns });
  });
}

/** The file chosen in the page's file input. */
function chosenFile(): File {
  const input = document.getElementById('file-input') as HTMLInputElement;
  const file = input.files?.[0];
  if (file === undefined) throw new Error('no file chosen');
  return file;
}

/** The files of the folder chosen in the page's folder input (`webkitdirectory`). */
function chosenFolder(): File[] {
  const input = document.getElementById('folder-input') as HTMLInputElement;
  return [...(input.files ?? [])];
}

/** Error fields that survive page.evaluate. */
function describeError(error: unknown): {
  name: string;
  code: string | null;
  message: string;
  file: string | null;
  isSkimError: boolean;
} {
  const e = error as { name?: string; code?: string; message?: string; file?: string };
  return {
    name: e.name ?? 'unknown',
    code: e.code ?? null,
    file: e.file ?? null,
    message: e.message ?? String(error),
    isSkimError: error instanceof skim.ParquetSkimError,
  };
}

/**
 * Rewrites the task specs the page posts to its workers: `edit` gets each `runTask`'s spec and
 * returns the spec to send instead (or undefined: unchanged). Returns the undo.
 */
function rewriteTaskSpecs(edit: (spec: { taskIdx: number }) => object | undefined): () => void {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, message: unknown, transfer?: unknown) {
    const m = message as { kind?: string; spec?: string };
    if (m?.kind === 'runTask' && typeof m.spec === 'string') {
      const edited = edit(JSON.parse(m.spec) as { taskIdx: number });
      if (edited !== undefined) message = { ...m, spec: JSON.stringify(edited) };
    }
    return (post as (this: Worker, m: unknown, t?: unknown) => void).call(this, message, transfer);
  } as typeof post;
  return () => {
    Worker.prototype.postMessage = post;
  };
}

const harness = {
  skim,
  tableFromIPC,
  canonicalTable,
  compareTables,
  openInWorker,
  chosenFile,
  chosenFolder,
  describeError,
  rewriteTaskSpecs,
};

declare global {
  interface Window {
    harness: typeof harness;
  }
}

window.harness = harness;
document.body.dataset.ready = 'true';
