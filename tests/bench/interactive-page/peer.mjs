/**
 * A peer in a fresh page: its bench module (tests/bench/peers-page/system-*.mjs: the same code
 * the peers benchmark runs) imported statically by the page's entry, then set up and run at once
 * — the cold path — and run again in the same page: the warm runs. The answer check (and the
 * apache-arrow it uses to read Arrow output) is imported after the timed query, on every page: it
 * is the bench's work, not the system's, and a page's own modules are only what the system needs.
 */
import { beforeWarmRun, failure, finish, loadTimeline, query, table, url, warmRuns } from './common.mjs';

export async function runPeer(setup) {
  try {
    const absolute = new URL(url, location.href).href;
    const prepared = await setup({ url: absolute, query, table });
    const started = performance.now();
    const output = await prepared.run();
    const answeredAt = performance.now();
    const { answerOf } = await import('../peers-page/answers.mjs');
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
