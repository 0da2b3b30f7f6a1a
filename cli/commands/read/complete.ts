// "All judgments of" a proposal, "all evals of" an artifact, proven (issue 51, 2; PROTOCOL 9.10,
// 12.5): a read lists what the node says it holds, and only the log says what it recorded. The
// reader asks the lookup of the read's key with its entries, checks it under the pinned log key
// (verifier lookup: the map proof, the logged root under a checkpoint, each entry shown with its
// own inclusion proof under that checkpoint), and
// holds what the log records against the read:
// - a proposal (`proposal:ID`): every `judgment.recorded` entry about it must be in the read;
// - an artifact (`sha256:<its bytes>`, verifier/complete.ts): every eval publication naming its path and
//   bytes must be in the read, and each eval shown must be one the log records, as recorded.
// One the read leaves out fails `index.complete`. The answer says as of which log size it is
// complete. A node that serves no index leaves the completeness unchecked, said so; it never
// makes the read fail or pass.
import { type Completeness, provenLookupEntries, type ReadJson } from '../../../verifier/complete.js';
import type { Trust } from '../../../verifier/index.js';
import { type AkasClient, CliError, type Json } from '../../kit/index.js';

export type { Completeness };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a node route through the CLI's client for the verifier's lookups: a refusal or an unreachable node is said (a string), never thrown. */
export const lookupReader =
  (client: AkasClient): ReadJson =>
  async (route) => {
    try {
      return await client.get<Json>(route);
    } catch (e) {
      if (!CliError.is(e)) throw e;
      return e.message;
    }
  };

/** The entries the log files under a key, by its lookup proven under the pinned trust (verifier/complete.ts); a string says why it could not be read. */
const provenEntries = (client: AkasClient, trust: Trust, key: string) => provenLookupEntries(lookupReader(client), trust.policy.logs, key);

/** Holds a proposal read's judgments against the log's (null for a read that is no proposal's). */
export async function judgmentsComplete(client: AkasClient, trust: Trust, doc: Json): Promise<Completeness | null> {
  const id = doc.proposalId;
  if (typeof id !== 'string' || !Array.isArray(doc.judgments)) return null;
  const what = 'every judgment the log records of the proposal is in the read';
  const logged = await provenEntries(client, trust, `proposal:${id}`);
  if (typeof logged === 'string') return { checks: [{ id: 'index.complete', what, valid: null, why: `not checked: ${logged}` }] };
  const ids = new Set<string>();
  for (const { body } of logged.entries)
    if (body.event === 'judgment.recorded' && body.proposalId === id && typeof body.judgmentId === 'string') ids.add(body.judgmentId);
  const shown = new Set(doc.judgments.map((j) => (isObject(j) ? j.judgmentId : undefined)));
  const missing = [...ids].filter((j) => !shown.has(j));
  if (missing.length)
    return {
      checks: [
        {
          id: 'index.complete',
          what,
          valid: false,
          why: `the log records ${missing.join(', ')}, which the read leaves out (as of log size ${logged.size})`,
        },
      ],
    };
  return {
    checks: [{ id: 'index.complete', what, valid: true, why: `all ${ids.size} judgment(s) the log records as of size ${logged.size}` }],
    asOf: { size: logged.size, judgments: ids.size },
  };
}
