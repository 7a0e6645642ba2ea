/**
 * The scan scheduler: turns a plan into task results, in plan order.
 *
 * For each task it reads the planned ranges through the {@link IoQueue} (coalesced, bounded
 * concurrency) and hands task + bytes to the {@link Executor}. Up to `tasksAlive + 1` tasks are
 * in flight, so the next task's bytes arrive while the current ones decode, and a worker whose
 * task waits for phase-2 bytes has another to decode. Read-ahead is bounded twice: in fetched
 * bytes (what the plan lists) and in decoded bytes — results finished ahead of the consumer,
 * plus what the tasks in flight will decode, estimated from the decoded / planned ratio of the
 * scan's finished tasks — so a slow consumer of a wide scan never has more than that held in
 * the page. At least one task always runs. Two kinds of read serve several tasks: small
 * neighbouring tasks (row groups of a few hundred rows) read together ({@link neighbourReadGroup}),
 * and a range several tasks list (a row group split where no offset index names its pages) is
 * read once ({@link SharedReads}). I/O runs ahead of decoding: while the window is full, the
 * reads of the tasks after it start as prefetches (up to {@link PREFETCH_BYTES} of them, within
 * `readAheadBytes`), which take only the I/O queue's idle slots. Results are yielded
 * strictly in plan order even when tasks finish out of order. The generator is lazy: a consumer
 * that stops pulling stops new fetches, and one that returns early aborts what is in flight.
 */
import { abortReason } from '../errors.js';
import type { ByteRange } from '../io/coalesce.js';
import { takeHeld } from '../io/held.js';
import { type IoCost, type IoQueue, Prefetch, type RangeReader } from '../io/io-queue.js';
import type { PlanStats, ReadPlan, ReadTask } from '../wasm/contract.js';
import type { Chunk } from '../worker/protocol.js';
import type { Executor, FileFooter, ScanRef, TaskResult } from './executor.js';
import { SharedReads } from './shared-reads.js';

/** A planned task, as the core's planner returns it (its `spec`: what differs per task). */
export type PlannedTask = ReadTask;

export type { PlanStats, ReadPlan };

/** I/O counters per phase. */
export interface PhaseCosts {
  /** Phase 1: the filter columns, fetched before decoding. */
  filter: IoCost;
  /** Phase 2: output columns (all columns without a filter). */
  output: IoCost;
}

/**
 * One file's share of a scan: its planned tasks and where their bytes come from. A scan of one
 * file has one part; a dataset's scan has a part per file, planned as the scan reaches it.
 */
export interface ScanPart {
  file: FileFooter;
  /** The plan's scan, as task hosts get it (see {@link scanRef}). */
  scan: ScanRef;
  reader: RangeReader;
  tasks: readonly PlannedTask[];
  /** Bytes read before planning (page headers walked): tasks take them instead of fetching. */
  held?: readonly Chunk[];
  /** I/O counters, updated as requests complete. */
  cost: PhaseCosts;
  /**
   * A task of this part that fails is yielded as `{ error }` instead of failing the scan (a
   * dataset's `onFileError: 'skip'`); cancellation still rejects.
   */
  yieldErrors?: boolean;
  /** Called when a task, its first bytes fetched, is handed to the executor. */
  onTaskStart?(task: PlannedTask): void;
  /** Called when a task's result is handed out. */
  onTaskDone?(task: PlannedTask, result: TaskResult): void;
  /** Called once when the part's scan is closed: its last result handed out, or the scan ended. */
  onClose?(): void;
}

