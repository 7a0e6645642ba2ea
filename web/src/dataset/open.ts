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
import { HeldFiles } from './held-files.js';
import { inferPartitions, type PartitionColumn } from './partitions.js';
import { unifySchemas } from './schema.js';
import { type DatasetSources, resolveSources } from './sources.js';

/** Smallest and largest tail read of a dataset's files after the first (the largest: a file's default). */
const MIN_DATASET_TAIL_BYTES = 16 * 1024;
const MAX_DATASET_TAIL_BYTES = 512 * 1024;

/** Default footers read at once while opening a dataset. */
export const DEFAULT_DATASET_CONCURRENCY = 128;

/** Default bound on the memory a dataset's open files hold in the core (see `footerMemoryBytes`). */
export const DEFAULT_FOOTER_MEMORY_BYTES = 256 * 1024 * 1024;

/** Opens the files of `sources` as one {@link Dataset}. */
export async function openDataset(
  context: DatasetContext,
  open: (source: ParquetSource, options: OpenOptions) => Promise<ParquetFile>,
  sources: DatasetSources,
  options: DatasetOptions = {},
): Promise<Dataset> {
  const startedAt = performance.now();
  const settings = checkedSettings(options);
  const entries = await resolveSources(sources, settings.openOptions);
  const { partitions, values } = partitionsOf(
    entries.map((e) => e.path),
    settings.hivePartitioning,
    settings.partitionSchema,
  );
  const opener = new FileOpener(entries, open, settings);
  const files = await opener.openAll(partitions, values);
  const { opened } = opener;
  if (opened.length === 0) {
    throw new ParquetSkimError(
      files[0]?.error?.code ?? 'INVALID_ARGUMENT',
      `no file of the dataset could be opened; the first: ${files[0]?.error?.message ?? 'none'}`,
      { cause: files[0]?.error },
    );
  }
  let unified: ReturnType<typeof unifySchemas>;
  try {
    unified = unifySchemas(opened, partitions);
  } catch (error) {
    // Freed without building their summaries: nobody will read them, and a core out of memory could not.
    for (const f of files) f.file?.release();
    throw error;
  }
  return new Dataset(
    context,
    files,
    unified,
    partitions,
    {
      files: files.length,
      filesOpened: opened.length,
      filesFailed: files.length - opened.length,
      requests: opener.requests,
      bytes: opener.bytes,
      ms: performance.now() - startedAt,
    },
    settings.onFileError === 'skip',
    { open: (i) => opener.openEntry(i), concurrency: settings.concurrency, lazy: settings.schema === 'first' },
    opener.held,
  );
}

/** A dataset's own options, checked, with their defaults; `openOptions`: the rest, for every file. */
function checkedSettings(options: DatasetOptions) {
  const {
    hivePartitioning = 'auto',
    partitionSchema,
    concurrency = DEFAULT_DATASET_CONCURRENCY,
    onFileError = 'fail',
    schema = 'first',
    footerMemoryBytes = DEFAULT_FOOTER_MEMORY_BYTES,
    ...openOptions
  } = options;
  if (schema !== 'union' && schema !== 'first') throw invalidArgument('schema', "'union' or 'first'", schema);
  if (!['auto', true, false].includes(hivePartitioning)) {
    throw invalidArgument('hivePartitioning', "'auto', true or false", hivePartitioning);
  }
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw invalidArgument('concurrency', 'a whole number >= 1', concurrency);
  if (onFileError !== 'fail' && onFileError !== 'skip')
    throw invalidArgument('onFileError', "'fail' or 'skip'", onFileError);
  if (!Number.isSafeInteger(footerMemoryBytes) || footerMemoryBytes < 0)
    throw invalidArgument('footerMemoryBytes', 'a whole number of bytes >= 0', footerMemoryBytes);
  return { hivePartitioning, partitionSchema, concurrency, onFileError, schema, footerMemoryBytes, openOptions };
}

type Settings = ReturnType<typeof checkedSettings>;
type Entry = Awaited<ReturnType<typeof resolveSources>>[number];

/** The partition columns of `paths` (none unless hive partitioning is on or found), and each path's values. */
function partitionsOf(
  paths: string[],
  hivePartitioning: Settings['hivePartitioning'],
  partitionSchema: Settings['partitionSchema'],
): { partitions: PartitionColumn[]; values: Array<Array<bigint | string | null>> } {
  if (hivePartitioning === false) {
    if (partitionSchema !== undefined) {
      throw invalidArgument('partitionSchema', 'no partitionSchema with hivePartitioning: false', partitionSchema);
    }
    return { partitions: [], values: paths.map(() => []) };
  }
  const { columns: partitions, values } = inferPartitions(paths, partitionSchema ?? {});
  if (hivePartitioning === true && partitions.length === 0) {
    throw new ParquetSkimError(
      'INVALID_ARGUMENT',
      `hivePartitioning is true but the paths have no key=value directories (the first is '${paths[0]}')`,
    );
  }
  return { partitions, values };
}

