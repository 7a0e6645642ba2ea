/**
 * Prints the robustness summary of the last test run: per area, cases tried and passed (and fuzz
 * inputs run), from the ledgers the tests wrote to `tests/.cache/robustness/*.jsonl`
 * (`tests/support/robustness.ts`, and `record_case` in the Rust tests). Exits 1 when a recorded
 * case failed, so a case that was recorded as failing can never pass CI quietly.
 *
 * `--json FILE` also writes the summary as JSON.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.cache/robustness');
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')) : [];
const records = files.flatMap((file) =>
  fs
    .readFileSync(path.join(dir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const suite = file.replace(/\.jsonl$/, '');
      try {
        return { suite, ...JSON.parse(line) };
      } catch {
        return { suite, area: 'ledger', case: 'unreadable ledger line', ok: false, detail: line.slice(0, 120) };
      }
    }),
);

const areas = new Map();
for (const r of records) {
  const a = areas.get(r.area) ?? { tried: 0, passed: 0, inputs: 0, failed: [] };
  a.tried += 1;
  a.inputs += r.inputs ?? 1;
  if (r.ok) a.passed += 1;
  else a.failed.push(`${r.suite}: ${r.case}${r.detail ? ` (${r.detail})` : ''}`);
  areas.set(r.area, a);
}

const rows = [...areas].sort(([x], [y]) => x.localeCompare(y));
const total = rows.reduce((t, [, a]) => ({ tried: t.tried + a.tried, passed: t.passed + a.passed }), {
  tried: 0,
  passed: 0,
});
console.log('\nrobustness summary');
console.log('area         cases  passed  inputs');
for (const [area, a] of rows) {
  console.log(
    `${area.padEnd(12)} ${String(a.tried).padStart(5)}  ${String(a.passed).padStart(6)}  ${String(a.inputs).padStart(6)}`,
  );
  for (const f of a.failed) console.log(`  FAILED ${f}`);
}
console.log(`total        ${String(total.tried).padStart(5)}  ${String(total.passed).padStart(6)}`);

const jsonAt = process.argv.indexOf('--json');
if (jsonAt > 0) {
  fs.writeFileSync(
    process.argv[jsonAt + 1],
    `${JSON.stringify({ areas: Object.fromEntries(rows), total }, null, 2)}\n`,
  );
}
process.exit(total.passed === total.tried ? 0 : 1);
