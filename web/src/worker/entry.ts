/**
 * The Web Worker script: instantiate the core from the module the scheduler posts, then answer
 * requests with a {@link TaskHost}. Results are transferred, never copied.
 */
import { serializeError } from '../errors.js';
import { instantiateWasm } from '../wasm-loader.js';
import type { HostRequest, HostResponse } from './protocol.js';
import { TaskHost } from './task-host.js';

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<HostRequest>) => void) | null;
  postMessage(message: HostResponse, transfer: Transferable[]): void;
};

let host: Promise<TaskHost> | undefined;

scope.onmessage = (event) => {
  const request = event.data;
  if (request.kind === 'init') {
    host = instantiateWasm(request.module).then((wasm) => new TaskHost(wasm));
  }
  if (host === undefined) {
    scope.postMessage(
      { kind: 'failed', taskId: null, error: { name: 'Error', message: 'worker used before init' } },
      [],
    );
    return;
  }
  host.then(
    (h) => {
      const response = h.handle(request);
      if (response === undefined) return;
      scope.postMessage(response, response.kind === 'done' ? [response.ipc.buffer as ArrayBuffer] : []);
    },
    (error: unknown) => scope.postMessage({ kind: 'failed', taskId: null, error: serializeError(error) }, []),
  );
};
