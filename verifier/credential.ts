// A strict offline verifier of W3C VC 2.0 credentials secured with eddsa-jcs-2022 (the
// judgment credentials of PROTOCOL 8.1, and any other such credential with a did:key
// issuer). Its own code rather than the JSON-LD machinery: JCS, SHA-256, Ed25519 through
// node:crypto and base58-btc, so it is fast, needs no document loader, and is stricter than
// the libraries where the specifications are:
// - the file must be strict JSON (no duplicate keys, no lone surrogates, UTF-8);
// - proofValue must be base58-btc multibase of exactly 64 bytes;
// - created, validFrom and validUntil must be XML Schema dateTimeStamps;
// - the proof's @context, when present, must be a prefix of the document's;
// - the verificationMethod must be a did:key URL (fragment = the key) whose DID, its
//   controller, is the issuer.
// The algorithm is "Verify Proof (eddsa-jcs-2022)" of W3C Data Integrity EdDSA.
import { createHash } from 'node:crypto';
import {
  base58btcDecode,
  canonicalize,
  DATA_INTEGRITY_PROOF,
  EDDSA_JCS_2022,
  isDateTimeStamp,
  judgmentSigningString,
  kindOfProposalId,
  parseDidKeyUrl,
  parseStrictJson,
  PROPOSAL_KINDS,
  timeOf,
  VC_V2_CONTEXT,
  verifyRaw,
  verify,
  type ProposalKind,
} from '../src/core/index.js';
import type { IssuerTrust } from './issuer-keys.js';
import { Checks, type Report } from './report.js';

export interface CredentialOptions {
  /** The instant the validity window is checked at (ms); now by default. */
  at?: number;
  /** The issuer DID the credential must have (without a key list: exactly this DID). */
  issuer?: string;
  /** Issuer keys trusted from a pinned DID (trustIssuerKeys): the signing key must be one, valid at validFrom. */
  trust?: IssuerTrust;
  /** Also check the judge's own signature (L2) that a JudgmentCredential carries. */
  checkJudgeSignature?: boolean;
}

export interface CredentialReport extends Report {
  issuer?: string;
  /** credentialSubject.id, when there is one. */
  subject?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Verifies one credential: the raw bytes or text of a file (strict JSON is checked then), or
 * an already parsed value. Never throws for a bad credential: every failure is a check.
 */
export function verifyCredential(input: string | Uint8Array | unknown, options: CredentialOptions = {}): CredentialReport {
  const c = new Checks();
  let doc: unknown = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const parsed = parseStrictJson(input);
    if (!c.add('json', 'input', 'strict JSON (UTF-8, no duplicate keys, no lone surrogates)', parsed.ok, parsed.ok ? undefined : parsed.reason)) return c.report();
    doc = (parsed as { value: unknown }).value;
  }
  if (!c.add('shape', 'L1', 'a JSON object', isObject(doc), isObject(doc) ? undefined : 'a credential is a JSON object')) return c.report();
  const vc = doc as Json;

  const context = vc['@context'];
  const contextOk = Array.isArray(context) && context[0] === VC_V2_CONTEXT && context.every((x) => typeof x === 'string' || isObject(x));
  c.add('context', 'L1', `@context starts with ${VC_V2_CONTEXT}`, contextOk, contextOk ? undefined : `@context is ${JSON.stringify(context)?.slice(0, 120)}`);

  const types = Array.isArray(vc.type) ? vc.type : [vc.type];
  c.add('type', 'L1', 'type includes VerifiableCredential', types.includes('VerifiableCredential'), types.includes('VerifiableCredential') ? undefined : `type is ${JSON.stringify(vc.type)}`);

  const issuer = typeof vc.issuer === 'string' ? vc.issuer : isObject(vc.issuer) && typeof vc.issuer.id === 'string' ? vc.issuer.id : undefined;
  c.add('issuer', 'L1', 'an issuer (a URL, or an object with an id)', issuer !== undefined, issuer === undefined ? 'issuer is missing or malformed' : issuer);
  const subject = isObject(vc.credentialSubject) ? vc.credentialSubject : undefined;
  c.add('credentialSubject', 'L1', 'a credentialSubject object', subject !== undefined, subject ? undefined : 'credentialSubject is missing or not an object');

