// The lookup tool of `akas mcp --stdio` (issue 51, 2; PROTOCOL 9.10, 12.5): a lookup in the
// node's verifiable index, checked here as `akas verify lookup` checks it (the root entry under
// a checkpoint the pinned log key signs, the map proof, each entry shown) under the keys this
// profile pinned for the node, at a checkpoint proven one history with the newest one kept. The
// answer carries one Verification (./verify.ts), with what the lookup proves: the key's entries,
// complete as of a log size.
import { verifyLookup } from '../../../verifier/lookup.js';
import { issuerTrustOf } from '../../../verifier/trust.js';
import type { Json } from '../../kit/index.js';
import { lineOf, type ReadVerifier, type Verification, verificationOf } from './verify.js';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Verifies a GET /api/index/{key} answer under the profile's pin; input that is no lookup answer fails (shape), never passes. */
export async function verifyLookupRead(reader: ReadVerifier, doc: Json): Promise<Verification> {
  const done = (v: Omit<Verification, 'line'>): Verification => ({ ...v, line: lineOf(v, reader.o.client.baseUrl) });
  const note = isObject(doc.root) && typeof doc.root.checkpoint === 'string' ? doc.root.checkpoint : undefined;
  const anchored = await reader.anchor(undefined, note ? [note] : []);
  if ('refusal' in anchored) return done(anchored.refusal);
  const { pin, anchoredOn, trust, at } = anchored;
  const q = pin.trust.policy.quorum;
  const witnesses = q ? { keys: pin.trust.policy.witnesses, rule: q, now: Math.floor(Date.now() / 1000) } : undefined;
  const report = verifyLookup(doc, pin.trust.policy.logs, witnesses, issuerTrustOf(pin.trust));
  const proven = report.verified && report.key !== undefined && report.size !== undefined;
  return done({
    ...verificationOf(report, anchoredOn, at, trust),
    ...(proven ? { lookup: { key: report.key!, found: report.found === true, entries: report.indices?.length ?? 0, size: report.size! } } : {}),
  });
}
