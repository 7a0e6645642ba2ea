/**
 * A worker holds two tasks: while one waits for the output pages its filter asked for (phase 2 of
 * late materialization), it decodes the next one. One worker, a selective string filter over the
 * SF1 sample: every task needs a second round trip, so the worker must interleave — and the rows
 * still come out complete and in file order.
 */
import { expect, test } from './fixtures.ts';

test('a worker decodes another task while one waits for its phase-2 bytes; output stays in order', async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 1 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const filter = "l_comment LIKE '%special%requests%'";
    const keys: number[] = [];
    const scan = file.scan({ columns: ['l_orderkey'], filter });
    for await (const batch of scan) {
      const column = batch.getChild('l_orderkey');
      for (let i = 0; i < batch.numRows; i++) keys.push(Number(column?.get(i)));
    }
    const { values } = await file.aggregate({ filter, aggregates: { n: skim.count() } });
    const sorted = keys.every((k, i) => i === 0 || (keys[i - 1] as number) <= k);
    const out = {
      rows: keys.length,
      counted: values.n,
      sorted,
      interleaved: reader.stats().workers.tasksInterleaved,
      tasks: scan.stats.tasksTotal,
      workers: reader.workerCount,
    };
    reader.dispose();
    return out;
  });
  console.log(`\ninterleaving: ${JSON.stringify(result)}`);
  expect(result.rows).toBeGreaterThan(0);
  expect(result.rows).toBe(result.counted);
  expect(result.sorted).toBe(true);
  expect(result.tasks).toBeGreaterThan(1);
  expect(result.interleaved).toBeGreaterThan(0);
  expect(result.workers).toBe(1);
});
