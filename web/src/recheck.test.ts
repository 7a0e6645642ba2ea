import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ParquetSkimError } from './errors.js';
import { BytesSource } from './io/source.js';
import { loadMetadata } from './reader.js';
import { mayBeEngineFault, recheck, rechecks } from './recheck.js';
import { compileWasm, instantiateWasm, type Wasm } from './wasm-loader.js';

const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/parquet-testing/data');

const counts = () => ({ ...rechecks });
const since = (before: { ran: number; passed: number }) => ({
  ran: rechecks.ran - before.ran,
  passed: rechecks.passed - before.passed,
});

describe('recheck', () => {
  it('takes what may be the engine’s fault for a second look, and nothing else', () => {
    expect(mayBeEngineFault(new ParquetSkimError('INVALID_FILE', 'footer'))).toBe(true);
    expect(mayBeEngineFault(new ParquetSkimError('INTERNAL', 'oops'))).toBe(true);
    // A trap, as the core throws it (no code): INTERNAL.
    expect(mayBeEngineFault(Object.assign(new Error('unreachable'), { name: 'RuntimeError' }))).toBe(true);
    expect(mayBeEngineFault(new ParquetSkimError('INVALID_ARGUMENT', 'bad'))).toBe(false);
    expect(mayBeEngineFault(new ParquetSkimError('TOO_LARGE', 'big'))).toBe(false);
    expect(mayBeEngineFault(new ParquetSkimError('HTTP_STATUS', '500'))).toBe(false);
    expect(mayBeEngineFault(new DOMException('stop', 'AbortError'))).toBe(false);
  });

  it('runs a decode that failed once more: a pass is the answer, a second failure the error', () => {
    const before = counts();
    let calls = 0;
    let resets = 0;
    const flaky = () => {
      calls += 1;
      if (calls === 1) throw new ParquetSkimError('INVALID_FILE', 'first try');
      return 'rows';
    };
    expect(recheck(flaky, () => (resets += 1))).toBe('rows');
    expect([calls, resets]).toEqual([2, 1]);
    expect(since(before)).toEqual({ ran: 1, passed: 1 });

    const broken = () => {
      calls += 1;
      throw new ParquetSkimError('INVALID_FILE', `try ${calls}`);
    };
    calls = 0;
    expect(() => recheck(broken)).toThrow('try 2');
    expect(since(before)).toEqual({ ran: 2, passed: 1 });

    calls = 0;
    const refused = () => {
      calls += 1;
      throw new ParquetSkimError('INVALID_ARGUMENT', 'no such column');
    };
    expect(() => recheck(refused)).toThrow('no such column');
    expect(calls).toBe(1);
    expect(since(before)).toEqual({ ran: 2, passed: 1 });
  });
});

/**
 * The core, with its metadata loaders failing the decodes numbered in `failing` (1 = the first
 * asked for) after decoding — the loader's state moved on, as a miscompiled decode would leave
 * it — and counting the loaders made (`made.count`).
 */
async function faultyCore(failing: number[]): Promise<{ wasm: Wasm; made: { count: number } }> {
  const wasm = await instantiateWasm(await compileWasm());
  let calls = 0;
  const made = { count: 0 };
  class FaultyLoader extends wasm.MetadataLoader {
    constructor(fileLen: number, options?: string | null) {
      super(fileLen, options);
      made.count += 1;
    }
    override needs(): string {
      calls += 1;
      const answer = super.needs();
      if (failing.includes(calls)) {
        throw new ParquetSkimError('INVALID_FILE', 'expected a valid Parquet file (a fault injected by the test)');
      }
      return answer;
    }
  }
  return { wasm: { ...wasm, MetadataLoader: FaultyLoader }, made };
}

describe('opening a file whose footer decode fails once', () => {
  const file = path.join(dataDir, 'alltypes_tiny_pages.parquet');

  it('decodes it again from the bytes already read — no more requests — and opens it', async () => {
    const bytes = new Uint8Array(await readFile(file));
    /** Opens with `failures` injected; the reads it took after the tail. */
    const open = async (failing: number[]) => {
      const source = new BytesSource(bytes);
      // A short tail: the footer and page index take further reads.
      const tail = await source.readTail(1024);
      const reads: string[] = [];
      const read = source.read.bind(source);
      source.read = (start, end, signal) => {
        reads.push(`${start}-${end}`);
        return read(start, end, signal);
      };
      const { wasm, made } = await faultyCore(failing);
      const handle = await loadMetadata(wasm, source, tail, undefined, {}, true);
      expect(handle.numRows).toBe(7300);
      handle.free();
      // One loader, and one more for each failure: the second look starts from the bytes.
      expect(made.count).toBe(1 + failing.length);
      return reads;
    };
    const clean = await open([]);
    expect(clean.length).toBeGreaterThan(0);
    const before = counts();
    // At the first decode (the tail only), and after the first further read.
    expect(await open([1])).toEqual(clean);
    expect(await open([2])).toEqual(clean);
    expect(since(before)).toEqual({ ran: 2, passed: 2 });
  });

  it('reports a decode that fails twice as the file’s error', async () => {
    const source = new BytesSource(new Uint8Array(await readFile(file)));
    const tail = await source.readTail(1024);
    const before = counts();
    const { wasm } = await faultyCore([2, 3]);
    await expect(loadMetadata(wasm, source, tail, undefined, {}, true)).rejects.toMatchObject({
      code: 'INVALID_FILE',
    });
    expect(since(before)).toEqual({ ran: 1, passed: 0 });
  });
});
