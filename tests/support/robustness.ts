/**
 * The robustness ledger: every hostile-input case (a broken file, a misbehaving server, a huge
 * file, an abort at a random point) records whether it ended as it must — the right rows, or the
 * right typed error — so the test run can print one summary of cases tried and passed
 * (`tests/robustness/summary.mjs`, run last by `npm test`).
 *
 * Records are JSON lines appended to `tests/.cache/robustness/<suite>.jsonl`; Rust tests write the
 * same format (`crate/core/tests/common/mod.rs`, `record_case`). `npm test` clears the folder
 * first, so the summary covers exactly one run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.cache/robustness');

/** One case's outcome: `area` groups cases (file, server, big-file, lifecycle, fuzz). */
export interface RobustnessCase {
  area: string;
  case: string;
  ok: boolean;
  /** What happened: the error code seen, the rows read, … */
  detail?: string;
  /** How many inputs this case stands for (fuzz runs); 1 when absent. */
  inputs?: number;
}

/** Appends `record` to the suite's ledger and returns `record.ok`, so a test can assert on it. */
export function recordCase(suite: string, record: RobustnessCase): boolean {
  fs.mkdirSync(dir, { recursive: true });
  fs.appendFileSync(path.join(dir, `${suite}.jsonl`), `${JSON.stringify(record)}\n`);
  return record.ok;
}
