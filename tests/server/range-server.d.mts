/**
 * Type declarations for range-server.mjs, so TypeScript tests, Playwright
 * configs and benchmarks can import the plain-Node server under `strict`.
 * The behaviour is documented in range-server.mjs itself.
 */

export interface RangeServerOptions {
  /** URL prefix → directory; the longest matching prefix wins. */
  mounts: Record<string, string>;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Delay before each response starts, in milliseconds. */
  latencyMs?: number;
  /** Cap on the bytes of file bodies per second, all responses together, in Mbit/s (0: none). */
  bandwidthMbps?: number;
  /** Extra headers sent on every response. */
  headers?: Record<string, string>;
}

export interface RangeServerLogEntry {
  method: string;
  /** Raw request target, query included. */
  path: string;
  /** Raw Range header, or null when absent. */
  range: string | null;
  /** The `Authorization` request header, if sent. */
  authorization: string | null;
  /** The `If-Match` request header, if sent. */
  ifMatch: string | null;
  /** True when the client closed the connection before the whole body was sent. */
  aborted?: boolean;
  status: number;
  /** Body bytes sent. */
  bytes: number;
  /** Time from request arrival to the last body byte handed to the socket. */
  ms: number;
}

export interface RangeServer {
  /** e.g. 'http://127.0.0.1:41234' */
  url: string;
  log: RangeServerLogEntry[];
  resetLog(): void;
  /** Responses started and not yet finished or closed (requests still open). */
  readonly openRequests: number;
  close(): Promise<void>;
}

export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'unsatisfiable' }
  | { kind: 'range'; start: number; end: number };

export function startRangeServer(options: RangeServerOptions): Promise<RangeServer>;
export function parseRange(header: string | null | undefined, size: number): RangeDecision;
export function contentTypeFor(fileName: string): string;
export function parseCliArgs(argv: string[]): Required<Omit<RangeServerOptions, 'headers'>>;

/** One shared link of a fixed capacity (Mbit/s), first come first served. */
export class Link {
  constructor(mbps: number);
  readonly bytesPerMs: number;
  /** Reserves the link for `bytes`; the milliseconds until they have crossed it. */
  reserve(bytes: number): number;
}
