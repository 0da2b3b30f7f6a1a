// The in-toto subject table of PROTOCOL 16.1 (src/domain/log/statements.ts) against the kinds
// themselves: every kind of data/attestations has a row, every field a row names is a sha256
// property of that kind's schema, and each kind's own example body yields the subject the
// table says (a kind added without deciding its subject fails here).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { predicateTypeOf, SUBJECT_FIELDS, subjectsOf } from '../../../src/domain/log/statements.js';

const data = (name: string) => JSON.parse(readFileSync(new URL(`../../../data/attestations/${name}`, import.meta.url), 'utf8'));
const kinds = (data('index.json').kinds as Array<{ kind: string }>).map((k) => k.kind);

describe('the in-toto subject of each attestation kind (PROTOCOL 16.1)', () => {
  it('has a row for every kind, and none for a kind that does not exist', () => {
    expect(Object.keys(SUBJECT_FIELDS).sort()).toEqual([...kinds].sort());
  });

  it.each(kinds)('%s names sha256 properties of its schema, and its example yields them', (kind) => {
    const schema = data(`${kind}.json`);
    for (const field of SUBJECT_FIELDS[kind]) {
      const prop = field.endsWith('[]') ? schema.properties[field.slice(0, -2)]?.items?.properties?.sha256 : schema.properties[field];
      expect(prop?.pattern, `${kind} ${field}`).toBe('^[0-9a-f]{64}$');
    }
    const example = schema.examples[0] as Record<string, unknown>;
    const named = SUBJECT_FIELDS[kind].filter((f) => (f.endsWith('[]') ? Array.isArray(example[f.slice(0, -2)]) : example[f] !== undefined));
    const subjects = subjectsOf(kind, example);
    expect(subjects.length > 0).toBe(named.length > 0);
    for (const s of subjects) expect(s.digest.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names its predicate types in one versioned URI space', () => {
    expect(predicateTypeOf('review.attestation.v1')).toBe('https://akas.dev/attestation/review.attestation/v1');
    expect(predicateTypeOf('high-risk-classification.v1')).toBe('https://akas.dev/attestation/high-risk-classification/v1');
  });
});
