// The shape every offline check reports in: a list of named checks, each under its trust
// layer, with a verdict and the reason. A failed check is a result, not an exception; a check
// that could not run (no pinned issuer, no blob given) is reported with `valid: null` and is
// never counted as verified. A check marked `anchor` ties the verdict to a key the auditor
// pinned (an issuer, a log key): when one could not run, the verdict is unanchored (issue 32),
// checked only against keys the input brought itself, and is never a pass (exit 3). Every
// check id is in one registry (CHECKS below, PROTOCOL 8.8); input a verifier cannot read is not
// a check but a NotCheckableError.
import { parseStrictJson } from '../src/core/strict-json.js';

/**
 * `content` holds the checks that what was judged is what is published (PROTOCOL 6.10): the
 * content hash recomputed, the decision recomputed, the judgments, credentials and log events
 * one set, the content hashes named by the content. The layers' own signatures over the content
 * hash (a judge's v2 signature, a credential, a log event) are checked under their layer.
 */
export type Layer = 'input' | 'content' | 'L1' | 'L2' | 'L3' | 'CAS';

/** What the registry says of a check: the layer it is reported under, and what it means when it holds. */
export interface CheckInfo {
  layer: Layer;
  /** What holds when the check holds (PROTOCOL 8.8 lists it word for word). */
  meaning: string;
  /** The check is one of a credential's own: a bundle or a presentation reports it again, about each credential it carries, as `credential.ID`. */
  credential?: true;
}

/**
 * The registry of check ids (PROTOCOL 8.8, checked against it both ways by
 * test/verifier/check-ids.test.ts): `Check.id` is a `CheckId`, so a check added under a new id
 * is a compile error until it is listed here, and then a test failure until PROTOCOL lists it.
 * An id names one thing checked; its layer comes from here, never from the call.
 */
