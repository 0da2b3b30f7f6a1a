// PROTOCOL 3.1 / 3.2: the calibration pools and the scoring of one answer. Pure apart from
// loadPools(), which reads data/calibration/pool-A.json and pool-B.json once.
//
// Rules (akas's own decisions; PROTOCOL 3.2 states them):
// - An answer longer than maxAnswerLen is cut to its first maxAnswerLen characters (Unicode
//   code points) and the cut text is scored: a model that rambles past the limit loses only
//   what did not fit (an exact answer or a JSON answer that no longer parses then scores 0),
//   and the scorer never reads more than the limit of an untrusted string.
// - exact: exactMatch (NFKC, case and white space) after dropping wrapping quotes or backticks
//   and one trailing '.' or '!', since "3." and "`3`" are the same answer as "3". 1 or 0.
// - cosine: cosineSimilarity(answer, expected) (src/domain/calibration/similarity.ts), in [0, 1].
// - schema-cosine: the answer (a surrounding Markdown code fence is dropped) must parse as
//   JSON and validate against the question's schema, else 0. Then each leaf field of the
//   expected JSON (path -> text; an array of scalars is one text, order ignored) is compared by
//   cosineSimilarity with the answer's value at the same path (missing: 0), and the score is
//   the mean over the expected fields. Per field, not one text of the whole object, so that
//   the keys (already fixed by the schema) earn nothing and a value under the wrong key (payer
//   and payee swapped) counts as wrong.
import { readFileSync } from 'node:fs';
import { dataPath } from '../../core/index.js';
import { cosineSimilarity, exactMatch, normalizeText } from './similarity.js';
import { schemaProblems } from '../common/ajv.js';
import { validateWithSchema, type JSONSchema } from '../common/validate.js';

/** How a question's answer is scored. */
export type Scoring = 'exact' | 'cosine' | 'schema-cosine';

/** A calibration question as stored in data/calibration/pool-*.json (expected and schema stay server-side). */
export interface Question {
  id: string;
  systemPrompt: string;
  userPrompt: string;
  maxAnswerLen: number;
  scoring: Scoring;
  /** The reference answer; for schema-cosine a JSON text that validates against `schema`. */
  expected: string;
  /** The JSON Schema an answer must fit (schema-cosine only). */
  schema?: JSONSchema;
}

/** The question as GET /calibrate shows it (PROTOCOL 3.1). */
export interface PublicQuestion {
  id: string;
  systemPrompt: string;
  userPrompt: string;
  maxAnswerLen: number;
}

/** Calibration pool ids (PROTOCOL 2.1 register ?pool=A or B). */
export type PoolId = 'A' | 'B';

/** The questions a client sees: no expected answer, no schema, no scoring rule. */
export const publicQuestion = (q: Question): PublicQuestion => ({
  id: q.id,
  systemPrompt: q.systemPrompt,
  userPrompt: q.userPrompt,
  maxAnswerLen: q.maxAnswerLen,
});

// The first `max` code points of s, walking no further than needed.
function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let i = 0;
  let n = 0;
  while (i < s.length && n < max) {
    const cp = s.codePointAt(i) as number;
    i += cp > 0xffff ? 2 : 1;
    n++;
  }
  return s.slice(0, i);
}

// Formatting noise around a short exact answer: wrapping quotes or backticks, a final period.
function stripWrapping(s: string): string {
  let t = s.trim();
  const m = /^(["'`\u2018\u2019\u201c\u201d]+)([\s\S]*?)(["'`\u2018\u2019\u201c\u201d]+)$/u.exec(t);
  if (m?.[2].trim()) t = m[2].trim();
  return t.replace(/[.!]$/u, '');
}

// A JSON answer wrapped in a Markdown code fence (```json ... ```) is still the JSON.
function unfence(s: string): string {
  const m = /^\s*```[\w-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?[ \t]*```\s*$/u.exec(s);
  return m ? m[1] : s;
}

// The leaf values of a JSON value as path -> text; an array of scalars is one text of its
// items sorted (a list whose order does not matter), an array of objects or arrays recurses
// by index.
function leaves(value: unknown, path: string, out: Map<string, string>): Map<string, string> {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) {
      out.set(
        path,
        value
          .map((v) => normalizeText(String(v)))
          .sort()
          .join(' '),
      );
    } else for (const [i, v] of value.entries()) leaves(v, `${path}/${i}`, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) leaves(v, `${path}/${k}`, out);
  } else {
    out.set(path, String(value));
  }
  return out;
}

