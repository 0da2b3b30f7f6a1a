import { describe, expect, it } from 'vitest';
import { loadPools, publicQuestion, scoreAnswer, scoreAnswers, type Question } from '../../../src/domain/calibration/scoring.js';

const q = (over: Partial<Question>): Question => ({
  id: 'T1',
  systemPrompt: 's',
  userPrompt: 'u',
  maxAnswerLen: 100,
  scoring: 'exact',
  expected: '42',
  ...over,
});

describe('scoreAnswer: exact', () => {
  it('matches after case and white space, ignoring wrapping quotes and a final period', () => {
    const question = q({ expected: 'Canberra' });
    for (const a of ['Canberra', ' canberra ', 'CANBERRA.', '"Canberra"', '`canberra`']) expect(scoreAnswer(question, a)).toBe(1);
    for (const a of ['Sydney', 'Canberra, Australia', 'The answer is Canberra', '']) expect(scoreAnswer(question, a)).toBe(0);
  });

  it('cuts an answer to maxAnswerLen code points before scoring', () => {
    const question = q({ expected: 'ab', maxAnswerLen: 2 });
    expect(scoreAnswer(question, 'ab and more')).toBe(1);
    expect(scoreAnswer(q({ expected: '😀x', maxAnswerLen: 2 }), '😀x😀')).toBe(1);
  });

  it('scores a non-string answer 0', () => {
    expect(scoreAnswer(q({}), 42 as unknown as string)).toBe(0);
  });
});

describe('scoreAnswer: cosine', () => {
  it('is cosineSimilarity against expected, in [0, 1]', () => {
    const question = q({ scoring: 'cosine', expected: 'went, saw, wrote' });
    expect(scoreAnswer(question, 'Went, saw, wrote.')).toBe(1);
    expect(scoreAnswer(question, 'goed, seed, writed')).toBeLessThan(0.2);
  });

  it('only reads up to maxAnswerLen', () => {
    const question = q({ scoring: 'cosine', expected: 'alpha beta', maxAnswerLen: 10 });
    expect(scoreAnswer(question, `alpha beta${' gamma'.repeat(1000)}`)).toBe(1);
  });
});

describe('scoreAnswer: schema-cosine', () => {
  const question = q({
    scoring: 'schema-cosine',
    maxAnswerLen: 200,
    expected: '{"city": "Lisbon", "tags": ["sea", "hills"], "size": 3}',
    schema: {
      type: 'object',
      required: ['city', 'tags', 'size'],
      properties: { city: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, size: { type: 'integer' } },
      additionalProperties: false,
    },
  });

  it('is 0 unless the answer is JSON that fits the schema', () => {
    expect(scoreAnswer(question, 'Lisbon, sea and hills, 3')).toBe(0);
    expect(scoreAnswer(question, '{"city": "Lisbon", "tags": ["sea", "hills"]}')).toBe(0);
    expect(scoreAnswer(question, '{"city": "Lisbon", "tags": ["sea", "hills"], "size": "3"}')).toBe(0);
    expect(scoreAnswer(question, '{"city": "Lisbon", "tags": ["sea", "hills"], "size": 3, "x": 1}')).toBe(0);
  });

  it('compares field by field: an array of scalars in any order, a value under the wrong key as wrong', () => {
    expect(scoreAnswer(question, '{"size": 3, "tags": ["Hills", "sea"], "city": "lisbon"}')).toBe(1);
    expect(scoreAnswer(question, '{"city": "sea hills", "tags": ["Lisbon"], "size": 3}')).toBeLessThan(0.5);
    const wrongCity = scoreAnswer(question, '{"city": "Porto", "tags": ["sea", "hills"], "size": 3}');
    expect(wrongCity).toBeGreaterThan(0.6);
    expect(wrongCity).toBeLessThan(0.75);
  });

  it('accepts JSON inside a Markdown code fence', () => {
    expect(scoreAnswer(question, '```json\n{"city": "Lisbon", "tags": ["sea", "hills"], "size": 3}\n```')).toBe(1);
  });

  it('scores 0 when truncation to maxAnswerLen breaks the JSON', () => {
    expect(scoreAnswer({ ...question, maxAnswerLen: 20 }, '{"city": "Lisbon", "tags": ["sea", "hills"], "size": 3}')).toBe(0);
  });
});