export const CHECKS = {
  // input: what was given, before anything is checked against a key.
  input: {
    layer: 'input',
    meaning: 'an input of a batch (a file, a line of JSON lines) or a file given to the Verify page could be read: strict JSON of the kind checked',
  },
  'input.key': { layer: 'input', meaning: 'the Verify page was given a key it can read to check a signature with (a PEM key, or the issuer pinned)' },
  shape: {
    layer: 'input',
    meaning: 'the document is a JSON object of the kind checked (a credential, a presentation, a log proof, checkpoints)',
    credential: true,
  },
  'cas.expected': { layer: 'input', meaning: 'the sha256 given to compare the bytes with is 64 hex characters' },
  'dsse.shape': { layer: 'input', meaning: 'a DSSE envelope: payload and payloadType, one or more signatures, base64 where base64 belongs' },
  'bundle.mediaType': { layer: 'input', meaning: 'a Sigstore bundle of media type v0.3 (or v0.2)' },
  'bundle.shape': { layer: 'input', meaning: 'the fields of a Sigstore bundle, each of its type, with one content (sigstore_bundle.proto)' },
  'bundle.keyed': { layer: 'input', meaning: 'the Sigstore bundle carries keyed verification material: a public key hint, no certificate' },
  'bundle.dsse': { layer: 'input', meaning: 'the Sigstore bundle holds a DSSE envelope of exactly one signature' },
  'bundle.unchecked': { layer: 'input', meaning: 'the Sigstore bundle carries no Rekor entry or timestamp this check would leave unverified' },
  'bundle.keyHint': { layer: 'content', meaning: "the Sigstore bundle's public key hint is the envelope's keyid" },

  // content: what was judged is what is shown (PROTOCOL 6.10).
  'content.hash': { layer: 'content', meaning: 'the content, hashed here, gives the contentSha256 shown (of a proposal, its evidence, a brief served)' },
  'content.shown': { layer: 'content', meaning: "the path, title and kind shown, and each judgment's contentSha256, are those of the content" },
  'content.served': { layer: 'content', meaning: 'what a node read serves (path, title, spec, texts, branches, manifest) is that of its content' },
  'content.refined': { layer: 'content', meaning: 'the rest of a sharpened node (title, payload) is that of the content its evidence carries' },
  'content.evals': {
    layer: 'content',
    meaning: 'the eval summary shown beside an artifact is what the evals shown give (count, distinct runners, by metric count, mean, min, max)',
  },
  evidence: { layer: 'content', meaning: 'a node read carries the evidence of the proposal that published it, about that proposal' },
  'manifest.binding': { layer: 'content', meaning: "a brief's manifest names the publishing proposal, its content and its publication event" },
  'manifest.content': { layer: 'content', meaning: 'the brief served hashes to the contentSha256 of its manifest' },
  'bundle.format': { layer: 'content', meaning: 'a bundle labelled akas.bundle.v1 carries nothing only a node that binds content makes' },
  'set.judgments': { layer: 'content', meaning: "each of a bundle's judgments is shown once" },
  'set.credentials': { layer: 'content', meaning: 'every credential of a bundle is of a judgment it shows, one each' },
  'set.events': { layer: 'content', meaning: 'every judgment.recorded event of a bundle is of a judgment it shows' },
  'set.decision': { layer: 'content', meaning: 'the judgments shown are those the decision counted, in order' },
  'decision.recompute': {
    layer: 'content',
    meaning: 'the decision shown recomputes from the judgments, the weights its event names and the rule (PROTOCOL 7.4)',
  },
  'status.decision': { layer: 'content', meaning: 'the decision would still hold without the judgments whose credentials are revoked or suspended' },
  'cas.bound': { layer: 'content', meaning: 'the content hashes listed are exactly those the content names' },
  'dsse.payloadType': { layer: 'content', meaning: 'the payload of a DSSE envelope is an in-toto Statement' },
  'statement.shape': { layer: 'content', meaning: 'the payload is an in-toto Statement v1 with a subject digest and a predicateType' },
  'page.content': { layer: 'content', meaning: "the content an explorer page shows is its bundle's content" },
  'page.shown': { layer: 'content', meaning: 'the fields an explorer page shows are those of the node read it checked' },
  'search.hit': { layer: 'content', meaning: "a search hit's path, kind, title and brief are those of the node read it carries" },

  // L1: credentials (PROTOCOL 8), under the issuer's keys.
  context: { layer: 'L1', meaning: '@context starts with https://www.w3.org/ns/credentials/v2, then URLs or objects (VC DM 2.0 §4.3)', credential: true },
  id: { layer: 'L1', meaning: "the document's id, if any, is a single URL (VC DM 2.0 §4.4)", credential: true },
  type: { layer: 'L1', meaning: 'type includes VerifiableCredential (or VerifiablePresentation), every type a term or URL (VC DM 2.0 §4.5)', credential: true },
  issuer: { layer: 'L1', meaning: 'an issuer: a URL, or an object whose id is a URL (VC DM 2.0 §4.7)', credential: true },
  credentialSubject: { layer: 'L1', meaning: 'credentialSubject is a set of objects, each making a claim, each id a URL (VC DM 2.0 §4.8)', credential: true },
  dates: { layer: 'L1', meaning: 'validFrom and validUntil are XML Schema dateTimeStamps, in order (VC DM 2.0 §4.9)', credential: true },
  validity: { layer: 'L1', meaning: 'the instant checked is inside the validity period (VC DM 2.0 §4.9)', credential: true },
  holder: { layer: 'L1', meaning: 'the holder, if any, is a URL or an object whose id is a URL (VC DM 2.0 §4.13)' },
  verifiableCredential: { layer: 'L1', meaning: 'verifiableCredential holds credentials secured with an embedded proof (VC DM 2.0 §4.13)' },
  'proof.shape': {
    layer: 'L1',
    meaning: 'a proof, or a proof set of at most 8, each a DataIntegrityProof of eddsa-jcs-2022 for the purpose',
    credential: true,
  },
  'proof.context': { layer: 'L1', meaning: "the proof's @context is a prefix of the document's (eddsa-jcs-2022 §3.3.2)", credential: true },
  'proof.verificationMethod': { layer: 'L1', meaning: 'the verification method is an Ed25519 did:key URL (did:key:z..#z..)', credential: true },
  'proof.proofValue': { layer: 'L1', meaning: 'proofValue is base58-btc multibase of exactly 64 bytes', credential: true },
  'proof.expires': { layer: 'L1', meaning: 'the proof has not expired at the instant checked (Data Integrity §2.1)', credential: true },
  'proof.challenge': { layer: 'L1', meaning: "the proof's challenge is the one given (Data Integrity §4.4)" },
  'proof.domain': { layer: 'L1', meaning: "the proof's domain is the one given (Data Integrity §4.4)" },
  'proof.signature': { layer: 'L1', meaning: 'the Ed25519 signature of the proof verifies over the document (eddsa-jcs-2022 §3.3.7)', credential: true },
  'issuer.controller': { layer: 'L1', meaning: "a proof's verification method is controlled by the issuer", credential: true },
  'holder.controller': { layer: 'L1', meaning: "a proof's verification method is controlled by the holder" },
  'issuer.pinned': { layer: 'L1', meaning: 'the issuer is the one pinned (--issuer); not checked, the verdict is unanchored (8.6)', credential: true },
  'issuer.key': { layer: 'L1', meaning: "the signing key was the issuer's, pinned (a trust file, or rotations from --issuer), at validFrom", credential: true },
  'issuer.chain': { layer: 'L1', meaning: 'the issuer keys pinned: those a trust file lists, or those reached from --issuer by rotations signed by both keys' },
  'issuer.window': { layer: 'L1', meaning: "the key that signed a DSSE envelope was the issuer's, pinned, when it signed" },
  'credential.present': { layer: 'L1', meaning: 'each judgment of a bundle has its credential' },
  'credential.matches': { layer: 'L1', meaning: 'the credential says what its judgment says' },
  'credential.content': { layer: 'L1', meaning: 'the credential names the content judged' },
  'manifest.signature': { layer: 'L1', meaning: "the node's Ed25519 signature over a brief's manifest verifies" },
  'manifest.issuer': { layer: 'L1', meaning: "the key that signed a brief's manifest was the issuer's, pinned, when the manifest was made" },
  'dsse.signature': { layer: 'L1', meaning: "a signature over the DSSE envelope's PAE holds under the key given, or an issuer key pinned" },
  status: {
    layer: 'L1',
    meaning: "the credential's status could be read; reported only when it could not (no status entry, no list given or asked for): status unknown (8.7)",
    credential: true,
  },
  'status.revocation': {
    layer: 'L1',
    meaning: 'the credential is not revoked: its bit in the revocation list is not set (Bitstring Status List §3.2)',
    credential: true,
  },
  'status.suspension': { layer: 'L1', meaning: 'the credential is not suspended: its bit in the suspension list is not set', credential: true },
  'status.refresh': { layer: 'L1', meaning: 'the bit of a refresh entry is not set', credential: true },
  'status.message': { layer: 'L1', meaning: 'the bit of a message entry is not set', credential: true },
  'status.other': { layer: 'L1', meaning: 'the bit of an entry of another purpose (named in the check) is not set', credential: true },
  'status.list': {
    layer: 'L1',
    meaning: 'a status list could be read and is a BitstringStatusListCredential by the issuer, of at least 131,072 entries',
    credential: true,
  },
  'status.head': { layer: 'L1', meaning: "a status head: the issuer's signed word on the newest version of each list at a checkpoint", credential: true },
  'status.fresh': { layer: 'L1', meaning: 'each list read is the newest version the status head (or the bundle) names', credential: true },
  'status.checkpoint': { layer: 'L1', meaning: "the status head a bundle staples speaks for the bundle's own checkpoint (origin, size and root)" },
  'status.withdrawn': {
    layer: 'L1',
    meaning: "a judgment a read's decision counted has its credential revoked or suspended: holds only while the decision holds without it",
  },

  // L2: each judge's own signature.
  'judge.signature': { layer: 'L2', meaning: "the judge's own Ed25519 signature a judgment credential carries verifies", credential: true },
  'judgment.signature': { layer: 'L2', meaning: "the judge's Ed25519 signature over the judgment shown verifies" },
  'judgment.payload': { layer: 'L2', meaning: 'the fields shown are what the judge signed' },
  'judgment.key': { layer: 'L2', meaning: "the key was the judge's when the judgment arrived (per the judge's windows)" },
  'judgment.content': { layer: 'L2', meaning: 'the judge signed the content it judged (akas.judgment.v2)' },

  // L3: the node's log and its HMACs.
  'standing.subject': { layer: 'L1', meaning: 'an AgentStandingCredential about one agent: its tag, and a did:key that is its public key (8.9)' },
  'standing.card': { layer: 'L1', meaning: "an A2A Agent Card's JWS is by the agent's key (its did:key), a key the node shows was the agent's (8.9)" },
  'standing.checkpoint': { layer: 'L3', meaning: "the standing's checkpoint is signed by a pinned log key and names the size and root the standing names" },
  'standing.entries': { layer: 'L3', meaning: "the log entries given are every entry below the standing's checkpoint size and hash to its root" },
  'standing.figure': { layer: 'L3', meaning: 'a figure of a standing is what the log entries give, computed as PROTOCOL 8.9 defines it' },
  'log.key': { layer: 'L3', meaning: 'the log key is one pinned (--log-key, a trust file) or endorsed by a pinned issuer key, and a C2SP verifier key' },
  'log.entry': { layer: 'L3', meaning: "a log entry's fields hash to its hash (and leaf)" },
  'log.checkpoint': { layer: 'L3', meaning: 'the checkpoint is signed by the log key' },
  'log.inclusion': { layer: 'L3', meaning: 'the entry is in the tree the checkpoint signs (its inclusion proof)' },
  'index.root': { layer: 'L3', meaning: "an index.root.v1 entry of the log commits the lookup's map root and size (9.10)" },
  'index.proof': { layer: 'L3', meaning: 'the map proof leads to the root with exactly the indices answered, or proves that no entry mentions the key (9.10)' },
  'index.entries': {
    layer: 'L3',
    meaning:
      'each entry a lookup shows hashes to its hash, sits at one of the indices answered and mentions the key, and with its inclusion proof ' +
      '(?proofs=true) is in the tree the checkpoint signs',
  },
  'index.complete': {
    layer: 'L3',
    meaning:
      "every judgment the log records of a proposal is in the read of it, every eval the log records of an artifact's bytes in the read of the " +
      'artifact, by the lookup of proposal:ID or sha256:HEX proven under the pinned log key (9.10)',
  },
  'index.recorded': {
    layer: 'L3',
    meaning: 'each eval shown beside an artifact is one the log records of its path and bytes, its fields hashing to the contentSha256 recorded (9.3, 9.10)',
  },
  'index.log': { layer: 'L3', meaning: "the entries an index evidence gives are the log's first ones: their leaves give the root the checkpoint signs" },
  'index.rebuild': {
    layer: 'L3',
    meaning: 'a root an index.root.v1 entry logs is not what the entries below its size give, indexed again: an entry left out or filed wrongly',
  },
  'log.consistency': { layer: 'L3', meaning: 'the newer tree extends the older one (the consistency proof)' },
  'log.witnesses': { layer: 'L3', meaning: 'the checkpoint is cosigned by the quorum of the witnesses given (9.9)' },
  'log.entry.about': { layer: 'L3', meaning: 'the log entry records this judgment of this content' },
  'log.submitted': { layer: 'L3', meaning: 'the log recorded the content, kind, path and proposer at propose' },
  'log.decision': { layer: 'L3', meaning: 'a decided proposal has its decision event, recording the status shown, the content and the proposer' },
  'log.publication': { layer: 'L3', meaning: 'the log recorded the publication of the content served' },
  'checkpoint.new': { layer: 'L3', meaning: 'the newer checkpoint is signed by the log key' },
  'checkpoint.old': { layer: 'L3', meaning: 'the older checkpoint is signed by the log key' },
  'status.log': { layer: 'L3', meaning: 'a status list version is recorded in the log: an entry naming the list, its version and its sha256' },
  'fork.proven': { layer: 'L3', meaning: 'the log key signed two histories (two roots for one size, or a newer tree that does not extend an older one)' },
  'judgment.nodeMac': { layer: 'L3', meaning: "the node's HMAC over a judgment: needs the node's key, never checked offline" },
  'manifest.hmac': { layer: 'L3', meaning: "the node's HMAC over a brief's manifest: needs the node's key, never checked offline" },

  // CAS: bytes against the hashes named.
  'cas.hash': { layer: 'CAS', meaning: 'the bytes given hash to the sha256 named' },
} as const satisfies Record<string, CheckInfo>;

