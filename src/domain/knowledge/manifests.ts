// Signed manifests (PROTOCOL 10.3, 10.4): what the node vouches for when it serves a brief
// level or an artifact record, as an HMAC-SHA256 under one of its keys (L3: the node checks
// them, at POST /api/knowledge/verify and /api/knowledge/artifact/verify). A brief manifest
// also binds the bytes served: its contentSha256 is the sha256 of the JCS of the brief cut
// to the level, and the signature covers it, so a changed brief or a changed manifest fails.
// Since content binding a brief manifest (v2) also names the proposal that published the
// brief, that proposal's contentSha256 and its publication event in the log, and the node's
// issuer key signs the same statement (Ed25519), so an agent checks a brief cut offline.
import {
  BRIEF_BINDING_FIELDS,
  BRIEF_MANIFEST_FIELDS,
  briefCutSha256,
  briefManifestStatement,
  canonicalize,
  currentHmac,
  cutBrief,
  deepText,
  hmacSha256Hex,
  safeEqual,
  sha256Hex,
  publicKeyFromMultibase,
  sign,
  verify,
  type BriefBinding,
  type BriefManifestFields,
  type BriefLevel,
  type NodeKeys,
} from '../../core/index.js';
import type { PayloadOf } from '../proposals/kinds.js';

export { BRIEF_LEVELS, cutBrief, deepText, type BriefLevel } from '../../core/index.js';
type Brief = PayloadOf<'brief'>['brief'];

/**
 * An estimate of the tokens of a text as LLMs count them: words and numbers count one each,
 * every other visible character one. Close to common BPE tokenizers on English prose, and
 * the same on every machine.
 */
export function tokenCount(text: string): number {
  return (text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) ?? []).length;
}

/** The text of a brief at a level (what tokenCount counts). */
function levelText(b: Brief, level: BriefLevel): string {
  const parts = [b.title, b.levels.tldr];
  if (level !== 'tldr') parts.push(...(b.levels.core ?? []), ...(b.pitfalls ?? []), ...(b.heuristics ?? []));
  if (level === 'deep') parts.push(deepText(b), ...(b.disputes ?? []).flatMap((d) => [d.claim, ...d.positions]), ...(b.related ?? []));
  return parts.join('\n');
}

export interface BriefManifest extends BriefManifestFields {
  /** v2 (PROTOCOL 10.3): the proposal that published this brief version, its contentSha256 and its publication event. */
  proposalId?: string;
  proposalContentSha256?: string;
  publicationEventId?: string | null;
  signature: string;
  signingKeyId: string;
  /** v2: the same statement signed by the node's issuer key, checkable offline (`akas verify node`). */
  nodeSignature?: { algorithm: 'Ed25519'; issuer: string; signature: string };
}

/**
 * The manifest of a brief served at a level, signed with the current HMAC key; given the
 * proposal that published it (binding), a v2 manifest, also signed by the issuer key.
 */
export function briefManifest(
  keys: NodeKeys,
  b: Brief,
  level: BriefLevel,
  fetchedAt: number,
  binding?: BriefBinding,
): { brief: Record<string, unknown>; manifest: BriefManifest } {
  const cut = cutBrief(b, level);
  const unsigned = {
    briefId: b.id,
    level,
    version: b.version,
    tokenCount: tokenCount(levelText(b, level)),
    fetchedAt,
    contentSha256: briefCutSha256(cut),
    ...(binding ?? {}),
  };
  const statement = briefManifestStatement(unsigned);
  const hmac = currentHmac(keys);
  const manifest: BriefManifest = { ...unsigned, signature: hmacSha256Hex(hmac.key, statement), signingKeyId: hmac.signingKeyId };
  if (binding) manifest.nodeSignature = { algorithm: 'Ed25519', issuer: keys.issuer.did, signature: sign(keys.issuer.privateKey, statement) };
  return { brief: cut, manifest };
}

export type ManifestCheck = { valid: true } | { valid: false; reason: string };