/** What every part of a scan shares: the I/O queue, the executor and the read-ahead bounds. */
export interface SchedulerContext {
  io: IoQueue;
  executor: Executor;
  /** Most planned bytes in flight ahead of the consumer (at least one task always runs). */
  readAheadBytes: number;
  /**
   * Most decoded bytes (Arrow IPC) held ahead of the consumer: finished results not yet taken,
   * and the estimated output of the tasks in flight (at least one task always runs).
   */
  readAheadDecodedBytes: number;
  /**
   * With a filter, a task's output pages (the plan's upper bound) are fetched together with its
   * filter pages when they take at most this many bytes, or when waiting for the filter could
   * save at most this many of them (the core's `outputSkippableBytes`, which assumes a match) —
   * the latter for at most {@link SPECULATION_BUDGET_FACTOR} times this many output bytes per
   * scan: one round trip instead of two.
   */
  prefetchOutputBytes: number;
  /** The caller's signal, if any. */
  signal?: AbortSignal;
  /**
   * How many parts the scan may read (a dataset's files its partition values do not rule out):
   * once a second part has tasks, the scan weighs as its planned bytes per part so far times
   * this (see `KnownTasks.queryBytes`). Unknown: as unbounded.
   */
  partsExpected?: number;
  /**
   * Whether a part may be pulled only to start its reads ahead ({@link PREFETCH_BYTES}); absent:
   * yes. A dataset says no when opening another file would hold more footers than it may.
   */
  mayPullAhead?: () => boolean;
}

/** What a scan of one file needs to run: the shared context and its one part (less its tasks). */
export type ScanContext = SchedulerContext & Omit<ScanPart, 'tasks' | 'yieldErrors'>;

/** A task's outcome in a multi-part scan, with the part it belongs to. */
export type PartOutcome = { part: ScanPart; result: TaskResult } | { part: ScanPart; error: unknown };

/**
 * Decoded (Arrow IPC) bytes per planned (compressed, encoded) byte assumed before a task of the
 * scan has finished: Parquet's usual 3-5× of compression and encoding. A wrong guess costs only
 * the first window; from the first result on, the scan's own ratio is used.
 */
export const PRIOR_DECODED_PER_PLANNED = 4;

/**
 * Planned bytes under which a task may share one read with the tasks after it
 * ({@link neighbourReadGroup}; not the core's `SMALL_TASK_BYTES`, under which it groups row groups
 * into one task).
 */
export const NEIGHBOUR_TASK_BYTES = 1024 * 1024;
/** Most planned bytes of the tasks sharing one read. */
export const NEIGHBOUR_READ_BYTES = 4 * 1024 * 1024;

/**
 * Most planned bytes read ahead of the tasks in flight ({@link runParts}), over HTTP. The window
 * of tasks in flight is sized for the workers (`tasksAlive + 1`), not for the transport: when
 * tasks are big and few, its reads alone leave the connection idle while the workers decode.
 * TPC-H Q6 over pyarrow's hive-partitioned lineitem (one 3.7 MB task per file, 12 files) fetched
 * five files, then one more each time a task finished, and the transport idled for most of the
 * scan's second half. Prefetched bytes wait in the page until their task runs; this bounds them.
 */
export const PREFETCH_BYTES = 64 * 1024 * 1024;

/**
 * `plan`'s scan as task hosts get it: its id (given when it was planned) and its spec as JSON.
 * With `pageCacheBytes` (the page's share of the cross-scan cache, when it differs from the
 * workers'), also the spec the page's own instance gets: the same, with that budget.
 */
export function scanRef(plan: ReadPlan, pageCacheBytes: number | null = null): ScanRef {
  const filtered = plan.scan.filter !== null;
  const spec = JSON.stringify(plan.scan);
  if (pageCacheBytes === null || pageCacheBytes === plan.scan.columnCacheBytes)
    return { scanId: plan.scan.scanId, spec, filtered };
  const pageSpec = JSON.stringify({ ...plan.scan, columnCacheBytes: pageCacheBytes });
  return { scanId: plan.scan.scanId, spec, pageSpec, filtered };
}

/** Bytes `ranges` cover. */
const rangeBytes = (ranges: readonly ByteRange[]): number => ranges.reduce((sum, r) => sum + r.end - r.start, 0);

/**
 * Bytes the plan lists for `task` (filter and output pages; an upper bound with a filter), a page
 * fetched in part counted whole: the task holds it at its full length (the rest as zeros), so it
 * weighs as it did fetched whole where it decodes (the page's own instance or a worker).
 */
