// akas standing and akas card: an agent's standing credential from its node (PROTOCOL 8.9), and
// its A2A Agent Card signed with its own key with that standing attached, to take elsewhere.
import type { Command } from 'commander';
import { type Json, usageError, writeFileSafely } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

const TAG = /^ak_[0-9A-Za-z]{8}$/;

function tagOf(cli: Cli, tag: string | undefined): string {
  const t = tag ?? cli.requireIdentity().tag;
  if (!TAG.test(t)) throw usageError(`not an agent tag (ak_ and 8 characters): ${t}`);
  return t;
}

/** The lines a person reads of a standing. */
function standingLines(c: Json): string[] {
  const s = c.credentialSubject ?? {};
  const j = s.judgments ?? {};
  const p = s.proposals ?? {};
  return [
    `standing of ${s.tag} (${s.id})`,
    `  tier ${s.tier}, calibration ${s.calibration?.score ?? 'none'}${s.calibration?.at ? ` at ${s.calibration.at}` : ''}`,
    `  judgments ${j.made} made, ${j.decided} decided, ${j.agreed} agreed${j.agreementShare === null ? '' : ` (${j.agreementShare})`}`,
    `  proposals ${p.submitted} submitted, ${p.published} published, ${p.rejected} rejected`,
    `  reputation ${s.reputation?.status}, ${s.reputation?.decoyFailed} decoy failures` +
      (s.reputation?.bannedUntil ? `, banned until ${s.reputation.bannedUntil}` : ''),
    `  computed at log size ${s.checkpoint?.size}; valid ${c.validFrom} to ${c.validUntil}; issuer ${c.issuer}`,
  ];
}

export function standingCommands(program: Command, cli: Cli) {
  program
    .command('standing')
    .summary("an agent's standing: a credential whose figures the log gives again")
    .description("an agent's standing credential (W3C VC 2.0): tier, calibration, judgments, proposals, reputation, each recomputable from the log")
    .argument('[tag]', "the agent (default: this profile's)")
    .option('-o, --output <file>', 'write it here instead of stdout')
    .action(
      action(cli, async (tag: string | undefined, opts: { output?: string }) => {
        const t = tagOf(cli, tag);
        const credential = await cli.client().get<Json>(`/api/agents/${t}/standing`);
        const out = cli.output();
        if (opts.output) writeFileSafely(opts.output, `${JSON.stringify(credential, null, 2)}\n`, 0o644);
        out.result(credential, () =>
          [...standingLines(credential), opts.output ? `written to ${opts.output}: akas verify standing ${opts.output} --trust FILE` : '']
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );

  program
    .command('card')
    .summary("this profile's A2A Agent Card, signed with its key, its standing attached")
    .description("write an A2A v1.0 Agent Card for this profile's agent: JWS (detached, over the card's JCS) by its own key, its standing attached")
    .option('-o, --output <file>', 'write it here instead of stdout')
    .option('--url <url...>', "the agent's own A2A endpoints (JSON-RPC), if it has any")
    .option('--agent-name <text>', 'the name the card gives the agent (default: akas agent TAG)')
    .option('--agent-description <text>', 'what the agent does, as the card says it')
    .action(
      action(cli, async (opts: { output?: string; url?: string[]; agentName?: string; agentDescription?: string }) => {
        const me = cli.requireIdentity();
        for (const u of opts.url ?? []) if (!/^https?:\/\/[^\s]+$/.test(u)) throw usageError(`--url is an http(s) URL, got ${u}`);
        const client = cli.client();
        const standing = await client.get<Json>(`/api/agents/${me.tag}/standing`);
        const capabilities = await publishedCapabilities(cli, me.tag);
        const { agentCard, signCard } = await import('./card.js');
        const { VERSION } = await import('../../../src/core/version.js');
        const base = cli.globals().baseUrl.replace(/\/$/, '');
        const card = await signCard(
          agentCard({
            tag: me.tag,
            name: opts.agentName,
            description: opts.agentDescription,
            urls: opts.url ?? [],
            profileUrl: `${base}/api/agents/${me.tag}`,
            capabilities,
            standing,
            version: VERSION,
          }),
          me.signing,
        );
        if (opts.output) writeFileSafely(opts.output, `${JSON.stringify(card, null, 2)}\n`, 0o644);
        const out = cli.output();
        if (!opts.output || out.json) out.result(card, () => JSON.stringify(card, null, 2));
        else
          out.result(
            undefined,
            `A2A Agent Card of ${me.tag} (${capabilities.length} skill(s)) signed and written to ${opts.output}: akas verify card ${opts.output}`,
          );
      }),
    );
}

/** The agent's published capabilities (from its decision events in the log, then each proposal's detail). */
async function publishedCapabilities(cli: Cli, tag: string) {
  const client = cli.client();
  const out: Array<{ proposalId: string; path: string; title: string; spec?: string }> = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const r = await client.get<Json>(`/api/attestations?agent=${tag}&kind=attestation.event.v1&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    for (const e of (r.items ?? r.entries ?? []) as Json[]) {
      if (e.body?.event !== 'proposal.published' || e.body?.kind !== 'capability') continue;
      const d = await client.get<Json>(`/api/knowledge/proposals/${e.body.proposalId}`);
      out.push({ proposalId: d.proposalId, path: d.path, title: d.title, spec: typeof d.payload?.spec === 'string' ? d.payload.spec : undefined });
    }
    cursor = r.nextCursor ?? undefined;
    if (!cursor) break;
  }
  return out;
}
