// PROTOCOL 4.2: the challenge bank (data/challenges/bank.json), the answer schemas of the
// challenge schema names, answer validation, and the server-side judging of decoys.
//
// Decisions:
// - Answers are closed objects (additionalProperties false), like tool inputs: PROTOCOL 4.2 lists
//   every required and optional field, and a misspelt optional field ("reasonning") should be
//   refused rather than dropped. short-text answer is capped at 4000 characters.
// - A decoy is judged by normalised whole-word containment: the answer (NFKC, lowercase,
//   diacritics, punctuation and symbols removed, white space collapsed) is correct when it
//   contains one accepted phrase as a run of whole words and none of the entry's `reject`
//   phrases ("weather" passes "Weather." and "The category is weather", but "sports, politics,
//   technology, weather" fails because the other options are rejects). Lenient on wording on
//   purpose: three decoy failures ban an agent (PROTOCOL 3.4), so an honest answer in a sentence
//   must not count as a failure.
import { readFileSync } from 'node:fs';
import { dataPath } from '../../core/index.js';
import { normalizeText } from './similarity.js';
import { validateWithSchema, type JSONSchema, type Validation } from '../common/validate.js';

/** Challenge categories (PROTOCOL 4.2; decoys use one of the first three). */
export const CHALLENGE_CATEGORIES = ['categorize', 'synonyms', 'extract', 'tool-description'] as const;
export type ChallengeCategory = (typeof CHALLENGE_CATEGORIES)[number];

/** The schema names a challenge carries on the wire. */
export type SchemaName = 'short-text' | 'tool-description';
/** Every accepted schema name: the two of PROTOCOL 4.2 and the old alias 'decoy' (= short-text). */
export type AnswerSchemaName = SchemaName | 'decoy';

/** One bank entry. `decoy` is server-side only: never put it (or `id`) on the wire. */
export interface ChallengeEntry {
  id: string;
  category: ChallengeCategory;
  systemPrompt: string;
  userPrompt: string;
  schemaName: SchemaName;
  decoy?: { accept: string[]; reject?: string[] };
}

/** The challenge object of GET /challenge (PROTOCOL 4.2). */
export interface WireChallenge {
  category: ChallengeCategory;
  systemPrompt: string;
  userPrompt: string;
  schemaName: SchemaName;
}

export const TOOL_DESCRIPTION_CONFIDENCE = ['low', 'medium', 'high'] as const;
export const MODEL_FAMILIES = ['claude', 'gpt', 'gemini', 'llama', 'qwen', 'mistral', 'other'] as const;
export const VIA_CHANNELS = ['anthropic-api', 'openai-api', 'google-api', 'local', 'browser', 'other'] as const;
/** Upper bound of a short-text answer (the protocol gives none; a bound keeps stored answers small). */
export const SHORT_TEXT_MAX = 4000;

const shortText: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['answer'],
  properties: {
    answer: { type: 'string', maxLength: SHORT_TEXT_MAX, description: 'The answer text.' },
  },
};

const toolDescription: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['answer', 'confidence', 'model', 'via', 'elapsed_ms'],
  properties: {
    answer: { type: 'string', minLength: 50, maxLength: 600, description: 'The 40-60 word landing paragraph.' },
    confidence: { type: 'string', enum: [...TOOL_DESCRIPTION_CONFIDENCE] },
    model: {
      type: 'object',
      additionalProperties: false,
      required: ['family', 'version'],
      properties: {
        family: { type: 'string', enum: [...MODEL_FAMILIES] },
        version: { type: 'string', maxLength: 100 },
      },
    },
    via: { type: 'string', enum: [...VIA_CHANNELS] },
    elapsed_ms: { type: 'integer', minimum: 0 },
    reasoning: { type: 'string', maxLength: 280 },
  },
};

/** JSON Schemas of the answer for each schema name (PROTOCOL 4.2); 'decoy' is the same object as 'short-text'. */
export const ANSWER_SCHEMAS: Readonly<Record<AnswerSchemaName, JSONSchema>> = {
  'short-text': shortText,
  'tool-description': toolDescription,
  decoy: shortText,
};

/** One-line descriptions of the schema names, for GET /schemas. */
export const ANSWER_SCHEMA_DESCRIPTIONS: Readonly<Record<AnswerSchemaName, string>> = {
  'short-text': 'An object with a required answer (string). Used for categorize, synonyms, extract and honeypot challenges.',
  'tool-description':
    'A 40-60 word landing paragraph for a named tool: answer (50-600 chars), confidence (low/medium/high), model {family, version}, via, ' +
    'elapsed_ms (integer >= 0), optional reasoning (max 280 chars).',
  decoy: "Old name of 'short-text', still accepted as an alias.",
};

/** Whether a string is an accepted answer schema name (the alias 'decoy' included). */
export const isAnswerSchemaName = (s: unknown): s is AnswerSchemaName => typeof s === 'string' && Object.hasOwn(ANSWER_SCHEMAS, s);

/**
 * Validates an answer against its schema name. Field names are dotted under 'answer'
 * ('answer.model.family'), as the answer sits in the use-tool body's `answer` field.
 */
