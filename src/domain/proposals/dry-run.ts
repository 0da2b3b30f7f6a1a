// The propose dry run (PROTOCOL 6.9): a payload checked as the propose route would check it,
// with nothing stored and nothing charged, and every error listed at once with the
// description of its field (as the attestation dry run does, PROTOCOL 9.2). Errors in a
// payload used to come one layer at a time (a missing object hides what it must hold);
// here the schema, the rules beyond it (JSON Logic, unique ids), the node's state (a pending
// or published holder of the path, an artifact to evaluate, a content-store blob) and the
// caller's standing (calibration, deposit) are all reported in one answer.
import type { ErrorObject } from 'ajv';
import { capErrors, contentSha256Of, isServiceError, PROPOSE_CAP, TIER_PRICE, tierOf, type PaidTier, type ProposalKind } from '../../core/index.js';
import { createAjv } from '../common/ajv.js';
import { bounded, type BoundedValidate } from '../common/bounded-validate.js';
import type { Reads } from '../../store/index.js';
import type { Ctx } from '../context.js';
import { conflictKeys, PAYLOAD_SCHEMAS, semanticErrors, targetPath, titleOf, type AnyPayload, type PayloadOf } from './kinds.js';
import { assertArtifactExists, assertBriefNotPublished, assertCasArtifactStored, assertNoConflict, assertPathFree } from './proposals.js';
import type { AgentRecord } from '../records.js';

export interface DryRunItem {
  /** The field, as validation_failed names it (PROTOCOL 1.3): payload.recipe, brief.levels.core ... */
  field: string;
  reason: string;
  /** What the field holds, from the kind's schema. */
  fieldDescription?: string;
}

export interface ProposalDryRun {
  valid: boolean;
  kind: ProposalKind;
  /** The first 50 errors (PROTOCOL 1.3). */
  errors: DryRunItem[];
  /** How many errors there were in all. */
  errorCount: number;
  /** Fields the schema does not name, the first 50: the propose route drops them. */
  ignored: string[];
  /** What proposing it would do, when it would be taken. */
  would: { path: string | null; title: string; contentSha256: string; deposit: number; tier: string; requiredJudgments: number } | null;
  hint: string;
}

let validators: Map<ProposalKind, BoundedValidate> | undefined;

// Strict (no coercion), every error, and extra fields reported rather than removed; the size
// limits first, as for every body (bounded-validate.ts).
function validatorOf(kind: ProposalKind): BoundedValidate {
  if (!validators) {
    const ajv = createAjv('candidate');
    validators = new Map(Object.entries(PAYLOAD_SCHEMAS).map(([k, schema]) => [k as ProposalKind, bounded(ajv.compile(schema), schema)]));
  }
  return validators.get(kind)!;
}

type SchemaNode = Record<string, unknown>;

// The schema node at a path of property names and indexes, through objects, arrays,
// records and unions (the first branch that has the next step).
function nodeAt(schema: SchemaNode, path: string[]): SchemaNode | undefined {
  if (path.length === 0) return schema;
  const [step, ...rest] = path;
  const props = schema.properties as Record<string, SchemaNode> | undefined;
  if (props?.[step]) return nodeAt(props[step], rest);
  if (/^\d+$/.test(step) && schema.items && typeof schema.items === 'object') return nodeAt(schema.items as SchemaNode, rest);
  if (schema.patternProperties && typeof schema.patternProperties === 'object') {
    const first = Object.values(schema.patternProperties as Record<string, SchemaNode>)[0];
    if (first) return nodeAt(first, rest);
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') return nodeAt(schema.additionalProperties as SchemaNode, rest);
  for (const branch of (schema.anyOf ?? schema.oneOf ?? []) as SchemaNode[]) {
    const found = nodeAt(branch, path);
    if (found) return found;
  }
  return undefined;
}

/**
 * The description of the field at a dotted path of a kind's payload (what `field` names:
 * payload.recipe, children.0.slug, payload.branches[0].condition), or of its nearest
 * described ancestor (inside a JSON Logic rule, the condition's).
 */
export function fieldDescription(kind: ProposalKind, field: string): string | undefined {
  const path = field
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean);
  for (let n = path.length; n > 0; n--) {
    const node = nodeAt(PAYLOAD_SCHEMAS[kind] as unknown as SchemaNode, path.slice(0, n));
    if (typeof node?.description === 'string') return node.description;
  }
  return undefined;
}

