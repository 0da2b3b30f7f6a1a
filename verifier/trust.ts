// The trust file (`--trust FILE`, PROTOCOL 8.6): what an auditor pins in one document, so that no
// verdict rests on keys the input brought itself (issue 32). A JSON object:
//   {type: "akas.trust.v1", source?, url?, fetchedAt?, note?,
//    issuers: [{did, validFrom, validUntil}], policy: "<C2SP tlog-policy text>"}
// - issuers: the issuer did:keys pinned, each with the window it was the issuer's (ISO 8601
//   dateTimeStamps, or null for no bound): the node's key history, as `akas node-keys --trust`
//   writes it. A credential must be signed by one of them, within its window, at validFrom.
// - policy: C2SP tlog-policy (https://c2sp.org/tlog-policy): `log <vkey> [url]` lines (the log
//   keys, C2SP note verifier keys; a checkpoint signed by any one counts), `witness <name> <vkey>
//   [url]`, `group <name> all|any|<k> <member>...` and exactly one `quorum <name>` (`none`: no
//   cosignature needed). Comments (#) and empty lines are ignored.
// Free of Node built-ins: the browser build parses trust files too.
import { didWebMethods } from '../src/core/did-web.js';
import { parseCosignerKey } from '../src/core/cosignature.js';
import { isDateTimeStamp, timeOf } from '../src/core/credential.js';
import { publicKeyFromMultibase } from '../src/core/didkey.js';
import { parseVerifierKey } from '../src/core/note.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { issuerTrustFromPins, type IssuerPin, type IssuerTrust } from './issuer-keys.js';

export const TRUST_TYPE = 'akas.trust.v1';

/** A quorum rule of a tlog-policy: one witness (by its `name+keyId`), or k of a group's members. */
export type QuorumRule = { witness: string; name: string } | { group: string; k: number; of: QuorumRule[] };

export interface TlogPolicy {
  /** The log verifier keys: a checkpoint signed by any one of them counts. */
  logs: string[];
  /** Every witness key of the policy (cosignature/v1 vkeys). */
  witnesses: string[];
  /** The quorum the checkpoint's cosignatures must meet; null for `quorum none`. */
  quorum: QuorumRule | null;
}

export interface Trust {
  issuers: IssuerPin[];
  /** did:web documents pinned (PROTOCOL 8.10): each method id -> the did:key of its key; their keys are in `issuers` too. */
  didWeb?: Map<string, string>;
  policy: TlogPolicy;
  /** How the file was made (`tofu`: trust on first use, from a node's own answer), if it says. */
  source?: string;
}

/** A trust file that cannot be read as one: the check cannot run (exit 2). */
export class TrustFileError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const RESERVED = new Set(['none', 'all', 'any', 'log', 'witness', 'group', 'quorum']);

/** Parses C2SP tlog-policy text; throws TrustFileError naming the line that is wrong. */
export function parseTlogPolicy(text: string): TlogPolicy {
  const logs: string[] = [];
  const names = new Map<string, QuorumRule>();
  const members = new Set<string>();
  const witnessKeys = new Set<string>();
  const vkeys: string[] = [];
  let quorum: QuorumRule | null | undefined;
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const f = line.split(/[ \t]+/);
    const bad = (why: string) => new TrustFileError(`policy line ${i + 1} (${line.slice(0, 80)}): ${why}`);
    if (f[0] === 'log') {
      if (f.length < 2 || f.length > 3) throw bad('a log line is `log <vkey> [url]`');
      if (!parseVerifierKey(f[1])) throw bad(`${f[1]} is not a C2SP Ed25519 note verifier key (NAME+KEYHASH+KEY: akas node-keys prints the log's)`);
      if (logs.includes(f[1])) throw bad('the same log key twice');
      logs.push(f[1]);
    } else if (f[0] === 'witness') {
      if (f.length < 3 || f.length > 4) throw bad('a witness line is `witness <name> <vkey> [url]`');
      const key = parseCosignerKey(f[2]);
      if (!key) throw bad(`${f[2]} is not a cosignature/v1 verifier key (NAME+KEYID+KEY: akas witness prints it)`);
      if (RESERVED.has(f[1]) || names.has(f[1])) throw bad(`the name ${f[1]} is ${names.has(f[1]) ? 'defined already' : 'reserved'}`);
      if (witnessKeys.has(key.publicKey)) throw bad('the same witness key twice');
      witnessKeys.add(key.publicKey);
      names.set(f[1], { witness: `${key.name}+${key.keyId}`, name: f[1] });
      vkeys.push(f[2]);
    } else if (f[0] === 'group') {
      if (f.length < 4) throw bad('a group line is `group <name> all|any|<k> <member>...`');
      const [, name, rule, ...of] = f;
      if (RESERVED.has(name) || names.has(name)) throw bad(`the name ${name} is ${names.has(name) ? 'defined already' : 'reserved'}`);
      const rules = of.map((m) => {
        if (m === 'none') throw bad('none cannot be a group member');
        const r = names.get(m);
        if (!r) throw bad(`${m} is not a witness or group defined on a line above`);
        if (members.has(m)) throw bad(`${m} is a member of a group already`);
        return r;
      });
      for (const m of of) members.add(m);
      if (new Set(of).size !== of.length) throw bad('a member listed twice');
      const k = rule === 'all' ? of.length : rule === 'any' ? 1 : /^[1-9][0-9]*$/.test(rule) ? Number(rule) : NaN;
      if (!Number.isInteger(k) || k < 1 || k > of.length) throw bad(`the threshold ${rule} is not all, any, or 1 to ${of.length}`);
      names.set(name, { group: name, k, of: rules });
    } else if (f[0] === 'quorum') {
      if (f.length !== 2) throw bad('a quorum line is `quorum <name>`');
      if (quorum !== undefined) throw bad('a policy has exactly one quorum line');
      if (f[1] === 'none') quorum = null;
      else {
        const r = names.get(f[1]);
        if (!r) throw bad(`${f[1]} is not a witness or group defined on a line above`);
        quorum = r;
      }
    } else throw bad(`${f[0]} is not a tlog-policy keyword (log, witness, group, quorum)`);
  }
  if (quorum === undefined) throw new TrustFileError('the policy has no quorum line (`quorum none` when no witness is required)');
  return { logs, witnesses: vkeys, quorum };
}

