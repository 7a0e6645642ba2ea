/**
 * Opening a dataset: its sources resolved, its partitions read from the paths, every footer read
 * (`concurrency` at a time: one round of requests for up to that many files when each footer fits
 * in the open's tail read), and one schema built over them — or, with `schema: 'first'`, only the
 * first file's footer, the others left to the scans that reach them.
 */
import { invalidArgument, ParquetSkimError, toSkimError } from '../errors.js';
import type { ParquetFile } from '../file.js';
import type { OpenOptions, ParquetSource } from '../reader.js';
import {
  Dataset,
  type DatasetContext,
  type DatasetFile,
  type DatasetOptions,
  inFile,
  isFileError,
  mapConcurrently,
} from './dataset.js';
import { inferPartitions, type PartitionColumn } from './partitions.js';
import { unifySchemas } from './schema.js';
import { type DatasetSources, resolveSources } from './sources.js';

/** Smallest and largest tail read of a dataset's files after the first (the largest: a file's default). */
const MIN_DATASET_TAIL_BYTES = 16 * 1024;
const MAX_DATASET_TAIL_BYTES = 512 * 1024;

/** Default footers read at once while opening a dataset. */
export const DEFAULT_DATASET_CONCURRENCY = 128;

/** Opens the files of `sources` as one {@link Dataset}. */
export async function openDataset(
  context: DatasetContext,
  open: (source: ParquetSource, options: OpenOptions) => Promise<ParquetFile>,
  sources: DatasetSources,
  options: DatasetOptions = {},
): Promise<Dataset> {
  const startedAt = performance.now();
  const {
    hivePartitioning = 'auto',
    partitionSchema,
    concurrency = DEFAULT_DATASET_CONCURRENCY,
    onFileError = 'fail',
    schema = 'first',
  } = options;
  if (schema !== 'union' && schema !== 'first') throw invalidArgument('schema', "'union' or 'first'", schema);
  if (!['auto', true, false].includes(hivePartitioning)) {
    throw invalidArgument('hivePartitioning', "'auto', true or false", hivePartitioning);
  }
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw invalidArgument('concurrency', 'a whole number >= 1', concurrency);
  if (onFileError !== 'fail' && onFileError !== 'skip')
    throw invalidArgument('onFileError', "'fail' or 'skip'", onFileError);
  const {
    hivePartitioning: _h,
    partitionSchema: _p,
    concurrency: _c,
    onFileError: _o,
    schema: _s,
    ...openOptions
  } = options;
  const entries = await resolveSources(sources, openOptions);
  const paths = entries.map((e) => e.path);
  let partitions: PartitionColumn[] = [];
  let values = entries.map(() => [] as Array<bigint | string | null>);
  if (hivePartitioning !== false) {
    ({ columns: partitions, values } = inferPartitions(paths, partitionSchema ?? {}));
    if (hivePartitioning === true && partitions.length === 0) {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        `hivePartitioning is true but the paths have no key=value directories (the first is '${paths[0]}')`,
      );
    }
  } else if (partitionSchema !== undefined) {
    throw invalidArgument('partitionSchema', 'no partitionSchema with hivePartitioning: false', partitionSchema);
  }
  // Under 'fail', the first file that fails stops the opens not yet started, and every file
  // opened is closed again before the error is thrown. With schema: 'first', only the first file
  // that opens is opened here.
  let failed: Error | undefined;
  let firstOpened = false;
  let settleFirst = () => {};
  const firstDone = new Promise<void>((resolve) => {
    settleFirst = resolve;
  });
  // The tail read of every file after the first fits the first one's footer (files of one dataset
  // have alike footers): a 512 KiB default read of 64 files with 4 KB footers would move 32 MB.
  let footerReadBytes = openOptions.footerReadBytes;
  const openEntry = (i: number) => {
    const entry = entries[i] as (typeof entries)[number];
    return open(entry.source, {
      ...openOptions,
      ...(entry.size !== undefined ? { size: entry.size } : {}),
      ...(footerReadBytes !== undefined ? { footerReadBytes } : {}),
    });
  };
  const sizeTail = (file: ParquetFile) => {
    if (openOptions.footerReadBytes !== undefined) return;
    const fitted = Math.ceil(file.footerBytes * 1.25) + 8192;
    footerReadBytes = Math.min(MAX_DATASET_TAIL_BYTES, Math.max(MIN_DATASET_TAIL_BYTES, fitted));
  };
  // The first file alone, then the others `concurrency` at a time: two rounds of requests.
  const eager = schema === 'union' ? concurrency : 1;
  const files = await mapConcurrently(entries.length, eager, async (i): Promise<DatasetFile> => {
    const entry = entries[i] as (typeof entries)[number];
    const partitionsOf = Object.fromEntries(partitions.map((p, k) => [p.name, values[i]?.[k] ?? null]));
    const none = { path: entry.path, partitions: partitionsOf, size: entry.size ?? null, rows: null, file: null };
    if (failed !== undefined || (schema === 'first' && firstOpened)) return { ...none, error: null };
    try {
      if (i > 0 && schema === 'union') await firstDone;
      const file = await openEntry(i);
      if (!firstOpened) sizeTail(file);
      firstOpened = true;
      if (i === 0) settleFirst();
      return {
        path: entry.path,
        partitions: partitionsOf,
        size: file.byteLength,
        rows: file.numRows,
        file,
        error: null,
      };
    } catch (error) {
      if (i === 0) settleFirst();
      const named = inFile(error, entry.path);
      if (onFileError === 'fail' || !isFileError(named)) failed ??= named;
      return { ...none, error: toSkimError(named) as ParquetSkimError };
    }
  });
  if (failed !== undefined) {
    for (const f of files) f.file?.close();
    throw failed;
  }
  const opened = files.filter((f) => f.file !== null);
  if (opened.length === 0) {
    throw new ParquetSkimError(
      files[0]?.error?.code ?? 'INVALID_ARGUMENT',
      `no file of the dataset could be opened; the first: ${files[0]?.error?.message ?? 'none'}`,
      { cause: files[0]?.error },
    );
  }
  let unified: ReturnType<typeof unifySchemas>;
  try {
    unified = unifySchemas(
      opened.map((f) => ({ path: f.path, schema: (f.file as ParquetFile).schema })),
      partitions,
    );
  } catch (error) {
    for (const f of opened) f.file?.close();
    throw error;
  }
  const logs = opened.flatMap((f) => f.file?.requestLog() ?? []);
  return new Dataset(
    context,
    files,
    unified,
    partitions,
    {
      files: files.length,
      filesOpened: opened.length,
      filesFailed: files.length - opened.length,
      requests: logs.length,
      bytes: logs.reduce((sum, e) => sum + e.bytes, 0),
      ms: performance.now() - startedAt,
    },
    onFileError === 'skip',
    schema === 'first' ? { open: openEntry, concurrency } : null,
  );
}
