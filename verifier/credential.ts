// A strict offline verifier of W3C VC 2.0 credentials secured with eddsa-jcs-2022 (the
// judgment credentials of PROTOCOL 8.1, and any other such credential with a did:key
// issuer). Its own code rather than the JSON-LD machinery: JCS, SHA-256, Ed25519 (through
// the crypto adapter, src/core/crypto.ts) and base58-btc, so it is fast, needs no document
// loader, runs in a browser too, and follows the specifications step by step:
// - VC Data Model 2.0 §4 (verifier/vc.ts): contexts (§4.3), identifiers (§4.4), types (§4.5),
//   issuer (§4.7), credential subjects as a set (§4.8), the validity period (§4.9);
// - Data Integrity 1.0: a proof or a proof set (§2.1, §2.1.1), its purpose (§2.2), the
//   checks of Verify Proof (§4.4) and Verify Proof Sets and Chains (§4.5);
// - eddsa-jcs-2022 (Data Integrity EdDSA Cryptosuites 1.0 §3.3): Verify Proof (§3.3.2),
//   Transformation (§3.3.3), Hashing (§3.3.4), Proof Configuration (§3.3.5), Proof
//   Verification (§3.3.7), with the Multikey of a did:key (§2.1.1).
// It is stricter than the specifications require where they allow it (PROTOCOL 8.5): the
// file must be strict JSON (no duplicate keys, no lone surrogates, UTF-8); proofValue must
// be base58-btc multibase of exactly 64 bytes; created, expires, validFrom and validUntil
// must be dateTimeStamps (with a zone); the verification method must be a did:key URL
// (fragment = the key) whose DID, its controller, is the issuer.
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { DATA_INTEGRITY_PROOF, EDDSA_JCS_2022, isDateTimeStamp, timeOf } from '../src/core/credential.js';
import { sha256Into } from '../src/core/crypto.js';
import { base58btcDecode, parseDidKeyUrl } from '../src/core/didkey.js';
import { canonicalize } from '../src/core/jcs.js';
import { judgmentSigningString } from '../src/core/judgment.js';
import { kindOfProposalId, PROPOSAL_KINDS, type ProposalKind } from '../src/core/kinds.js';
import type { IssuerTrust } from './issuer-keys.js';
import { Checks, readJsonInput, type CheckId, type Report } from './report.js';
import { contextProblem, idProblem, isObject, issuerOf, subjectsOf, typeProblem, validityProblem } from './vc.js';

export interface CredentialOptions {
  /** The instant the validity window is checked at (ms); now by default. */
  at?: number;
  /** The issuer DID the credential must have (without a key list: exactly this DID). */
  issuer?: string;
  /** Issuer keys trusted from a pinned DID (trustIssuerKeys): the signing key must be one, valid at validFrom. */
  trust?: IssuerTrust;
  /** Also check the judge's own signature (L2) that a JudgmentCredential carries. */
  checkJudgeSignature?: boolean;
  /** Verification methods of did:web documents a trust file pinned (PROTOCOL 8.10): method id -> its did:key. Never fetched. */
  didWeb?: Map<string, string>;
  /** Handed the document once parsed (the CLI reads its status entries without parsing it again). */
  onDocument?: (doc: unknown) => void;
}

export interface CredentialReport extends Report {
  issuer?: string;
  /** credentialSubject.id (of the first subject), when there is one. */
  subject?: string;
}

type Json = Record<string, unknown>;

/**
 * Verifies one credential: the raw bytes or text of a file (strict JSON is checked then), or
 * an already parsed value. Never throws for a bad credential: every failure is a check; throws
 * NotCheckableError (code invalid_json) for bytes or text that are not strict JSON, which are
 * no credential to judge (PROTOCOL 8.8). Synchronous: for Node (the browser build has
 * verifyCredentialAsync only).
 */
export function verifyCredential(input: string | Uint8Array | unknown, options: CredentialOptions = {}): CredentialReport {
  return runNow(credentialChecking(readJsonInput(input, 'a credential'), options));
}

/** verifyCredential where Ed25519 is asynchronous (WebCrypto in a browser); the same checks. Rejects with NotCheckableError for what is not strict JSON. */
export function verifyCredentialAsync(input: string | Uint8Array | unknown, options: CredentialOptions = {}): Promise<CredentialReport> {
  return runAsync(credentialInputChecking(input, options));
}