type Registered = keyof typeof CHECKS;
/** The ids a credential's own report holds (marked `credential` in the registry). */
export type CredentialCheckId = { [K in Registered]: (typeof CHECKS)[K] extends { credential: true } ? K : never }[Registered];
/**
 * A check id: one of the registry, or `credential.ID` for a check ID of a credential a bundle or a
 * presentation carries, reported about that credential (its judgment id, `verifiableCredential[i]`).
 */
export type CheckId = Registered | `credential.${CredentialCheckId}`;

export interface Check {
  /** Stable name from the registry (CHECKS), e.g. `proof.signature`. */
  id: CheckId;
  /** The id's layer in the registry. */
  layer: Layer;
  /** What was checked, for people. */
  what: string;
  /** true holds, false does not, null could not be checked. */
  valid: boolean | null;
  /** Why it failed or could not be checked (and, for some passes, what it found). */
  why?: string;
  /** What the check was about when a report holds many (a judgment id, a file, a sha256). */
  subject?: string;
  /** The check ties the verdict to a key the auditor pinned (an issuer, a log key); absent otherwise. */
  anchor?: true;
}

export interface Report {
  /** Every check that ran holds (unchecked ones do not count either way). A verdict needs `anchored` too: verdictOf. */
  verified: boolean;
  /** No anchor check was left unchecked: the keys the checks ran on are keys the auditor pinned. */
  anchored: boolean;
  /** The anchor checks that could not run, as `id` or `id (subject)`, each once. */
  unanchored: string[];
  checks: Check[];
}

