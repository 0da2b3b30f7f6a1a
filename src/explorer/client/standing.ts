// An agent's standing on its page (PROTOCOL 8.9), checked in this browser: the standing credential
// the node issues, under the issuer this browser pinned, its status in the node's lists, its
// checkpoint under the pinned log key, and every figure computed again from the log's entries
// [0, size), fetched from this node, by the verifier's browser build (verifyStanding): the same
// code `akas verify standing --from-node` runs. A log too long to read here leaves the figures
// "not recomputed", said so, never good.
import { $$, getJson, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { setState, verdict } from './results.js';
import { readStatus } from './status.js';
import type { Verifier } from './verifier.js';

/** The most entries this page reads to recompute the figures (50 pages of the log's largest page). */
const MAX_ENTRIES = 50_000;
const PAGE = 1000;

async function entriesUpTo(size: number): Promise<unknown[] | undefined> {
  if (size > MAX_ENTRIES) return undefined;
  const out: unknown[] = [];
  for (let start = 0; start < size; start += PAGE) {
    const page = await getJson<{ entries: unknown[] }>(`/api/log/entries?start=${start}&end=${Math.min(size, start + PAGE)}`);
    if (!page.entries.length) break;
    out.push(...page.entries);
  }
  return out;
}

/** The figures of a standing this page shows (PROTOCOL 8.9). */
interface Figures {
  tier?: string;
  judgments?: { made?: number; agreementShare?: number | null };
  proposals?: { submitted?: number; published?: number };
  reputation?: { status?: string };
  checkpoint?: { size?: number };
}

/** What a standing says, in one line. */
function figuresLine(s: Figures): string {
  const j = s.judgments ?? {};
  const share = typeof j.agreementShare === 'number' ? ` (${Math.round(j.agreementShare * 100)}% agreed with the decision)` : '';
  return (
    `${s.tier}, ${j.made ?? 0} judgment(s)${share}, ${s.proposals?.published ?? 0} of ${s.proposals?.submitted ?? 0} proposal(s) published, ` +
    `reputation ${s.reputation?.status}`
  );
}

export async function checkAgentStanding(V: Verifier, keys: Keys) {
  await Promise.all(
    $$('[data-verify-agent-standing]').map(async (e) => {
      const tag = e.dataset.verifyAgentStanding!;
      setState(e, 'pending', 'checking…');
      try {
        const credential = await getJson<Json>(`/api/agents/${encodeURIComponent(tag)}/standing`);
        const subject = (credential.credentialSubject ?? {}) as Figures;
        const size = Number(subject.checkpoint?.size);
        const [trust, entries, health] = await Promise.all([V.trustIssuerKeys(keys.issuer, keys.issuerKeys), entriesUpTo(size), getJson<Json>('/healthz')]);
        // The node issued it just now, by its clock: its validity window is checked at the node's time (PROTOCOL 2.10: /healthz time).
        const at = typeof health.time === 'number' ? health.time : Date.now();
        const { sources } = await readStatus(V, [credential], { trust, issuers: [keys.issuer], at }, false);
        const r = await V.verifyStanding(credential, { at, trust, logKeys: [keys.logKey], entries, status: sources });
        const v = verdict(r.checks);
        const said = `${figuresLine(subject)}; every figure recomputed from log entries 0 to ${size - 1}`;
        setState(e, v.state, v.state === 'ok' ? said : v.text, v.detail);
      } catch (err) {
        setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
      }
    }),
  );
}