  const dates: string[] = [];
  for (const field of ['validFrom', 'validUntil'] as const) {
    if (vc[field] !== undefined && !isDateTimeStamp(vc[field])) dates.push(`${field} ${JSON.stringify(vc[field])}`);
  }
  c.add('dates', 'L1', 'validFrom and validUntil are XML Schema dateTimeStamps', dates.length === 0, dates.length ? `not a dateTimeStamp: ${dates.join(', ')}` : undefined);

  const proof = vc.proof;
  const shapeProblems: string[] = [];
  if (!isObject(proof)) shapeProblems.push(Array.isArray(proof) ? 'a proof set (several proofs) is not supported' : 'no proof');
  else {
    if (proof.type !== DATA_INTEGRITY_PROOF) shapeProblems.push(`proof.type is ${JSON.stringify(proof.type)}, not ${DATA_INTEGRITY_PROOF}`);
    if (proof.cryptosuite !== EDDSA_JCS_2022) shapeProblems.push(`proof.cryptosuite is ${JSON.stringify(proof.cryptosuite)}, not ${EDDSA_JCS_2022}`);
    if (proof.proofPurpose !== 'assertionMethod') shapeProblems.push(`proof.proofPurpose is ${JSON.stringify(proof.proofPurpose)}, not assertionMethod`);
    if (proof.created !== undefined && !isDateTimeStamp(proof.created)) shapeProblems.push(`proof.created ${JSON.stringify(proof.created)} is not a dateTimeStamp`);
    if (proof.expires !== undefined && !isDateTimeStamp(proof.expires)) shapeProblems.push(`proof.expires ${JSON.stringify(proof.expires)} is not a dateTimeStamp`);
  }
  const proofShaped = c.add('proof.shape', 'L1', `a ${DATA_INTEGRITY_PROOF} of ${EDDSA_JCS_2022} for assertionMethod`, shapeProblems.length === 0, shapeProblems.join('; ') || undefined);
  if (!proofShaped) return finish(c, issuer, subject);
  const p = proof as Json;

  const proofContext = p['@context'];
  let contextPrefix = true;
  if (proofContext !== undefined) {
    const pc = Array.isArray(proofContext) ? proofContext : [proofContext];
    const dc = Array.isArray(context) ? context : [context];
    contextPrefix = pc.length <= dc.length && pc.every((x, i) => canonicalize(x) === canonicalize(dc[i]));
  }
  c.add('proof.context', 'L1', "the proof's @context is a prefix of the document's", contextPrefix, contextPrefix ? undefined : 'proof.@context does not start the document @context');

  const vm = parseDidKeyUrl(p.verificationMethod);
  c.add(
    'proof.verificationMethod',
    'L1',
    'the verification method is an Ed25519 did:key URL (did:key:z..#z..)',
    vm !== null,
    vm === null ? `verificationMethod ${JSON.stringify(p.verificationMethod)} is not an Ed25519 did:key URL` : undefined,
  );
  if (vm) {
    const controllerOk = vm.did === issuer;
    c.add('issuer.controller', 'L1', "the verification method's controller is the issuer", controllerOk, controllerOk ? undefined : `its controller ${vm.did} is not the issuer ${issuer}`);
  }

  const raw = typeof p.proofValue === 'string' && p.proofValue.startsWith('z') ? base58btcDecode(p.proofValue.slice(1)) : null;
  const proofValueOk = raw !== null && raw.length === 64;
  c.add(
    'proof.proofValue',
    'L1',
    'proofValue is base58-btc multibase of exactly 64 bytes',
    proofValueOk,
    proofValueOk ? undefined : raw === null ? 'proofValue is not z-prefixed base58-btc' : `proofValue decodes to ${raw.length} bytes`,
  );

  if (vm && proofValueOk && contextPrefix) {
    // Verify Proof (eddsa-jcs-2022): the proof options without proofValue, and the document
    // without proof (its @context set to the proof's when the proof has one), each JCS'd
    // and hashed; the signature is over the proof hash followed by the document hash.
    const { proofValue: _drop, ...options } = p;
    const { proof: _proof, ...unsecured } = vc;
    if (proofContext !== undefined) unsecured['@context'] = proofContext;
    let holds = false;
    let why: string | undefined;
    try {
      const data = Buffer.concat([sha256(canonicalize(options)), sha256(canonicalize(unsecured))]);
      holds = verifyRaw(vm.publicKey, data, raw);
      if (!holds) why = 'the Ed25519 signature does not verify: the credential or its proof was changed, or signed by another key';
    } catch (e) {
      why = `cannot be canonicalized: ${(e as Error).message}`;
    }
    c.add('proof.signature', 'L1', `the ${EDDSA_JCS_2022} signature verifies under the verification method's key`, holds, why);
  } else c.add('proof.signature', 'L1', `the ${EDDSA_JCS_2022} signature verifies`, null, 'not checked: the proof above is malformed');