// The input read inside the generator: the async variant then rejects rather than throws.
function* credentialInputChecking(input: unknown, options: CredentialOptions): Checking<CredentialReport> {
  return yield* credentialChecking(readJsonInput(input, 'a credential'), options);
}

/**
 * The checks of verifyCredential on a parsed document, as a generator of the signatures they
 * need (src/core/checking.ts): a bundle's, a presentation's or a status list's credential is
 * checked as it stands, never read again from a string.
 */
export function* credentialChecking(doc: unknown, options: CredentialOptions = {}): Checking<CredentialReport> {
  const c = new Checks();
  options.onDocument?.(doc);
  if (!c.add({ id: 'shape', what: 'a JSON object', valid: isObject(doc), why: isObject(doc) ? undefined : 'a credential is a JSON object' })) return c.report();
  const vc = doc as Json;
  const at = options.at ?? Date.now();

  const contextBad = contextProblem(vc['@context']);
  c.add({
    id: 'context',
    what: '@context starts with https://www.w3.org/ns/credentials/v2, then URLs or objects (VC DM 2.0 §4.3)',
    valid: contextBad === null,
    why: contextBad ?? undefined,
  });
  const idBad = idProblem(vc.id, 'the credential');
  c.add({ id: 'id', what: "the credential's id, if any, is a single URL (VC DM 2.0 §4.4)", valid: idBad === null, why: idBad ?? undefined });
  const typeBad = typeProblem(vc.type, 'VerifiableCredential');
  c.add({
    id: 'type',
    what: 'type includes VerifiableCredential, every type a term or URL (VC DM 2.0 §4.5)',
    valid: typeBad === null,
    why: typeBad ?? undefined,
  });
  const iss = issuerOf(vc.issuer);
  const issuer = 'id' in iss ? iss.id : undefined;
  c.add({
    id: 'issuer',
    what: 'an issuer: a URL, or an object whose id is a URL (VC DM 2.0 §4.7)',
    valid: issuer !== undefined,
    why: 'id' in iss ? iss.id : iss.problem,
  });
  const subj = subjectsOf(vc.credentialSubject);
  const subjects = 'subjects' in subj ? subj.subjects : undefined;
  c.add({
    id: 'credentialSubject',
    what: 'credentialSubject is a set of objects, each making a claim, each id a URL (VC DM 2.0 §4.8)',
    valid: subjects !== undefined,
    why: 'problem' in subj ? subj.problem : subjects!.length > 1 ? `${subjects!.length} subjects` : undefined,
  });
  const datesBad = validityProblem(vc);
  c.add({
    id: 'dates',
    what: 'validFrom and validUntil are XML Schema dateTimeStamps, in order (VC DM 2.0 §4.9)',
    valid: datesBad === null,
    why: datesBad ?? undefined,
  });

  const proofs = yield* proofsChecking(c, vc, { purpose: 'assertionMethod', controller: issuer, controllerName: 'issuer', at, didWeb: options.didWeb });

  const from = timeOf(vc.validFrom);
  const until = timeOf(vc.validUntil);
  const early = Number.isFinite(from) && at < from;
  const late = Number.isFinite(until) && at >= until;
  c.add({
    id: 'validity',
    what: validAtWhat(at),
    valid: !early && !late,
    why: early ? `not valid before ${vc.validFrom}` : late ? `expired at ${vc.validUntil}` : undefined,
  });

  // The anchor (issue 32): the issuer is one the auditor pinned, else the verdict is unanchored.
  if (options.issuer !== undefined && !options.trust) {
    c.add({
      id: 'issuer.pinned',
      what: `the issuer is ${options.issuer}`,
      valid: issuer === options.issuer,
      why: issuer === options.issuer ? undefined : `the issuer is ${issuer}`,
      anchor: true,
    });
  }
  if (options.trust && proofs.controllerKeys.length) {
    const t = options.trust;
    const signedAt = Number.isFinite(from) ? from : timeOf(proofs.created);
    const pin = t.byTrustFile ? 'pinned by the trust file' : `pinned ${t.pinned}`;
    // Every proof the issuer's DID signs must be by a key the pinned chain reaches, valid then.
    for (const did of proofs.controllerKeys) {
      const key = t.keys.get(did);
      const inWindow = key !== undefined && Number.isFinite(signedAt) && signedAt >= key.from && signedAt < key.until;
      c.add({
        id: 'issuer.key',
        what: `the signing key was the issuer's (${pin}) at validFrom`,
        valid: inWindow,
        why:
          key === undefined
            ? t.byTrustFile
              ? `${did} is not one of the issuer keys the trust file pins`
              : `${did} is not one of the issuer keys reached from ${t.pinned}${t.problems.length ? ` (${t.problems.join('; ')})` : ''}`
            : inWindow
              ? undefined
              : `that key was the issuer's from ${iso(key.from)} until ${iso(key.until)}${
                  t.byTrustFile ? ' (its window in the trust ' + 'file)' : ''
                }, not at ${vc.validFrom ?? proofs.created}`,
        anchor: true,
      });
    }
  } else if (options.trust)
    c.add({ id: 'issuer.key', what: "the signing key was the issuer's at validFrom", valid: false, why: 'no proof by the issuer to check', anchor: true });
  else if (options.issuer === undefined) c.add({ id: 'issuer.pinned', what: ISSUER_PINNED, valid: null, why: ISSUER_UNPINNED, anchor: true });
  if (options.checkJudgeSignature) yield* judgeSignatureChecking(c, vc.credentialSubject);
  // Fields set on the report, not spread into a new object: once per credential of a batch.
  const report: CredentialReport = c.report();
  if (issuer) report.issuer = issuer;
  if (typeof subjects?.[0]?.id === 'string') report.subject = subjects[0].id;
  return report;
}