/**
 * The verdict of every verifier (PROTOCOL 8.6: one verdict for every verifier): not verified beats
 * unanchored beats status unknown (false beats unknown), and only an anchored report with no
 * failure, whose credentials' status was read (or skipped by the reader's explicit choice), is
 * verified.
 */
export type Verdict = 'verified' | 'not verified' | 'unanchored' | 'status unknown';

/** A check's result in words: what `--json` carries beside its id and layer. */
export type CheckResult = 'held' | 'failed' | 'not checked';
export const resultOf = (valid: boolean | null): CheckResult => (valid === true ? 'held' : valid === false ? 'failed' : 'not checked');

/** A check about the status of a credential (revocation, suspension; PROTOCOL 8.7). */
export const isStatusCheck = (id: string) => id === 'status' || id.startsWith('status.');

/** The verdict of a report's checks: a failed check, an anchor left unchecked, a status left unknown, or none of these. */
export function verdictOf(r: { verified: boolean; anchored: boolean; checks?: Check[] }): Verdict {
  if (!r.verified) return 'not verified';
  if (!r.anchored) return 'unanchored';
  return r.checks?.some((c) => c.valid === null && isStatusCheck(c.id)) ? 'status unknown' : 'verified';
}

/** The exit code of a verdict (PROTOCOL 8.6): 0 verified, 1 not verified, 3 unanchored or status unknown. */
export const exitOfVerdict = (v: Verdict): 0 | 1 | 3 => (v === 'verified' ? 0 : v === 'not verified' ? 1 : 3);
export const exitOf = (r: { verified: boolean; anchored: boolean; checks?: Check[] }): 0 | 1 | 3 => exitOfVerdict(verdictOf(r));

