/**
 * The Web Worker script: instantiate the core from the module the scheduler posts, answer `ready`,
 * warm the code up if asked (while no task has come yet), then answer requests with a
 * {@link TaskHost}.
 * Results are transferred, never copied.
 */
import { serializeError } from './errors.js';
import { instantiateWasm, limitWasmMemory } from './wasm-loader.js';
import type { HostRequest, HostResponse } from './worker/protocol.js';
import { TaskHost } from './worker/task-host.js';

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<HostRequest>) => void) | null;
  postMessage(message: HostResponse, transfer: Transferable[]): void;
};

let host: Promise<TaskHost> | undefined;

scope.onmessage = (event) => {
  const request = event.data;
  if (request.kind === 'init') {
    const { memoryLimitBytes } = request;
    host = instantiateWasm(request.module).then((wasm) => {
      if (memoryLimitBytes !== null) limitWasmMemory(wasm, memoryLimitBytes);
      return new TaskHost(wasm);
    });
  }
  if (host === undefined) {
    scope.postMessage(
      { kind: 'failed', taskId: null, error: { name: 'Error', message: 'worker used before init' } },
      [],
    );
    return;
  }
  const taskId = 'taskId' in request ? request.taskId : null;
  const fail = (error: unknown) => scope.postMessage({ kind: 'failed', taskId, error: serializeError(error) }, []);
  host.then((h) => {
    let response: HostResponse | undefined;
    try {
      response = h.handle(request);
    } catch (error) {
      // Never let an error escape silently: the pool must hear of every failure.
      fail(error);
      return;
    }
    if (response === undefined) return;
    scope.postMessage(response, response.kind === 'done' ? [response.ipc.buffer as ArrayBuffer] : []);
    if (response.kind === 'ready' && request.kind === 'init' && request.warmUp) {
      // Idle until its first task: warm the code up for it (see TaskHost.warmUp).
      setTimeout(() => {
        const warmed = h.warmUp(true);
        if (warmed !== undefined) scope.postMessage(warmed, []);
      }, 0);
    }
  }, fail);
};