/** Whether the witnesses that validly cosigned (by `name+keyId`) meet a quorum rule. */
export function quorumHolds(rule: QuorumRule, cosigned: Set<string>): boolean {
  if ('witness' in rule) return cosigned.has(rule.witness);
  return rule.of.filter((r) => quorumHolds(r, cosigned)).length >= rule.k;
}

const time = (v: unknown, field: string, bound: number): number => {
  if (v === null || v === undefined) return bound;
  if (!isDateTimeStamp(v)) throw new TrustFileError(`${field} is ${JSON.stringify(v)}: an ISO 8601 dateTimeStamp (with its zone), or null`);
  return timeOf(v);
};

/** Reads a trust file (its text, bytes or parsed value); throws TrustFileError saying what is wrong. */
export function parseTrust(input: string | Uint8Array | unknown): Trust {
  let doc = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const parsed = parseStrictJson(input);
    if (!parsed.ok) throw new TrustFileError(`not strict JSON: ${parsed.reason}`);
    doc = parsed.value;
  }
  if (!isObject(doc) || doc.type !== TRUST_TYPE)
    throw new TrustFileError(`not a trust file ({type: "${TRUST_TYPE}", issuers, policy}: akas node-keys --trust > trust.json writes one)`);
  if (!Array.isArray(doc.issuers)) throw new TrustFileError('issuers is not an array');
  const issuers = doc.issuers.map((x, i): IssuerPin => {
    if (!isObject(x) || typeof x.did !== 'string' || !publicKeyFromMultibase(x.did) || x.did.includes('#'))
      throw new TrustFileError(`issuers[${i}].did is not an Ed25519 did:key`);
    const validFrom = time(x.validFrom, `issuers[${i}].validFrom`, -Infinity);
    const validUntil = time(x.validUntil, `issuers[${i}].validUntil`, Infinity);
    if (!(validFrom < validUntil)) throw new TrustFileError(`issuers[${i}]: validFrom is not before validUntil`);
    return { did: x.did, validFrom, validUntil };
  });
  // A did:web is resolved from the document pinned here and never fetched (PROTOCOL 8.10): its keys are pinned issuers, each in its window.
  const didWeb = new Map<string, string>();
  if (doc.didWeb !== undefined) {
    if (!Array.isArray(doc.didWeb)) throw new TrustFileError('didWeb is not an array of did:web documents');
    for (const [i, d] of doc.didWeb.entries()) {
      const read = didWebMethods(d);
      if (!read?.methods.length) throw new TrustFileError(`didWeb[${i}] is not a did:web document with an Ed25519 Multikey method`);
      for (const m of read.methods) {
        didWeb.set(m.id, m.didKey);
        issuers.push({ did: m.didKey, validFrom: m.validFrom, validUntil: m.validUntil });
      }
    }
  }
  if (typeof doc.policy !== 'string') throw new TrustFileError('policy is not a string of C2SP tlog-policy text (at least `quorum none`)');
  const policy = parseTlogPolicy(doc.policy);
  if (!issuers.length && !policy.logs.length) throw new TrustFileError('it pins nothing: no issuer and no log line');
  return { issuers, policy, ...(didWeb.size ? { didWeb } : {}), ...(typeof doc.source === 'string' ? { source: doc.source } : {}) };
}

/** The issuer keys a trust file pins, as the credential checks take them; undefined when it pins none. */
export const issuerTrustOf = (trust: Trust): IssuerTrust | undefined => issuerTrustFromPins(trust.issuers);