/** The status a verdict speaks for: read (from where, which versions, as of when), skipped on purpose, or not read. */
export interface StatusSummary {
  /** Every list the credentials name was read and checked. */
  checked: boolean;
  /** node: read from the node now; saved: from files; stapled: from the bundle; skipped: --no-status; none: not given. */
  source: 'node' | 'saved' | 'stapled' | 'skipped' | 'none';
  /** Each list read: its purpose, its version where known, the time it speaks for (ISO). */
  lists: Array<{ purpose: string; version?: number; at: string }>;
}

/** The object every verify command's --json carries, the same on each (issue 47). */
export interface VerdictObject {
  verdict: Verdict;
  /** What the verdict was anchored on (a trust file, a pinned DID or log key), null when nothing was pinned. */
  anchoredOn: string | null;
  /** The status it speaks for; null where no credential names a status list. */
  status: StatusSummary | null;
  checks: Array<{ id: CheckId; layer: Layer; result: CheckResult; what: string; why?: string; subject?: string }>;
}

/** The checks as --json shows them: each with its result in words. */
export function checksOut(checks: Check[]): VerdictObject['checks'] {
  return checks.map((c) => {
    const out: VerdictObject['checks'][number] = { id: c.id, layer: c.layer, result: resultOf(c.valid), what: c.what };
    if (c.why !== undefined) out.why = c.why;
    if (c.subject !== undefined) out.subject = c.subject;
    return out;
  });
}

