/**
 * Type declarations for dev-servers.mjs (the servers developers try first, started for real).
 * The behaviour is documented in dev-servers.mjs itself.
 */

export interface DevServer {
  /** What users call it, e.g. 'vite (dev)'. */
  name: string;
  /** e.g. 'http://127.0.0.1:41234' */
  origin: string;
  /** The URL of a file of the served directory (or bucket/container). */
  fileUrl(file: string): string;
  /** Stops the server (kills its process group). */
  close(): Promise<void>;
  /** The last 4000 characters the server printed. */
  output(): string;
}

export function freePort(): Promise<number>;
export function startViteDev(appDir: string): Promise<DevServer>;
export function startVitePreview(appDir: string): Promise<DevServer>;
export function startHttpServer(root: string): Promise<DevServer>;
export function startServe(root: string): Promise<DevServer>;
export function startPythonHttpServer(root: string): Promise<DevServer>;
export function startNginx(root: string): Promise<DevServer>;
export function startS3(root: string, files?: string[]): Promise<DevServer>;
export function startAzurite(root: string, files?: string[]): Promise<DevServer>;