/** Why a v2 brief manifest's Ed25519 signature does not hold under one of this node's issuer keys, or null. */
function nodeSignatureProblem(keys: NodeKeys, m: Record<string, unknown>): string | null {
  const ns = m.nodeSignature as Record<string, unknown> | undefined;
  if (!ns || typeof ns !== 'object' || ns.algorithm !== 'Ed25519' || typeof ns.signature !== 'string' || Object.keys(ns).length !== 3)
    return 'no Ed25519 nodeSignature {algorithm, issuer, signature}';
  const issuer = keys.issuers.find((k) => k.did === ns.issuer);
  const publicKey = issuer ? publicKeyFromMultibase(issuer.publicKeyMultibase) : null;
  if (!publicKey) return `nodeSignature names ${JSON.stringify(ns.issuer)}, not an issuer key of this node`;
  let statement: string;
  try {
    statement = briefManifestStatement(m as unknown as BriefManifest);
  } catch {
    return 'the manifest cannot be canonicalized';
  }
  return verify(publicKey, statement, ns.signature) ? null : "the nodeSignature does not verify under the issuer's key";
}

/** The HMAC key a manifest names, if the node still holds it. */
function keyOf(keys: NodeKeys, id: unknown) {
  return keys.hmac.find((h) => h.signingKeyId === id);
}

/**
 * The first step of every manifest check: the key it names, a signature, and no field the
 * signature does not cover (a field added to a genuine manifest is a changed manifest too).
 */
function precheck(
  keys: NodeKeys,
  m: Record<string, unknown>,
  signed: readonly string[],
  signatures: readonly string[] = [],
): { key: Buffer } | { valid: false; reason: string } {
  const key = keyOf(keys, m.signingKeyId);
  if (!key) return { valid: false, reason: `unknown signingKeyId ${JSON.stringify(m.signingKeyId)}: not a key of this node` };
  if (typeof m.signature !== 'string') return { valid: false, reason: 'no signature' };
  const extra = Object.keys(m).find((k) => k !== 'signature' && k !== 'signingKeyId' && !signed.includes(k) && !signatures.includes(k));
  if (extra !== undefined) return { valid: false, reason: `the field ${JSON.stringify(extra)} is not part of a signed manifest` };
  return { key: key.key };
}

/**
 * Checks a brief manifest: its signature under the key it names (current or prior), and
 * that it describes the brief version this node serves. `brief` is that version, or
 * undefined when the node has no such brief.
 */