// The validity check's text names the instant, the same for every credential of a batch: made once per instant.
let validAt: { at: number; what: string } | undefined;
const validAtWhat = (at: number) =>
  validAt?.at === at ? validAt.what : (validAt = { at, what: `valid at ${new Date(at).toISOString()} (VC DM 2.0 §4.9)` }).what;

const ISSUER_PINNED = 'the issuer is one you pinned';
const ISSUER_UNPINNED = 'not checked: no issuer pinned (--trust FILE from akas node-keys --trust, or --issuer DID): unanchored';
const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : t < 0 ? 'the start' : 'now');

export interface ProofExpectations {
  /** The proof purpose the verifier expects (Data Integrity §2.2): assertionMethod for a credential, authentication for a presentation. */
  purpose: 'assertionMethod' | 'authentication';
  /** The DID the proofs must be by (the issuer, the holder); undefined when there is none. */
  controller: string | undefined;
  controllerName: 'issuer' | 'holder';
  at: number;
  /** Data Integrity §4.4 step 6: the challenge the verifier gave, which proof.challenge must match. */
  challenge?: string;
  /** Data Integrity §4.4 step 5: the domain(s) the verifier gave, which proof.domain must hold exactly. */
  domain?: string | string[];
  /** Pinned did:web verification methods (method id -> did:key): resolved from the pin alone. */
  didWeb?: Map<string, string>;
}

/**
 * The proofs one document may carry (PROTOCOL 8.5): each is checked against the document, so
 * the work grows with their number; a set of more is refused unchecked. Proof sets in use hold
 * two or three.
 */
export const MAX_PROOFS_PER_DOCUMENT = 8;

export interface ProofsResult {
  /** The did:key DIDs of the valid-shaped proofs by the controller. */
  controllerKeys: string[];
  /** `created` of the first proof by the controller. */
  created?: unknown;
  /** How many proofs were checked. */
  count: number;
}

// The texts of the proof checks, made once per purpose and controller rather than per credential
// (a batch keeps every report: per-credential copies of the same text only feed the collector).
const SHAPE_WHAT = {
  assertionMethod: `a ${DATA_INTEGRITY_PROOF} of ${EDDSA_JCS_2022} for assertionMethod (Data Integrity §2.1, §2.2)`,
  authentication: `a ${DATA_INTEGRITY_PROOF} of ${EDDSA_JCS_2022} for authentication (Data Integrity §2.1, §2.2)`,
};
const SIGNATURE_WHAT = `the ${EDDSA_JCS_2022} signature verifies under the verification method's key (eddsa-jcs-2022 §3.3.7)`;
const SIGNATURE_UNCHECKED = `the ${EDDSA_JCS_2022} signature verifies`;
const CONTROLLER = new Map<string, { id: CheckId; what: string }>();
const controllerCheck = (name: 'issuer' | 'holder') => {
  let c = CONTROLLER.get(name);
  if (!c) CONTROLLER.set(name, (c = { id: `${name}.controller`, what: `the verification method's controller is the ${name}` }));
  return c;
};

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