const bytesOf = (task: PlannedTask): number => {
  const whole = task.spec.pagesInPart ?? [];
  const parts = task.outputRanges.filter((r) => whole.some((page) => page.start === r.start));
  return rangeBytes(task.filterRanges) + rangeBytes(task.outputRanges) + rangeBytes(whole) - rangeBytes(parts);
};

/** Runs `plan`, yielding each task's result in plan order. */
export async function* runPlan(plan: ReadPlan, context: ScanContext): AsyncGenerator<TaskResult> {
  const part: ScanPart = { ...context, tasks: plan.tasks };
  async function* one(): AsyncGenerator<ScanPart> {
    yield part;
  }
  for await (const outcome of runParts(one(), plan.limit !== null, context)) {
    if ('error' in outcome) throw outcome.error;
    yield outcome.result;
  }
}

/**
 * Runs the tasks of `parts` as one scan, yielding each task's outcome in order (part by part, task
 * by task). The next part is pulled only when the window has room for its tasks and every task
 * known so far has been launched, or, in a scan that is not `limited`, when the reads of the
 * tasks after the window may start ({@link PREFETCH_BYTES}); so a `limited` scan (a `limit` over
 * a filter: how many tasks it needs is unknown) that ends early never plans the parts after it.
 */
export async function* runParts(
  parts: AsyncIterator<ScanPart>,
  limited: boolean,
  context: SchedulerContext,
): AsyncGenerator<PartOutcome> {
  const internal = new AbortController();
  const onOuterAbort = () => internal.abort(context.signal === undefined ? undefined : abortReason(context.signal));
  context.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (context.signal?.aborted) onOuterAbort();
  const signal = internal.signal;
  const fullWindow = context.executor.tasksAlive + 1;
  // A filtered scan with a limit cannot know how many tasks it needs: start with one, and double
  // the tasks in flight each time a task's result did not end the scan (so `limit: 100` over a
  // filter that matches early fetches one task's pages, not a window's).
  let window = limited ? 1 : fullWindow;
  const tasks = new KnownTasks(parts, context.executor, context.partsExpected);
  const { known } = tasks;
  const running: Array<Promise<TaskResult> | undefined> = [];
  // Reads started before their task's launch, by task index: shared by small neighbouring tasks
  // (see neighbourReadGroup), or prefetched.
  const early = new Map<number, EarlyRead>();
  const decoded = new DecodedAhead();
  let launched = 0;
  let bytesAhead = 0;
  // Whether each task launched has finished (or failed).
  const settled: boolean[] = [];
  // Tasks launched..prefetchedTo had their reads started ahead (or by a neighbour group before
  // their launch): their planned bytes by task index.
  let prefetchedTo = 0;
  const prefetched = new Map<number, number>();
  let prefetchedBytes = 0;
  // A part pulled only to read ahead that failed: thrown when the scan reaches it, not before.
  let pullFailed: { error: unknown } | undefined;
  const pull = async (): Promise<boolean> => {
    if (pullFailed !== undefined) throw pullFailed.error;
    return tasks.pull();
  };
  /**
   * Starts the reads of the tasks after the window, within the prefetch and read-ahead bounds;
   * stops at a task it cannot read ahead (bytes in memory or a local file, bytes held from the
   * plan, or nothing to read: its filter columns are cached). It pulls parts (a dataset's next
   * files) for them only once the scan's first result is out — a pull may walk many files its
   * statistics rule out, and the first result must not wait for that — and only while task
   * `next`'s result is not in and the last part pulled could be read ahead.
   */
  const prefetch = async (next: number) => {
    if (context.io.concurrency <= 1) return;
    for (;;) {
      const index = Math.max(launched, prefetchedTo);
      if (index === known.length) {
        const last = known[index - 1];
        if (next === 0 || settled[next] === true || pullFailed !== undefined) return;
        if (last === undefined || !readsAhead(last.part) || context.mayPullAhead?.() === false) return;
        try {
          if (!(await tasks.pull())) return;
        } catch (error) {
          pullFailed = { error };
          return;
        }
      }
      const { part, bytes } = known[index] as (typeof known)[number];
      if (!readsAhead(part)) return;
      if (prefetchedBytes + bytes > PREFETCH_BYTES || bytesAhead + prefetchedBytes + bytes > context.readAheadBytes)
        return;
      if (!early.has(index)) startNeighbourRead(known, index, context, signal, early, new Prefetch());
      if (!early.has(index)) startOwnRead(known, index, context, signal, early);
      if (!early.has(index)) return;
      prefetchedTo = index + 1;
      prefetched.set(index, bytes);
      prefetchedBytes += bytes;
    }
  };
  try {
    for (let next = 0; ; next++) {
      while (launched - next < window) {
        if (launched === known.length && !(await pull())) break;
        const { part, task, bytes, reads } = known[launched] as (typeof known)[number];
        // Read-ahead is bounded by bytes too: a slow consumer never has more than this fetched,
        // nor more than this decoded.
        if (launched > next && bytesAhead + bytes > context.readAheadBytes) break;
        if (launched > next && decoded.ahead() + decoded.estimate(bytes) > context.readAheadDecodedBytes) break;
        bytesAhead += bytes;
        const index = launched;
        prefetchedBytes -= prefetched.get(index) ?? 0;
        prefetched.delete(index);
        decoded.launch(index, bytes);
        if (!early.has(index)) startNeighbourRead(known, index, context, signal, early);
        const started = early.get(index);
        early.delete(index);
        // Its task runs: a prefetch's requests still waiting go ahead of the others.
        if (started?.prefetch !== undefined) context.io.promote(started.prefetch);
        const promise = runTask(part, task, bytes, context, signal, tasks.queryBytes, started, reads);
        // Failures surface when the consumer reaches this task; until then they are handled.
        promise.then((result) => decoded.finish(index, result.ipc.byteLength)).catch(() => undefined);
        promise.finally(() => reads.release(task)).catch(() => undefined);
        promise.then(
          () => {
            settled[index] = true;
          },
          () => {
            settled[index] = true;
          },
        );
        running[launched] = promise;
        launched += 1;
      }
      if (next === launched) break;
      if (!limited) await prefetch(next);
      const { part, task, bytes } = known[next] as (typeof known)[number];
      let outcome: PartOutcome;
      try {
        const result = await (running[next] as Promise<TaskResult>);
        part.onTaskDone?.(task, result);
        outcome = { part, result };
      } catch (error) {
        if (part.yieldErrors !== true || signal.aborted) throw error;
        outcome = { part, error };
      }
      running[next] = undefined;
      decoded.take(next);
      bytesAhead -= bytes;
      yield outcome;
      // A part's tasks are known all at once: past its last one, its scan is done everywhere.
      if (known[next + 1]?.part !== part) tasks.close(part);
      window = Math.min(fullWindow, window * 2);
    }
  } finally {
    context.signal?.removeEventListener('abort', onOuterAbort);
    // Early return or failure: stop fetching and decoding whatever is still in flight.
    if ((launched > 0 && running.some((p) => p !== undefined)) || early.size > 0) {
      internal.abort(new DOMException('scan ended early', 'AbortError'));
    }
    tasks.closeAll();
  }
}

