// Issuing judgment credentials (L1, PROTOCOL 8.1) with @digitalbazaar/vc and the
// eddsa-jcs-2022 cryptosuite. Two things make that fast and offline:
// - the signer holds the issuer's node:crypto KeyObject, made once: the library's own
//   Multikey signer rebuilds the key from DER on every signature (about 1,100 issues per
//   second here, against about 7,500 with a held key);
// - the document loader answers from data/contexts and resolves did:key itself; it never
//   touches the network, and refuses any other URL.
import { sign as nodeSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  dataPath,
  didKeyDocument,
  ed25519Multibase,
  judgmentCredential,
  privateKeyObject,
  VC_V2_CONTEXT,
  type NodeKeys,
  type ProposalKind,
  type StatusEntry,
} from '../../core/index.js';
import { space } from '../../store/index.js';
import type { JudgmentRecord } from '../records.js';

/** A stored credential, as served: the issued VC (with its proof), its other members as issued. */
export interface StoredCredential {
  '@context': string[];
  type: string[];
  issuer: string;
  validFrom: string;
  credentialSubject: Record<string, unknown>;
  proof: Record<string, unknown>;
  [member: string]: unknown;
}

/** judgmentId -> the JudgmentCredential issued for it. */
export const Credentials = space<StoredCredential>('credentials');

/** A standing credential as kept (PROTOCOL 8.9): the agent it is of, and the credential as issued. */
export interface StandingRecord {
  standingId: string;
  tag: string;
  issuedAt: number;
  credential: StoredCredential;
}

/** standingId -> the AgentStandingCredential issued under it. */
export const Standings = space<StandingRecord>('standings');
/** tag -> the standingId of the agent's newest standing (a newer one supersedes it). */
export const StandingHeads = space<string>('standing-heads');

/** Signs any credential of the node (a standing, PROTOCOL 8.9) with its current issuer key, its proof created at `at`. */
export async function issueNodeCredential(keys: NodeKeys, credential: object, at: number, didWeb?: string): Promise<StoredCredential> {
  const { vc, proofSuite } = await vcStack();
  // Under the node's did:web (PROTOCOL 8.10) the same key signs, named as a method of that DID's document.
  const held = issuerSigner(keys);
  const signer = didWeb ? { ...held, id: `${didWeb}#${ed25519Multibase(keys.issuer.publicKey)}` } : held;
  return (await vc.issue({ credential: { ...credential }, suite: proofSuite(signer, at), documentLoader })) as StoredCredential;
}

/** Context documents served from data/contexts, by URL. */
const CONTEXT_FILES: Record<string, string> = {
  [VC_V2_CONTEXT]: 'credentials-v2.jsonld',
};
const contexts = new Map<string, unknown>();

/**
 * The document loader of every credential operation: bundled contexts and did:key
 * documents (and their verification methods), nothing else, never the network.
 */
export async function documentLoader(url: string): Promise<{ contextUrl: null; documentUrl: string; document: unknown }> {
  const file = CONTEXT_FILES[url];
  if (file) {
    let document = contexts.get(url);
    if (!document) contexts.set(url, (document = JSON.parse(readFileSync(dataPath('contexts', file), 'utf8'))));
    return { contextUrl: null, documentUrl: url, document };
  }
  if (url.startsWith('did:key:')) {
    const [did, fragment] = url.split('#');
    const doc = didKeyDocument(did);
    if (doc) {
      if (fragment === undefined) return { contextUrl: null, documentUrl: url, document: doc };
      const vm = (doc.verificationMethod as Array<{ id: string }>).find((m) => m.id === url);
      if (vm) return { contextUrl: null, documentUrl: url, document: { '@context': 'https://w3id.org/security/multikey/v1', ...vm } };
    }
  }
  throw new Error(`the offline document loader has no document for ${url}`);
}

type Signer = { id: string; algorithm: string; sign(o: { data: Uint8Array }): Promise<Uint8Array> };
const signers = new WeakMap<NodeKeys['issuer'], Signer>();

/** The eddsa-jcs-2022 signer of the node's current issuer key, made once per key (it holds the KeyObject). */
function issuerSigner(keys: NodeKeys): Signer {
  let signer = signers.get(keys.issuer);
  if (!signer) {
    const multibase = ed25519Multibase(keys.issuer.publicKey);
    const key = privateKeyObject(keys.issuer.privateKey);
    signer = {
      id: `did:key:${multibase}#${multibase}`,
      algorithm: 'Ed25519',
      sign: async ({ data }) => new Uint8Array(nodeSign(null, data, key)),
    };
    signers.set(keys.issuer, signer);
  }
  return signer;
}

// The VC stack (with jsonld and an HTTP client of its own) is a seventh of what a node loads
// before it listens, and most processes that load this module (a CLI command, a test of
// something else) never issue: it is loaded on the first credential instead.
let stack: Promise<{ vc: typeof import('@digitalbazaar/vc'); proofSuite: (signer: Signer, date: number) => object }> | undefined;

function vcStack() {
  stack ??= (async () => {
    const [{ DataIntegrityProof }, { createSignCryptosuite }, vc] = await Promise.all([
      import('@digitalbazaar/data-integrity'),
      import('@digitalbazaar/eddsa-jcs-2022-cryptosuite'),
      import('@digitalbazaar/vc'),
    ]);
    const cryptosuite = createSignCryptosuite();
    return { vc, proofSuite: (signer: Signer, date: number) => new DataIntegrityProof({ signer, cryptosuite, date }) };
  })();
  return stack;
}

/**
 * Issues the JudgmentCredential of a recorded judgment, signed by the node's current issuer key
 * at judgedAt; `status` is its credentialStatus (its entries in the node's status lists, PROTOCOL 8.7).
 */
export async function issueJudgmentCredential(
  keys: NodeKeys,
  kind: ProposalKind,
  proposalId: string,
  j: JudgmentRecord,
  status?: StatusEntry[],
): Promise<StoredCredential> {
  const unsigned = judgmentCredential({
    issuer: keys.issuer.did,
    judgedAt: j.receivedAt,
    judgmentId: j.judgmentId,
    proposalId,
    kind,
    judge: { tag: j.agentTag, publicKey: j.signature.publicKey },
    scores: j.scores,
    composite: j.composite,
    rationale: j.rationale,
    judgeSignature: j.signature.signature,
    // The content judged (PROTOCOL 6.10), in the node's signed word even when the judge signed v1.
    contentSha256: j.contentSha256,
  });
  const credential = status?.length ? { ...unsigned, credentialStatus: status } : unsigned;
  const { vc, proofSuite } = await vcStack();
  // vc.issue adds the proof to the object it is given: that is the fresh object built above. (Its
  // declaration, src/types, answers a plain record: what it issues is the VC with its proof.)
  return (await vc.issue({ credential, suite: proofSuite(issuerSigner(keys), j.receivedAt), documentLoader })) as StoredCredential;
}

/** Signs a BitstringStatusListCredential (PROTOCOL 8.7) with the node's current issuer key, its proof created at `at`. */
export async function issueStatusListCredential(keys: NodeKeys, credential: object, at: number): Promise<StoredCredential> {
  const { vc, proofSuite } = await vcStack();
  return (await vc.issue({ credential: { ...credential }, suite: proofSuite(issuerSigner(keys), at), documentLoader })) as StoredCredential;
}