export function checkBriefManifest(keys: NodeKeys, m: Record<string, unknown>, brief: Brief | undefined): ManifestCheck {
  // A v2 manifest (with the proposal binding) signs three more fields, and carries the issuer's
  // Ed25519 signature of the same statement beside the HMAC; a v1 manifest made earlier stays valid.
  const v2 = m.proposalId !== undefined;
  const pre = v2 ? precheck(keys, m, [...BRIEF_MANIFEST_FIELDS, ...BRIEF_BINDING_FIELDS], ['nodeSignature']) : precheck(keys, m, BRIEF_MANIFEST_FIELDS);
  if (!('key' in pre)) return pre;
  let expected: string;
  try {
    expected = hmacSha256Hex(pre.key, briefManifestStatement(m as unknown as BriefManifest));
  } catch {
    return { valid: false, reason: 'the manifest cannot be canonicalized' };
  }
  if (!safeEqual(expected, m.signature as string))
    return { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
  if (v2) {
    const bad = nodeSignatureProblem(keys, m);
    if (bad) return { valid: false, reason: bad };
  }
  if (!brief) return { valid: false, reason: `this node holds no brief ${String(m.briefId)} of version ${String(m.version)}` };
  if (sha256Hex(canonicalize(cutBrief(brief, m.level as BriefLevel))) !== m.contentSha256)
    return { valid: false, reason: 'the brief served at that level no longer hashes to contentSha256' };
  return { valid: true };
}

/** The fields of an artifact manifest (PROTOCOL 10.3) that are signed. */
export type ArtifactManifestFields = {
  artifactPath: string;
  uri: string;
  mediaType: string;
  sha256: string;
  artifactKind: string;
  provenance: Record<string, unknown>;
  bytes: number;
  fetchedAt: number;
};

const ARTIFACT_FIELDS = ['artifactPath', 'uri', 'mediaType', 'sha256', 'artifactKind', 'provenance', 'bytes', 'fetchedAt'] as const;

const artifactSigned = (m: ArtifactManifestFields) =>
  canonicalize({
    type: 'akas.artifact-manifest.v1',
    artifactPath: m.artifactPath,
    uri: m.uri,
    mediaType: m.mediaType,
    sha256: m.sha256,
    artifactKind: m.artifactKind,
    provenance: m.provenance,
    bytes: m.bytes,
    fetchedAt: m.fetchedAt,
  });

export function artifactManifest(keys: NodeKeys, f: ArtifactManifestFields) {
  const hmac = currentHmac(keys);
  return { ...f, signature: hmacSha256Hex(hmac.key, artifactSigned(f)), signingKeyId: hmac.signingKeyId };
}

/** Checks an artifact manifest's signature under the key it names. */
export function checkArtifactManifest(keys: NodeKeys, m: Record<string, unknown>): ManifestCheck {
  const pre = precheck(keys, m, ARTIFACT_FIELDS);
  if (!('key' in pre)) return pre;
  let expected: string;
  try {
    expected = hmacSha256Hex(pre.key, artifactSigned(m as unknown as ArtifactManifestFields));
  } catch {
    return { valid: false, reason: 'the manifest cannot be canonicalized' };
  }
  return safeEqual(expected, m.signature as string)
    ? { valid: true }
    : { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
}

/** The fields of an eval-result manifest (PROTOCOL 10.4): the eval as proposed, and its status when served. */
export type EvalManifestFields = {
  proposalId: string;
  status: string;
  artifactPath: string;
  metric: string;
  score: number;
  datasetSha256: string;
  harnessVersionSha: string;
  runner: string;
  samplesSha256: string | null;
  proposer: string | null;
  submittedAt: number;
  decidedAt: number | null;
  fetchedAt: number;
};

const EVAL_FIELDS = [
  'proposalId',
  'status',
  'artifactPath',
  'metric',
  'score',
  'datasetSha256',
  'harnessVersionSha',
  'runner',
  'samplesSha256',
  'proposer',
  'submittedAt',
  'decidedAt',
  'fetchedAt',
] as const;

// Exactly the named fields, under a type of their own, so that no other HMAC of the node
// (brief or artifact manifests, claim secrets) can ever be passed off as an eval manifest.
const evalSigned = (m: Record<string, unknown>) => canonicalize({ type: 'akas.eval-manifest.v1', ...Object.fromEntries(EVAL_FIELDS.map((k) => [k, m[k]])) });

/** The signed manifest of an eval-result proposal, as GET /api/knowledge/eval/proposals/{id} serves it. */
export function evalManifest(keys: NodeKeys, f: EvalManifestFields) {
  const hmac = currentHmac(keys);
  return { ...f, signature: hmacSha256Hex(hmac.key, evalSigned(f)), signingKeyId: hmac.signingKeyId };
}

/** Tells an eval manifest from a brief one: it names an eval-result proposal and no brief. */
export const isEvalManifest = (m: Record<string, unknown>) => m.briefId === undefined && typeof m.proposalId === 'string' && m.proposalId.startsWith('eprop_');

/** Checks an eval manifest's signature under the key it names. */
export function checkEvalManifest(keys: NodeKeys, m: Record<string, unknown>): ManifestCheck {
  const pre = precheck(keys, m, EVAL_FIELDS);
  if (!('key' in pre)) return pre;
  let expected: string;
  try {
    expected = hmacSha256Hex(pre.key, evalSigned(m));
  } catch {
    return { valid: false, reason: 'the manifest cannot be canonicalized' };
  }
  return safeEqual(expected, m.signature as string)
    ? { valid: true }
    : { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
}
