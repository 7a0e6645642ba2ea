/**
 * Conformance: every Parquet file of apache/parquet-testing is read in Chromium (URL → Rust core →
 * workers → apache-arrow) and compared value by value with pyarrow's reading of it (references
 * made by tests/conformance/reference.py). Each file must match, or fail with a typed error
 * that says why (e.g. ENCRYPTED_FILE). Prints the outcome per file and `N of M match`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { cacheDir, expect, test } from './fixtures.ts';

interface ManifestEntry {
  file: string;
  rows: number | null;
  reference: string | null;
  error: string | null;
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
  const outcomes = await harness.evaluate(async (files: ManifestEntry[]) => {
    const { skim, tableFromIPC, compareTables, describeError } = window.harness;
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
  }, manifest.files);

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