const VERDICT_WORDS: Record<Verdict, string> = {
  verified: 'VERIFIED',
  'not verified': 'NOT VERIFIED',
  unanchored: 'UNANCHORED',
  'status unknown': 'STATUS UNKNOWN',
};

/** What a status summary says, for the verdict line. */
export function statusText(s: StatusSummary | null): string | undefined {
  if (!s) return undefined;
  if (s.source === 'skipped') return 'status not checked (--no-status)';
  const lists = s.lists.map((l) => `${l.purpose}${l.version !== undefined ? ` v${l.version}` : ''} as of ${l.at}`).join(', ');
  const from = { node: 'read from the node', saved: 'from the saved lists', stapled: 'stapled in the bundle', none: '' }[s.source];
  if (!s.checked)
    return `status unknown${lists ? ` (${lists}${from ? `, ${from}` : ''})` : ''}: check it with --status (asks the node) or --status-list FILE (saved lists)`;
  return `status ${lists}${from ? `, ${from}` : ''}`;
}

/**
 * The one line every verify command ends with: the verdict, what it was anchored on, the status
 * it speaks for, and, when it is not VERIFIED, what to do or what failed.
 */
export function verdictLine(v: Pick<VerdictObject, 'verdict' | 'anchoredOn' | 'status'> & { failed?: string[]; unanchoredHint?: string }): string {
  const parts: string[] = [];
  if (v.verdict === 'not verified' && v.failed?.length)
    parts.push(`failed: ${[...new Set(v.failed)].slice(0, 6).join(', ')}${v.failed.length > 6 ? ', ...' : ''}`);
  if (v.verdict === 'unanchored') parts.push(`${v.unanchoredHint ?? 'anchored on nothing you pinned'}${v.anchoredOn ? ` (pinned: ${v.anchoredOn})` : ''}`);
  else parts.push(v.anchoredOn ? `anchored on ${v.anchoredOn}` : 'anchored on nothing you pinned');
  const status = statusText(v.status);
  if (status) parts.push(status);
  return `${VERDICT_WORDS[v.verdict]} — ${parts.join('; ')}`;
}

/** The anchor checks of a list that could not run, each named once. */
export function unanchoredOf(checks: Check[]): string[] {
  let out: Set<string> | undefined; // made only when there is one: most reports have none
  for (const c of checks) if (c.anchor && c.valid === null) (out ??= new Set()).add(c.subject ? `${c.id} (${c.subject})` : c.id);
  return out ? [...out] : [];
}

