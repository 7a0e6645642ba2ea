/**
 * Type declarations for engines.mjs (Chromium, Firefox ESR and WebKit, driven from Node). The
 * behaviour is documented in engines.mjs itself.
 */

export type EngineName = 'chromium' | 'firefox' | 'webkit';

export const ENGINES: EngineName[];

export interface EnginePage {
  /** Resolves once `selector` matches (attached, visible or not). */
  waitFor(selector: string): Promise<unknown>;
  /** Runs `fn(arg)` in the page (serialized: no closures); resolves to its (awaited) value. */
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  close(): Promise<void>;
}

export interface Engine {
  name: EngineName;
  /** e.g. 'Firefox 153.7.0' */
  version: string;
  /** A fresh context (Chromium, Firefox) or session (WebKit) on `url`. */
  open(url: string): Promise<EnginePage>;
  close(): Promise<void>;
}

export function launchEngine(
  name: EngineName,
  options?: { timeoutMs?: number; jsc?: Record<string, string> },
): Promise<Engine>;