/**
 * Data Integrity 1.0: the `proof` of a secured document, one proof (§2.1) or a proof set
 * (§2.1.1, an array). Every proof is checked as Verify Proof (§4.4) and eddsa-jcs-2022's
 * Verify Proof (§3.3.2) say, each against the document without any proof (§4.5: a proof of a
 * set secures the document, not its siblings); the document holds only when every proof of
 * the set holds (§4.5, the combined verification result). Proof chains (`previousProof`,
 * §2.1.2) are not supported and fail closed. Checks for a set name their proof (`proof[i]`).
 */
export function* proofsChecking(c: Checks, doc: Json, expect: ProofExpectations): Checking<ProofsResult> {
  const proof = doc.proof;
  const list = Array.isArray(proof) ? proof : [proof];
  const isSet = Array.isArray(proof);
  const result: ProofsResult = { controllerKeys: [], count: 0 };
  if (proof === undefined || (isSet && list.length === 0)) {
    c.add({ id: 'proof.shape', what: SHAPE_WHAT[expect.purpose], valid: false, why: isSet ? 'an empty proof set' : 'no proof' });
    c.add({ id: 'proof.signature', what: SIGNATURE_UNCHECKED, valid: null, why: 'not checked: there is no proof' });
    return result;
  }
  if (list.length > MAX_PROOFS_PER_DOCUMENT) {
    c.add({
      id: 'proof.shape',
      what: SHAPE_WHAT[expect.purpose],
      valid: false,
      why: `a set of ${list.length} proofs: a document carries at most ${MAX_PROOFS_PER_DOCUMENT} (PROTOCOL 8.5)`,
    });
    c.add({ id: 'proof.signature', what: SIGNATURE_UNCHECKED, valid: null, why: 'not checked: too many proofs' });
    return result;
  }
  // The document each proof secures (eddsa-jcs-2022 §3.3.2 step 1): the document without `proof`.
  const hashes = new DocumentHashes(doc);
  let byController = 0;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    const subject = isSet ? `proof[${i}]` : undefined;
    result.count++;
    const vm = yield* oneProofChecking(c, hashes, p, expect, subject);
    if (vm && vm.did === expect.controller) {
      byController++;
      result.controllerKeys.push(vm.keyDid ?? vm.did);
      if (result.created === undefined) result.created = (p as Json).created;
    }
  }
  if (expect.controller !== undefined || expect.purpose === 'assertionMethod') {
    const ok = byController > 0;
    const check = controllerCheck(expect.controllerName);
    c.add({
      id: check.id,
      what: check.what,
      valid: ok,
      why: ok
        ? isSet
          ? `${byController} of ${list.length} proofs by the ${expect.controllerName}`
          : undefined
        : `no proof's verification method is controlled by the ${expect.controllerName} ${expect.controller ?? '(none given)'}`,
    });
  }
  return result;
}

/**
 * The canonical forms one document's proofs share, each computed once (issue 30: a document was
 * canonicalized once per proof, and 1,000 proofs over 500 KB took 44 s): the JCS of each item
 * of the document's @context, and the SHA-256 of the document under each distinct proof
 * context. A proof's @context must be a prefix of the document's, so which one it is, and so the
 * document it secures, is told by its length and whether it is an array.
 */
class DocumentHashes {
  private contextItems: { items: unknown[]; canonical: Array<string | undefined> } | undefined;
  /** Under the document's own @context (the usual proof): the bytes it was first written into, at ownAt. */
  private own: Uint8Array | undefined;
  private ownAt = 0;
  /** Under other proof contexts, made only when a proof names one. */
  private others: Map<string, Uint8Array> | undefined;

  /** `secured`: the document with its proof; what a proof secures is the same without it (canonicalize's changes: no copy made). */
  constructor(readonly secured: Json) {}

  /**
   * The document's @context as a list, each item that is not a string beside its JCS, made once
   * (throws for what JCS cannot take). A string is compared as it is: the JCS of strings is one
   * to one, and never that of anything else.
   */
  contextCanonical(): { items: unknown[]; canonical: Array<string | undefined> } {
    if (this.contextItems) return this.contextItems;
    const dc = this.secured['@context'];
    const items = Array.isArray(dc) ? dc : [dc];
    return (this.contextItems = { items, canonical: items.map((x) => (typeof x === 'string' ? undefined : canonicalize(x))) });
  }

