/**
 * Type declarations for virtual-file.mjs, so TypeScript tests can import the plain-Node server
 * under `strict`. The behaviour is documented in virtual-file.mjs itself.
 */

/** A stored piece of the template: `len` bytes of `template.bin` from `bin`. */
export interface StoredPiece {
  bin: number;
  len: number;
}

/** A run of the row group: stored bytes, or zeros. `at` is relative to the row group's start. */
export type TemplateSegment = { at: number; len: number; bin: number } | { at: number; len: number; zeros: true };

/** `template.json`, as crate/datagen's `big-template` writes it. */
export interface TemplateManifest {
  format: string;
  fileLen: number;
  copies: number;
  rowsPerGroup: number;
  padWidth: number;
  groupStart: number;
  groupLen: number;
  footerStart: number;
  head: StoredPiece;
  segments: TemplateSegment[];
  footer: StoredPiece;
  binLen: number;
  /** Data pages of the template row group: `[at (relative to the row group), bytes, first row]`. */
  pages: { k: Array<[number, number, number]>; pad: Array<[number, number, number]> };
}

export interface VirtualTemplate {
  manifest: TemplateManifest;
  bin: Uint8Array;
  size: number;
  etag: string;
}

export interface VirtualFileLogEntry {
  method: string;
  path: string;
  range: string | null;
  status: number;
  bytes: number;
  ms: number;
  /** The half-open span of the file served, or null (no body: OPTIONS, 404, 416…). */
  start: number | null;
  end: number | null;
  aborted?: boolean;
}

export interface VirtualFileServer {
  url: string;
  log: VirtualFileLogEntry[];
  resetLog(): void;
  close(): Promise<void>;
}

export const TEMPLATE_FORMAT: string;
export function loadTemplate(dir: string): Promise<VirtualTemplate>;
export function virtualBytes(template: VirtualTemplate, start: number, end: number): Generator<Uint8Array>;
export function startVirtualFileServer(options: {
  files: Record<string, string>;
  host?: string;
  port?: number;
  latencyMs?: number;
}): Promise<VirtualFileServer>;
