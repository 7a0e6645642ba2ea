/**
 * The I/O queue: every byte a scan reads goes through here.
 *
 * It coalesces each batch of wanted ranges ({@link coalesce}) and keeps at most `concurrency`
 * requests in flight across all scans of a reader, independent of how many workers decode. The
 * gap it reads through follows the source's link when no gap was given: a remote source whose
 * origin was measured fast ({@link RangeReader.bytesPerMs}) merges large runs through larger gaps.
 *
 * The default bound (64) is deliberately above what the transport runs at once. A browser opens 6
 * connections to a host over HTTP/1.1 and queues the rest of a page's requests itself; it starts a
 * queued one as soon as a connection frees in its network process, 5–10 ms before the page learns
 * that a response ended (the body still has to reach it). A bound of 6 here, as until 2026-11-27,
 * made every seventh request of a lookup or a first page wait for that news: layout a's lookup (21
 * requests) ran in four waves paced by the page instead of by the connections (warm, Chromium, the
 * two bounds alternated: that lookup 84 → 72 ms, its first 100 rows 63 → 55, tpchgen-cli's 47 → 41;
 * bulk scans within noise). Over HTTP/2 the browser runs them all at once. The bound stays for
 * callers who want fewer (`ioConcurrency`) and for runtimes without a per-host limit of their own.
 *
 * A batch may be a prefetch (a {@link Prefetch} ticket: bytes of tasks not yet running). Those go
 * through this queue's own order instead of the browser's: a prefetch request takes a slot only
 * when no other request waits for one and fewer than {@link TRANSPORT_SLOTS} − 1 requests are in
 * flight (and fewer than `concurrency` − 1), so prefetches fill the transport's idle connections,
 * never its last free one, and a running task's request (its phase-2 pages) goes out at once or
 * behind other running tasks' only.
 * When its task starts, a prefetch is {@link IoQueue.promote}d: its requests still waiting go
 * to the front of the queue. The
 * requests themselves are a source's (`source.ts`: `fetch` with a checked `Range`, a
 * `Blob` slice, or a copy of bytes), which also keeps the request log.
 */
import { abortReason, invalidArgument, throwIfAborted } from '../errors.js';
import type { Chunk } from '../worker/protocol.js';
import {
  type ByteRange,
  coalesce,
  DEFAULT_GAP_BYTES,
  DEFAULT_MAX_REQUEST_BYTES,
  gapForThroughput,
  multiRangeRequests,
  type Request,
} from './coalesce.js';