  /** Whether a proof's @context item is the document's item `i`, JCS for JCS (throws for what JCS cannot take). */
  contextItemIs(x: unknown, i: number): boolean {
    const { items, canonical } = this.contextCanonical();
    if (typeof x === 'string' || typeof items[i] === 'string') return x === items[i];
    return canonicalize(x) === canonical[i];
  }

  /**
   * Writes into `out` at `offset` the SHA-256 of the JCS of the document under a proof context
   * (`sameContext`: the document's own), made once per distinct one. The first under its own is
   * hashed straight into `out` (the bytes a proof signs) and read from there by later proofs.
   */
  hashInto(proofContext: unknown, sameContext: boolean, out: Uint8Array, offset: number): void {
    if (sameContext) {
      if (this.own) out.set(this.own.subarray(this.ownAt, this.ownAt + 32), offset);
      else {
        sha256Into(canonicalize(this.secured, WITHOUT_PROOF), out, offset);
        this.own = out;
        this.ownAt = offset;
      }
      return;
    }
    const key = `${Array.isArray(proofContext) ? 'a' : 's'}${Array.isArray(proofContext) ? proofContext.length : 1}`;
    let h = (this.others ??= new Map()).get(key);
    if (!h) {
      h = new Uint8Array(32);
      sha256Into(canonicalize(this.secured, { proof: undefined, '@context': proofContext }), h, 0);
      this.others.set(key, h);
    }
    out.set(h, offset);
  }
}

// canonicalize's changes for what a proof secures and for its configuration (only read, so made once).
const WITHOUT_PROOF = { proof: undefined };
const WITHOUT_PROOF_VALUE = { proofValue: undefined };

