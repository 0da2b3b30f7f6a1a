// A lookup in the verifiable index checked offline (PROTOCOL 9.10, docs/INDEX.md): the root
// entry is in the log under a checkpoint the pinned log key signs (the checks of a log proof),
// it commits the answer's map root and size, the map proof leads to that root with exactly the
// indices answered (or proves the key absent), and each entry shown is one of them and
// mentions the key. One module for the CLI, the single-file verifier and the browser build.
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { entryHash, entryLeaf, type LogEntry } from '../src/core/log-entry.js';
import { LOOKUP_ROOT_KIND, lookupKeyHash } from '../src/core/lookup.js';
import { verifyMapProof } from '../src/core/lookup-proof.js';
import { entryLookupKeys, lookupKeyProblem } from '../src/core/lookup-keys.js';
import { leafHash, verifyInclusion } from '../src/core/merkle.js';
import { type Checkpoint, parseCheckpoint, parseNote } from '../src/core/note.js';
import type { IssuerTrust } from './issuer-keys.js';
import { logProofChecking, type WitnessPolicy } from './log.js';
import { Checks, type Report } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a lookup report adds to the checks: what the answer proves, once they hold. */
export interface LookupReport extends Report {
  key?: string;
  found?: boolean;
  indices?: number[];
  /** The map covers log entries 0 to size-1: the answer is complete as of that size. */
  size?: number;
  rootEntry?: string;
  /** When the answer shows entries: whether each was proven in the signed tree by its own inclusion proof (?proofs=true). */
  entriesIncluded?: boolean;
}

/** Checks a saved GET /api/index/{key} answer under the pinned log key(s), or a pinned issuer that endorses it. */
export function verifyLookup(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, trust?: IssuerTrust): LookupReport {
  return runNow(lookupChecking(doc, logKey, witnesses, trust));
}

/** verifyLookup where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyLookupAsync(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, trust?: IssuerTrust): Promise<LookupReport> {
  return runAsync(lookupChecking(doc, logKey, witnesses, trust));
}

/** The checks of verifyLookup, as a generator of the signatures they need. */
export function* lookupChecking(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, trust?: IssuerTrust): Checking<LookupReport> {
  const c = new Checks();
  const key = isObject(doc) ? doc.key : undefined;
  const map = isObject(doc) && isObject(doc.map) ? doc.map : undefined;
  const root = isObject(doc) && isObject(doc.root) ? doc.root : undefined;
  const indices = isObject(doc) ? doc.indices : undefined;
  if (typeof key !== 'string' || lookupKeyProblem(key) || !map || !root || !Array.isArray(indices)) {
    c.add({ id: 'shape', what: 'a lookup answer ({key, indices, map, root})', valid: false, why: 'not the JSON of GET /api/index/{key}' });
    return c.report();
  }
  // The root entry, as a log proof: log.key, log.entry, log.checkpoint, log.inclusion, log.witnesses.
  const logged = yield* logProofChecking({ ...root, evidence: (doc as Json).evidence }, logKey, witnesses, { trust });
  c.list.push(...logged.checks);
  const entry = root.entry as LogEntry;
  const body = isObject(entry) && isObject(entry.body) ? entry.body : {};
  const rootOk = isObject(entry) && entry.kind === LOOKUP_ROOT_KIND && body.size === map.size && body.root === map.root && typeof map.root === 'string';
  c.add({
    id: 'index.root',
    what: `the log's ${LOOKUP_ROOT_KIND} entry commits the map root and size answered`,
    valid: rootOk,
    why: rootOk
      ? `${String(entry.id)}: the map of entries 0 to ${Number(map.size) - 1}`
      : `the entry is ${isObject(entry) ? String(entry.kind) : 'missing'} with size ${String(body.size)} and root ${String(body.root)}; ` +
        `the answer names size ${String(map.size)}`,
  });
  const size = Number(map.size);
  const proof = typeof map.proof === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(map.proof) ? Buffer.from(map.proof, 'base64') : null;
  const rootHash = typeof map.root === 'string' && /^[0-9a-f]{64}$/.test(map.root) ? Buffer.from(map.root, 'hex') : null;
  const wellFormed = indices.every((i) => Number.isSafeInteger(i) && i >= 0 && i < size);
  const verdict =
    proof && rootHash && wellFormed ? verifyMapProof(rootHash, lookupKeyHash(key), indices as number[], proof) : { ok: false as const, reason: 'no proof' };
  const found = verdict.ok && verdict.found;
  const proofOk = verdict.ok && found === (doc as Json).found && (doc as Json).keyHash === lookupKeyHash(key).toString('hex');
  c.add({
    id: 'index.proof',
    what: found ? `the map proof leads to the root with exactly these ${indices.length} indices of ${key}` : `the map proof shows no entry mentions ${key}`,
    valid: proofOk,
    why: proofOk
      ? undefined
      : !wellFormed
        ? `indices must be whole numbers below the map's size ${size}`
        : !verdict.ok
          ? verdict.reason
          : 'the answer\u2019s found or keyHash is not what the proof proves',
  });
  const shown = (doc as Json).entries;
  const inclusions = (doc as Json).inclusions;
  // The entries' own proofs are under the root entry's checkpoint (log.checkpoint checks its signature).
  const signed = Array.isArray(inclusions) ? signedTree(root.checkpoint) : undefined;
  if (Array.isArray(shown)) c.add(entriesCheck(shown, key, indices as number[], Array.isArray(inclusions) ? { inclusions, signed } : undefined));
  const report = c.report();
  return {
    ...report,
    key,
    found,
    indices: indices as number[],
    size,
    rootEntry: isObject(entry) ? String(entry.id) : undefined,
    ...(Array.isArray(shown) ? { entriesIncluded: Array.isArray(inclusions) } : {}),
  };
}