// schema-cosine: 0 unless the answer is JSON fitting the schema, else the mean per-field similarity.
function schemaCosine(q: Question, answer: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfence(answer));
  } catch {
    return 0;
  }
  if (!q.schema || !validateWithSchema(q.schema, parsed).ok) return 0;
  const want = leaves(JSON.parse(q.expected), '', new Map());
  if (want.size === 0) return 1;
  const got = leaves(parsed, '', new Map());
  let sum = 0;
  for (const [path, text] of want) {
    const mine = got.get(path);
    if (mine !== undefined) sum += cosineSimilarity(mine, text);
  }
  return sum / want.size;
}

/** The score of one answer to one question, in [0, 1] (rules at the top of this file). */
export function scoreAnswer(question: Question, answer: string): number {
  if (typeof answer !== 'string') return 0;
  const a = truncate(answer, question.maxAnswerLen);
  switch (question.scoring) {
    case 'exact':
      return exactMatch(stripWrapping(a), stripWrapping(question.expected)) ? 1 : 0;
    case 'cosine':
      return cosineSimilarity(a, question.expected);
    case 'schema-cosine':
      return schemaCosine(question, a);
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Scores a whole attempt: every question of the pool, a missing or non-string answer scoring
 * 0. intelligenceScore is the mean of the per-question scores (PROTOCOL 3.2); all rounded to 4
 * decimals, the mean taken of the unrounded scores.
 */
export function scoreAnswers(
  questions: readonly Question[],
  answers: Readonly<Record<string, unknown>>,
): { intelligenceScore: number; perQuestion: Record<string, number> } {
  const perQuestion: Record<string, number> = {};
  let sum = 0;
  for (const q of questions) {
    const a = Object.hasOwn(answers, q.id) ? answers[q.id] : undefined;
    const s = typeof a === 'string' ? scoreAnswer(q, a) : 0;
    perQuestion[q.id] = round4(s);
    sum += s;
  }
  return { intelligenceScore: questions.length ? round4(sum / questions.length) : 0, perQuestion };
}

const SCORINGS: readonly Scoring[] = ['exact', 'cosine', 'schema-cosine'];

// A pool file that does not hold 5 well-formed questions is a packaging (or an operator's)
// error: fail at load, naming the file.
// A set from outside the package (an operator's, set.ts) also has its answer schemas checked as
// JSON Schemas and each expected answer against its schema. The package's own pools are held to
// both by the tests (test/data/schemas.test.ts, test/domain/calibration/scoring.test.ts), not at
// every start: that compiled their schemas with ajv before each node listened (bench/coldstart.ts).
export function checkPool(raw: unknown, file: string, opts: { fromOutside?: boolean } = {}): Question[] {
  const bad = (why: string) => new Error(`akas: ${file}: ${why}`);
  const qs = (raw as { questions?: unknown })?.questions;
  if (!Array.isArray(qs) || qs.length !== 5) throw bad('needs exactly 5 questions');
  const ids = new Set<string>();
  for (const q of qs as Question[]) {
    if (typeof q.id !== 'string' || ids.has(q.id)) throw bad(`bad or repeated id ${String(q.id)}`);
    ids.add(q.id);
    for (const k of ['systemPrompt', 'userPrompt', 'expected'] as const) {
      if (typeof q[k] !== 'string' || !q[k]) throw bad(`${q.id}: ${k} must be a non-empty string`);
    }
    if (!Number.isInteger(q.maxAnswerLen) || q.maxAnswerLen < 1) throw bad(`${q.id}: maxAnswerLen must be a positive integer`);
    if (!SCORINGS.includes(q.scoring)) throw bad(`${q.id}: unknown scoring ${String(q.scoring)}`);
    if (q.scoring === 'schema-cosine') {
      if (!q.schema || typeof q.schema !== 'object') throw bad(`${q.id}: schema-cosine needs a schema`);
      if (opts.fromOutside) {
        const problems = schemaProblems(q.schema);
        if (problems.length) throw bad(`${q.id}: its schema is not a JSON Schema (${problems.slice(0, 3).join('; ')})`);
        if (!validateWithSchema(q.schema, JSON.parse(q.expected)).ok) throw bad(`${q.id}: expected does not fit its schema`);
      }
    }
  }
  return qs as Question[];
}

let pools: Record<PoolId, Question[]> | undefined;

/**
 * The two demo calibration pools shipped in data/calibration (PROTOCOL 14: 5 questions each),
 * read and checked once. Their answers are public: a public node uses a private set
 * (calibration-set.ts).
 */
export function loadPools(): Record<PoolId, Question[]> {
  if (pools) return pools;
  const read = (id: PoolId) => checkPool(JSON.parse(readFileSync(dataPath('calibration', `pool-${id}.json`), 'utf8')), `data/calibration/pool-${id}.json`);
  return (pools = { A: read('A'), B: read('B') });
}
