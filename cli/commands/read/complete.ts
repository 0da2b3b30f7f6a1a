// "All judgments of" a proposal, "all evals of" an artifact, proven (issue 51, 2; PROTOCOL 9.10,
// 12.5): a read lists what the node says it holds, and only the log says what it recorded. The
// reader asks the lookup of the read's key with its entries, checks it under the pinned log key
// (verifier lookup: the map proof, the logged root under a checkpoint, each entry shown with its
// own inclusion proof under that checkpoint), and
// holds what the log records against the read:
// - a proposal (`proposal:ID`): every `judgment.recorded` entry about it must be in the read;
// - an artifact (`sha256:<its bytes>`, ./evals.ts): every eval publication naming its path and
//   bytes must be in the read, and each eval shown must be one the log records, as recorded.
// One the read leaves out fails `index.complete`. The answer says as of which log size it is
// complete. A node that serves no index leaves the completeness unchecked, said so; it never
// makes the read fail or pass.
import { verifyLookup } from '../../../verifier/lookup.js';
import type { Check } from '../../../verifier/report.js';
import type { Trust } from '../../../verifier/index.js';
import { type AkasClient, CliError, type Json } from '../../kit/index.js';

/** Entries a lookup page carries at most (the route's bound). */
const PAGE = 100;
/** Pages read at most: 10,000 entries about one proposal or one artifact's bytes is far past any real one. */
const MAX_PAGES = 100;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a completeness check found: the checks to add to the read's, and what they proved. */
export interface Completeness {
  checks: Array<Omit<Check, 'layer'>>;
  /** Proven complete as of this log size, with this many judgments (a proposal) or evals (an artifact) recorded; absent when not proven. */
  asOf?: { size: number; judgments?: number; evals?: number };
}

/** An entry a lookup showed: its kind and body. */
export interface ShownEntry {
  kind: unknown;
  body: Json;
}

/** The entries the log files under a key, by its lookup proven under the pinned trust; a string says why it could not be read. */
export async function provenEntries(client: AkasClient, trust: Trust, key: string): Promise<{ size: number; entries: ShownEntry[] } | string> {
  const shown: ShownEntry[] = [];
  const route = `/api/index/${encodeURIComponent(key)}`;
  let size: number | undefined;
  for (let page = 0, offset = 0; page < MAX_PAGES; page++) {
    let answer: Json;
    try {
      answer = await client.get<Json>(`${route}?entries=true&proofs=true&offset=${offset}&limit=${PAGE}`);
    } catch (e) {
      if (!CliError.is(e)) throw e;
      return `the node answers no lookup (${e.message})`;
    }
    const report = verifyLookup(answer, trust.policy.logs);
    if (!report.verified || !report.anchored) {
      const failed = report.checks.filter((c) => c.valid !== true).map((c) => `${c.id}: ${c.why ?? ''}`);
      return `the lookup of ${key} does not hold (${failed.join('; ').slice(0, 300)})`;
    }
    // Each entry must be the log's own at its index (its inclusion proof), not only one that hashes to itself.
    if (!report.entriesIncluded) return `the lookup of ${key} shows its entries without their inclusion proofs`;
    if (size !== undefined && report.size !== size) return 'the lookup moved while it was read: read it again';
    size = report.size ?? 0;
    const entries = Array.isArray(answer.entries) ? answer.entries : [];
    for (const e of entries) shown.push({ kind: isObject(e) ? e.kind : undefined, body: isObject(e) && isObject(e.body) ? e.body : {} });
    offset += entries.length;
    if (entries.length === 0 || offset >= (report.indices?.length ?? 0)) return { size, entries: shown };
  }
  return `more than ${MAX_PAGES * PAGE} entries mention ${key}`;
}

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
