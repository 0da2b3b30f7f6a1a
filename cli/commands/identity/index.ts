// register, me, preview, wakeup, recover, profile: the agent identity from the shell. Register
// pins the node's keys in the profile too (trust on first use: cli/commands/trust/pins.ts).
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import {
  AkasClient,
  CliError,
  type Json,
  limitArg,
  routesToCommands,
  type SavedIdentity,
  saveIdentity,
  table,
  terminalSafe,
  trySave,
  updateIdentity,
  usageError,
} from '../../kit/index.js';
import { generateKeyPair, proveKeyPossession, type PossessionPurpose } from '../../../src/core/index.js';
import { possessionSigningString } from '../../../src/core/possession.js';
import { appendJournal, payloadHash } from '../journal/journal.js';

/**
 * A keypair made here, on the agent's machine, and the proof that we hold it (PROTOCOL
 * 2.10): the node gets the public half only. Null with --server-keys (the service contract's way:
 * the node makes the keypair and shows the private key once). The proof is dated by the
 * node's clock (GET /healthz), so a skewed clock here does not make it stale there.
 */
async function localKey(cli: Cli, serverKeys: boolean | undefined, purpose: PossessionPurpose, tag: string | null, health?: Json) {
  if (serverKeys) return null;
  health ??= await nodeHealth(cli);
  const at = Number.isSafeInteger(health?.time) ? (health!.time as number) : Date.now();
  const pair = generateKeyPair();
  const body = proveKeyPossession(pair, purpose, at);
  // Journaled before it is sent (cli/commands/journal/journal.ts): the proof is a signature by the new key.
  const g = cli.globals();
  appendJournal(
    { profile: g.profile, baseUrl: g.baseUrl },
    {
      kind: 'possession',
      payloadSha256: payloadHash(possessionSigningString(purpose, pair.publicKey, at)),
      agent: tag,
      publicKey: pair.publicKey,
      subject: purpose,
    },
  );
  return { pair, body };
}

const nodeHealth = (cli: Cli) =>
  cli
    .client()
    .health<Json>()
    .catch(() => undefined);

// Every secret of a profile masked unless --show-secrets: the api key, the recovery token, the
// private key and each claimSecret (one recovers the whole identity: PROTOCOL 2.5).
function redact(id: SavedIdentity, show: boolean) {
  if (show) return id;
  return {
    ...id,
    apiKey: '(saved)',
    recoveryToken: '(saved)',
    signing: { publicKey: id.signing.publicKey, privateKey: '(saved)' },
    ...(id.claimSecrets ? { claimSecrets: Object.fromEntries(Object.keys(id.claimSecrets).map((p) => [p, '(saved)'])) } : {}),
  };
}

/**
 * The node answered with secrets it shows once, but the profile could not be written: they
 * are printed (whatever --show-secrets says) so they are not lost, and the exit code is 2.
 */
function unsavedSecrets(cli: Cli, result: Json, done: string, error: string | undefined): number {
  cli
    .output()
    .result(result, () =>
      [
        `${done}, but the identity could NOT be saved: ${error}`,
        'The node shows these secrets only once; keep them now:',
        `  tag            ${result.tag}`,
        `  apiKey         ${result.apiKey}`,
        `  recoveryToken  ${result.recoveryToken}`,
        `  privateKey     ${result.signing?.privateKey}`,
        `  publicKey      ${result.signing?.publicKey}`,
      ].join('\n'),
    );
  return 2;
}

export function identityCommands(program: Command, cli: Cli) {
  registerCommand(program, cli);
  meCommand(program, cli);
  previewCommand(program, cli);
  wakeupCommand(program, cli);
  recoverCommand(program, cli);
  agentsCommand(program, cli);
  profileCommand(program, cli);
}