/**
 * The tasks of a multi-part scan known so far, in scan order, with their part and planned bytes
 * (consulted by the read-ahead bounds on every launch): parts are pulled one at a time, as the
 * window needs their tasks or, in a scan that is not `limited`, to read their tasks' bytes ahead
 * ({@link PREFETCH_BYTES}). Every part pulled has its scan closed wherever it was sent — when its
 * last task is taken, or when the scan ends.
 */
class KnownTasks {
  /** `reads`: the ranges several of the part's tasks list, read once ({@link SharedReads}). */
  readonly known: Array<{ part: ScanPart; task: PlannedTask; bytes: number; reads: SharedReads }> = [];
  /** Planned bytes of every task known so far. */
  plannedBytes = 0;
  /** Parts pulled that had tasks. */
  private partsWithTasks = 0;
  private readonly open = new Set<ScanPart>();
  private exhausted = false;

  constructor(
    private readonly parts: AsyncIterator<ScanPart>,
    private readonly executor: Executor,
    private readonly partsExpected: number | undefined,
  ) {}

  /** Pulls the next part with tasks; false when there is none. */
  async pull(): Promise<boolean> {
    while (!this.exhausted) {
      const next = await this.parts.next();
      if (next.done === true) {
        this.exhausted = true;
        break;
      }
      const part = next.value;
      if (part.tasks.length === 0) continue;
      this.open.add(part);
      this.partsWithTasks += 1;
      const reads = new SharedReads(part.tasks);
      for (const task of part.tasks) {
        const bytes = bytesOf(task);
        this.plannedBytes += bytes;
        this.known.push({ part, task, bytes, reads });
      }
      this.executor.prepare?.(part.file, this.queryBytes);
      return true;
    }
    return false;
  }

