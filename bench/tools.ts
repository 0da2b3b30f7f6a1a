// Priced tools: what the regex-test time limit costs per call (node:vm timeout inside one
// worker_threads worker, ARCHITECTURE 6) against a direct RegExp loop on the same small input,
// plus the per-call time of the text tools at their size limits.
import { extract, clearExtractCache } from '../src/domain/challenges/tools/extract.js';
import { jsonValidate } from '../src/domain/challenges/tools/json-validate.js';
import { closeRegexWorker, regexTest, warmRegexWorker } from '../src/domain/challenges/tools/regex-test.js';
import { wordCount } from '../src/domain/challenges/tools/word-count.js';
import { concurrentRate, header, line, median, perSec, rate, type Rate } from './lib.js';

const us = (r: Rate) => `${(1e6 / r.opsPerSec).toFixed(1)} µs/call`;

/** Runs the tools benchmark and prints its lines. */
export async function run(): Promise<void> {
  header('tools: regex-test time-limit mechanism vs a direct RegExp loop');
  const input = { pattern: '(\\w+)@(\\w+)\\.org', text: 'mail ann@foo.org, bob@bar.org and eve@baz.org today', flags: 'g' };
  const direct = await median(3, () =>
    rate('direct', () => {
      const matches = [];
      for (const m of input.text.matchAll(new RegExp(input.pattern, input.flags))) {
        matches.push({ match: m[0], index: m.index, groups: m.slice(1).map((g) => g ?? '') });
      }
      return matches;
    }),
  );
  await warmRegexWorker();
  const worker = await median(3, () => rate('worker', () => regexTest(input)));
  const worker8 = await median(3, () => concurrentRate('worker x8', () => regexTest(input), 8, 1.5));
  line('direct RegExp matchAll (baseline)', us(direct));
  // ratio: how many times longer a call takes than the direct loop (the price of the limit).
  line('regex-test: worker + vm timeout, one at a time', us(worker), direct.opsPerSec / worker.opsPerSec);
  line('regex-test: 8 calls in flight', `${perSec(worker8)} ${us(worker8)}`, direct.opsPerSec / worker8.opsPerSec);
  await closeRegexWorker();

  header('tools: text tools at their size limits');
  const big = 'The quick brown fox jumps over the lazy dog. Does it? Yes! '.repeat(2000).slice(0, 100_000);
  const json = JSON.stringify(Array.from({ length: 2500 }, (_, i) => ({ id: i, name: `item ${i}` }))).slice(0, 99_990);
  const words = await median(3, () => rate('word-count', () => wordCount({ text: big }), 1));
  const valid = await median(3, () => rate('json-validate', () => jsonValidate({ text: json }), 1));
  let n = 0;
  const uncached = await median(3, () => rate('extract', () => extract({ query: `signed judgments for agent number ${n++} in the knowledge graph` }), 1));
  const cached = await median(3, () => rate('extract cached', () => extract({ query: 'signed judgments in the knowledge graph' }), 1));
  clearExtractCache();
  line('word-count, 100000 characters', us(words));
  line('json-validate, ~100000 characters', us(valid));
  line('extract, cache miss', us(uncached));
  // ratio: how many times faster a cache hit is than a miss.
  line('extract, cache hit', us(cached), cached.opsPerSec / uncached.opsPerSec);
}