describe('scoreAnswers', () => {
  it('scores missing and non-string answers 0 and takes the mean', () => {
    const qs = [q({ id: 'X1', expected: 'a' }), q({ id: 'X2', expected: 'b' }), q({ id: 'X3', expected: 'c' }), q({ id: 'X4', expected: 'd' })];
    const out = scoreAnswers(qs, { X1: 'a', X2: 'B', X3: 7, toString: 'x' });
    expect(out).toEqual({ intelligenceScore: 0.5, perQuestion: { X1: 1, X2: 1, X3: 0, X4: 0 } });
  });
});

// The pools must tell a good answer from a bad one: for every question a thoughtful correct
// answer (worded as a strong model would, not copied from expected) scores >= 0.7, and a
// plausible wrong one < 0.5.
const PROOF: Record<string, { right: string; wrong: string }> = {
  A1: { right: '3', wrong: '2' },
  A2: { right: '5', wrong: '10' },
  A3: {
    right: 'The acceleration of an object is directly proportional to the net force acting on it and inversely proportional to its mass (F = ma).',
    wrong: 'An object at rest stays at rest and an object in motion stays in motion unless acted on by an external force.',
  },
  A4: { right: 'Went, saw, wrote, ran, took, brought.', wrong: 'gone, seen, written, run, taken, brought' },
  A5: {
    right: '```json\n{"fr": "Bonjour", "es": "¡Buenos días!", "de": "Guten Morgen"}\n```',
    wrong: '{"fr": "Bonsoir", "es": "Buenas noches", "de": "Gute Nacht"}',
  },
  B1: { right: '42', wrong: '40' },
  B2: {
    right: 'George Orwell, Jane Austen, William Shakespeare, Gabriel Garcia Marquez',
    wrong: 'George Orwell, Charlotte Brontë, Christopher Marlowe, Mario Vargas Llosa',
  },
  B3: {
    right: 'HyperText Transfer Protocol, JavaScript Object Notation, Central Processing Unit, Structured Query Language',
    wrong: 'High Transfer Text Program, Java Standard Object Naming, Computer Power Unit, Standard Question Logic',
  },
  B4: {
    right:
      'The CAP theorem states that a distributed data store cannot simultaneously guarantee consistency, availability, and partition ' +
      'tolerance; when a network partition occurs it must choose between consistency and availability.',
    wrong: 'It says that database transactions must be atomic, consistent, isolated and durable.',
  },
  B5: {
    right: '{"payer": "Priya Nair", "payee": "Tomasz Kowalski", "amount": 250, "currency": "EUR", "item": "a used bicycle"}',
    wrong: '{"payer": "Tomasz Kowalski", "payee": "Priya Nair", "amount": 3, "currency": "euros", "item": "May"}',
  },
};

describe('calibration pools', () => {
  const pools = loadPools();
  const all = [...pools.A, ...pools.B];

  it('hold 5 questions each, ids A1..A5 and B1..B5, with the required mix of scorings', () => {
    expect(pools.A.map((x) => x.id)).toEqual(['A1', 'A2', 'A3', 'A4', 'A5']);
    expect(pools.B.map((x) => x.id)).toEqual(['B1', 'B2', 'B3', 'B4', 'B5']);
    for (const pool of [pools.A, pools.B]) {
      const count = (s: string) => pool.filter((x) => x.scoring === s).length;
      expect(count('exact')).toBeGreaterThanOrEqual(1);
      expect(count('cosine')).toBeGreaterThanOrEqual(2);
      expect(count('schema-cosine')).toBeGreaterThanOrEqual(1);
    }
  });

  it('score a question with its own expected answer 1', () => {
    for (const x of all) expect(scoreAnswer(x, x.expected), x.id).toBeCloseTo(1, 9);
  });

  it.each(Object.keys(PROOF))('discriminate on %s: right >= 0.7, plausible wrong < 0.5', (id) => {
    const question = all.find((x) => x.id === id) as Question;
    const right = scoreAnswer(question, PROOF[id].right);
    const wrong = scoreAnswer(question, PROOF[id].wrong);
    expect(right).toBeGreaterThanOrEqual(0.7);
    expect(wrong).toBeLessThan(0.5);
  });

  it('show clients only id, prompts and maxAnswerLen', () => {
    for (const x of all) expect(Object.keys(publicQuestion(x)).sort()).toEqual(['id', 'maxAnswerLen', 'systemPrompt', 'userPrompt']);
  });

  it('give a perfect attempt 1 and an empty attempt 0', () => {
    expect(scoreAnswers(pools.A, Object.fromEntries(pools.A.map((x) => [x.id, x.expected]))).intelligenceScore).toBe(1);
    expect(scoreAnswers(pools.B, {}).intelligenceScore).toBe(0);
  });
});
