/**
 * The files of a dataset, as the caller names them: URLs, `File`s (a chosen folder's carry their
 * relative path), `{ path, file }` pairs (a dropped folder walked by the app, or Node), or the
 * entries of a manifest — a JSON list of paths (or `{ path, size }`) resolved against the
 * manifest's own URL. Each becomes an {@link Entry}: what to open, the path its hive partitions
 * are read from, and its size when known (which saves the open's suffix request).
 */
import { invalidArgument, ParquetSkimError, toSkimError } from '../errors.js';
import type { OpenOptions, ParquetSource } from '../reader.js';

/** A file of a dataset. */
export type DatasetSource =
  | string
  | URL
  | Blob
  | { path: string; file: Blob }
  | { url: string | URL; size?: number; path?: string };

/** Where a dataset's files are listed: the files themselves, or a manifest to fetch. */
export type DatasetSources = readonly DatasetSource[] | { manifest: string | URL };

/** One file to open. */
export interface Entry {
  source: ParquetSource;
  /** The path shown for the file, whose directories carry its hive partitions. */
  path: string;
  size: number | undefined;
}

/** Resolves `sources` (fetching a manifest) into the entries to open, in order. */
export async function resolveSources(sources: DatasetSources, options: OpenOptions): Promise<Entry[]> {
  if (!Array.isArray(sources)) {
    const manifest = (sources as { manifest?: unknown }).manifest;
    if (typeof manifest !== 'string' && !(manifest instanceof URL)) {
      throw invalidArgument('sources', 'a list of files or { manifest: url }', sources);
    }
    return manifestEntries(manifest, options);
  }
  if (sources.length === 0) throw invalidArgument('sources', 'at least one file', 'an empty list');
  return sources.map(entryOf);
}

function entryOf(source: DatasetSource, index: number): Entry {
  if (typeof source === 'string' || source instanceof URL) {
    return { source, path: urlPath(source), size: undefined };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    const file = source as Blob & { webkitRelativePath?: string; name?: string };
    const path = file.webkitRelativePath || file.name || `file ${index}`;
    return { source, path, size: source.size };
  }
  if (typeof source === 'object' && source !== null && 'file' in source && source.file instanceof Blob) {
    if (typeof source.path !== 'string') throw invalidArgument(`sources[${index}].path`, 'a string', source.path);
    return { source: source.file, path: source.path, size: source.file.size };
  }
  if (typeof source === 'object' && source !== null && 'url' in source) {
    const { url, size, path } = source;
    if (typeof url !== 'string' && !(url instanceof URL)) throw invalidArgument(`sources[${index}].url`, 'a URL', url);
    if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) {
      throw invalidArgument(`sources[${index}].size`, 'a whole number of bytes', size);
    }
    return { source: url, path: path ?? urlPath(url), size };
  }
  throw invalidArgument(`sources[${index}]`, 'a URL, a File/Blob, { path, file } or { url, size? }', source);
}

/** A URL's path, decoded (its hive segments are percent-encoded in the URL). */
function urlPath(url: string | URL): string {
  try {
    const base = typeof location !== 'undefined' ? location.href : undefined;
    return decodeURIComponent(new URL(url, base).pathname);
  } catch {
    return String(url);
  }
}

async function manifestEntries(manifest: string | URL, options: OpenOptions): Promise<Entry[]> {
  const base = typeof location !== 'undefined' ? location.href : undefined;
  const url = new URL(manifest, base);
  let listed: unknown;
  try {
    const response = await fetch(url, {
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
      ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    });
    if (!response.ok) {
      throw new ParquetSkimError(
        'HTTP_STATUS',
        `the manifest ${url} answered ${response.status} ${response.statusText}: expected 200 with a JSON list of files`,
      );
    }
    listed = await response.json();
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new ParquetSkimError('INVALID_ARGUMENT', `the manifest ${url} is not JSON: ${error.message}`);
    }
    if (error instanceof ParquetSkimError) throw error;
    const cause = toSkimError(error);
    throw new ParquetSkimError('NETWORK', `reading the manifest ${url} failed: ${cause.message}`, { cause: error });
  }
  const list = Array.isArray(listed) ? listed : (listed as { files?: unknown } | null)?.files;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ParquetSkimError(
      'INVALID_ARGUMENT',
      `the manifest ${url} lists no files: expected a JSON list of paths or of { "path", "size" } objects`,
    );
  }
  return list.map((item: unknown, i): Entry => {
    const { path, size } =
      typeof item === 'string' ? { path: item, size: undefined } : (item as { path?: unknown; size?: unknown });
    if (typeof path !== 'string' || path === '') {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        `manifest entry ${i} of ${url} has no "path": got ${JSON.stringify(item)}`,
      );
    }
    if (size !== undefined && (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)) {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        `manifest entry ${i} of ${url} has "size" ${JSON.stringify(size)}: expected bytes`,
      );
    }
    return { source: new URL(path, url).href, path, size };
  });
}