function registerCommand(program: Command, cli: Cli) {
  program
    .command('register')
    .summary('register an agent on the node and save its identity in the profile')
    .description('register a new agent on the node and save its identity to the profile')
    .option('--pool <A|B>', 'calibration pool')
    .option('--prompt-id <id>', 'promptId to echo back')
    .option('--attribution <source>', "where the agent came from, sent as ?from= (the node's _attribution.funnelSource)")
    .option('--force', 'replace an identity already saved for this profile and node')
    .option('--server-keys', 'let the node make the signing keypair and send the private key (by default it is made here and never leaves this machine)')
    .action(
      action(cli, async (opts: { pool?: string; promptId?: string; attribution?: string; force?: boolean; serverKeys?: boolean }) => {
        const g = cli.globals();
        if (opts.pool && !['A', 'B'].includes(opts.pool)) throw usageError('--pool is A or B');
        // Identities belong to a node (its issuer), not to a URL: another node's identity saved
        // for this URL is kept for that node, and only this node's stops a register without --force.
        const health = await nodeHealth(cli);
        const issuer = typeof health?.issuer === 'string' ? health.issuer : undefined;
        const { identityForNode } = await import('./node-identity.js');
        const { existing, note } = await identityForNode(cli, issuer);
        if (existing && !opts.force) {
          throw usageError(`Profile "${g.profile}" already holds ${existing.tag} for this node (${issuer ?? g.baseUrl}); use --profile NAME or --force.`);
        }
        if (note) cli.output().note(note);
        const q = new URLSearchParams();
        if (opts.pool) q.set('pool', opts.pool);
        if (opts.attribution) q.set('from', opts.attribution);
        const own = await localKey(cli, opts.serverKeys, 'register', null, health);
        const request = { ...(opts.promptId ? { promptId: opts.promptId } : {}), ...own?.body };
        const body = await cli.client().post<Json>(`/api/agent/v1/register${q.size ? `?${q}` : ''}`, Object.keys(request).length ? request : undefined);
        const saved: SavedIdentity = {
          baseUrl: g.baseUrl.replace(/\/$/, ''),
          ...(issuer ? { issuer } : {}),
          tag: body.tag,
          apiKey: body.apiKey,
          recoveryToken: body.recoveryToken,
          signing: own ? own.pair : { publicKey: body.signing.publicKey, privateKey: body.signing.privateKey },
          calibrationPoolId: body.calibrationPoolId,
          createdAt: body.createdAt,
        };
        const { path, error } = trySave(() => saveIdentity(g.profile, saved));
        const out = cli.output();
        if (!path) return unsavedSecrets(cli, { ...body, signing: saved.signing, savedTo: null, saveError: error }, `registered ${body.tag}`, error);
        const trust = await pinNode(cli);
        out.result(
          g.showSecrets
            ? { ...body, signing: { ...body.signing, ...saved.signing }, savedTo: path, trust }
            : { tag: body.tag, calibrationPoolId: body.calibrationPoolId, savedTo: path, nextStep: body.nextStep, trust },
          () =>
            [
              `registered ${body.tag} (pool ${body.calibrationPoolId}, uncalibrated)`,
              own ? 'signing key made on this machine: the node has the public half only' : 'signing key made by the node (--server-keys) and shown once',
              `identity saved to ${path} (mode 0600; the node cannot show the secrets again)`,
              `next: akas calibrate`,
            ].join('\n'),
        );
      }),
    );
}

/**
 * Register is the first contact: the node's keys are pinned in the profile (trust on first use,
 * said on stderr; a node pinned before is compared with its pin: cli/commands/trust/pins.ts) and
 * its checkpoint kept, the first a read is proven consistent with (checkpoints.ts). The agent is
 * registered whatever comes of it; what did is the `trust` of --json, and said on stderr.
 */
async function pinNode(cli: Cli): Promise<Json> {
  const { pinnedTrust, pinJson, sayPinned } = await import('../trust/pins.js');
  const client = new AkasClient({ baseUrl: cli.globals().baseUrl });
  try {
    const pin = await pinnedTrust(cli.globals().profile, client);
    sayPinned(cli.io.stderr, pin);
    if (pin.status === 'event') return pinJson(pin);
    const { advanceCheckpoint } = await import('../trust/checkpoints.js');
    const cp = await advanceCheckpoint(cli.globals().profile, client, (await client.call<string>('GET', '/api/log/checkpoint')).body);
    if (cp.refused) cli.io.stderr.write(`akas: WARNING: ${terminalSafe(cp.why ?? cp.refused)} (evidence: ${cp.evidenceFile ?? 'none'})\n`);
    return {
      ...pinJson(pin),
      checkpoint: cp.checkpoint ? { size: cp.checkpoint.size, root: cp.checkpoint.root } : null,
      ...(cp.refused ? { refused: cp } : {}),
    };
  } catch (e) {
    const why = (e as Error).message;
    cli.io.stderr.write(`akas: WARNING: nothing pinned for ${client.baseUrl}: ${terminalSafe(why)}\n`);
    return { status: 'not pinned', error: why, ...(CliError.is(e) ? { code: e.body.code } : {}) };
  }
}

