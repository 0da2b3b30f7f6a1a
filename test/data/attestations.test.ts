// data/attestations: the 22 attestation schemas and their catalog. Each compiles under ajv's
// strict mode, accepts the example it ships, refuses that example with any required field
// removed or an unknown field added, and describes and bounds every property (the dry run
// answers descriptions; all errors of a body are reported, which is safe only when bounded).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const DIR = fileURLToPath(new URL('../../data/attestations/', import.meta.url));
type Json = Record<string, any>;

const SPEC_KINDS = [
  'review.attestation.v1',
  'eval.run.attestation.v1',
  'vulnerability.disclosure.v1',
  'retrieval.citation.attestation.v1',
  'tutorial.citation.attestation.v1',
  'support.resolution.attestation.v1',
  'alignment.attestation.v1',
  'robot.action.attestation.v1',
  'translation.attestation.v1',
  'label.attestation.v1',
  'embedding.response.v1',
  'synthetic.media.attestation.v1',
  'legal.citation.attestation.v1',
  'bi.cited_number.attestation.v1',
  'pipeline.facet.v1',
  'experiment.receipt.v1',
  'leaderboard.receipt.v1',
  'governance.compliance.v1',
  'sandbox.run.attestation.v1',
  'attestation.event.v1',
  'high-risk-classification.v1',
  'serious-incident.v1',
];
const TIERS: Record<string, string> = {
  'pipeline.facet.v1': 'pipeline',
  'experiment.receipt.v1': 'experiment',
  'leaderboard.receipt.v1': 'leaderboard',
  'review.attestation.v1': 'review',
  'governance.compliance.v1': 'governance',
};

const index = JSON.parse(readFileSync(DIR + 'index.json', 'utf8')) as {
  kinds: Array<{ kind: string; tier: string; schemaVersion: string; description: string }>;
};
const schemas = new Map(SPEC_KINDS.map((k) => [k, JSON.parse(readFileSync(`${DIR}${k}.json`, 'utf8')) as Json]));
// Strict, to catch a misspelt keyword; a required list inside anyOf ("one of these fields") is fine.
const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false });
addFormats(ajv);

/** Every sub-schema that declares a type, with its path. */
function walk(schema: Json, path: string, visit: (s: Json, path: string) => void) {
  visit(schema, path);
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) walk(sub, `${path}.${name}`, visit);
  if (schema.items && typeof schema.items === 'object') walk(schema.items, `${path}[]`, visit);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${path}{}`, visit);
}

describe('the attestation catalog', () => {
  it('lists exactly the 22 kinds, in order, with their tiers, and a schema file each', () => {
    expect(index.kinds.map((k) => k.kind)).toEqual(SPEC_KINDS);
    for (const k of index.kinds) {
      expect(k.tier, k.kind).toBe(TIERS[k.kind] ?? 'event');
      expect(k.schemaVersion).toBe('1.0.0');
      expect(k.description.length).toBeGreaterThan(20);
    }
    expect(
      readdirSync(DIR)
        .filter((f) => f !== 'index.json')
        .sort(),
    ).toEqual(SPEC_KINDS.map((k) => `${k}.json`).sort());
  });

  it('has review.attestation.v1 with exactly the eight fields of the contract, all required', () => {
    const r = schemas.get('review.attestation.v1')!;
    const fields = ['schemaVersion', 'reviewId', 'reviewerId', 'reviewerDid', 'subjectId', 'subjectSha256', 'verdict', 'reviewedAt'];
    expect(Object.keys(r.properties).sort()).toEqual([...fields].sort());
    expect([...r.required].sort()).toEqual([...fields].sort());
    expect(r.properties.verdict.enum).toContain('approve');
    expect(r.properties.reviewedAt.type).toBe('integer');
  });
});

describe.each(SPEC_KINDS)('the %s schema', (kind) => {
  const schema = schemas.get(kind)!;
  const validate = ajv.compile(schema);
  const example = schema.examples[0] as Json;

  it('accepts the example it ships', () => {
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
  });

  it('refuses the example without each required field, naming it', () => {
    for (const field of schema.required as string[]) {
      const { [field]: _dropped, ...rest } = example;
      expect(validate(rest), field).toBe(false);
      expect(
        validate.errors!.some((e) => e.keyword === 'required' && e.params.missingProperty === field),
        field,
      ).toBe(true);
    }
  });

  it('refuses an unknown field', () => {
    expect(validate({ ...example, notAField: 1 })).toBe(false);
  });

  it('describes every property and bounds every string and array', () => {
    const problems: string[] = [];
    walk(schema, kind, (s, path) => {
      if (path !== kind && typeof s.description !== 'string') problems.push(`${path}: no description`);
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (types.includes('string') && s.maxLength === undefined && !s.enum) problems.push(`${path}: string without maxLength`);
      if (types.includes('array') && s.maxItems === undefined) problems.push(`${path}: array without maxItems`);
      if (types.includes('object') && s.additionalProperties !== false && s.maxProperties === undefined)
        problems.push(`${path}: open object without maxProperties`);
    });
    expect(problems).toEqual([]);
  });
});
