// Attestations (PROTOCOL 9.1 to 9.4): the catalog of the 22 kinds and their JSON Schemas
// (data/attestations), the dry run that checks a candidate against its schema with every
// error explained, and attesting: a calibrated agent's attestation validated, recomputed
// where the node can (leaderboard receipts), and appended to the log.
import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { canonicalize, capErrors, dataPath, MAX_ENTRY_BYTES, ServiceError, sha256Hex, type AttestationTier, type LogEntry } from '../../core/index.js';
import { ajvOnFirstUse } from '../common/ajv.js';
import { bounded, type BoundedValidate } from '../common/bounded-validate.js';
import type { TransparencyLog } from './log.js';
import { leafBytesAtMost } from './sequencer.js';
import type { AgentRecord } from '../records.js';

export interface CatalogEntry {
  kind: string;
  tier: AttestationTier;
  schemaVersion: string;
  description: string;
}

interface Kind extends CatalogEntry {
  schema: Record<string, unknown>;
  /** The kind's schema, its size limits checked first (bounded-validate.ts). */
  validate: BoundedValidate;
}

let loaded: Map<string, Kind> | undefined;

/** The 22 kinds with their schemas and compiled validators, read from data/attestations once. */
export function attestationKinds(): Map<string, Kind> {
  if (loaded) return loaded;
  const index = JSON.parse(readFileSync(dataPath('attestations', 'index.json'), 'utf8')) as { kinds: CatalogEntry[] };
  // Every error of a body, and no type coercion: a candidate is what it says. Reporting all
  // errors stays cheap because the size limits are checked first (every string and array of
  // every schema has a maximum, and a closed object of far more keys than it declares is
  // refused by size): a body within them holds a bounded number of errors.
  const ajv = ajvOnFirstUse('candidate');
  const kinds = new Map<string, Kind>();
  for (const entry of index.kinds) {
    const schema = JSON.parse(readFileSync(dataPath('attestations', `${entry.kind}.json`), 'utf8')) as Record<string, unknown>;
    // Compiled on the kind's first candidate, not at start (nor the instance that compiles them):
    // 22 schemas were most of what a node spent compiling before it listened.
    let validate: BoundedValidate | undefined;
    kinds.set(entry.kind, {
      ...entry,
      schema,
      get validate() {
        return (validate ??= bounded(ajv().compile(schema), schema, { closedObjectsBounded: true }));
      },
    });
  }
  return (loaded = kinds);
}

/** The schema of a kind, or a 400 invalid_kind naming the kinds there are. */
export function kindOf(kind: unknown): Kind {
  const k = typeof kind === 'string' ? attestationKinds().get(kind) : undefined;
  if (!k) {
    throw new ServiceError('invalid_kind', `No attestation kind ${JSON.stringify(kind)}.`, {
      field: 'kind',
      hint: 'GET /credentials/index.json lists the 22 kinds, each with its schema.',
    });
  }
  return k;
}

/** The `description` of the property an error is about, when the schema declares one. */
function describe(schema: Record<string, unknown>, e: ErrorObject): string | undefined {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') path.push(String(e.params.missingProperty));
  if (e.keyword === 'additionalProperties') return undefined;
  let node: Record<string, unknown> | undefined = schema;
  for (const part of path) {
    if (!node) return undefined;
    const props = node.properties as Record<string, Record<string, unknown>> | undefined;
    if (props?.[part]) node = props[part];
    else if (/^\d+$/.test(part) && node.items && typeof node.items === 'object') node = node.items as Record<string, unknown>;
    else return undefined;
  }
  return path.length && typeof node?.description === 'string' ? node.description : undefined;
}

export interface DryRunError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
  fieldDescription?: string;
}

export type DryRun =
  | { valid: true; kind: string; schemaVersion: unknown; tier: AttestationTier; note: string }
  | { valid: false; kind: string; errors: DryRunError[]; errorCount: number; hint: string };

/**
 * Checks a candidate against its kind's schema; no side effect (PROTOCOL 9.2). A candidate over
 * a size limit is refused naming that limit, before its items are checked; the errors listed
 * are the first 50, with errorCount.
 */
export function dryRun(kind: unknown, body: unknown): DryRun {
  const k = kindOf(kind);
  if (k.validate(body)) {
    return {
      valid: true,
      kind: k.kind,
      schemaVersion: (body as Record<string, unknown>).schemaVersion,
      tier: k.tier,
      note: `The candidate fits ${k.kind}; POST /api/attestations {kind, body} records it (Bearer, calibrated).`,
    };
  }
  const { errors: listed, errorCount } = capErrors(k.validate.errors ?? []);
  const errors = listed.map((e) => {
    const fieldDescription = describe(k.schema, e);
    return {
      instancePath: e.instancePath,
      schemaPath: e.schemaPath,
      keyword: e.keyword,
      params: e.params as Record<string, unknown>,
      message: e.message ?? 'is invalid',
      ...(fieldDescription ? { fieldDescription } : {}),
    };
  });
  return {
    valid: false,
    kind: k.kind,
    errors,
    errorCount,
    hint: `Fix each error (fieldDescription says what the field holds); GET /credentials/schemas/${k.kind}.json is the whole schema.`,
  };
}