  /**
   * How big a query this is, as the executor weighs it (a small one may decode on the page; a big
   * one starts the workers): the planned bytes known so far — and once a second part (a dataset's
   * second file) has tasks, those per part times the parts the scan may read (unbounded when
   * that is not known). The files after it are not planned yet, so what is known says little of
   * what the scan will read: the hive dataset's Q6 plans ~1 MiB per file, and weighed by what was
   * known its first files decoded on the page while the workers had not been started; a dataset
   * of a few tiny files weighs as tiny and stays on the page.
   */
  get queryBytes(): number {
    if (this.partsWithTasks <= 1) return this.plannedBytes;
    if (this.partsExpected === undefined) return Number.POSITIVE_INFINITY;
    const perPart = this.plannedBytes / this.partsWithTasks;
    return perPart * Math.max(this.partsExpected, this.partsWithTasks);
  }

  close(part: ScanPart): void {
    if (!this.open.delete(part)) return;
    this.executor.closeScan(part.scan.scanId);
    part.onClose?.();
  }

  closeAll(): void {
    for (const part of this.open) this.close(part);
  }
}

/** Whether a part's reads are worth starting ahead: over a network, and not planned from held bytes. */
const readsAhead = (part: ScanPart): boolean => part.reader.remote === true && (part.held?.length ?? 0) === 0;

/**
 * A read started before its task's launch: its chunks, the ranges of them another task's read
 * carried (a {@link SharedReads} range: their bytes count there), and, for a prefetch, the ticket
 * promoted when the task starts.
 */
interface EarlyRead {
  read: Promise<{ chunks: Chunk[]; taken: ByteRange[] }>;
  prefetch?: Prefetch;
}

/**
 * Starts the read task `index` shares with its small neighbours, if it shares one
 * ({@link neighbourReadGroup}) — as a prefetch when given its ticket. The group ends before a task
 * whose bytes are already being read.
 */
function startNeighbourRead(
  known: KnownTasks['known'],
  index: number,
  context: SchedulerContext,
  signal: AbortSignal,
  early: Map<number, EarlyRead>,
  prefetch?: Prefetch,
): void {
  const group = neighbourReadGroup(known, index, context, (k) => early.has(k));
  if (group.indexes.length <= 1) return;
  const { part, task } = known[index] as KnownTasks['known'][number];
  const cost = part.cost[readsOf(part, task, context).phase];
  const read = context.io.read(part.reader, group.ranges, signal, cost, prefetch).then((chunks) => ({
    chunks,
    taken: [],
  }));
  read.catch(() => undefined);
  for (const k of group.indexes) early.set(k, prefetch === undefined ? { read } : { read, prefetch });
}

/**
 * Starts task `index`'s own reads ahead of its launch, as a prefetch. Ranges other tasks of its
 * part list too go through the part's {@link SharedReads}, so they are still read once.
 */
function startOwnRead(
  known: KnownTasks['known'],
  index: number,
  context: SchedulerContext,
  signal: AbortSignal,
  early: Map<number, EarlyRead>,
): void {
  const { part, task, reads } = known[index] as KnownTasks['known'][number];
  const { ranges, phase } = readsOf(part, task, context);
  if (ranges.length === 0) return;
  const prefetch = new Prefetch();
  const read = reads.read(ranges, (wanted) => context.io.read(part.reader, wanted, signal, part.cost[phase], prefetch));
  read.catch(() => undefined);
  early.set(index, { read, prefetch });
}

