// The regex worker's backstop (REGEX_BACKSTOP_MS, 1 s) guards against a worker the vm timeout
// cannot stop; on a test machine starved of CPU it could also fail a trivial call, so tests
// give it room. The 50 ms vm limit stays as in production.
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
