// `akas trust pin`: a trust file (PROTOCOL 8.6, verifier/trust.ts) written from a node's
// own answer, GET /api/node/keys. That is trust on first use, and the file says so (`source:
// "tofu"`, the URL and the time): it pins what this node showed at this moment, and an auditor
// who has the keys from elsewhere (the operator, a release note) should compare them. What can be
// checked here is checked before anything is written: the issuer key history must follow from
// the current key through rotations signed by both keys, and the log key must be endorsed by an
// issuer key; a key list that does not hold is refused (exit 1), never pinned.
import { CliError, type Json } from '../../kit/index.js';

const iso = (ms: unknown) => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null);

/**
 * The `agents` section pinning judges (read by `akas verify judgments --trust`) from their public
 * profiles (GET /api/agents/TAG): the current key from when it became the judge's, open-ended,
 * and each prior key in the window it was the judge's. The node's word, as the rest of the file.
 */
export function agentsSection(profiles: Json[]) {
  return profiles.flatMap((p) => [
    { tag: String(p.tag), publicKey: String(p.signing?.publicKey), validFrom: iso(p.signing?.validFrom), validUntil: null },
    ...((Array.isArray(p.signing?.priorKeys) ? p.signing.priorKeys : []) as Json[]).map((k) => ({
      tag: String(p.tag),
      publicKey: String(k.publicKey),
      validFrom: iso(k.validFrom),
      validUntil: iso(k.validUntil),
    })),
  ]);
}

/**
 * The trust file for a node's key list as fetched from `url` at `now`, with the judges' keys
 * when profiles are given; throws CliError (exit 1) when the list does not hold.
 */
export async function trustFileFrom(keys: Json, url: string, now: number, judges: Json[] = []) {
  const { endorsedLogKey, trustIssuerKeys, parseTrust, TRUST_TYPE } = await import('../../../verifier/index.js');
  const current = String(keys.issuer?.current);
  const trust = trustIssuerKeys(current, keys.issuer);
  const listed = (Array.isArray(keys.issuer?.keys) ? keys.issuer.keys : []) as Json[];
  const unreached = listed.filter((k) => !trust.keys.has(k.did)).map((k) => String(k.did));
  const problems = [...trust.problems, ...(unreached.length ? [`keys no signed rotation reaches from ${current}: ${unreached.join(', ')}`] : [])];
  if (problems.length) throw new CliError('keys_do_not_hold', `The node's issuer key list does not hold, so nothing is pinned: ${problems.join('; ')}`);
  const logKey = endorsedLogKey(keys.log?.endorsement, trust);
  if (!logKey || logKey !== keys.log?.verifierKey)
    throw new CliError(
      'keys_do_not_hold',
      `The node's log key ${String(keys.log?.verifierKey)} is not endorsed by one of its issuer keys, so nothing is pinned`,
    );
  const at = new Date(now).toISOString();
  const doc = {
    type: TRUST_TYPE,
    source: 'tofu',
    url,
    fetchedAt: at,
    note:
      `Trust on first use: written by akas trust pin from ${url}/api/node/keys at ${at}. It pins what that node showed then; ` +
      `compare the issuer and log key${judges.length ? " and the judges' keys" : ''} with ones you have from elsewhere. ` +
      'Add the witnesses you trust to the policy (C2SP tlog-policy).',
    // The windows of the signed chain (the list's own validFrom/validUntil were checked against it).
    issuers: [...trust.keys.values()]
      .sort((a, b) => a.from - b.from)
      .map((k) => ({ did: k.did, validFrom: iso(k.from === -Infinity ? listed.find((x) => x.did === k.did)?.validFrom : k.from), validUntil: iso(k.until) })),
    policy: [
      `# The log of ${url}, as it showed its key at ${at} (trust on first use).`,
      `log ${logKey}`,
      '# Witnesses you trust: witness NAME VKEY [URL], then group/quorum lines (https://c2sp.org/tlog-policy).',
      'quorum none',
      '',
    ].join('\n'),
    ...(judges.length ? { agents: agentsSection(judges) } : {}),
  };
  parseTrust(doc); // what is written is a trust file the verifier reads
  return doc;
}