/**
 * Decoded bytes ahead of the consumer: the results finished and not yet taken, plus the tasks in
 * flight at the scan's decoded / planned ratio so far — {@link PRIOR_DECODED_PER_PLANNED} until a
 * task has finished.
 */
export class DecodedAhead {
  private readonly inFlight = new Map<number, number>();
  private readonly held = new Map<number, number>();
  private plannedDone = 0;
  private decodedDone = 0;

  launch(index: number, plannedBytes: number): void {
    this.inFlight.set(index, plannedBytes);
  }

  finish(index: number, decodedBytes: number): void {
    const planned = this.inFlight.get(index);
    if (planned === undefined) return;
    this.inFlight.delete(index);
    this.held.set(index, decodedBytes);
    this.plannedDone += planned;
    this.decodedDone += decodedBytes;
  }

  /** The consumer took task `index`'s result. */
  take(index: number): void {
    this.inFlight.delete(index);
    this.held.delete(index);
  }

  /** Decoded bytes a task planning `plannedBytes` is expected to produce. */
  estimate(plannedBytes: number): number {
    return this.plannedDone > 0
      ? (plannedBytes * this.decodedDone) / this.plannedDone
      : plannedBytes * PRIOR_DECODED_PER_PLANNED;
  }

  ahead(): number {
    let bytes = 0;
    for (const b of this.held.values()) bytes += b;
    for (const planned of this.inFlight.values()) bytes += this.estimate(planned);
    return bytes;
  }
}

/**
 * Output bytes per byte of `prefetchOutputBytes` a scan may fetch up front on the assumption of a
 * match ({@link readsOf}): what it can lose when the assumption is wrong — a filter whose
 * statistics narrowed the file, and another conjunct that matches nothing in the row groups left
 * (e.g. a key range and a rare `LIKE`, on a file without an offset index: whole output chunks).
 */
export const SPECULATION_BUDGET_FACTOR = 16;

/** Per scan (its context): output bytes admitted on the assumption of a match so far. */
const speculated = new WeakMap<SchedulerContext, number>();
/** Per task: whether it was admitted (asked again by neighbour grouping and by its own run). */
const admitted = new WeakMap<PlannedTask, boolean>();

/**
 * Whether `task`'s output pages are read with its filter pages though they take more than
 * `prefetchOutputBytes`: waiting could save at most that many of them (the core's
 * `outputSkippableBytes`), and the scan's budget has room for them.
 */
function assumesMatch(task: PlannedTask, outputBytes: number, context: SchedulerContext): boolean {
  let answer = admitted.get(task);
  if (answer === undefined) {
    const spent = speculated.get(context) ?? 0;
    answer =
      task.outputSkippableBytes <= context.prefetchOutputBytes &&
      spent + outputBytes <= SPECULATION_BUDGET_FACTOR * context.prefetchOutputBytes;
    if (answer) speculated.set(context, spent + outputBytes);
    admitted.set(task, answer);
  }
  return answer;
}

/**
 * What a task reads before it is handed to the executor. Two-phase I/O: with a filter, only the
 * filter columns are fetched up front; the decoder asks for output pages once it knows which rows
 * survived — unless they are few (`prefetchOutputBytes`), or waiting could save few of them
 * ({@link assumesMatch}: a lookup the statistics narrowed to pages no finer than its output
 * columns' reads them all for one match); then both phases in one read, where an output column
 * lying between two filter columns joins their request. Filter columns a worker's cross-scan
 * cache holds are not fetched at all: the task goes to that worker.
 */
