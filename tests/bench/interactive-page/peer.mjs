/**
 * A peer in a fresh page: its bench module (tests/bench/peers-page/system-*.mjs: the same code
 * the peers benchmark runs) imported statically by the page's entry, then set up and run at once
 * — the cold path — and run again in the same page: the warm runs.
 */
import { answerOf } from '../peers-page/answers.mjs';
import { beforeWarmRun, failure, finish, loadTimeline, query, table, url, warmRuns } from './common.mjs';

export async function runPeer(setup) {
  try {
    const absolute = new URL(url, location.href).href;
    const prepared = await setup({ url: absolute, query, table });
    const started = performance.now();
    const output = await prepared.run();
    const answeredAt = performance.now();
    const answer = answerOf(query, table, output);
    const warm = [];
    for (let i = 0; i < warmRuns; i++) {
      await beforeWarmRun();
      const t = performance.now();
      await prepared.run();
      warm.push(performance.now() - t);
    }
    finish({ coldMs: answeredAt, coldQueryMs: answeredAt - started, warm, answer, breakdown: loadTimeline() });
    await prepared.dispose();
  } catch (error) {
    finish(failure(error));
  }
}