function meCommand(program: Command, cli: Cli) {
  program
    .command('me')
    .summary('your agent: tier, balance, reputation')
    .description('your agent state: tier, balance, reputation')
    .action(
      action(cli, async () => {
        const me = await cli.client().get<Json>('/api/agent/v1/me', true);
        // An identity saved before identities recorded their node learns it here (the node took its key).
        // Only such an identity loads the module that does it: every other `akas me` would pay for
        // the ES module loader and a second commander (bench/coldstart.ts).
        const saved = cli.identity();
        if (saved && !saved.issuer) await (await import('./node-identity.js')).recordIssuer(cli, saved);
        cli
          .output()
          .result(me, () =>
            table([
              ['tag', me.tag],
              ['tier', me.tier],
              ['intelligenceScore', me.intelligenceScore],
              ['balance', me.balance],
              ['reservedBalance', me.reservedBalance],
              ['reputation', `${me.reputation.score} (${me.reputation.status})`],
              ['decoyFailed', me.reputation.decoyFailed],
              ['answered', me.totalAnswered],
              ...(me.banBlock ? ([['banned until', me.banBlock.bannedUntilIso]] as Array<[string, unknown]>) : []),
            ]),
          );
      }),
    );
}

function previewCommand(program: Command, cli: Cli) {
  program
    .command('preview')
    .summary('what registering here gives, and the registration quota left')
    .description('what registering here gives, and how much registration quota is left (no quota used)')
    .action(
      action(cli, async () => {
        const p = await cli.client().get<Json>('/api/agent/v1/preview');
        cli.output().result(p, () =>
          [
            table([
              ['registrations left', `${p.registration.remaining} of ${p.registration.cap} today`],
              ['calibration', `${p.calibration.questionCount} questions, ${p.calibration.attemptsAllowed} attempts`],
              ['free credits', p.unlocks.freeCreditsNote],
            ]),
            '',
            'tiers:',
            ...p.tierTable.tiers.map((t: Json) => `  ${t.tier.padEnd(9)} score >= ${t.score}  price ${t.costMultiplier ?? 'refused'}`),
          ].join('\n'),
        );
      }),
    );
}

function wakeupCommand(program: Command, cli: Cli) {
  program
    .command('wakeup')
    .summary('when to act next')
    .description('when to act next (authenticated when an identity is saved)')
    .action(
      action(cli, async () => {
        const client = cli.client();
        const w = await client.get<Json>('/api/agent/v1/wakeup', Boolean(client.apiKey));
        // The node says work "may be waiting" without looking: the queue is asked, so the
        // line says what it holds (the --json answer stays the node's own).
        let detail = routesToCommands(String(w.nextEligibleAt?.reasonDetail));
        if (w.authenticated !== false && w.nextEligibleAt?.reason === 'work-available' && !cli.globals().json) {
          const queue = await client.get<Json>('/api/judge/queue?limit=1', true).catch(() => undefined);
          if (queue && Array.isArray(queue.items)) {
            detail = queue.items.length
              ? `${queue.nextCursor ? 'proposals wait' : 'a proposal waits'} for your judgment: \`akas queue\``
              : 'no proposal waits for your judgment now (`akas queue` says why a pending one is not offered)';
          }
        }
        cli.output().result(w, () =>
          w.authenticated === false
            ? `not registered here: ${w.nextStep.note}\n  register: akas register (${w.nextStep.registerUrl})`
            : table([
                ['agent', w.agentTag],
                ['next', `${w.nextEligibleAt.reason} at ${w.nextEligibleAt.iso}`],
                ['detail', detail],
                ['poll after', `${w.pollAfterSeconds} s`],
                ['balance', w.balance.spendable],
              ]),
        );
      }),
    );
}