function itemsOf(kind: ProposalKind, errors: ErrorObject[]): { errors: DryRunItem[]; ignored: string[] } {
  const out: DryRunItem[] = [];
  const ignored: string[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');
    let reason = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      ignored.push(field ? `${field}.${String(e.params.additionalProperty)}` : String(e.params.additionalProperty));
      continue;
    }
    if (e.keyword === 'required') {
      field = field ? `${field}.${String(e.params.missingProperty)}` : String(e.params.missingProperty);
      reason = 'is required';
    }
    if (e.keyword === 'pattern') reason = `does not have the expected form (${String(e.params.pattern)})`;
    // A union reports each branch and then itself: keep the union's own line and the first of a kind.
    const key = `${field}\u0000${reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const description = fieldDescription(kind, field);
    out.push({ field: field || '(payload)', reason, ...(description ? { fieldDescription: description } : {}) });
  }
  return { errors: out, ignored };
}

// A refusal of the propose path, as dry-run items (its errors[], or its message).
function refusalItems(kind: ProposalKind, e: unknown): DryRunItem[] {
  if (!isServiceError(e)) throw e;
  const listed = (e.extra?.errors as Array<{ field: string; reason: string }> | undefined) ?? [];
  const items = listed.length ? listed : [{ field: String(e.extra?.field ?? '(payload)'), reason: e.message }];
  return items.map((i) => {
    const description = fieldDescription(kind, i.field);
    return { field: i.field, reason: `${i.reason} (${e.code})`, ...(description ? { fieldDescription: description } : {}) };
  });
}

async function attempt(kind: ProposalKind, check: () => Promise<unknown>): Promise<DryRunItem[]> {
  try {
    await check();
    return [];
  } catch (e) {
    return refusalItems(kind, e);
  }
}

/** Checks a payload as `POST` on the kind's propose path would, storing and charging nothing. */
export async function dryRunProposal(
  ctx: Ctx,
  input: { kind: ProposalKind; payload: unknown; agent: AgentRecord | null; origin?: string },
): Promise<ProposalDryRun> {
  const { kind } = input;
  const validate = validatorOf(kind);
  const schemaValid = validate(input.payload);
  const { errors, ignored } = itemsOf(kind, validate.errors ?? []);
  const hint =
    `Fix each error (fieldDescription says what the field holds); \`akas propose ${kind} --template\` prints a complete example, ` +
    `GET /api/agent/v1/schemas has every kind's schema.`;
  // Extra fields alone do not stop a proposal (the route drops them); anything else does,
  // and a payload the schema refuses cannot be checked further.
  if (!schemaValid && errors.length > 0) return { valid: false, kind, ...listed(errors, ignored), would: null, hint };

  // The route would drop the extra fields: check what it would keep.
  const payload = structuredClone(input.payload) as AnyPayload;
  dropExtra(PAYLOAD_SCHEMAS[kind] as unknown as SchemaNode, payload);
  errors.push(
    ...semanticErrors(kind, payload).map((i) => ({ ...i, ...(fieldDescription(kind, i.field) ? { fieldDescription: fieldDescription(kind, i.field)! } : {}) })),
  );
  if (kind === 'artifact') errors.push(...(await attempt(kind, () => assertCasArtifactStored(ctx, payload as PayloadOf<'artifact'>, input.origin))));
  // Reads only: the checks of the propose transaction (each takes Reads), on the store as it is now.
  const reads: Reads = ctx.store;
  errors.push(...(await attempt(kind, () => assertNoConflict(reads, conflictKeys(kind, payload)))));
  errors.push(...(await attempt(kind, () => assertPathFree(reads, kind, payload))));
  if (kind === 'brief') errors.push(...(await attempt(kind, () => assertBriefNotPublished(reads, payload as PayloadOf<'brief'>))));
  if (kind === 'eval-result') errors.push(...(await attempt(kind, () => assertArtifactExists(ctx, reads, (payload as PayloadOf<'eval-result'>).artifactPath))));

  // The caller's standing: who may propose, and the deposit.
  let tier = 'uncalibrated';
  let deposit = 0;
  if (!input.agent) {
    if (!ctx.config.allowAnonymousPropose)
      errors.push({ field: '(caller)', reason: 'proposing needs an api key: send Authorization: Bearer (akas register, then akas calibrate)' });
  } else {
    tier = tierOf(input.agent.calibration.score);
    if (tier === 'uncalibrated') errors.push({ field: '(caller)', reason: 'calibrate before proposing (akas calibrate) (calibration_required)' });
    else if (tier === 'refused') errors.push({ field: '(caller)', reason: 'a calibration score below 0.3 may not propose (tier_too_low)' });
    else {
      deposit = TIER_PRICE[tier as PaidTier];
      if (input.agent.balance < deposit)
        errors.push({ field: '(caller)', reason: `the deposit is ${deposit} credits and the balance is ${input.agent.balance} (insufficient_balance)` });
      if (PROPOSE_CAP[tier as PaidTier] === 0) errors.push({ field: '(caller)', reason: `the ${tier} tier may not propose (rate_limited)` });
    }
  }
  const valid = errors.length === 0;
  return {
    valid,
    kind,
    ...listed(errors, ignored),
    would: valid
      ? {
          path: targetPath(kind, payload),
          title: titleOf(kind, payload),
          contentSha256: contentSha256Of(kind, payload),
          deposit,
          tier,
          requiredJudgments: ctx.config.requiredJudgments,
        }
      : null,
    hint: valid ? `The payload would be taken; propose it without --dry-run (POST on the ${kind} propose path).` : hint,
  };
}

// What an answer lists: the first 50 errors with their count, the first 50 ignored fields.
const listed = (errors: DryRunItem[], ignored: string[]) => {
  const capped = capErrors(errors);
  return { errors: capped.errors, errorCount: capped.errorCount, ignored: capErrors(ignored).errors };
};

// Removes what a closed object of the schema does not name, as the route's ajv does
// (removeAdditional), so the later checks see what the route would keep.
function dropExtra(schema: SchemaNode, value: unknown) {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    if (schema.items && typeof schema.items === 'object') for (const v of value) dropExtra(schema.items as SchemaNode, v);
    return;
  }
  const props = schema.properties as Record<string, SchemaNode> | undefined;
  const record = value as Record<string, unknown>;
  if (props) {
    for (const key of Object.keys(record)) {
      if (props[key]) dropExtra(props[key], record[key]);
      else if (schema.additionalProperties === false) delete record[key];
    }
  }
}
