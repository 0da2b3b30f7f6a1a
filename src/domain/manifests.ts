// Signed manifests (PROTOCOL 10.3, 10.4): what the node vouches for when it serves a brief
// level or an artifact record, as an HMAC-SHA256 under one of its keys (L3: the node checks
// them, at POST /api/knowledge/verify and /api/knowledge/artifact/verify). A brief manifest
// also binds the bytes served: its contentSha256 is the sha256 of the JCS of the brief cut
// to the level, and the signature covers it, so a changed brief or a changed manifest fails.
import { canonicalize, currentHmac, hmacSha256Hex, safeEqual, sha256Hex, type NodeKeys } from '../core/index.js';
import type { PayloadOf } from './proposal-kinds.js';

export type BriefLevel = 'tldr' | 'core' | 'deep';
export const BRIEF_LEVELS: readonly BriefLevel[] = ['tldr', 'core', 'deep'];
type Brief = PayloadOf<'brief'>['brief'];

/** The brief as served at a level: tldr only, then core with pitfalls and heuristics, then everything. */
export function cutBrief(b: Brief, level: BriefLevel): Record<string, unknown> {
  const head = { id: b.id, domain: b.domain, topic: b.topic, title: b.title, version: b.version, ...(b.verifiedBy ? { verifiedBy: b.verifiedBy } : {}) };
  if (level === 'tldr') return { ...head, levels: { tldr: b.levels.tldr } };
  if (level === 'core') {
    return { ...head, levels: { tldr: b.levels.tldr, ...(b.levels.core ? { core: b.levels.core } : {}) }, ...(b.pitfalls ? { pitfalls: b.pitfalls } : {}), ...(b.heuristics ? { heuristics: b.heuristics } : {}) };
  }
  return b as unknown as Record<string, unknown>;
}

/** The deep level as text (definitions, examples, edge cases, sources), for the node response and search. */
export function deepText(b: Brief): string {
  const d = b.levels.deep;
  if (!d) return '';
  const lines: string[] = [];
  for (const [term, def] of Object.entries(d.definitions ?? {})) lines.push(`${term}: ${def}`);
  for (const e of d.examples ?? []) lines.push(`Violation: ${e.violation} Fix: ${e.fix}${e.note ? ` (${e.note})` : ''}`);
  for (const e of d.edgeCases ?? []) lines.push(`Edge case: ${e}`);
  for (const s of d.sources ?? []) lines.push(`Source: ${s.citation}${s.author ? `, ${s.author}` : ''}${s.year ? ` (${s.year})` : ''}${s.url ? ` ${s.url}` : ''}`);
  return lines.join('\n');
}

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

export interface BriefManifest {
  briefId: string;
  level: BriefLevel;
  version: string;
  tokenCount: number;
  fetchedAt: number;
  contentSha256: string;
  signature: string;
  signingKeyId: string;
}

const BRIEF_FIELDS = ['briefId', 'level', 'version', 'tokenCount', 'fetchedAt', 'contentSha256'] as const;

const briefSigned = (m: Omit<BriefManifest, 'signature' | 'signingKeyId'>) =>
  canonicalize({ type: 'akas.brief-manifest.v1', briefId: m.briefId, level: m.level, version: m.version, tokenCount: m.tokenCount, fetchedAt: m.fetchedAt, contentSha256: m.contentSha256 });

/** The manifest of a brief served at a level, signed with the current HMAC key. */
export function briefManifest(keys: NodeKeys, b: Brief, level: BriefLevel, fetchedAt: number): { brief: Record<string, unknown>; manifest: BriefManifest } {
  const cut = cutBrief(b, level);
  const unsigned = { briefId: b.id, level, version: b.version, tokenCount: tokenCount(levelText(b, level)), fetchedAt, contentSha256: sha256Hex(canonicalize(cut)) };
  const hmac = currentHmac(keys);
  return { brief: cut, manifest: { ...unsigned, signature: hmacSha256Hex(hmac.key, briefSigned(unsigned)), signingKeyId: hmac.signingKeyId } };
}

export type ManifestCheck = { valid: true } | { valid: false; reason: string };

/** The HMAC key a manifest names, if the node still holds it. */
function keyOf(keys: NodeKeys, id: unknown) {
  return keys.hmac.find((h) => h.signingKeyId === id);
}

/**
 * The first step of every manifest check: the key it names, a signature, and no field the
 * signature does not cover (a field added to a genuine manifest is a changed manifest too).
 */
function precheck(keys: NodeKeys, m: Record<string, unknown>, signed: readonly string[]): { key: Buffer } | { valid: false; reason: string } {
  const key = keyOf(keys, m.signingKeyId);
  if (!key) return { valid: false, reason: `unknown signingKeyId ${JSON.stringify(m.signingKeyId)}: not a key of this node` };
  if (typeof m.signature !== 'string') return { valid: false, reason: 'no signature' };
  const extra = Object.keys(m).find((k) => k !== 'signature' && k !== 'signingKeyId' && !signed.includes(k));
  if (extra !== undefined) return { valid: false, reason: `the field ${JSON.stringify(extra)} is not part of a signed manifest` };
  return { key: key.key };
}

/**
 * Checks a brief manifest: its signature under the key it names (current or prior), and
 * that it describes the brief version this node serves. `brief` is that version, or
 * undefined when the node has no such brief.
 */
export function checkBriefManifest(keys: NodeKeys, m: Record<string, unknown>, brief: Brief | undefined): ManifestCheck {
  const pre = precheck(keys, m, BRIEF_FIELDS);
  if (!('key' in pre)) return pre;
  let expected: string;
  try {
    expected = hmacSha256Hex(pre.key, briefSigned(m as unknown as BriefManifest));
  } catch {
    return { valid: false, reason: 'the manifest cannot be canonicalized' };
  }
  if (!safeEqual(expected, m.signature as string)) return { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
  if (!brief) return { valid: false, reason: `this node holds no brief ${String(m.briefId)} of version ${String(m.version)}` };
  if (sha256Hex(canonicalize(cutBrief(brief, m.level as BriefLevel))) !== m.contentSha256) return { valid: false, reason: 'the brief served at that level no longer hashes to contentSha256' };
  return { valid: true };
}

/** The fields of an artifact manifest (SPEC 2.8) that are signed. */
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
  return safeEqual(expected, m.signature as string) ? { valid: true } : { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
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

const EVAL_FIELDS = ['proposalId', 'status', 'artifactPath', 'metric', 'score', 'datasetSha256', 'harnessVersionSha', 'runner', 'samplesSha256', 'proposer', 'submittedAt', 'decidedAt', 'fetchedAt'] as const;

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
  return safeEqual(expected, m.signature as string) ? { valid: true } : { valid: false, reason: 'the signature does not match the manifest: a field was changed, or it was not made by this node' };
}
