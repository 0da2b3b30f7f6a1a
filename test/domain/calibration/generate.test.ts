// akas calibration init's generators (src/domain/calibration/generate.ts): every set they draw
// passes the checks a node runs on a calibration set, its expected answers score 1, its decoys
// accept their answer and refuse the others, and two draws share nothing.
import { describe, expect, it } from 'vitest';
import { cryptoRandom } from '../../../src/core/index.js';
import { generateCalibrationSet } from '../../../src/domain/calibration/generate.js';
import { checkPool, loadPools, scoreAnswers } from '../../../src/domain/calibration/scoring.js';
import { checkBank, isDecoyAnswerCorrect, loadChallengeBank } from '../../../src/domain/calibration/bank.js';

describe('generateCalibrationSet', () => {
  it('draws pools and a bank a node accepts, whose own answers are right', () => {
    for (let round = 0; round < 20; round++) {
      const set = generateCalibrationSet(cryptoRandom);
      for (const file of ['pool-A.json', 'pool-B.json'] as const) {
        const questions = checkPool(set[file], file, { fromOutside: true });
        const expected = Object.fromEntries(questions.map((q) => [q.id, q.expected]));
        expect(scoreAnswers(questions, expected).intelligenceScore, JSON.stringify(questions)).toBe(1);
        expect(questions.map((q) => q.scoring)).toEqual(['exact', 'exact', 'cosine', 'cosine', 'schema-cosine']);
      }
      const bank = checkBank(set['bank.json'], 'bank.json');
      expect(new Set(bank.map((e) => e.userPrompt)).size).toBe(bank.length);
      const decoys = bank.filter((e) => e.decoy);
      expect(decoys.length).toBeGreaterThanOrEqual(20);
      for (const d of decoys) {
        expect(isDecoyAnswerCorrect(d, { answer: d.decoy!.accept[0] }), d.userPrompt).toBe(true);
        expect(isDecoyAnswerCorrect(d, { answer: 'zzz' })).toBe(false);
        for (const wrong of d.decoy!.reject ?? []) expect(isDecoyAnswerCorrect(d, { answer: wrong }), `${d.userPrompt} -> ${wrong}`).toBe(false);
      }
      // Decoys come from the same generators as ordinary entries: every category has both.
      for (const category of ['categorize', 'synonyms', 'extract']) {
        expect(bank.some((e) => e.category === category && !e.decoy)).toBe(true);
      }
    }
  });

  it('never draws a question or a challenge of the demo set (whose answers ship in the package)', () => {
    const demo = new Set([...loadPools().A, ...loadPools().B, ...loadChallengeBank().all].map((x) => x.userPrompt));
    for (let round = 0; round < 50; round++) {
      const set = generateCalibrationSet(cryptoRandom);
      const prompts = [...set['pool-A.json'].questions, ...set['pool-B.json'].questions, ...set['bank.json'].challenges].map((x) => x.userPrompt);
      expect(prompts.filter((p) => demo.has(p))).toEqual([]);
    }
  });

  it('shares no question and few challenges between two draws', () => {
    const [a, b] = [generateCalibrationSet(cryptoRandom), generateCalibrationSet(cryptoRandom)];
    const prompts = (s: typeof a) => new Set(s['bank.json'].challenges.filter((e) => e.decoy).map((e) => e.userPrompt));
    const [pa, pb] = [prompts(a), prompts(b)];
    expect([...pa].filter((p) => pb.has(p)).length).toBeLessThan(pa.size / 2);
  });
});
