// The judgment credential of L1 (PROTOCOL 8.1): a W3C VC 2.0 credential, secured with a
// DataIntegrityProof of the eddsa-jcs-2022 cryptosuite and issued by the node's did:key.
// The unsigned shape is built here, once, for the node that issues it and for the tests and
// tools that check it; the signing itself lives with the node (src/domain/credentials/credentials.ts)
// and the checking with the offline verifier (verifier/credential.ts).
import type { ProposalKind } from './kinds.js';
import type { ScoreDimensions } from './judgment.js';

export const VC_V2_CONTEXT = 'https://www.w3.org/ns/credentials/v2';
export const JUDGMENT_CREDENTIAL_TYPE = 'JudgmentCredential';
export const DATA_INTEGRITY_PROOF = 'DataIntegrityProof';
export const EDDSA_JCS_2022 = 'eddsa-jcs-2022';

/** The subject of a judgment credential: the judgment, its judge and the judge's own signature (L2). */
export interface JudgmentSubject {
  id: string;
  proposalId: string;
  kind: ProposalKind;
  judge: { tag: string; publicKey: string };
  scores: ScoreDimensions;
  composite: number;
  rationale: string;
  /** The judge's Ed25519 signature (128 hex) over the JCS payload of PROTOCOL 7.2. */
  judgeSignature: string;
  /** The content judged (PROTOCOL 6.10); absent from credentials issued before content binding. */
  contentSha256?: string;
}

export interface UnsignedJudgmentCredential {
  '@context': string[];
  type: string[];
  issuer: string;
  validFrom: string;
  credentialSubject: JudgmentSubject;
}

/** Milliseconds since the epoch as an XML Schema dateTimeStamp in UTC (with milliseconds). */
export const isoTime = (ms: number) => new Date(ms).toISOString();

/** The subject id of a judgment: a URN, since the credential outlives any one URL of a node. */
export const judgmentUrn = (judgmentId: string) => `urn:akas:judgment:${judgmentId}`;

/** The unsigned JudgmentCredential of one recorded judgment; validFrom is when it was judged. */
export function judgmentCredential(f: {
  issuer: string;
  judgedAt: number;
  judgmentId: string;
  proposalId: string;
  kind: ProposalKind;
  judge: { tag: string; publicKey: string };
  scores: ScoreDimensions;
  composite: number;
  rationale: string;
  judgeSignature: string;
  contentSha256?: string;
}): UnsignedJudgmentCredential {
  return {
    '@context': [VC_V2_CONTEXT],
    type: ['VerifiableCredential', JUDGMENT_CREDENTIAL_TYPE],
    issuer: f.issuer,
    validFrom: isoTime(f.judgedAt),
    credentialSubject: {
      id: judgmentUrn(f.judgmentId),
      proposalId: f.proposalId,
      kind: f.kind,
      judge: { tag: f.judge.tag, publicKey: f.judge.publicKey },
      scores: { accuracy: f.scores.accuracy, clarity: f.scores.clarity, compression: f.scores.compression, sources: f.scores.sources },
      composite: f.composite,
      rationale: f.rationale,
      judgeSignature: f.judgeSignature,
      ...(f.contentSha256 !== undefined ? { contentSha256: f.contentSha256 } : {}),
    },
  };
}

// XML Schema 1.1 dateTimeStamp: a dateTime whose time zone is required.
const DATE_TIME_STAMP = /^(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/** Two decimal digits of `s` at `i` as a number (the regular expression matched them). */
const digits2 = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);

/**
 * Whether a value is an XML Schema dateTimeStamp (a real calendar date and time, with a zone).
 * Read in place once the pattern holds (no match groups made): a verifier checks several per
 * credential, thousands of credentials a second.
 */
export function isDateTimeStamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (value === recentStamps[0] || value === recentStamps[1]) return true;
  if (!isStamp(value)) return false;
  recentStamps[next] = value;
  next ^= 1;
  return true;
}

// The last two dateTimeStamps found to be: a credential's validFrom is checked, then read for its
// time, between them its proof's created, which a batch's proofs often share.
const recentStamps: [string | undefined, string | undefined] = [undefined, undefined];
let next = 0;

function isStamp(value: string): boolean {
  if (!DATE_TIME_STAMP.test(value)) return false;
  const t = value.indexOf('T'); // the date before it ends -MM-DD, whatever the year's length
  const month = digits2(value, t - 5);
  const day = digits2(value, t - 2);
  const hour = digits2(value, t + 1);
  const minute = digits2(value, t + 4);
  const second = digits2(value, t + 7);
  if (month < 1 || month > 12 || day < 1 || minute > 59 || second > 59) return false;
  // The zone ends the text: Z, or +HH:MM / -HH:MM; a fraction (.digits) may come between the seconds and it.
  const zoneAt = value.charCodeAt(value.length - 1) === 0x5a /* Z */ ? value.length - 1 : value.length - 6;
  // 24:00:00 is the end of the day in XML Schema; any other hour must be below 24.
  if (hour > 24 || (hour === 24 && (minute !== 0 || second !== 0 || (zoneAt > t + 9 && Number(value.slice(t + 10, zoneAt)) !== 0)))) return false;
  // Days 29 to 31 exist only in some months (the year read as Date.UTC reads it).
  if (day > 28 && day > new Date(Date.UTC(Number(value.slice(0, t - 6)), month, 0)).getUTCDate()) return false;
  if (zoneAt === value.length - 6) {
    const zh = digits2(value, zoneAt + 1);
    const zm = digits2(value, zoneAt + 4);
    if (zm > 59 || zh > 14 || (zh === 14 && zm !== 0)) return false;
  }
  return true;
}

/** Milliseconds of a dateTimeStamp (NaN when it is not one). */
export function timeOf(value: unknown): number {
  if (typeof value === 'string' && value === lastTimed) return lastMs;
  if (!isDateTimeStamp(value)) return Number.NaN;
  lastMs = Date.parse(value);
  lastTimed = value;
  return lastMs;
}

// The last dateTimeStamp read for its time (a batch's proofs often share their created).
let lastTimed: string | undefined;
let lastMs = Number.NaN;

/**
 * The statement a node signs when it rotates its issuer key, with the old key and with the
 * new one: either end of a chain of rotations can then vouch for the other, so an auditor who
 * pinned any one issuer DID can follow the chain to the key of any credential.
 */
export interface IssuerRotation {
  type: 'akas.issuer-rotation.v1';
  from: string;
  to: string;
  at: number;
}

export const issuerRotation = (from: string, to: string, at: number): IssuerRotation => ({ type: 'akas.issuer-rotation.v1', from, to, at });

/** One issuer key as published (GET /api/node/keys): its DID, and when it was the issuer's. */
export interface PublishedIssuerKey {
  did: string;
  publicKeyMultibase: string;
  validFrom: number;
  /** null for the current key. */
  validUntil: number | null;
}

/** A signed rotation as published: the statement and the two Ed25519 signatures (128 hex) over its JCS bytes. */
export interface SignedIssuerRotation extends IssuerRotation {
  signatures: { from: string; to: string };
}