/** Something that reads bytes `start..end` (a `Source`); aborting `signal` aborts the read. */
export interface RangeReader {
  read(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * Whether its reads cross a network (an HTTP source): only such reads are worth starting
   * ahead of the tasks that need them (the scheduler's prefetch).
   */
  readonly remote?: boolean;
  /**
   * What its origin's link moves, in bytes per millisecond of response bodies in transit
   * (`LinkMeter` in `source.ts`), once measured: how large a gap is worth reading through
   * ({@link gapForThroughput}).
   */
  readonly bytesPerMs?: number | undefined;
  /**
   * Whether a read of several ranges may go as one request now ({@link readParts}): the reader
   * can, and its server is not known to answer otherwise.
   */
  readonly multiRange?: boolean;
  /** Reads several ranges in one request where its server answers so (`HttpSource`). */
  readParts?(
    parts: readonly ByteRange[],
    signal?: AbortSignal,
  ): Promise<{ chunks: Chunk[]; requests: number; bytes: number }>;
}

/** I/O policy. */
export interface IoOptions {
  /**
   * Most requests in flight at once (default 64: past the browser's own per-host limit, which
   * starts queued requests sooner than the page could; see the module doc).
   */
  concurrency?: number;
  /**
   * Largest gap read through to merge two ranges (default 64 KiB). Given, it is the rule for
   * every read; left out, a remote source measured fast also reads through larger gaps between
   * large runs ({@link gapForThroughput}, `coalesce`).
   */
  gapBytes?: number;
  /** Largest merged request (default 16 MiB). */
  maxRequestBytes?: number;
}

/** Counters of one call's I/O, for scan statistics. */
export interface IoCost {
  requests: number;
  bytes: number;
  /** Sum of request durations (overlapping requests each count). */
  ms: number;
  /** Of `bytes`, those between wanted ranges that requests read through, each to save a request. */
  readThroughBytes: number;
  /** The largest gap the rule in force would read through, over every read so far (0: none yet). */
  gapBytes: number;
  /** The source's {@link RangeReader.bytesPerMs} when the last read was planned, once measured. */
  linkBytesPerMs?: number;
  /** `performance.now()` when the first request was sent, and when its bytes had all arrived. */
  firstSentAt?: number;
  firstDoneAt?: number;
}

/** Default {@link IoOptions.concurrency}. */
export const DEFAULT_IO_CONCURRENCY = 64;

/**
 * Requests a transport runs at once to one host: a browser's connections per host over HTTP/1.1
 * (6 in Chromium, Firefox and WebKit). Prefetches hold at most one fewer.
 */
export const TRANSPORT_SLOTS = 6;

/** A request waiting for a slot. */
interface Waiter {
  grant(): void;
  reject(reason: unknown): void;
  /** The prefetch it belongs to, if any. */
  prefetch: Prefetch | undefined;
}

/** Marks a read as a prefetch (see {@link IoQueue}), until it is promoted. */
export class Prefetch {
  promoted = false;
}

/** A concurrency-limited, coalescing reader. */
export class IoQueue {
  readonly concurrency: number;
  private readonly gapBytes: number;
  /** Whether the gap follows each source's measured throughput (no `gapBytes` given). */
  private readonly measuredGaps: boolean;
  private readonly maxRequestBytes: number;
  private active = 0;
  private readonly waiting: Waiter[] = [];
  /** Prefetch requests waiting: granted only when {@link waiting} is empty and a slot stays free. */
  private readonly waitingPrefetch: Waiter[] = [];
  /** One abort listener per signal, whatever number of batches read with it. */
  private readonly watched = new WeakMap<AbortSignal, { cancels: Set<(reason: unknown) => void>; onAbort(): void }>();

  constructor(options: IoOptions = {}) {
    this.concurrency = positiveInteger('ioConcurrency', options.concurrency ?? DEFAULT_IO_CONCURRENCY);
    this.gapBytes = nonNegative('coalesceGapBytes', options.gapBytes ?? DEFAULT_GAP_BYTES);
    this.measuredGaps = options.gapBytes === undefined;
    this.maxRequestBytes = positiveInteger('maxRequestBytes', options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES);
  }

  /**
   * The requests `read` would make for `ranges` of `reader`: with several ranges per request
   * where the reader's server answers so ({@link multiRangeRequests}), else coalesced.
   */
  requestsFor(ranges: readonly ByteRange[], reader?: RangeReader): Request[] {
    if (reader?.multiRange === true && reader.readParts !== undefined) {
      const slots = Math.min(this.concurrency, TRANSPORT_SLOTS);
      return multiRangeRequests(ranges, slots, this.gapBytes, this.maxRequestBytes, this.nearGapBytes(reader));
    }
    return coalesce(ranges, this.gapBytes, this.maxRequestBytes, this.nearGapBytes(reader));
  }

  /** The largest gap a read of `reader` reads through now: the given gap, or the link's if larger. */
  private gapFor(reader?: RangeReader): number {
    return Math.max(this.gapBytes, this.nearGapBytes(reader));
  }

  /** The larger gap a fast remote `reader` reads through between large runs (0: none). */
  private nearGapBytes(reader: RangeReader | undefined): number {
    if (!this.measuredGaps || reader?.remote !== true) return 0;
    return gapForThroughput(reader.bytesPerMs);
  }

  /**
   * Reads `ranges` of `reader` as coalesced requests; resolves to the chunks read.
   *
   * One listener is added to `signal` however many batches read with it at once, and removed
   * when the last of them ends (a lookup's batch can be twenty requests, and a scan reads ahead
   * with dozens of batches; a listener each made Node warn of a leak, more than 10 on one
   * signal). Each request in flight gets a signal of its own, so no signal has more than one
   * listener per request however high `concurrency` is. When `signal` aborts, or one of the
   * batch's requests fails (nobody will use the others' bytes), the batch's waiting requests
   * leave the queue and its requests in flight are aborted.
   */
  async read(
    reader: RangeReader,
    ranges: readonly ByteRange[],
    signal?: AbortSignal,
    cost?: IoCost,
    prefetch?: Prefetch,
  ): Promise<Chunk[]> {
    throwIfAborted(signal);
    const requests = this.requestsFor(ranges, reader);
    if (cost !== undefined) {
      cost.gapBytes = Math.max(cost.gapBytes, this.gapFor(reader));
      if (reader.bytesPerMs !== undefined) cost.linkBytesPerMs = reader.bytesPerMs;
    }
    const batch = new AbortController();
    const waits = new Set<Waiter>();
    const inFlight = new Set<AbortController>();
    const cancel = (reason: unknown) => {
      for (const wait of waits) {
        for (const queue of [this.waiting, this.waitingPrefetch]) {
          const index = queue.indexOf(wait);
          if (index >= 0) queue.splice(index, 1);
        }
        wait.reject(reason);
      }
      waits.clear();
      batch.abort(reason);
      for (const request of inFlight) request.abort(reason);
    };
    const unwatch = signal === undefined ? undefined : this.watch(signal, cancel);
    try {
      const chunks = await Promise.all(
        requests.map(async (request) => {
          await this.acquire(waits, prefetch);
          const own = new AbortController();
          inFlight.add(own);
          try {
            throwIfAborted(batch.signal);
            const started = performance.now();
            if (cost !== undefined) cost.firstSentAt ??= started;
            const read =
              request.parts !== undefined && reader.readParts !== undefined
                ? await reader.readParts(request.parts, own.signal)
                : await readOne(reader, request, own.signal);
            if (cost !== undefined) {
              const now = performance.now();
              cost.firstDoneAt ??= now;
              cost.requests += read.requests;
              cost.bytes += read.bytes;
              cost.ms += now - started;
            }
            return read.chunks;
          } catch (error) {
            // The first failure ends the batch: the rest of it is cancelled before this slot is
            // released, so no other request of the batch starts in it.
            if (!batch.signal.aborted) cancel(new DOMException('another request of this read failed', 'AbortError'));
            throw error;
          } finally {
            inFlight.delete(own);
            this.release();
          }
        }),
      );
      if (cost !== undefined) {
        cost.readThroughBytes +=
          lengthOf(requests.flatMap((r) => r.parts ?? [r])) - lengthOf(coalesce(ranges, 0, Infinity));
      }
      return chunks.flat();
    } finally {
      unwatch?.();
    }
  }

  /** `prefetch`'s task has started: its requests still waiting go ahead of every other. */
  promote(prefetch: Prefetch): void {
    if (prefetch.promoted) return;
    prefetch.promoted = true;
    const promoted = this.waitingPrefetch.filter((w) => w.prefetch === prefetch);
    if (promoted.length === 0) return;
    this.waitingPrefetch.splice(
      0,
      this.waitingPrefetch.length,
      ...this.waitingPrefetch.filter((w) => w.prefetch !== prefetch),
    );
    this.waiting.unshift(...promoted);
    this.grantWaiting();
  }

  /** Calls `cancel` when `signal` aborts, through one listener per signal; returns its removal. */
  private watch(signal: AbortSignal, cancel: (reason: unknown) => void): () => void {
    let entry = this.watched.get(signal);
    if (entry === undefined) {
      const cancels = new Set<(reason: unknown) => void>();
      const onAbort = () => {
        for (const each of [...cancels]) each(abortReason(signal));
      };
      entry = { cancels, onAbort };
      this.watched.set(signal, entry);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const watching = entry;
    watching.cancels.add(cancel);
    return () => {
      watching.cancels.delete(cancel);
      if (watching.cancels.size > 0 || this.watched.get(signal) !== watching) return;
      this.watched.delete(signal);
      signal.removeEventListener('abort', watching.onAbort);
    };
  }

  /**
   * Slots prefetches may hold: all but one of the transport's connections (and of `concurrency`),
   * so a running task's request never waits for them.
   */
  private get prefetchSlots(): number {
    return Math.max(1, Math.min(this.concurrency, TRANSPORT_SLOTS) - 1);
  }

  /** A slot now, or a place in a queue, recorded in `waits` (its batch's) until granted. */
  private acquire(waits: Set<Waiter>, prefetch: Prefetch | undefined): Promise<void> {
    const low = prefetch !== undefined && !prefetch.promoted;
    const free = low ? this.active < this.prefetchSlots && this.waiting.length === 0 : this.active < this.concurrency;
    if (free) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const wait: Waiter = {
        grant: () => {
          waits.delete(wait);
          this.active += 1;
          resolve();
        },
        reject,
        prefetch,
      };
      waits.add(wait);
      (low ? this.waitingPrefetch : this.waiting).push(wait);
    });
  }

  private release(): void {
    this.active -= 1;
    this.grantWaiting();
  }

  /** Grants the free slots: to the requests of running tasks first, then to prefetches. */
  private grantWaiting(): void {
    while (this.active < this.concurrency && this.waiting.length > 0) this.waiting.shift()?.grant();
    while (this.active < this.prefetchSlots && this.waiting.length === 0 && this.waitingPrefetch.length > 0) {
      this.waitingPrefetch.shift()?.grant();
    }
  }
}

/** One request's range, read as one: its bytes, one request. */
async function readOne(
  reader: RangeReader,
  request: ByteRange,
  signal: AbortSignal,
): Promise<{ chunks: Chunk[]; requests: number; bytes: number }> {
  const data = await reader.read(request.start, request.end, signal);
  return { chunks: [{ start: request.start, data }], requests: 1, bytes: data.byteLength };
}

/** Bytes `ranges` span together (they do not overlap). */
function lengthOf(ranges: readonly ByteRange[]): number {
  return ranges.reduce((sum, r) => sum + (r.end - r.start), 0);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw invalidArgument(name, 'a whole number >= 1', value);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw invalidArgument(name, 'a number >= 0', value);
  return value;
}
