// "All judgments of" a proposal, proven (issue 51, 2; PROTOCOL 9.10): a proposal read lists the
// judgments the node says it counted, and only the log says which it recorded. The reader asks
// the lookup of `proposal:ID` with its entries, checks it under the pinned log key (verifier
// lookup: the map proof, the logged root under a checkpoint, each entry shown), and holds every
// `judgment.recorded` entry about the proposal against the read: one the read leaves out fails
// `index.complete`. The answer says as of which log size it is complete. A node that serves no
// index leaves the completeness unchecked, said so; it never makes the read fail or pass.
import { verifyLookup } from '../../../verifier/lookup.js';
import type { Check } from '../../../verifier/report.js';
import type { Trust } from '../../../verifier/index.js';
import { type AkasClient, CliError, type Json } from '../../kit/index.js';

/** Entries a lookup page carries at most (the route's bound). */
const PAGE = 100;
/** Pages read at most: 10,000 entries about one proposal is far past any real one. */
const MAX_PAGES = 100;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the completeness check found: a check to add to the read's, and what it proved. */
export interface Completeness {
  check: Omit<Check, 'layer'> & { id: 'index.complete' };
  /** Proven complete as of this log size, with this many judgments recorded (absent when not proven). */
  asOf?: { size: number; judgments: number };
}

/** The judgment ids the log records of a proposal, by its lookup proven under the pinned trust; a string says why it could not be read. */
async function loggedJudgments(client: AkasClient, trust: Trust, id: string): Promise<{ size: number; ids: Set<string> } | string> {
  const ids = new Set<string>();
  const route = `/api/index/${encodeURIComponent(`proposal:${id}`)}`;
  let size: number | undefined;
  for (let page = 0, offset = 0; page < MAX_PAGES; page++) {
    let answer: Json;
    try {
      answer = await client.get<Json>(`${route}?entries=true&offset=${offset}&limit=${PAGE}`);
    } catch (e) {
      if (!CliError.is(e)) throw e;
      return `the node answers no lookup (${e.message})`;
    }
    const report = verifyLookup(answer, trust.policy.logs);
    if (!report.verified || !report.anchored) {
      const failed = report.checks.filter((c) => c.valid !== true).map((c) => `${c.id}: ${c.why ?? ''}`);
      return `the lookup of proposal:${id} does not hold (${failed.join('; ').slice(0, 300)})`;
    }
    if (size !== undefined && report.size !== size) return 'the lookup moved while it was read: read it again';
    size = report.size ?? 0;
    const entries = Array.isArray(answer.entries) ? answer.entries : [];
    for (const e of entries) {
      const body = isObject(e) && isObject(e.body) ? e.body : {};
      if (body.event === 'judgment.recorded' && body.proposalId === id && typeof body.judgmentId === 'string') ids.add(body.judgmentId);
    }
    offset += entries.length;
    if (entries.length === 0 || offset >= (report.indices?.length ?? 0)) return { size, ids };
  }
  return `more than ${MAX_PAGES * PAGE} entries mention proposal ${id}`;
}

/** Holds a proposal read's judgments against the log's (null for a read that is no proposal's). */
export async function judgmentsComplete(client: AkasClient, trust: Trust, doc: Json): Promise<Completeness | null> {
  const id = doc.proposalId;
  if (typeof id !== 'string' || !Array.isArray(doc.judgments)) return null;
  const what = 'every judgment the log records of the proposal is in the read';
  const logged = await loggedJudgments(client, trust, id);
  if (typeof logged === 'string') return { check: { id: 'index.complete', what, valid: null, why: `not checked: ${logged}` } };
  const shown = new Set(doc.judgments.map((j) => (isObject(j) ? j.judgmentId : undefined)));
  const missing = [...logged.ids].filter((j) => !shown.has(j));
  const asOf = { size: logged.size, judgments: logged.ids.size };
  if (missing.length)
    return {
      check: {
        id: 'index.complete',
        what,
        valid: false,
        why: `the log records ${missing.join(', ')}, which the read leaves out (as of log size ${logged.size})`,
      },
    };
  return { check: { id: 'index.complete', what, valid: true, why: `all ${logged.ids.size} judgment(s) the log records as of size ${logged.size}` }, asOf };
}
