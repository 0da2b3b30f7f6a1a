import { describe, expect, it } from 'vitest';
import {
  ANSWER_SCHEMAS,
  challengeEntry,
  isAnswerSchemaName,
  isDecoyAnswerCorrect,
  loadChallengeBank,
  validateAnswer,
  wireChallenge,
  type ChallengeEntry,
} from '../../../src/domain/calibration/bank.js';

const goodToolDescription = {
  answer:
    'ripgrep searches your whole project for a regular expression in a fraction of the time of grep, skipping files your .gitignore ' +
    'excludes and binary files by default. Point it at a folder and get every matching line with its file and line number.',
  confidence: 'high',
  model: { family: 'claude', version: 'opus-4' },
  via: 'anthropic-api',
  elapsed_ms: 1200,
};

describe('challenge bank', () => {
  const bank = loadChallengeBank();

  it('holds about 60 normal challenges over the four categories and about 8 decoys', () => {
    expect(bank.normal.length).toBeGreaterThanOrEqual(55);
    expect(bank.decoys.length).toBeGreaterThanOrEqual(6);
    expect(bank.all.length).toBe(bank.normal.length + bank.decoys.length);
    for (const c of ['categorize', 'synonyms', 'extract', 'tool-description']) {
      expect(bank.normal.filter((e) => e.category === c).length, c).toBeGreaterThanOrEqual(10);
    }
    expect(new Set(bank.all.map((e) => e.id)).size).toBe(bank.all.length);
  });

  it('keeps decoys indistinguishable on the wire: short-text, a normal category, same system prompt', () => {
    const shortTextPrompts = new Set(bank.normal.filter((e) => e.schemaName === 'short-text').map((e) => e.systemPrompt));
    for (const d of bank.decoys) {
      expect(d.schemaName).toBe('short-text');
      expect(['categorize', 'synonyms', 'extract']).toContain(d.category);
      expect(shortTextPrompts.has(d.systemPrompt)).toBe(true);
      const wire = wireChallenge(d);
      expect(Object.keys(wire).sort()).toEqual(['category', 'schemaName', 'systemPrompt', 'userPrompt']);
      expect(JSON.stringify(wire)).not.toContain('decoy');
    }
  });

  it('finds an entry by id', () => {
    expect(challengeEntry(bank.all[0].id)).toBe(bank.all[0]);
    expect(challengeEntry('nope')).toBeUndefined();
  });
});

describe('validateAnswer', () => {
  it('accepts a full tool-description answer, with or without reasoning', () => {
    expect(validateAnswer('tool-description', goodToolDescription)).toEqual({ ok: true });
    expect(validateAnswer('tool-description', { ...goodToolDescription, reasoning: 'short' })).toEqual({ ok: true });
  });

  it('lists each problem of a tool-description answer by field', () => {
    const r = validateAnswer('tool-description', {
      answer: 'too short',
      confidence: 'certain',
      model: { family: 'gpt' },
      elapsed_ms: -1,
      reasoning: 'x'.repeat(281),
      extra: true,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(new Set(r.errors.map((e) => e.field))).toEqual(
      new Set(['answer.answer', 'answer.confidence', 'answer.model.version', 'answer.via', 'answer.elapsed_ms', 'answer.reasoning', 'answer.extra']),
    );
  });

  it('checks the enums of model.family and via, and that elapsed_ms is an integer', () => {
    for (const bad of [
      { ...goodToolDescription, model: { family: 'palm', version: '2' } },
      { ...goodToolDescription, via: 'carrier-pigeon' },
      { ...goodToolDescription, elapsed_ms: 1.5 },
      { ...goodToolDescription, answer: 'x'.repeat(601) },
    ]) {
      expect(validateAnswer('tool-description', bad).ok).toBe(false);
    }
  });

  it('takes short-text {answer: string} and the decoy alias the same way', () => {
    expect(ANSWER_SCHEMAS.decoy).toBe(ANSWER_SCHEMAS['short-text']);
    for (const name of ['short-text', 'decoy'] as const) {
      expect(validateAnswer(name, { answer: 'weather' })).toEqual({ ok: true });
      expect(validateAnswer(name, 'weather')).toEqual({ ok: false, errors: [{ field: 'answer', reason: 'must be object' }] });
      expect(validateAnswer(name, {})).toEqual({ ok: false, errors: [{ field: 'answer.answer', reason: 'is required' }] });
      expect(validateAnswer(name, { answer: 1 }).ok).toBe(false);
    }
    expect(isAnswerSchemaName('decoy')).toBe(true);
    expect(isAnswerSchemaName('constructor')).toBe(false);
  });
});

describe('isDecoyAnswerCorrect', () => {
  const decoy: ChallengeEntry = {
    id: 't',
    category: 'categorize',
    systemPrompt: 's',
    userPrompt: 'u',
    schemaName: 'short-text',
    decoy: { accept: ['weather'], reject: ['sports', 'politics'] },
  };

  it('accepts the answer in any case, with punctuation or in a sentence', () => {
    for (const a of ['weather', 'Weather.', '  WEATHER ', 'The category is weather', { answer: 'Weather' }]) {
      expect(isDecoyAnswerCorrect(decoy, a)).toBe(true);
    }
  });

  it('refuses other answers, hedges that name a rejected option, partial words and non-strings', () => {
    for (const a of ['sports', 'weatherman', 'sports, politics, weather', '', { answer: 3 }, null, 42]) {
      expect(isDecoyAnswerCorrect(decoy, a)).toBe(false);
    }
  });

  it('is false for an entry that is not a decoy', () => {
    expect(isDecoyAnswerCorrect({ ...decoy, decoy: undefined }, 'weather')).toBe(false);
  });

  it('judges the bank decoys: the intended answer passes, an off-topic one fails', () => {
    const { decoys } = loadChallengeBank();
    for (const d of decoys) {
      expect(isDecoyAnswerCorrect(d, { answer: d.decoy!.accept[0] }), d.id).toBe(true);
      expect(isDecoyAnswerCorrect(d, { answer: 'I cannot help with that.' }), d.id).toBe(false);
    }
  });

  it('accepts natural answers to the bank decoys', () => {
    const byPrompt = (s: string) => loadChallengeBank().decoys.find((d) => d.userPrompt.includes(s)) as ChallengeEntry;
    expect(isDecoyAnswerCorrect(byPrompt('"happy"'), { answer: 'glad, joyful, pleased' })).toBe(true);
    expect(isDecoyAnswerCorrect(byPrompt('email address'), { answer: 'support@example.org' })).toBe(true);
    expect(isDecoyAnswerCorrect(byPrompt('def add'), { answer: 'Python' })).toBe(true);
    expect(isDecoyAnswerCorrect(byPrompt('def add'), { answer: 'JavaScript' })).toBe(false);
  });
});