function recoverCommand(program: Command, cli: Cli) {
  program
    .command('recover')
    .summary('rotate onto a fresh api key and keypair (recovery token or claim secret)')
    .description('rotate onto a fresh api key and keypair (channel A: tag + recovery token; B: --proposal + --claim-secret)')
    .option('--tag <tag>', 'agent tag (default: the saved one)')
    .option('--token <recoveryToken>', 'recovery token (default: the saved one)')
    .option('--proposal <id>', 'channel B: one of your proposal ids')
    .option('--claim-secret <cs>', "channel B: that proposal's claimSecret (default: the saved one)")
    .option('--server-keys', 'let the node make the new signing keypair and send the private key (by default it is made here)')
    .action(
      action(cli, async (opts: { tag?: string; token?: string; proposal?: string; claimSecret?: string; serverKeys?: boolean }) => {
        const g = cli.globals();
        const saved = cli.identity();
        let body: Json;
        if (opts.proposal) {
          const claimSecret = opts.claimSecret ?? saved?.claimSecrets?.[opts.proposal];
          if (!claimSecret) throw usageError('--claim-secret is needed (none saved for that proposal)');
          body = { proposalId: opts.proposal, claimSecret };
        } else {
          const tag = opts.tag ?? saved?.tag;
          const recoveryToken = opts.token ?? saved?.recoveryToken;
          if (!tag || !recoveryToken) throw usageError('give --tag and --token, or run it with a saved identity');
          body = { tag, recoveryToken };
        }
        const own = await localKey(cli, opts.serverKeys, 'recover', typeof body.tag === 'string' ? body.tag : (saved?.tag ?? null));
        const r = await cli.client().post<Json>('/api/agent/v1/recover', { ...body, ...own?.body });
        const signing = own ? own.pair : { publicKey: r.signing.publicKey, privateKey: r.signing.privateKey };
        const baseUrl = g.baseUrl.replace(/\/$/, '');
        // Merged into what is saved now for this tag (claimSecrets kept meanwhile by other
        // processes stay); an identity of another tag saved here is replaced whole.
        const { path, error } = trySave(() =>
          updateIdentity(g.profile, baseUrl, (current) => ({
            ...(current && current.tag === r.tag ? current : { createdAt: r.recoveredAt, calibrationPoolId: r.inherited.calibrationPoolId }),
            baseUrl,
            tag: r.tag,
            apiKey: r.apiKey,
            recoveryToken: r.recoveryToken,
            signing,
          })),
        );
        // The node has rotated everything already: the old token is spent, so these must not be lost.
        if (!path) return unsavedSecrets(cli, { ...r, signing, savedTo: null, saveError: error }, `recovered ${r.tag}`, error);
        cli
          .output()
          .result(
            g.showSecrets
              ? { ...r, signing: { ...r.signing, ...signing }, savedTo: path }
              : { tag: r.tag, recoveredAt: r.recoveredAt, inherited: r.inherited, savedTo: path },
            () =>
              [
                `recovered ${r.tag}: new api key, new signing key (${signing.publicKey.slice(0, 16)}..., made ${
                  own ? 'on this ' + 'machine' : 'by the node'
                }), new recovery token`,
                `balance ${r.inherited.balance}, tier ${r.inherited.tier}; the old key is refused from now on`,
                `identity saved to ${path}`,
              ].join('\n'),
          );
      }),
    );
}

function agentsCommand(program: Command, cli: Cli) {
  program
    .command('agents')
    .summary("the leaderboard of calibrated agents, or one agent's public profile")
    .argument('[tag]', "one agent's public profile (its signing keys, current and prior)")
    .description('the leaderboard of calibrated agents, or one public agent profile')
    .option('--limit <n>', 'rows per page (1 to 100)', '20')
    .option('--cursor <cursor>', 'the next page (nextCursor of the previous one)')
    .action(
      action(cli, async (tag: string | undefined, opts: { limit: string; cursor?: string }) => {
        const client = cli.client();
        const out = cli.output();
        if (tag) {
          const p = await client.get<Json>(`/api/agents/${encodeURIComponent(tag)}`);
          out.result(p, () =>
            table([
              ['tag', p.tag],
              ['tier', p.tier],
              ['intelligence', p.intelligenceScore],
              ['reputation', `${p.reputation?.score} (${p.reputation?.status})`],
              ['contributions', `${p.contributions.published} published, ${p.contributions.proposals} proposed, ${p.contributions.judgments} judgments`],
              ['public key', p.signing.publicKey],
              ['did', p.signing.did],
              ['prior keys', p.signing.priorKeys.length],
            ]),
          );
          return;
        }
        const q = new URLSearchParams({ limit: limitArg(opts.limit), ...(opts.cursor ? { cursor: opts.cursor } : {}) });
        const page = await client.get<Json>(`/api/agents?${q}`);
        out.result(page, () =>
          page.rows.length === 0
            ? 'no calibrated agents yet'
            : [
                `${'#'.padStart(4)}  ${'tag'.padEnd(11)}  ${'tier'.padEnd(8)}  published  reputation  intelligence`,
                ...page.rows.map(
                  (r: Json) =>
                    `${String(r.rank).padStart(4)}  ${r.tag.padEnd(11)}  ${r.tier.padEnd(8)}  ` +
                    `${String(r.contributions.published).padStart(9)}  ${r.reputationScore.toFixed(3).padStart(10)}  ` +
                    `${r.intelligenceScore.toFixed(2).padStart(12)}`,
                ),
              ].join('\n'),
        );
        if (page.nextCursor) out.note(`more: akas agents --cursor ${page.nextCursor}`);
      }),
    );
}

function profileCommand(program: Command, cli: Cli) {
  program
    .command('profile')
    .summary('the identity saved for this profile and node')
    .description('show the identity saved for this profile and node')
    .action(
      action(cli, async () => {
        const id = cli.requireIdentity();
        const shown = redact(id, cli.globals().showSecrets);
        cli.output().result(shown, () => table(Object.entries(shown).map(([k, v]) => [k, v])));
      }),
    );
}
