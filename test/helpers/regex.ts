// The regex worker's backstop (REGEX_BACKSTOP_MS, 1 s) guards against a worker the vm timeout
// cannot stop; on a test machine starved of CPU it could also fail a trivial call, so tests
// give it room. The 50 ms vm limit stays as in production, except where a test asserts what a
// harmless pattern answers (generousRegexTimeLimit): there a starved machine must not turn the
// answer into regex_timeout, since the limit is measured on the wall clock.
import { afterAll, beforeAll } from 'vitest';
import { closeRegexWorker, setRegexLimitsForTests } from '../../src/domain/challenges/tools/regex-test.js';

/** For the calling test file: a 5 s backstop, restored and the worker closed afterwards. */
export function generousRegexBackstop() {
  let saved: ReturnType<typeof setRegexLimitsForTests>;
  beforeAll(() => {
    saved = setRegexLimitsForTests({ backstopMs: 5000 });
  });
  afterAll(async () => {
    setRegexLimitsForTests(saved);
    await closeRegexWorker();
  });
}

/** For the calling describe block: a 10 s vm limit (harmless patterns only), restored afterwards. */
export function generousRegexTimeLimit() {
  let saved: ReturnType<typeof setRegexLimitsForTests>;
  beforeAll(() => {
    saved = setRegexLimitsForTests({ timeLimitMs: 10_000, backstopMs: 20_000 });
  });
  afterAll(() => {
    setRegexLimitsForTests(saved);
  });
}