/** The sha256 of a score sample: the JCS of the eval runs' scores sorted ascending (leaderboard.receipt.v1). */
export const scoreSamplesHash = (scores: number[]) => sha256Hex(canonicalize([...scores].sort((a, b) => a - b)));

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const EVAL_RUN = 'eval.run.attestation.v1';

// A leaderboard receipt is a digest the node can check: its median and sample hash must be
// what the referenced eval runs (already in the log, for the same subject, dataset, harness
// and metric) give. A receipt that disagrees is refused.
async function checkLeaderboard(log: TransparencyLog, body: Record<string, unknown>) {
  const ids = body.evalRunAttestationIds as string[];
  const runs: LogEntry[] = [];
  const errors: Array<{ field: string; reason: string }> = [];
  for (const [i, id] of ids.entries()) {
    const e = await log.entryById(id);
    if (!e) errors.push({ field: `evalRunAttestationIds[${i}]`, reason: `${id} is not in this node's log` });
    else if (e.kind !== EVAL_RUN) errors.push({ field: `evalRunAttestationIds[${i}]`, reason: `${id} is a ${e.kind}, not an ${EVAL_RUN}` });
    else {
      for (const f of ['subjectSha256', 'datasetSha256', 'harnessVersionSha', 'metric'] as const) {
        if (e.body[f] !== body[f])
          errors.push({ field: `evalRunAttestationIds[${i}]`, reason: `${id} has ${f} ${String(e.body[f])}, the receipt ${String(body[f])}` });
      }
      runs.push(e);
    }
  }
  const experiment = await log.entryById(body.experimentReceiptId as string);
  if (experiment?.kind !== 'experiment.receipt.v1') errors.push({ field: 'experimentReceiptId', reason: "not an experiment.receipt.v1 in this node's log" });
  if (errors.length === 0) {
    const scores = runs.map((r) => r.body.score as number);
    const m = median(scores);
    const h = scoreSamplesHash(scores);
    if (body.medianScore !== m) errors.push({ field: 'medianScore', reason: `the referenced runs give a median of ${m}` });
    if (body.scoreSamplesSha256 !== h) errors.push({ field: 'scoreSamplesSha256', reason: `the referenced runs' scores hash to ${h}` });
  }
  if (errors.length) {
    throw new ServiceError('validation_failed', 'The leaderboard receipt does not agree with the eval runs it references.', {
      errors,
      hint: "medianScore is the median of the referenced eval runs' scores; scoreSamplesSha256 the sha256 of the JCS of those scores sorted ascending.",
    });
  }
}

/**
 * Records an attestation (PROTOCOL 9.3): the agent must be calibrated; the body must fit the
 * kind's schema (400 validation_failed with every error, as the dry run). Answers the entry
 * once it is in the log. The node's own kind (attestation.event.v1) is not taken from agents.
 */
export async function attest(log: TransparencyLog, agent: AgentRecord, kind: unknown, body: unknown): Promise<LogEntry> {
  if (agent.calibration.score === null) throw new ServiceError('calibration_required', 'Calibrate before attesting: GET /api/agent/v1/calibrate.');
  const k = kindOf(kind);
  if (k.kind === 'attestation.event.v1') {
    throw new ServiceError('invalid_kind', "attestation.event.v1 entries are the node's own audit trail; agents attest the other kinds.", { field: 'kind' });
  }
  const checked = dryRun(k.kind, body);
  if (!checked.valid) {
    throw new ServiceError('validation_failed', `The body does not fit ${k.kind}.`, {
      errors: checked.errors.map((e) => {
        const at = e.instancePath.slice(1).replace(/\//g, '.');
        const missing =
          e.keyword === 'required' ? String(e.params.missingProperty) : e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : '';
        return { field: [at, missing].filter(Boolean).join('.') || 'body', reason: e.message };
      }),
      details: checked.errors,
      errorCount: checked.errorCount,
      hint: checked.hint,
    });
  }
  const b = body as Record<string, unknown>;
  // Every entry fits a C2SP tlog-tiles entry bundle (uint16 length prefix): PROTOCOL 9.3.
  const bytes = leafBytesAtMost({ kind: k.kind, tier: k.tier, body: b, agent: agent.tag });
  if (bytes > MAX_ENTRY_BYTES) {
    throw new ServiceError('entry_too_large', `This attestation would make a log entry of ${bytes} bytes; an entry holds at most ${MAX_ENTRY_BYTES}.`, {
      field: 'body',
      errors: [
        {
          field: 'body',
          reason: `the log entry (the JCS of the body with its seq, prevHash, kind, tier, agent and time) would be ${bytes} bytes, over ${MAX_ENTRY_BYTES}`,
        },
      ],
      hint: 'Attest a smaller body: put large content in the content store (POST /api/cas) and attest its sha256.',
    });
  }
  if (k.kind === 'leaderboard.receipt.v1') await checkLeaderboard(log, b);
  // Nothing else is written with an attestation: it goes straight into the next append batch
  // (no outbox write first), and the answer waits until that batch is on disk.
  return log.submit({ kind: k.kind, tier: k.tier, body: b, agent: agent.tag });
}