/** One proof of a set: its shape, purpose, context, method, value, and the eddsa-jcs-2022 signature. Answers its did:key method, if well formed. */
function* oneProofChecking(c: Checks, doc: DocumentHashes, proof: unknown, expect: ProofExpectations, subject: string | undefined): Checking<Method | null> {
  const problems: string[] = [];
  const p = isObject(proof) ? proof : undefined;
  if (!p) problems.push(`the proof is ${JSON.stringify(proof)?.slice(0, 60)}, not an object`);
  else {
    // Data Integrity §4.4 step 3: type, verificationMethod and proofPurpose must exist; eddsa-jcs-2022
    // §3.3.3 and §3.3.5: type DataIntegrityProof and cryptosuite eddsa-jcs-2022, else an error.
    if (p.type !== DATA_INTEGRITY_PROOF) problems.push(`proof.type is ${JSON.stringify(p.type)}, not ${DATA_INTEGRITY_PROOF}`);
    if (p.cryptosuite !== EDDSA_JCS_2022) problems.push(`proof.cryptosuite is ${JSON.stringify(p.cryptosuite)}, not ${EDDSA_JCS_2022}`);
    // Data Integrity §4.4 step 4 and §2.2: the proof purpose the verifier expects.
    if (p.proofPurpose !== expect.purpose) problems.push(`proof.proofPurpose is ${JSON.stringify(p.proofPurpose)}, not ${expect.purpose}`);
    // Data Integrity §2.1: created and expires are dateTimeStamps (eddsa-jcs-2022 §3.3.5 step 3 for created).
    if (p.created !== undefined && !isDateTimeStamp(p.created)) problems.push(`proof.created ${JSON.stringify(p.created)} is not a dateTimeStamp`);
    if (p.expires !== undefined && !isDateTimeStamp(p.expires)) problems.push(`proof.expires ${JSON.stringify(p.expires)} is not a dateTimeStamp`);
    if (p.previousProof !== undefined) problems.push('proof.previousProof: proof chains (Data Integrity §2.1.2) are not supported');
  }
  const shaped = c.add({ id: 'proof.shape', what: SHAPE_WHAT[expect.purpose], valid: problems.length === 0, why: problems.join('; ') || undefined, subject });
  if (!shaped || !p) {
    c.add({ id: 'proof.signature', what: SIGNATURE_UNCHECKED, valid: null, why: 'not checked: the proof above is malformed', subject });
    return null;
  }

  // Data Integrity §2.1: a proof past its expires is no longer valid.
  if (p.expires !== undefined) {
    const live = expect.at < timeOf(p.expires);
    c.add({
      id: 'proof.expires',
      what: `the proof has not expired at ${new Date(expect.at).toISOString()} (Data Integrity §2.1)`,
      valid: live,
      why: live ? undefined : `the proof expired at ${p.expires}`,
      subject,
    });
  }
  // Data Integrity §4.4 steps 5 and 6: the domain and challenge the verifier gave.
  if (expect.domain !== undefined) {
    const want = Array.isArray(expect.domain) ? expect.domain : [expect.domain];
    const got = Array.isArray(p.domain) ? p.domain : p.domain === undefined ? [] : [p.domain];
    const ok = got.every((d) => typeof d === 'string') && sameSet(want, got as string[]);
    c.add({
      id: 'proof.domain',
      what: `the proof's domain is ${want.join(', ')} (Data Integrity §4.4)`,
      valid: ok,
      why: ok ? undefined : `proof.domain is ${JSON.stringify(p.domain)}`,
      subject,
    });
  }
  if (expect.challenge !== undefined) {
    const ok = p.challenge === expect.challenge;
    c.add({
      id: 'proof.challenge',
      what: "the proof's challenge is the one given (Data Integrity §4.4)",
      valid: ok,
      why: ok ? undefined : `proof.challenge is ${JSON.stringify(p.challenge)}`,
      subject,
    });
  }

  // eddsa-jcs-2022 §3.3.2 step 4: the proof's @context, when present, must start the document's.
  const proofContext = p['@context'];
  let contextPrefix = true;
  let sameContext = proofContext === undefined;
  if (proofContext !== undefined) {
    const pc = Array.isArray(proofContext) ? proofContext : [proofContext];
    try {
      const dc = doc.contextCanonical().items;
      contextPrefix = pc.length <= dc.length && pc.every((x, i) => doc.contextItemIs(x, i));
      sameContext = contextPrefix && pc.length === dc.length && Array.isArray(proofContext) === Array.isArray(doc.secured['@context']);
    } catch {
      contextPrefix = false;
    }
  }
  c.add({
    id: 'proof.context',
    what: "the proof's @context is a prefix of the document's (eddsa-jcs-2022 §3.3.2)",
    valid: contextPrefix,
    why: contextPrefix ? undefined : 'proof.@context does not start the document @context',
    subject,
  });

  // The verification method: a did:key URL whose fragment is its Ed25519 Multikey (eddsa-jcs-2022 §2.1.1).
  // Or a method of a did:web document the reader pinned (PROTOCOL 8.10): its key is the did:key the pin maps it to.
  const vm: Method | null = parseDidKeyUrl(p.verificationMethod) ?? pinnedDidWebMethod(p.verificationMethod, expect.didWeb);
  c.add({
    id: 'proof.verificationMethod',
    what: 'the verification method is an Ed25519 did:key URL (did:key:z..#z..)',
    valid: vm !== null,
    why:
      vm === null
        ? `verificationMethod ${JSON.stringify(p.verificationMethod)} is not an Ed25519 did:key URL` +
          (expect.didWeb?.size ? ' nor a method of a pinned did:web' : '')
        : isSetSubject(subject)
          ? vm.did
          : undefined,
    subject,
  });

  // eddsa-jcs-2022 §3.3.2 step 3 and §3.3.7: proofValue is base58-btc multibase; an Ed25519 signature is 64 bytes.
  const raw = typeof p.proofValue === 'string' && p.proofValue.startsWith('z') ? base58btcDecode(p.proofValue.slice(1)) : null;
  const proofValueOk = raw !== null && raw.length === 64;
  c.add({
    id: 'proof.proofValue',
    what: 'proofValue is base58-btc multibase of exactly 64 bytes',
    valid: proofValueOk,
    why: proofValueOk ? undefined : raw === null ? 'proofValue is not z-prefixed base58-btc' : `proofValue decodes to ${raw.length} bytes`,
    subject,
  });

  if (!(vm && proofValueOk && contextPrefix)) {
    c.add({ id: 'proof.signature', what: SIGNATURE_UNCHECKED, valid: null, why: 'not checked: the proof above is malformed', subject });
    return vm;
  }
  // eddsa-jcs-2022 §3.3.2: proofOptions is the proof without proofValue (step 2); the
  // document's @context becomes the proof's when it has one (step 4); Transformation
  // (§3.3.3) and Proof Configuration (§3.3.5) are the JCS of each; Hashing (§3.3.4) joins
  // SHA-256 of the proof configuration and SHA-256 of the document; Proof Verification
  // (§3.3.7) checks the Ed25519 signature of those 64 bytes under the method's key.
  let hashData: Uint8Array | null = null;
  let why: string | undefined;
  try {
    hashData = new Uint8Array(64);
    sha256Into(canonicalize(p, WITHOUT_PROOF_VALUE), hashData, 0);
    doc.hashInto(proofContext, sameContext, hashData, 32);
  } catch (e) {
    hashData = null;
    why = `cannot be canonicalized: ${(e as Error).message}`;
  }
  // The signature check yielded directly (one generator less per credential on the hot path).
  const holds = hashData !== null && (yield { publicKey: vm.publicKey, message: hashData, signature: raw! });
  if (hashData !== null && !holds) why = 'the Ed25519 signature does not verify: the document or its proof was changed, or signed by another key';
  c.add({ id: 'proof.signature', what: SIGNATURE_WHAT, valid: holds, why, subject });
  return vm;
}