function readsOf(
  part: ScanPart,
  task: PlannedTask,
  context: SchedulerContext,
): { ranges: ByteRange[]; phase: 'filter' | 'output'; speculate: boolean } {
  const { filtered } = part.scan;
  const cacheKey = task.spec.cacheKey ?? undefined;
  const cached = cacheKey !== undefined && context.executor.holds(cacheKey);
  const outputBytes = rangeBytes(task.outputRanges);
  const speculate =
    filtered &&
    !cached &&
    context.prefetchOutputBytes > 0 &&
    (outputBytes <= context.prefetchOutputBytes || assumesMatch(task, outputBytes, context));
  const ranges = speculate
    ? [...task.filterRanges, ...task.outputRanges]
    : cached
      ? []
      : filtered
        ? task.filterRanges
        : task.outputRanges;
  return { ranges, phase: filtered ? 'filter' : 'output', speculate };
}

/**
 * Tasks of one part that read together: from task `first` on, the small tasks (planned bytes
 * under {@link NEIGHBOUR_TASK_BYTES}) whose reads join the same coalesced requests — row groups of a
 * few hundred rows (pyarrow's `write_to_dataset`, Spark) lie next to each other, and one request
 * for many of them replaces one each. A task whose ranges would need a request of its own ends
 * the group, as does {@link NEIGHBOUR_READ_BYTES}. Returns the task indexes and their ranges.
 */
function neighbourReadGroup(
  known: KnownTasks['known'],
  first: number,
  context: SchedulerContext,
  reading: (index: number) => boolean = () => false,
): { indexes: number[]; ranges: ByteRange[] } {
  const start = known[first] as (typeof known)[number];
  const ranges = [...readsOf(start.part, start.task, context).ranges];
  const indexes = [first];
  if (start.bytes >= NEIGHBOUR_TASK_BYTES || ranges.length === 0 || (start.part.held?.length ?? 0) > 0) {
    return { indexes, ranges };
  }
  let requests = context.io.requestsFor(ranges, start.part.reader).length;
  let bytes = start.bytes;
  for (let k = first + 1; k < known.length; k++) {
    const next = known[k] as (typeof known)[number];
    if (
      next.part !== start.part ||
      reading(k) ||
      next.bytes >= NEIGHBOUR_TASK_BYTES ||
      bytes + next.bytes > NEIGHBOUR_READ_BYTES
    )
      break;
    const wanted = readsOf(next.part, next.task, context).ranges;
    if (wanted.length === 0) break;
    const joined = context.io.requestsFor([...ranges, ...wanted], start.part.reader).length;
    if (joined > requests) break;
    ranges.push(...wanted);
    requests = joined;
    bytes += next.bytes;
    indexes.push(k);
  }
  return { indexes, ranges };
}

async function runTask(
  part: ScanPart,
  task: PlannedTask,
  plannedBytes: number,
  context: SchedulerContext,
  signal: AbortSignal,
  scanPlannedBytes: number,
  started: EarlyRead | undefined,
  reads: SharedReads,
): Promise<TaskResult> {
  const { io } = context;
  const { reader, cost } = part;
  const { ranges, phase, speculate } = readsOf(part, task, context);
  const before = started === undefined ? undefined : await started.read;
  const { chunks, missing } = takeHeld(ranges, before?.chunks ?? part.held ?? []);
  const read = await reads.read(missing, (wanted) => io.read(reader, wanted, signal, cost[phase]));
  chunks.push(...read.chunks);
  const taken = [...(before?.taken ?? []), ...read.taken];
  if (speculate) {
    // A read carrying both phases counts as phase 1; the output ranges' bytes count as phase 2
    // (those this task read: another task's read counted the ranges it took from it).
    const fetched = task.outputRanges.filter((r) => !taken.some((t) => t.start === r.start && t.end === r.end));
    const moved = rangeBytes(fetched);
    cost.filter.bytes -= moved;
    cost.output.bytes += moved;
  }
  part.onTaskStart?.(task);
  const cacheKey = task.spec.cacheKey ?? undefined;
  return context.executor.run({
    file: part.file,
    scan: part.scan,
    spec: JSON.stringify(task.spec),
    ...(cacheKey !== undefined ? { cacheKey } : {}),
    chunks,
    plannedBytes,
    scanPlannedBytes,
    fetchMore: async (ranges: ByteRange[]): Promise<Chunk[]> =>
      (await reads.read(ranges, (wanted) => io.read(reader, wanted, signal, cost.output))).chunks,
    signal,
  });
}
