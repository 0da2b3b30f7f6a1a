// Which issuer keys an auditor may trust, and when (PROTOCOL 8.3). A node publishes every
// issuer key it has had, and a statement for each rotation signed by both the old and the new
// key. Starting from one pinned DID, the chain of rotations whose two signatures verify
// reaches the other keys, in both directions; each reached key was the issuer's from the
// rotation into it until the rotation out of it. The windows come from those signed
// statements only: the validFrom/validUntil of the published list are not signed, so they
// are checked against the statements, never trusted on their own.
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { issuerRotation, type PublishedIssuerKey, type SignedIssuerRotation } from '../src/core/credential.js';
import { didKeyFromPublicKey, publicKeyFromMultibase } from '../src/core/didkey.js';
import { canonicalize } from '../src/core/jcs.js';

export interface TrustedKey {
  did: string;
  publicKey: string;
  /** When this key became the issuer's (-Infinity when the chain does not say). */
  from: number;
  /** When it stopped being the issuer's (Infinity while current). */
  until: number;
}

export interface IssuerTrust {
  pinned: string;
  /** The keys reached from the pin, by DID. */
  keys: Map<string, TrustedKey>;
  problems: string[];
  /** The keys are those a trust file pins (verifier/trust.ts), each with the window it gives, not reached by rotations. */
  byTrustFile?: boolean;
}

/** The node's published key list (GET /api/node/keys, or the issuerKeys of a bundle). */
export interface IssuerKeyList {
  keys?: PublishedIssuerKey[];
  rotations?: SignedIssuerRotation[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a rotation statement carries two valid signatures, by its `from` and its `to` key. */
export function rotationHolds(r: unknown): r is SignedIssuerRotation {
  return runNow(rotationChecking(r));
}

/** rotationHolds as a check that yields its two signatures (src/core/checking.ts). */
export function* rotationChecking(r: unknown): Checking<boolean> {
  if (
    !isObject(r) ||
    r.type !== 'akas.issuer-rotation.v1' ||
    typeof r.from !== 'string' ||
    typeof r.to !== 'string' ||
    typeof r.at !== 'number' ||
    !isObject(r.signatures)
  )
    return false;
  const fromKey = publicKeyFromMultibase(r.from);
  const toKey = publicKeyFromMultibase(r.to);
  if (!fromKey || !toKey || r.from !== didKeyFromPublicKey(fromKey) || r.to !== didKeyFromPublicKey(toKey)) return false;
  const statement = canonicalize(issuerRotation(r.from, r.to, r.at));
  return (yield* ed25519Hex(fromKey, statement, r.signatures.from)) && (yield* ed25519Hex(toKey, statement, r.signatures.to));
}

/**
 * The issuer keys reachable from `pinned` through rotations signed by both their keys. A
 * fork (two rotations out of, or into, one key) is a problem: such a chain is not trusted
 * past the fork.
 */
export function trustIssuerKeys(pinned: string, list: IssuerKeyList | undefined): IssuerTrust {
  return runNow(trustChecking(pinned, list));
}

/** trustIssuerKeys where Ed25519 is asynchronous (WebCrypto in a browser). */
export function trustIssuerKeysAsync(pinned: string, list: IssuerKeyList | undefined): Promise<IssuerTrust> {
  return runAsync(trustChecking(pinned, list));
}

/** The checks of trustIssuerKeys, as a generator of the signatures they need. */
export function* trustChecking(pinned: string, list: IssuerKeyList | undefined): Checking<IssuerTrust> {
  const problems: string[] = [];
  const pinKey = publicKeyFromMultibase(pinned);
  const keys = new Map<string, TrustedKey>();
  if (!pinKey || pinned.includes('#')) return { pinned, keys, problems: [`${pinned} is not an Ed25519 did:key`] };
  const rotations: SignedIssuerRotation[] = [];
  for (const [i, r] of (Array.isArray(list?.rotations) ? list!.rotations : []).entries()) {
    if (yield* rotationChecking(r)) rotations.push(r);
    else problems.push(`rotation ${i} is not signed by both of its keys`);
  }
  const out = new Map<string, SignedIssuerRotation[]>();
  const into = new Map<string, SignedIssuerRotation[]>();
  for (const r of rotations) {
    out.set(r.from, [...(out.get(r.from) ?? []), r]);
    into.set(r.to, [...(into.get(r.to) ?? []), r]);
  }
  const one = (m: Map<string, SignedIssuerRotation[]>, did: string, way: string) => {
    const rs = m.get(did) ?? [];
    if (rs.length > 1) problems.push(`${did} has ${rs.length} rotations ${way} it: a forked chain is not followed`);
    return rs.length === 1 ? rs[0] : undefined;
  };
  const queue = [pinned];
  while (queue.length) {
    const did = queue.shift()!;
    if (keys.has(did)) continue;
    const inRot = one(into, did, 'into');
    const outRot = one(out, did, 'out of');
    keys.set(did, { did, publicKey: publicKeyFromMultibase(did)!, from: inRot?.at ?? -Infinity, until: outRot?.at ?? Infinity });
    if (inRot) queue.push(inRot.from);
    if (outRot) queue.push(outRot.to);
  }
  // The published (unsigned) windows must agree with what the signed chain says.
  for (const k of Array.isArray(list?.keys) ? list!.keys : []) {
    if (!isObject(k)) continue;
    const t = keys.get(k.did);
    if (!t) continue;
    if (Number.isFinite(t.from) && k.validFrom !== t.from) problems.push(`${k.did}: validFrom ${k.validFrom} disagrees with its signed rotation (${t.from})`);
    const until = k.validUntil ?? Infinity;
    if (until !== t.until && !(k.validUntil === null && t.until === Infinity))
      problems.push(`${k.did}: validUntil ${k.validUntil} disagrees with its signed rotation (${t.until})`);
  }
  return { pinned, keys, problems };
}

/** An issuer key a trust file pins (verifier/trust.ts), with the window it gives. */
export interface IssuerPin {
  did: string;
  /** ms; -Infinity when unbounded. */
  validFrom: number;
  /** ms; Infinity when unbounded. */
  validUntil: number;
}

/**
 * The issuer keys a trust file pins, as the credential checks take them (undefined when none):
 * each in the window the file gives, the auditor's word, not reached by rotations. Here, not in
 * trust.ts, so the worker threads of verify credential rebuild it without the policy parser.
 */
export function issuerTrustFromPins(pins: IssuerPin[]): IssuerTrust | undefined {
  if (!pins.length) return undefined;
  const keys = new Map<string, TrustedKey>();
  for (const p of pins) {
    // One DID listed twice (a key that came back) keeps the widest window.
    const had = keys.get(p.did);
    keys.set(p.did, {
      did: p.did,
      publicKey: publicKeyFromMultibase(p.did)!,
      from: Math.min(had?.from ?? Infinity, p.validFrom),
      until: Math.max(had?.until ?? -Infinity, p.validUntil),
    });
  }
  const current = pins.find((p) => p.validUntil === Infinity) ?? pins[pins.length - 1];
  return { pinned: current.did, keys, problems: [], byTrustFile: true };
}