export function validateAnswer(schemaName: AnswerSchemaName, answer: unknown): Validation {
  return validateWithSchema(ANSWER_SCHEMAS[schemaName], answer, 'answer');
}

/** The wire form of an entry (PROTOCOL 4.2 challenge object): no id, no decoy marker. */
export const wireChallenge = (e: ChallengeEntry): WireChallenge => ({
  category: e.category,
  systemPrompt: e.systemPrompt,
  userPrompt: e.userPrompt,
  schemaName: e.schemaName,
});

// Whole-word containment on normalised text: " a b c " contains " b c ".
function containsPhrase(haystack: string, phrase: string): boolean {
  const p = normalizeText(phrase);
  return p !== '' && ` ${haystack} `.includes(` ${p} `);
}

/**
 * Whether an answer to a decoy entry is correct (rules at the top of this file). `answer` is
 * the short-text object {answer} or its string; anything else, or an entry that is not a
 * decoy, is false.
 */
export function isDecoyAnswerCorrect(entry: ChallengeEntry, answer: unknown): boolean {
  if (!entry.decoy) return false;
  const text =
    typeof answer === 'string'
      ? answer
      : answer !== null && typeof answer === 'object' && typeof (answer as { answer?: unknown }).answer === 'string'
        ? (answer as { answer: string }).answer
        : undefined;
  if (text === undefined) return false;
  const norm = normalizeText(text.slice(0, SHORT_TEXT_MAX));
  if (!norm) return false;
  if ((entry.decoy.reject ?? []).some((r) => containsPhrase(norm, r))) return false;
  return entry.decoy.accept.some((a) => containsPhrase(norm, a));
}

// A bank file that does not hold well-formed entries is a packaging (or an operator's) error:
// fail at load, naming the file.
export function checkBank(raw: unknown, file = 'data/challenges/bank.json'): ChallengeEntry[] {
  const bad = (why: string) => new Error(`akas: ${file}: ${why}`);
  const list = (raw as { challenges?: unknown })?.challenges;
  if (!Array.isArray(list) || list.length === 0) throw bad('needs a non-empty challenges array');
  const ids = new Set<string>();
  for (const e of list as ChallengeEntry[]) {
    if (typeof e.id !== 'string' || !e.id || ids.has(e.id)) throw bad(`bad or repeated id ${String(e.id)}`);
    ids.add(e.id);
    if (!CHALLENGE_CATEGORIES.includes(e.category)) throw bad(`${e.id}: unknown category ${String(e.category)}`);
    if (e.schemaName !== 'short-text' && e.schemaName !== 'tool-description') throw bad(`${e.id}: unknown schemaName`);
    if (typeof e.systemPrompt !== 'string' || !e.systemPrompt || typeof e.userPrompt !== 'string' || !e.userPrompt) {
      throw bad(`${e.id}: systemPrompt and userPrompt must be non-empty strings`);
    }
    if ((e.category === 'tool-description') !== (e.schemaName === 'tool-description')) {
      throw bad(`${e.id}: tool-description challenges, and only they, use schemaName tool-description`);
    }
    if (e.decoy !== undefined) {
      const { accept, reject } = e.decoy;
      if (e.schemaName !== 'short-text') throw bad(`${e.id}: a decoy must use short-text`);
      if (!Array.isArray(accept) || accept.length === 0 || !accept.every((a) => typeof a === 'string' && normalizeText(a))) {
        throw bad(`${e.id}: decoy.accept must list non-empty strings`);
      }
      if (reject !== undefined && (!Array.isArray(reject) || !reject.every((r) => typeof r === 'string' && normalizeText(r)))) {
        throw bad(`${e.id}: decoy.reject must list non-empty strings`);
      }
    }
  }
  return list as ChallengeEntry[];
}

/** A checked bank: `all` entries, the `normal` ones, the `decoys`, and each by id. */
export interface ChallengeBank {
  all: readonly ChallengeEntry[];
  normal: readonly ChallengeEntry[];
  decoys: readonly ChallengeEntry[];
  byId: ReadonlyMap<string, ChallengeEntry>;
}

/** A bank from checked entries. */
export const bankOf = (all: readonly ChallengeEntry[]): ChallengeBank => ({
  all,
  normal: all.filter((e) => !e.decoy),
  decoys: all.filter((e) => e.decoy),
  byId: new Map(all.map((e) => [e.id, e])),
});

let bank: ChallengeBank | undefined;

/**
 * The demo challenge bank shipped in data/challenges, read and checked once: `all` entries,
 * the `normal` ones and the `decoys` (so a caller can draw a decoy about 10 percent of the
 * time, PROTOCOL 14). Its decoys' answers are public: a public node uses a private set
 * (calibration-set.ts).
 */
export function loadChallengeBank(): ChallengeBank {
  if (bank) return bank;
  return (bank = bankOf(checkBank(JSON.parse(readFileSync(dataPath('challenges', 'bank.json'), 'utf8')))));
}

/** The entry of the demo bank with this id, or undefined. */
export const challengeEntry = (id: string): ChallengeEntry | undefined => loadChallengeBank().byId.get(id);
