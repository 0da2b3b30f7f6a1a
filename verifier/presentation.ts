// Verifiable presentations (VC Data Model 2.0 §4.13): how an auditor often receives
// credentials, a holder's envelope around them, optionally signed by the holder for the
// `authentication` proof purpose (Data Integrity §2.2) with the verifier's `challenge` and
// `domain` (Data Integrity §4.4 steps 5 and 6). Checked here: the presentation's own shape
// (contexts §4.3, id §4.4, type §4.5, holder §4.13), its proof (eddsa-jcs-2022, like a
// credential's, by the holder's did:key when a holder is named), and every credential it
// carries, each in full (verifier/credential.ts) and reported under `credential.*` with
// `verifiableCredential[i]` as its subject.
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { credentialChecking, proofsChecking, type CredentialOptions, type CredentialReport } from './credential.js';
import { Checks, credentialCheckId, readJsonInput, type Report } from './report.js';
import { contextProblem, holderOf, idProblem, isObject, typeProblem } from './vc.js';

export interface PresentationOptions extends CredentialOptions {
  /** The challenge the verifier gave the holder: the presentation's proof must carry it. */
  challenge?: string;
  /** The domain(s) the verifier gave the holder: the presentation's proof must carry exactly these. */
  domain?: string | string[];
  /** Refuse a presentation without a proof (an unsigned one is otherwise reported as not checked). */
  requireProof?: boolean;
}

export interface PresentationReport extends Report {
  holder?: string;
  /** One report per credential carried, in order. */
  credentials: CredentialReport[];
}

/** Verifies a presentation and every credential in it (Node: synchronous). */
export function verifyPresentation(input: string | Uint8Array | unknown, options: PresentationOptions = {}): PresentationReport {
  return runNow(presentationChecking(input, options));
}

/** verifyPresentation where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyPresentationAsync(input: string | Uint8Array | unknown, options: PresentationOptions = {}): Promise<PresentationReport> {
  return runAsync(presentationChecking(input, options));
}

/** Whether a parsed document is a presentation (its type names VerifiablePresentation). */
export function isPresentation(doc: unknown): boolean {
  if (!isObject(doc)) return false;
  const types = Array.isArray(doc.type) ? doc.type : [doc.type];
  return types.includes('VerifiablePresentation');
}

export function* presentationChecking(input: unknown, options: PresentationOptions = {}): Checking<PresentationReport> {
  const c = new Checks();
  const credentials: CredentialReport[] = [];
  // Input that is not strict JSON is no presentation to judge: NotCheckableError (PROTOCOL 8.8).
  const vp = readJsonInput(input, 'a presentation');
  if (!c.add({ id: 'shape', what: 'a JSON object', valid: isObject(vp), why: isObject(vp) ? undefined : 'a presentation is a JSON object' }))
    return { ...c.report(), credentials };
  const doc = vp as Record<string, unknown>;
  const at = options.at ?? Date.now();

  const contextBad = contextProblem(doc['@context']);
  c.add({
    id: 'context',
    what: '@context starts with https://www.w3.org/ns/credentials/v2, then URLs or objects (VC DM 2.0 §4.3)',
    valid: contextBad === null,
    why: contextBad ?? undefined,
  });
  const idBad = idProblem(doc.id, 'the presentation');
  c.add({ id: 'id', what: "the presentation's id, if any, is a single URL (VC DM 2.0 §4.4)", valid: idBad === null, why: idBad ?? undefined });
  const typeBad = typeProblem(doc.type, 'VerifiablePresentation');
  c.add({ id: 'type', what: 'type includes VerifiablePresentation (VC DM 2.0 §4.5)', valid: typeBad === null, why: typeBad ?? undefined });
  const h = holderOf(doc.holder);
  const holder = 'id' in h ? h.id : undefined;
  c.add({
    id: 'holder',
    what: 'the holder, if any, is a URL or an object whose id is a URL (VC DM 2.0 §4.13)',
    valid: !('problem' in h),
    why: 'problem' in h ? h.problem : holder,
  });

  // §4.13: verifiableCredential, when present, is one or more verifiable credentials. An
  // enveloped credential (§4.13.1, another securing mechanism) is not one this verifier reads.
  const carried = doc.verifiableCredential === undefined ? [] : Array.isArray(doc.verifiableCredential) ? doc.verifiableCredential : [doc.verifiableCredential];
  const enveloped = carried.filter((x) => isObject(x) && (Array.isArray(x.type) ? x.type : [x.type]).includes('EnvelopedVerifiableCredential')).length;
  const shapedOk = carried.every(isObject) && enveloped === 0;
  c.add({
    id: 'verifiableCredential',
    what: 'verifiableCredential holds credentials secured with an embedded proof (VC DM 2.0 §4.13)',
    valid: shapedOk,
    why: shapedOk
      ? `${carried.length} credential(s)`
      : enveloped
        ? `${enveloped} enveloped credential(s): not a securing mechanism this verifier reads`
        : 'verifiableCredential holds something that is not an object',
  });

  // The holder's proof (Data Integrity §2.2: authentication), by the holder's key when a holder is named.
  if (doc.proof === undefined) {
    const needed = options.requireProof || options.challenge !== undefined || options.domain !== undefined;
    c.add({
      id: 'proof.signature',
      what: "the holder's proof (authentication) verifies",
      valid: needed ? false : null,
      why: needed
        ? 'the presentation has no proof, so its challenge and domain cannot hold'
        : 'not checked: the presentation has no proof (its holder is not authenticated; its credentials are checked each)',
    });
  } else {
    yield* proofsChecking(c, doc, {
      purpose: 'authentication',
      controller: holder,
      controllerName: 'holder',
      at,
      challenge: options.challenge,
      domain: options.domain,
    });
  }

  for (const [i, vc] of carried.entries()) {
    if (!isObject(vc)) continue;
    const r = yield* credentialChecking(vc, options);
    credentials.push(r);
    for (const check of r.checks)
      c.add({
        id: credentialCheckId(check.id),
        what: check.what,
        valid: check.valid,
        why: check.why,
        subject: check.subject ? `verifiableCredential[${i}] ${check.subject}` : `verifiableCredential[${i}]`,
        anchor: check.anchor,
      });
  }
  return { ...c.report(), ...(holder ? { holder } : {}), credentials };
}