const isSetSubject = (subject: string | undefined) => subject !== undefined;

/** A verification method: its controller DID, its key, and (a did:web method) the did:key of that key. */
type Method = { did: string; publicKey: string; multibase: string; keyDid?: string };

function pinnedDidWebMethod(id: unknown, pinned: Map<string, string> | undefined): Method | null {
  const didKey = typeof id === 'string' ? pinned?.get(id) : undefined;
  const key = didKey ? parseDidKeyUrl(`${didKey}#${didKey.slice('did:key:'.length)}`) : null;
  return key && typeof id === 'string' ? { did: id.split('#')[0], publicKey: key.publicKey, multibase: key.multibase, keyDid: didKey } : null;
}

/** L2 inside a JudgmentCredential: the subject's fields rebuild the payload its judge signed, and the judge's signature holds. */
function* judgeSignatureChecking(c: Checks, subject: unknown): Checking<void> {
  const s = isObject(subject) ? subject : undefined;
  const judge = isObject(s?.judge) ? s.judge : undefined;
  const proposalId = typeof s?.proposalId === 'string' ? s.proposalId : '';
  const kind = s?.kind as ProposalKind;
  if (
    !s ||
    !judge ||
    typeof judge.tag !== 'string' ||
    typeof judge.publicKey !== 'string' ||
    !(PROPOSAL_KINDS as string[]).includes(kind) ||
    kindOfProposalId(proposalId) !== kind
  ) {
    c.add({
      id: 'judge.signature',
      what: "the judge's own Ed25519 signature",
      valid: false,
      why: 'the subject is not a judgment (judge, kind and proposalId)',
    });
    return;
  }
  // A judge who signed v2 signed the content the subject names; one who signed v1 (PROTOCOL
  // 7.2) signed none, and the content is the node's word in this credential only.
  const fields = { kind, proposalId, judge: judge.tag, scores: s.scores as never, rationale: s.rationale as string };
  let v1: string;
  let v2: string | undefined;
  try {
    v1 = judgmentSigningString(fields);
    if (typeof s.contentSha256 === 'string') v2 = judgmentSigningString({ ...fields, contentSha256: s.contentSha256 });
  } catch {
    c.add({
      id: 'judge.signature',
      what: "the judge's own Ed25519 signature",
      valid: false,
      why: 'the subject lacks the scores or rationale that were signed',
    });
    return;
  }
  const signedV2 = v2 !== undefined && (yield* ed25519Hex(judge.publicKey, v2, s.judgeSignature));
  const ok = signedV2 || (yield* ed25519Hex(judge.publicKey, v1, s.judgeSignature));
  c.add({
    id: 'judge.signature',
    what: `${judge.tag}'s Ed25519 signature over its judgment`,
    valid: ok,
    why: ok
      ? signedV2
        ? 'akas.judgment.v2: the judge signed the content named'
        : v2 !== undefined
          ? "akas.judgment.v1: the judge signed no content; the content is the node's word"
          : undefined
      : "judgeSignature does not verify under the judge's key over the subject's fields",
  });
}