/**
 * Opens a dataset's files: the first alone, then the others `concurrency` at a time (two rounds
 * of requests), each with a tail read fitted to the first one's footer (files of one dataset have
 * alike footers: a 512 KiB default read of 64 files with 4 KB footers would move 32 MB). Under
 * 'fail', the first file that fails stops the opens not yet started, and every file opened is
 * closed again before the error is thrown. With schema: 'first', only the first file that opens
 * is opened here; the others are left to the scans that reach them ({@link openEntry}).
 *
 * The files opened count against `footerMemoryBytes` ({@link held}) from the start: a union of
 * more files than fit is opened within it, each file's schema and requests taken as it opens.
 */
class FileOpener {
  /** The dataset's files, in order, as they open. */
  private readonly files: DatasetFile[];
  /** The files kept open (the ones closed over the bound are forgotten on their entries). */
  readonly held: HeldFiles;
  /** Each file opened here: its path and schema, in order. */
  readonly opened: Array<{ index: number; path: string; schema: ParquetFile['schema'] }> = [];
  /** Footer requests and bytes of the files opened here. */
  requests = 0;
  bytes = 0;
  private footerReadBytes: number | undefined;
  private failed: Error | undefined;
  private firstOpened = false;
  private settleFirst = () => {};
  private readonly firstDone = new Promise<void>((resolve) => {
    this.settleFirst = resolve;
  });

  constructor(
    private readonly entries: Entry[],
    private readonly open: (source: ParquetSource, options: OpenOptions) => Promise<ParquetFile>,
    private readonly settings: Settings,
  ) {
    this.footerReadBytes = settings.openOptions.footerReadBytes;
    this.files = new Array<DatasetFile>(entries.length);
    this.held = new HeldFiles(settings.footerMemoryBytes, (i) => {
      const entry = this.files[i];
      if (entry === undefined) return;
      entry.file?.release();
      entry.file = null;
    });
  }

  /** Opens file `i` of the dataset (with the fitted tail read). */
  openEntry(i: number): Promise<ParquetFile> {
    const entry = this.entries[i] as Entry;
    const { footerReadBytes } = this;
    return this.open(entry.source, {
      ...this.settings.openOptions,
      ...(entry.size !== undefined ? { size: entry.size } : {}),
      ...(footerReadBytes !== undefined ? { footerReadBytes } : {}),
    });
  }

  async openAll(partitions: PartitionColumn[], values: Array<Array<bigint | string | null>>): Promise<DatasetFile[]> {
    const { schema, concurrency } = this.settings;
    const eager = schema === 'union' ? concurrency : 1;
    await mapConcurrently(this.entries.length, eager, async (i) => {
      this.files[i] = await this.openOne(
        i,
        Object.fromEntries(partitions.map((p, k) => [p.name, values[i]?.[k] ?? null])),
      );
      const file = this.files[i]?.file;
      if (file !== undefined && file !== null) this.took(i, file);
    });
    // In path order, as a dataset's schema is built.
    this.opened.sort((a, b) => a.index - b.index);
    if (this.failed !== undefined) {
      for (const f of this.files) f.file?.release();
      throw this.failed;
    }
    return this.files;
  }

  /** What the dataset keeps of file `i` opened here: its schema and requests; then it counts against the bound. */
  private took(i: number, file: ParquetFile): void {
    const log = file.requestLog();
    this.requests += log.length;
    this.bytes += log.reduce((sum, e) => sum + e.bytes, 0);
    this.opened.push({ index: i, path: this.entries[i]?.path ?? '', schema: file.schema });
    this.held.opened(i, file.memoryBytes);
  }

  private async openOne(i: number, partitions: DatasetFile['partitions']): Promise<DatasetFile> {
    const entry = this.entries[i] as Entry;
    const { schema, onFileError } = this.settings;
    const none = { path: entry.path, partitions, size: entry.size ?? null, rows: null, file: null };
    if (this.failed !== undefined || (schema === 'first' && this.firstOpened)) return { ...none, error: null };
    try {
      if (i > 0 && schema === 'union') await this.firstDone;
      const file = await this.openEntry(i);
      if (!this.firstOpened) this.sizeTail(file);
      this.firstOpened = true;
      if (i === 0) this.settleFirst();
      return { path: entry.path, partitions, size: file.byteLength, rows: file.numRows, file, error: null };
    } catch (error) {
      if (i === 0) this.settleFirst();
      const named = inFile(error, entry.path);
      if (onFileError === 'fail' || !isFileError(named)) this.failed ??= named;
      return { ...none, error: toSkimError(named) as ParquetSkimError };
    }
  }

  private sizeTail(file: ParquetFile): void {
    if (this.settings.openOptions.footerReadBytes !== undefined) return;
    const fitted = Math.ceil(file.footerBytes * 1.25) + 8192;
    this.footerReadBytes = Math.min(MAX_DATASET_TAIL_BYTES, Math.max(MIN_DATASET_TAIL_BYTES, fitted));
  }
}
