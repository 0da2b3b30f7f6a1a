// A brief as the node serves it (PROTOCOL 10.3): cut to a level, its levels as text, and the
// statement its manifest signs. Pure, and shared: the node builds and signs manifests with
// it, the offline verifier (`akas verify node`) rebuilds the same bytes.
import { canonicalize } from './jcs.js';
import { sha256Hex } from './hash.js';

export type BriefLevel = 'tldr' | 'core' | 'deep';
export const BRIEF_LEVELS: readonly BriefLevel[] = ['tldr', 'core', 'deep'];

// biome-ignore lint/suspicious/noExplicitAny: a brief is walked by level after its schema has checked it
type Brief = Record<string, any>;

/** The brief as served at a level: tldr only, then core with pitfalls and heuristics, then everything. */
export function cutBrief(b: Brief, level: BriefLevel): Record<string, unknown> {
  const head = { id: b.id, domain: b.domain, topic: b.topic, title: b.title, version: b.version, ...(b.verifiedBy ? { verifiedBy: b.verifiedBy } : {}) };
  if (level === 'tldr') return { ...head, levels: { tldr: b.levels.tldr } };
  if (level === 'core') {
    return {
      ...head,
      levels: { tldr: b.levels.tldr, ...(b.levels.core ? { core: b.levels.core } : {}) },
      ...(b.pitfalls ? { pitfalls: b.pitfalls } : {}),
      ...(b.heuristics ? { heuristics: b.heuristics } : {}),
    };
  }
  return b;
}

/** sha256 hex of the JCS of a brief as cut: a brief manifest's contentSha256. */
export const briefCutSha256 = (cut: unknown) => sha256Hex(canonicalize(cut));

/** The deep level as text (definitions, examples, edge cases, sources), for the node response and search. */
export function deepText(b: Brief): string {
  const d = b.levels?.deep;
  if (!d) return '';
  const lines: string[] = [];
  for (const [term, def] of Object.entries((d.definitions ?? {}) as Record<string, string>)) lines.push(`${term}: ${def}`);
  for (const e of d.examples ?? []) lines.push(`Violation: ${e.violation} Fix: ${e.fix}${e.note ? ` (${e.note})` : ''}`);
  for (const e of d.edgeCases ?? []) lines.push(`Edge case: ${e}`);
  for (const s of d.sources ?? [])
    lines.push(`Source: ${s.citation}${s.author ? `, ${s.author}` : ''}${s.year ? ` (${s.year})` : ''}${s.url ? ` ${s.url}` : ''}`);
  return lines.join('\n');
}

/**
 * The text fields a leaf-brief node serves beside the brief (PROTOCOL 10.2), from the brief as
 * cut to the level asked: tldr always, core from the core level (items one per line), deep at
 * the deep level only. So every text served is in the cut its manifest hashes.
 */
export function briefTexts(cut: Brief, level: BriefLevel): { tldr: string; core?: string; deep?: string } {
  return {
    tldr: cut.levels.tldr,
    ...(level !== 'tldr' ? { core: ((cut.levels.core ?? []) as string[]).join('\n') } : {}),
    ...(level === 'deep' ? { deep: deepText(cut) } : {}),
  };
}

/** What ties a manifest to the proposal that published the brief (PROTOCOL 10.3): absent from manifests made before. */
export interface BriefBinding {
  proposalId: string;
  /** The contentSha256 (PROTOCOL 6.10) of that proposal. */
  proposalContentSha256: string;
  /** The id of its proposal.published event in the log; null while it waits to be appended. */
  publicationEventId: string | null;
}

export interface BriefManifestFields {
  briefId: string;
  level: BriefLevel;
  version: string;
  tokenCount: number;
  fetchedAt: number;
  contentSha256: string;
}

/**
 * The JCS string a brief manifest's signatures cover: v1 (HMAC only) the six fields; v2, with
 * the proposal binding, the same fields and the binding, under its own type, signed by the HMAC
 * and by the node's issuer key (Ed25519).
 */
export function briefManifestStatement(m: BriefManifestFields & Partial<BriefBinding>): string {
  const fields = { briefId: m.briefId, level: m.level, version: m.version, tokenCount: m.tokenCount, fetchedAt: m.fetchedAt, contentSha256: m.contentSha256 };
  if (m.proposalId === undefined) return canonicalize({ type: 'akas.brief-manifest.v1', ...fields });
  return canonicalize({
    type: 'akas.brief-manifest.v2',
    ...fields,
    proposalId: m.proposalId,
    proposalContentSha256: m.proposalContentSha256,
    publicationEventId: m.publicationEventId,
  });
}

/** The signed fields of a brief manifest: v1's six, and the binding's three for v2. */
export const BRIEF_MANIFEST_FIELDS = ['briefId', 'level', 'version', 'tokenCount', 'fetchedAt', 'contentSha256'] as const;
export const BRIEF_BINDING_FIELDS = ['proposalId', 'proposalContentSha256', 'publicationEventId'] as const;
