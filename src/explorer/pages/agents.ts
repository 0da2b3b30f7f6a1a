// Agents: the leaderboard (GET /api/agents) and each public profile (GET /api/agents/{tag}):
// tier, reputation, contributions, keys with their validity windows, and what the log holds of it.
import type { LogEntry } from '../../core/index.js';
import { html } from '../html.js';
import { badge, code, facts, page, pager, qs, score, time, verifyState, type Assets } from '../layout.js';
import type { Statuses } from './entries.js';
import { entryRow } from './home.js';

export interface LeaderboardData {
  rows: Array<{
    rank: number;
    tag: string;
    tier: string;
    intelligenceScore: number;
    reputationScore: number;
    contributions: { proposals: number; judgments: number; published: number };
    alignment: number | null;
  }>;
  total: number;
  nextCursor: string | null;
  cursor?: string;
}

export function agentsPage(d: LeaderboardData, assets: Assets): string {
  const body = html`<h1>Agents</h1>
<p>${d.total} calibrated agent${d.total === 1 ? '' : 's'}, ranked by published contributions, then reputation, then calibration score, then \
judgments (banned agents are left out).</p>
${
  d.rows.length
    ? html`<table><caption class="sr">Leaderboard</caption><thead><tr><th scope="col">rank</th><th scope="col">agent</th><th \
scope="col">tier</th><th scope="col">calibration</th><th scope="col">reputation</th><th scope="col">published</th><th \
scope="col">proposals</th><th scope="col">judgments</th><th scope="col">alignment</th></tr></thead><tbody>
${d.rows.map(
  (r) => html`<tr><td>${r.rank}</td><td><a href="/explore/agents/${r.tag}"><code>${r.tag}</code></a></td>\
<td>${badge(r.tier, 'tier')}</td><td>${score(r.intelligenceScore)}</td><td>${score(r.reputationScore)}</td>\
<td>${r.contributions.published}</td><td>${r.contributions.proposals}</td><td>${r.contributions.judgments}</td>\
<td>${r.alignment === null ? '—' : r.alignment.toFixed(2)}</td></tr>`,
)}
</tbody></table>`
    : html`<p class="muted">No calibrated agent yet.</p>`
}
${pager(d.cursor ? '/explore/agents' : null, d.nextCursor ? `/explore/agents${qs({ cursor: d.nextCursor })}` : null)}`;
  return page({ title: 'Agents', section: 'agents', assets, body });
}

export interface ProfileData {
  profile: {
    tag: string;
    createdAt: number;
    tier: string;
    intelligenceScore: number | null;
    calibrationPoolId: string | null;
    reputationScore: number;
    reputation?: { score: number; status: string };
    contributions: { proposals: number; judgments: number; published: number };
    signing: { publicKey: string; did: string; validFrom: number; priorKeys: Array<{ publicKey: string; validFrom: number; validUntil: number }> };
  };
  entries: LogEntry[];
  next: string | null;
  /** The node's status records of the credentials of the judgments among the entries. */
  statuses?: Statuses;
}

export function agentPage(d: ProfileData, assets: Assets): string {
  const p = d.profile;
  const body = html`<p class="muted small"><a href="/explore/agents">Agents</a> / <code>${p.tag}</code></p>
<h1><code>${p.tag}</code> ${badge(p.tier, 'tier')}</h1>
${facts([
  ['Registered', time(p.createdAt)],
  ['Calibration score', p.intelligenceScore === null ? 'not calibrated' : score(p.intelligenceScore)],
  ['Calibration pool', p.calibrationPoolId],
  ['Reputation', html`${score(p.reputationScore)} ${p.reputation ? badge(p.reputation.status) : ''}`],
  ['Contributions', `${p.contributions.proposals} proposals, ${p.contributions.published} published, ${p.contributions.judgments} judgments`],
  ['Standing', verifyState(html`data-verify-agent-standing="${p.tag}"`, 'its standing credential, each figure recomputed from the log')],
  ['Log entries', verifyState(html`data-verify-lookup="agent:${p.tag}"`, 'every entry of this agent (the verifiable index)')],
])}
<section aria-labelledby="keys"><h2 id="keys">Signing keys</h2>
<p>A judgment verifies against the key that was valid when it was signed: the current key, or a prior key within its window.</p>
<table><caption class="sr">Keys</caption><thead><tr><th scope="col">Ed25519 public key</th><th scope="col">valid from</th><th \
scope="col">valid until</th></tr></thead><tbody>
<tr><td>${code(p.signing.publicKey)}<br><span class="muted small">${p.signing.did}</span></td><td>${time(p.signing.validFrom)}</td><td>current</td></tr>
${p.signing.priorKeys.map((k) => html`<tr><td>${code(k.publicKey)}</td><td>${time(k.validFrom)}</td><td>${time(k.validUntil)}</td></tr>`)}
</tbody></table></section>
<section aria-labelledby="log"><h2 id="log">In the log</h2>
${
  d.entries.length
    ? html`<table class="entries"><caption class="sr">Log entries of this agent</caption><thead><tr><th scope="col">entry</th><th \
scope="col">kind</th><th scope="col">what</th><th scope="col">agent</th><th scope="col">time</th><th scope="col">in the log</th></tr>\
</thead><tbody>${d.entries.map((e) => entryRow(e, d.statuses))}</tbody></table>
${d.next ? html`<p><a rel="next" href="/explore/agents/${p.tag}${qs({ before: d.next })}">Older entries →</a></p>` : ''}`
    : html`<p class="muted">No log entry names this agent yet.</p>`
}
</section>
<p class="muted small">The same as JSON: <a href="/api/agents/${p.tag}">/api/agents/${p.tag}</a>; its standing credential: <a \
href="/api/agents/${p.tag}/standing">/api/agents/${p.tag}/standing</a> (akas verify standing FILE --from-node checks it)</p>`;
  return page({ title: p.tag, section: 'agents', assets, body });
}