  const at = options.at ?? Date.now();
  const from = timeOf(vc.validFrom);
  const until = timeOf(vc.validUntil);
  const early = Number.isFinite(from) && at < from;
  const late = Number.isFinite(until) && at >= until;
  c.add(
    'validity',
    'L1',
    `valid at ${new Date(at).toISOString()}`,
    !early && !late,
    early ? `not valid before ${vc.validFrom}` : late ? `expired at ${vc.validUntil}` : undefined,
  );

  if (options.issuer !== undefined && !options.trust) {
    c.add('issuer.pinned', 'L1', `the issuer is ${options.issuer}`, issuer === options.issuer, issuer === options.issuer ? undefined : `the issuer is ${issuer}`);
  }
  if (options.trust) {
    const t = options.trust;
    const key = vm ? t.keys.get(vm.did) : undefined;
    const signedAt = Number.isFinite(from) ? from : timeOf(p.created);
    const inWindow = key !== undefined && Number.isFinite(signedAt) && signedAt >= key.from && signedAt < key.until;
    c.add(
      'issuer.key',
      'L1',
      `the signing key was the issuer's (pinned ${t.pinned}) at validFrom`,
      inWindow,
      key === undefined
        ? `${vm?.did ?? 'the signing key'} is not one of the issuer keys reached from ${t.pinned}${t.problems.length ? ` (${t.problems.join('; ')})` : ''}`
        : inWindow
          ? undefined
          : `that key was the issuer's from ${iso(key.from)} until ${iso(key.until)}, not at ${vc.validFrom ?? p.created}`,
    );
  }
  if (options.checkJudgeSignature) checkJudgeSignature(c, subject);
  return finish(c, issuer, subject);
}

const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : t < 0 ? 'the start' : 'now');

function finish(c: Checks, issuer: string | undefined, subject: Json | undefined): CredentialReport {
  return { ...c.report(), ...(issuer ? { issuer } : {}), ...(typeof subject?.id === 'string' ? { subject: subject.id } : {}) };
}

/** L2 inside a JudgmentCredential: the subject's fields rebuild the payload its judge signed, and the judge's signature holds. */
function checkJudgeSignature(c: Checks, s: Json | undefined) {
  const judge = isObject(s?.judge) ? s.judge : undefined;
  const proposalId = typeof s?.proposalId === 'string' ? s.proposalId : '';
  const kind = s?.kind as ProposalKind;
  if (!s || !judge || typeof judge.tag !== 'string' || typeof judge.publicKey !== 'string' || !(PROPOSAL_KINDS as string[]).includes(kind) || kindOfProposalId(proposalId) !== kind) {
    c.add('judge.signature', 'L2', "the judge's own Ed25519 signature", false, 'the subject is not a judgment (judge, kind and proposalId)');
    return;
  }
  // A judge who signed v2 signed the content the subject names; one who signed v1 (SPEC's
  // payload) signed none, and the content is the node's word in this credential only.
  const fields = { kind, proposalId, judge: judge.tag, scores: s.scores as never, rationale: s.rationale as string };
  let v1: string;
  let v2: string | undefined;
  try {
    v1 = judgmentSigningString(fields);
    if (typeof s.contentSha256 === 'string') v2 = judgmentSigningString({ ...fields, contentSha256: s.contentSha256 });
  } catch {
    c.add('judge.signature', 'L2', "the judge's own Ed25519 signature", false, 'the subject lacks the scores or rationale that were signed');
    return;
  }
  const signedV2 = v2 !== undefined && verify(judge.publicKey, v2, s.judgeSignature as string);
  const ok = signedV2 || verify(judge.publicKey, v1, s.judgeSignature as string);
  c.add(
    'judge.signature',
    'L2',
    `${judge.tag}'s Ed25519 signature over its judgment`,
    ok,
    ok ? (signedV2 ? 'akas.judgment.v2: the judge signed the content named' : v2 !== undefined ? "akas.judgment.v1: the judge signed no content; the content is the node's word" : undefined) : "judgeSignature does not verify under the judge's key over the subject's fields",
  );
}