/** The size and root a checkpoint note states (its signature is log.checkpoint's to check), or undefined. */
function signedTree(note: unknown): Checkpoint | undefined {
  const parsed = typeof note === 'string' ? parseNote(note) : undefined;
  return parsed?.ok ? (parseCheckpoint(parsed.text) ?? undefined) : undefined;
}

/** Why an entry is not in the signed tree at its index by the proof given (undefined when it is). */
function notIncluded(e: Json, inc: unknown, signed: Checkpoint | undefined): string | undefined {
  if (!signed) return 'the checkpoint states no tree';
  if (!isObject(inc) || inc.index !== e.seq || inc.size !== signed.size || !Array.isArray(inc.proof)) return 'its proof is for another index or size';
  const proof: Array<Uint8Array | null> = inc.proof.map((p) => (typeof p === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(p) ? Buffer.from(p, 'base64') : null));
  if (!proof.every((p): p is Uint8Array => p !== null && p.length === 32)) return 'its proof holds a hash that is not 32 bytes';
  return verifyInclusion(e.seq as number, signed.size, leafHash(entryLeaf(e as unknown as LogEntry)), proof, signed.rootHash)
    ? undefined
    : 'its inclusion proof does not lead to the signed root';
}

// Each entry shown hashes to its hash, sits at one of the indices, and mentions the key; and,
// when the answer carries their proofs (?proofs=true), is in the tree the checkpoint signs at that
// index: the log's own entry there, not only one that hashes to itself.
function entriesCheck(entries: unknown[], key: string, indices: number[], proofs?: { inclusions: unknown[]; signed: Checkpoint | undefined }) {
  const at = new Set(indices);
  const bad = entries.flatMap((e, n) => {
    if (!isObject(e)) return [`entry ${n} is not an object`];
    let hashed = false;
    try {
      hashed = entryHash(e as unknown as LogEntry) === e.hash;
    } catch {
      hashed = false;
    }
    if (!hashed) return [`${String(e.id)} was changed after it was hashed`];
    if (!at.has(e.seq as number)) return [`${String(e.id)} is at no index answered`];
    if (!entryLookupKeys(e as unknown as LogEntry).includes(key)) return [`${String(e.id)} does not mention ${key}`];
    const why = proofs ? notIncluded(e, proofs.inclusions[n], proofs.signed) : undefined;
    return why ? [`${String(e.id)} is not in the signed tree at ${String(e.seq)}: ${why}`] : [];
  });
  return {
    id: 'index.entries' as const,
    what: proofs
      ? `each of the ${entries.length} entries shown is at an index answered, mentions the key and is in the tree the checkpoint signs`
      : `each of the ${entries.length} entries shown is at an index answered and mentions the key`,
    valid: bad.length === 0,
    why: bad.length ? bad.slice(0, 3).join('; ') : undefined,
  };
}
