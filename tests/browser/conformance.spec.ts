/**
 * Conformance: every Parquet file of apache/parquet-testing is read in Chromium (URL → Rust core →
 * workers → apache-arrow) and compared value by value with pyarrow's reading of it (references
 * made by tests/conformance/reference.py). Each file must match, or fail with a typed error
 * that says why (e.g. ENCRYPTED_FILE). Prints the outcome per file and `N of M match`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { cacheDir, expect, parquetTestingDir, test } from './fixtures.ts';

interface ManifestEntry {
  file: string;
  rows: number | null;
  reference: string | null;
  error: string | null;
}

/** Values documented in parquet-testing, used where pyarrow's reading is known to be wrong. */
interface Documented {
  column: string;
  /** Canonical values (timestamps as nanosecond strings), `null` for nulls. */
  values: Array<string | null>;
  why: string;
}

/**
 * `int96_from_spark.parquet` holds dates outside the i64-nanosecond range; its .md lists the
 * right values as microseconds. pyarrow overflows on them even when asked for microseconds.
 */
async function documentedValues(): Promise<Record<string, Documented>> {
  const md = await readFile(path.join(parquetTestingDir, 'int96_from_spark.md'), 'utf8');
  const listed = /As microseconds since the epoch, they correspond to:\s*```\s*([^`]+)```/.exec(md)?.[1];
  if (listed === undefined) throw new Error('int96_from_spark.md no longer lists its values');
  const values = listed
    .trim()
    .split(/,\s*/)
    .map((v) => (v === 'null' ? null : `${v}000`));
  return {
    'int96_from_spark.parquet': {
      column: 'a',
      values,
      why: 'the values int96_from_spark.md documents (pyarrow overflows)',
    },
  };
}

interface Outcome {
  file: string;
  kind: 'match' | 'mismatch' | 'typed-error' | 'untyped-error' | 'read-without-reference' | 'timeout';
  detail: string;
}

test('every parquet-testing file matches pyarrow or fails with a typed error', async ({ harness }) => {
  const manifest = JSON.parse(await readFile(path.join(cacheDir, 'conformance/manifest.json'), 'utf8')) as {
    files: ManifestEntry[];
  };
  expect(manifest.files.length).toBeGreaterThan(50);
  const documented = await documentedValues();
  const outcomes = await harness.evaluate(
    async ({ files, documented }) => {
      const { skim, tableFromIPC, compareTables, canonicalTable, describeError } = window.harness;
      const reader = await skim.createReader({ workers: 2 });
      const results: Outcome[] = [];
      const withTimeout = <T>(work: Promise<T>, ms: number) =>
        Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('__timeout__')), ms))]);
      for (const entry of files) {
        const url = `/data/${entry.file.split('/').map(encodeURIComponent).join('/')}`;
        try {
          const table = await withTimeout(
            reader.open(url).then((file) => file.scan().toTable()),
            30_000,
          );
          const known = documented[entry.file];
          if (known !== undefined) {
            const canonical = canonicalTable(table);
            const actual = canonical.values[canonical.columns.indexOf(known.column)];
            const same = JSON.stringify(actual) === JSON.stringify(known.values);
            results.push({
              file: entry.file,
              kind: same ? 'match' : 'mismatch',
              detail: same ? known.why : `expected ${JSON.stringify(known.values)}, got ${JSON.stringify(actual)}`,
            });
            continue;
          }
          if (entry.reference === null) {
            results.push({
              file: entry.file,
              kind: 'read-without-reference',
              detail: `${table.numRows} rows; pyarrow: ${entry.error}`,
            });
            continue;
          }
          const reference = tableFromIPC(new Uint8Array(await (await fetch(`/ref/${entry.reference}`)).arrayBuffer()));
          const verdict = compareTables(table, reference);
          results.push(
            verdict.equal
              ? { file: entry.file, kind: 'match', detail: `${table.numRows} rows × ${table.numCols} columns` }
              : { file: entry.file, kind: 'mismatch', detail: verdict.reason },
          );
        } catch (error) {
          const e = describeError(error);
          const kind =
            e.message === '__timeout__'
              ? 'timeout'
              : e.isSkimError && e.code !== 'INTERNAL'
                ? 'typed-error'
                : 'untyped-error';
          results.push({ file: entry.file, kind, detail: `${e.code ?? e.name}: ${e.message}` });
        }
      }
      reader.dispose();
      return results;
    },
    { files: manifest.files, documented },
  );

  console.log('\nconformance (parquet-testing vs pyarrow):');
  for (const o of outcomes) console.log(`  ${o.kind.padEnd(22)} ${o.file.padEnd(58)} ${o.detail.slice(0, 160)}`);
  const matched = outcomes.filter((o) => o.kind === 'match').length;
  const typed = outcomes.filter((o) => o.kind === 'typed-error').length;
  const extra = outcomes.filter((o) => o.kind === 'read-without-reference').length;
  console.log(
    `\n${matched} of ${outcomes.length} match; ${typed} fail with a typed error; ${extra} read where pyarrow cannot`,
  );
  const bad = outcomes.filter((o) => !['match', 'typed-error', 'read-without-reference'].includes(o.kind));
  expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
});

test('every parquet-testing file reads the same rows by offset and limit when it walks page headers (no offset index) as when it reads whole chunks', async ({
  harness,
}) => {
  const manifest = JSON.parse(await readFile(path.join(cacheDir, 'conformance/manifest.json'), 'utf8')) as {
    files: ManifestEntry[];
  };
  const outcomes = await harness.evaluate(
    async ({ files }) => {
      const { skim, compareTables, describeError } = window.harness;
      // Every chunk without an offset index is walked, however small (the default threshold is
      // 4 MiB); the other reader never walks.
      const walker = await skim.createReader({ workers: 2, pageWalkMinBytes: 0 });
      const whole = await skim.createReader({ workers: 2, pageWalkMinBytes: Number.MAX_SAFE_INTEGER });
      const results: Array<{ file: string; ok: boolean; walked: number; detail: string }> = [];
      for (const entry of files) {
        const url = `/data/${entry.file.split('/').map(encodeURIComponent).join('/')}`;
        const rows = await whole
          .open(url)
          .then((file) => file.metadata.numRows)
          .catch(() => undefined);
        // Files that do not open are the first test's business.
        if (rows === undefined) continue;
        let walked = 0;
        let detail = '';
        for (const [offset, limit] of [
          [0, 1],
          [0, 7],
          [3, 5],
          [Math.floor(rows / 8), 11],
        ] as const) {
          const read = async (reader: typeof walker) => {
            let rounds = 0;
            try {
              const scan = (await reader.open(url)).scan({ offset, limit });
              const table = await scan.toTable();
              rounds = scan.stats.pageWalkRounds;
              return { table, rounds };
            } catch (error) {
              const e = describeError(error);
              return { error: `${e.code ?? e.name}: ${e.message}`, rounds };
            }
          };
          const [a, b] = [await read(walker), await read(whole)];
          walked += a.rounds > 0 ? 1 : 0;
          if (b.rounds !== 0) detail += `offset ${offset}: the whole-chunk reader walked; `;
          if (a.table !== undefined && b.table !== undefined) {
            const verdict = compareTables(a.table, b.table);
            if (!verdict.equal) detail += `offset ${offset} limit ${limit}: ${verdict.reason}; `;
          } else if (a.error !== b.error) {
            detail += `offset ${offset} limit ${limit}: walked ${a.error ?? 'ok'}, whole ${b.error ?? 'ok'}; `;
          }
        }
        results.push({ file: entry.file, ok: detail === '', walked, detail });
      }
      walker.dispose();
      whole.dispose();
      return results;
    },
    { files: manifest.files },
  );
  const walked = outcomes.filter((o) => o.walked > 0).length;
  console.log(
    `\nslices: ${outcomes.filter((o) => o.ok).length} of ${outcomes.length} files the same; ${walked} walked`,
  );
  const bad = outcomes.filter((o) => !o.ok);
  expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
  expect(walked).toBeGreaterThan(20);
});