/** What a check says, as `Checks.add` takes it: its layer comes from the registry. */
export interface CheckInput {
  id: CheckId;
  what: string;
  valid: boolean | null;
  why?: string;
  subject?: string;
  /** The check ties the verdict to a key the auditor pinned. */
  anchor?: boolean;
}

const REGISTRY: Record<string, CheckInfo | undefined> = CHECKS;
const NESTED = 'credential.';

// Each id's layer in a Map: read for every check a report adds (a keyed read of the registry's
// hundred properties cost more than the rest of adding one).
const LAYERS = new Map<string, Layer>(Object.entries(CHECKS).map(([id, info]) => [id, info.layer]));

/** The layer of a check id: the registry's, or for `credential.ID` that of ID. */
export function layerOf(id: CheckId): Layer {
  return (LAYERS.get(id) ?? LAYERS.get(id.slice(NESTED.length)))!;
}

/** A credential's check as the bundle or presentation that carries it reports it: `credential.ID` (PROTOCOL 8.8). */
export function credentialCheckId(id: CheckId): CheckId {
  return REGISTRY[id]?.credential ? (`${NESTED}${id}` as CheckId) : id;
}

/** The id a credential's check has in the credential's own report: ID for `credential.ID`, any other id as it is. */
export function ownCheckId(id: CheckId): CheckId {
  return REGISTRY[id] === undefined && id.startsWith(NESTED) ? (id.slice(NESTED.length) as CheckId) : id;
}

/** Collects checks in order. */
export class Checks {
  readonly list: Check[] = [];

  /** Adds one check (an options object: PROTOCOL 8.8 says what each id means); answers its `valid`. */
  add(o: CheckInput): boolean | null {
    // Fields set one by one, not spread from temporary objects: a batch of 10,000 credentials
    // adds some 200,000 checks (issue 32, 6: the spreads were a tenth of the run's garbage).
    const check: Check = { id: o.id, layer: layerOf(o.id), what: o.what, valid: o.valid };
    if (o.why !== undefined) check.why = o.why;
    if (o.subject !== undefined) check.subject = o.subject;
    if (o.anchor) check.anchor = true;
    this.list.push(check);
    return o.valid;
  }

  get failed(): Check[] {
    return this.list.filter((c) => c.valid === false);
  }

  report(): Report {
    const unanchored = unanchoredOf(this.list);
    return { verified: !this.list.some((c) => c.valid === false), anchored: unanchored.length === 0, unanchored, checks: this.list };
  }
}

const NOT_CHECKABLE = Symbol.for('akas.NotCheckableError');

/**
 * Input a verify function cannot read, so has no verdict for (PROTOCOL 8.8): bytes or text that
 * are not strict JSON (`invalid_json`), or JSON that is not the kind of document it checks
 * (`not_checkable`). Every verify function throws it, none reports it as a check; the CLI answers
 * exit 2 with its code.
 */
export class NotCheckableError extends Error {
  // A brand as well as the class: the CLI's bundle may hold this module twice (scripts/bundle.mjs), and instanceof would miss the other copy's.
  readonly [NOT_CHECKABLE] = true;
  override readonly name = 'NotCheckableError';
  readonly code: 'invalid_json' | 'not_checkable';

  static is(e: unknown): e is NotCheckableError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[NOT_CHECKABLE] === true;
  }

  constructor(message: string, code: 'invalid_json' | 'not_checkable' = 'not_checkable') {
    super(message);
    this.code = code;
  }
}

/** A verify function's input: text or bytes read as strict JSON, anything else as parsed already; NotCheckableError (`not ${what}: why`) if not strict JSON. */
export function readJsonInput(input: unknown, what: string): unknown {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) return input;
  const parsed = parseStrictJson(input);
  if (!parsed.ok) throw new NotCheckableError(`not ${what}: ${parsed.reason}`, 'invalid_json');
  return parsed.value;
}

/** Totals of a report: how many held, failed and could not be checked. */
export function tally(checks: Check[]) {
  return {
    held: checks.filter((c) => c.valid === true).length,
    failed: checks.filter((c) => c.valid === false).length,
    unchecked: checks.filter((c) => c.valid === null).length,
  };
}
