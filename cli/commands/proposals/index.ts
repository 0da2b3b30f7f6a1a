// propose, judge, withdraw, queue: proposals and judging from the shell (PROTOCOL 6, 7); a
// proposal is read with `akas show ID` (showProposal, here). `akas judge` signs locally with the
// profile's private key (cli/commands/proposals/judge-signing.ts); `akas propose` keeps the
// claimSecret the node returns in the profile, for `akas recover --proposal`. The queue's ink
// view is imported only on a terminal without --json.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, type Io, type Json, limitArg, reasonOf, routesToCommands, table, trySave, updateIdentity, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { KIND_NAMES, kindOfId, parseKind, parseScore, rationaleProblem, RATIONALE_MAX, SCORE_NAMES, type Scores } from './judge-input.js';

/** Io may carry a stdin (tests pass one); otherwise the process's. */
type IoWithStdin = Io & { stdin?: NodeJS.ReadableStream };

const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

function kindArg(name: string) {
  const kind = parseKind(name);
  if (!kind) throw usageError(`unknown kind "${name}"; one of: ${KIND_NAMES.join(', ')}`);
  return kind;
}

function proposalIdArg(id: string) {
  const kind = kindOfId(id);
  if (!kind) throw usageError(`not a proposal id: ${id} (a kind prefix such as prop_, cprop_, gprop_ and 16 lowercase hex)`);
  return kind;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

// The payload file (or stdin for "-"), parsed: anything unreadable or not JSON is exit 2,
// since the node never saw it; whether the JSON is a valid payload is the node's to say (1).
async function readPayload(cli: Cli, file: string): Promise<unknown> {
  let text: string;
  try {
    text = file === '-' ? await readStream((cli.io as IoWithStdin).stdin ?? process.stdin) : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${file === '-' ? 'stdin' : file}: ${reasonOf(e)}`, { path: file });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CliError('invalid_json', `${file === '-' ? 'stdin' : file} is not JSON: ${(e as Error).message}`, { path: file });
  }
}

// Keeps a proposal's claimSecret in the profile (recover channel B), added to what is saved
// at that moment, so a key rotated or a secret kept by another process is not overwritten.
function keepClaimSecret(cli: Cli, proposalId: string, claimSecret: string): { path?: string; error?: string } {
  const g = cli.globals();
  return trySave(() =>
    updateIdentity(g.profile, g.baseUrl.replace(/\/$/, ''), (current) =>
      current ? { ...current, claimSecrets: { ...current.claimSecrets, [proposalId]: claimSecret } } : undefined,
    ),
  );
}

interface JudgeOptions {
  accuracy?: string;
  clarity?: string;
  compression?: string;
  sources?: string;
  rationale?: string;
  dryRun?: boolean;
}

function scoresFrom(opts: JudgeOptions): Scores {
  // Every missing flag is named at once: one run to learn them all, not one run per flag.
  const missing = [...SCORE_NAMES.filter((name) => opts[name] === undefined).map((n) => `--${n}`), ...(opts.rationale === undefined ? ['--rationale'] : [])];
  if (missing.length)
    throw usageError(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required: ` +
        `the four scores are numbers from 0 to 1, the rationale at most ${RATIONALE_MAX} characters`,
    );
  const scores = {} as Scores;
  for (const name of SCORE_NAMES) {
    const text = opts[name]!;
    const n = parseScore(text);
    if (n === null) throw usageError(`--${name} must be a number from 0 to 1, got "${text}"`);
    scores[name] = n;
  }
  return scores;
}

function judgmentsTable(judgments: Json[]): string {
  return judgments
    .map((j) => {
      const s = j.scores ?? {};
      const dims = SCORE_NAMES.map((n) => s[n]).join('/');
      return `  ${String(j.agentTag).padEnd(12)} composite ${Number(j.composite).toFixed(2)}  (${dims})  ${j.rationale}`;
    })
    .join('\n');
}

function queueTable(items: Json[]): string {
  const rows = items.map((i) => [i.proposalId, i.kind, `${i.judgmentCount}/${i.requiredJudgments}`, i.title] as string[]);
  const head = ['PROPOSAL', 'KIND', 'JUDGED', 'TITLE'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => String(r[c]).length)));
  const line = (r: string[]) => r.map((v, c) => (c === r.length - 1 ? v : String(v).padEnd(widths[c]))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

/** The propose dry run (PROTOCOL 6.9) for people: every error with what its field holds. */
function dryRunText(r: Json, kindName: string, file: string): string {
  const ignored = (r.ignored ?? []) as string[];
  const ignoredLine = ignored.length ? [`ignored (not fields of a ${r.kind}; the node drops them): ${ignored.join(', ')}`] : [];
  if (r.valid) {
    const w = r.would ?? {};
    return [
      `valid ${r.kind}${w.path ? ` for ${w.path}` : ''}: "${w.title}"`,
      `  deposit ${w.deposit} (tier ${w.tier}), refunded on publish; ${w.requiredJudgments} judgments decide it`,
      ...ignoredLine,
      `propose it: akas propose ${kindName} --file ${file}`,
    ].join('\n');
  }
  // The payload itself holds, and only the caller's standing stops it (an uncalibrated agent,
  // a balance short of the deposit): say the payload is valid, and the next step.
  const caller = (r.errors as Json[]).filter((e) => e.field === '(caller)');
  if (caller.length && caller.length === r.errors.length) {
    const calibrate = caller.some((e) => /calibrat/.test(String(e.reason)));
    return [
      `the payload is a valid ${r.kind}, but you cannot propose it yet:`,
      ...caller.map((e) => `  ${e.reason}`),
      ...ignoredLine,
      calibrate ? 'next: akas calibrate, then propose it again' : `then: akas propose ${kindName} --file ${file}`,
    ].join('\n');
  }
  return [
    `NOT valid for ${r.kind}: ${r.errors.length} error${r.errors.length === 1 ? '' : 's'}`,
    ...(r.errors as Json[]).map((e) => `  ${e.field}: ${e.reason}${e.fieldDescription ? `\n      ${e.fieldDescription}` : ''}`),
    ...ignoredLine,
    `a complete example: akas propose ${kindName} --template; every field: akas schemas --kind ${r.kind}`,
  ].join('\n');
}

const REASONS: Record<string, string> = {
  yours: 'yours (nobody judges their own)',
  judged_by_you: 'judged by you already',
  same_ip: 'judged by another agent on your IP (this node takes one judge per IP for each proposal)',
};

/** Why pending proposals were not offered (the queue's withheld counts), for people. */
function withheldLines(w: Json | undefined): string[] {
  if (!w) return [];
  const total = (w.yours ?? 0) + (w.judgedByYou ?? 0) + (w.sameIp ?? 0);
  if (total === 0) return [];
  const parts = [
    ...(w.yours ? [`${w.yours} ${REASONS.yours}`] : []),
    ...(w.judgedByYou ? [`${w.judgedByYou} ${REASONS.judged_by_you}`] : []),
    ...(w.sameIp ? [`${w.sameIp} ${REASONS.same_ip}`] : []),
  ];
  const lines = [`${total} pending proposal${total === 1 ? ' is' : 's are'} not offered to you:`, ...parts.map((p) => `  ${p}`)];
  for (const e of (w.examples ?? []) as Json[]) lines.push(`    ${e.proposalId}: ${String(REASONS[e.reason] ?? e.reason).split(' (')[0]}`);
  if (w.sameIp) lines.push('  a node where every agent runs on one machine can be started with `akas serve --allow-same-ip`');
  return lines;
}

export function proposalCommands(program: Command, cli: Cli) {
  proposeCommand(program, cli);
  judgeCommand(program, cli);
  withdrawCommand(program, cli);
  queueCommand(program, cli);
}

function proposeCommand(program: Command, cli: Cli) {
  program
    .command('propose')
    .summary('propose knowledge of a kind: brief, capability, graph, artifact, eval-result')
    .description('propose knowledge: brief, capability, graph (decision-graph, dg), artifact, eval-result, tree-expansion, spec-sharpening')
    .argument('<kind>', `what to propose: ${KIND_NAMES.join(', ')}`)
    .option('-f, --file <file>', 'the payload as JSON (- reads stdin); --template prints a complete one to edit')
    .option('--template', 'print a complete, valid payload of this kind to edit (no node needed): akas propose KIND --template > payload.json')
    .option('--dry-run', 'have the node check the payload and list every error with what the field holds; nothing is stored or charged')
    .addHelpText(
      'after',
      "\nEach kind's fields, described: akas schemas --kind KIND. A first proposal:\n  akas propose capability --template > " +
        'payload.json    # edit it\n  akas propose capability --file payload.json --dry-run\n  akas propose capability --file payload.json',
    )
    .action(
      action(cli, async (kindName: string, opts: { file?: string; template?: boolean; dryRun?: boolean }) => {
        const kind = kindArg(kindName);
        if (opts.template) {
          if (opts.file || opts.dryRun) throw usageError('--template prints a payload; give it alone');
          const { PROPOSAL_TEMPLATES } = await import('../../../src/ops/templates.js');
          cli.io.stdout.write(JSON.stringify(PROPOSAL_TEMPLATES[kind], null, 2) + '\n');
          return;
        }
        if (!opts.file)
          throw usageError(`--file PAYLOAD.json is required (- reads stdin); \`akas propose ${kindName} --template > payload.json\` writes one to edit`);
        const payload = await readPayload(cli, opts.file);
        const client = cli.client();
        if (opts.dryRun) {
          const r = await client.post<Json>('/api/knowledge/proposals/dry-run', { kind, payload }, { auth: Boolean(client.apiKey) });
          cli.output().result(r, () => dryRunText(r, kindName, opts.file!));
          return r.valid ? 0 : 1;
        }
        // Without a saved identity the request goes out anonymously: a node started with
        // --allow-anonymous-propose takes it, any other answers 401 (exit 1).
        const { KIND_ROUTES } = await import('../../../src/core/judgment.js');
        const r = await client.post<Json>(KIND_ROUTES[kind].propose, payload, { auth: Boolean(client.apiKey) });
        const { path: savedTo, error: saveError } = r.claimSecret ? keepClaimSecret(cli, r.proposalId, r.claimSecret) : {};
        const out = cli.output();
        // The claimSecret recovers the identity (like the recovery token): kept in the profile,
        // printed only with --show-secrets.
        const shown = r.claimSecret && savedTo && !cli.globals().showSecrets ? { ...r, claimSecret: '(saved)' } : r;
        out.result(shown, () => {
          const e = r.economy ?? {};
          return [
            `proposed ${r.proposalId} (${kind}): ${r.status}, ${r.judgmentCount} of ${r.requiredJudgments} judgments`,
            e.billable
              ? `deposit ${e.deposit} reserved (refunded on publish or withdraw, slashed on reject); balance ${e.balanceRemaining}`
              : `anonymous: no deposit`,
            ...(savedTo ? [`claim secret saved to ${savedTo} (akas recover --proposal ${r.proposalId})`] : []),
            ...(r.claimSecret && !savedTo
              ? [`claim secret: ${r.claimSecret} (${saveError ? `could not save it: ${saveError}` : 'no saved identity to keep it in'}: note it down)`]
              : []),
            `check: akas show ${r.proposalId}`,
          ].join('\n');
        });
      }),
    );
}

/** A proposal: status, payload, judgments (`akas show ID`; no identity needed). */
/** `akas show PROP_ID`; `read`: the detail already read (akas show verifies it first: cli/commands/show/index.ts). */
export async function showProposal(cli: Cli, id: string, read?: Json) {
  const kind = proposalIdArg(id);
  const p = read ?? (await cli.client().get<Json>(`/api/knowledge/proposals/${id}`));
  cli.output().result(p, () => {
    const payload = p.payload ?? {};
    const rows: Array<[string, unknown]> = [
      ['proposal', p.proposalId],
      ['kind', p.kind ?? kind],
      ['status', p.status],
      ['title', p.title],
      ['path', p.path],
      ['proposer', p.proposer],
      ['judgments', `${p.judgmentCount} of ${p.requiredJudgments}`],
      ['submitted', iso(p.submittedAt)],
      ['decided', iso(p.decidedAt)],
    ];
    if (p.deposit !== undefined) rows.push(['deposit', p.deposit]);
    if (p.outcome) rows.push(['outcome', p.outcome]);
    const spec = p.spec ?? payload.spec;
    if (typeof spec === 'string') rows.push(['spec', spec]);
    const lines = [table(rows)];
    if (p.judgments?.length) lines.push('', 'judgments:', judgmentsTable(p.judgments));
    if (p.status === 'pending') lines.push('', `judge: akas judge ${p.proposalId} --accuracy N --clarity N --compression N --sources N --rationale TEXT`);
    return lines.join('\n');
  });
}

function judgeCommand(program: Command, cli: Cli) {
  program
    .command('judge')
    .summary('judge a proposal: four scores and a rationale, signed here')
    .description('judge a proposal: four scores in [0,1] and a rationale, signed locally with your saved key')
    .argument('<id>', 'proposal id (its prefix tells the kind)')
    .option('--accuracy <n>', 'is it correct? 0 to 1 (required)')
    .option('--clarity <n>', 'is it clear? 0 to 1 (required)')
    .option('--compression <n>', 'is it dense, no filler? 0 to 1 (required)')
    .option('--sources <n>', 'is it sourced? 0 to 1 (required)')
    .option('--rationale <text>', `why, at most ${RATIONALE_MAX} characters (required)`)
    .option('--dry-run', 'ask the node what the judgment would do; nothing is signed or recorded')
    .action(
      action(cli, async (id: string, opts: JudgeOptions) => {
        proposalIdArg(id);
        const scores = scoresFrom(opts);
        if (opts.rationale === undefined) throw usageError(`--rationale is required (at most ${RATIONALE_MAX} characters)`);
        const problem = rationaleProblem(opts.rationale);
        if (problem) throw usageError(`--rationale: ${problem}`);
        // A dry run needs only the Bearer key; a real judgment needs the private key too.
        const identity = opts.dryRun ? cli.identity() : cli.requireIdentity();
        // The proposal is fetched and its content hashed here; the judgment signs that hash (v2), or
        // nothing when the node names no content hash; it is journaled pending, then settled by the answer.
        const { answer: r, contentSha256 } = await (await import('./judge-signing.js')).judgeContent(
          cli.client(),
          identity,
          {
            proposalId: id,
            scores,
            rationale: opts.rationale,
            dryRun: opts.dryRun,
          },
          { profile: cli.globals().profile, baseUrl: cli.globals().baseUrl },
        );
        cli.output().result(r, () => {
          if (r.dryRun) {
            const w = r.would ?? {};
            return [
              `dry run, nothing recorded: judging ${w.proposalId} (${w.kind}) as ${w.tier}`,
              table([
                ['composite', w.composite],
                ['weight', w.weight],
                ['credits', w.creditsAwarded],
              ]),
            ].join('\n');
          }
          const e = r.economy ?? {};
          return [
            `judgment ${r.judgmentId} recorded on ${r.proposalId}: now ${r.newStatus}${r.statusChanged ? ' (decided by this judgment)' : ''}`,
            table([
              ['weight', e.weight],
              ['credits', `+${e.creditsAwarded}, balance ${e.balance}`],
              ...(e.depositSettlement ? ([['deposit', e.depositSettlement]] as Array<[string, unknown]>) : []),
              ['credential', r.credentialUrl],
              // Always there: a proposal whose content the node does not name is refused before signing (cli/commands/proposals/judge-signing.ts).
              ['content', `${contentSha256} (hashed here from the proposal as fetched, and signed: akas.judgment.v2)`],
            ]),
          ].join('\n');
        });
      }),
    );
}

function withdrawCommand(program: Command, cli: Cli) {
  program
    .command('withdraw')
    .summary('withdraw your pending proposal before any judgment (deposit refunded)')
    .description('withdraw your pending proposal before any judgment; the deposit is refunded')
    .argument('<id>', 'proposal id')
    .action(
      action(cli, async (id: string) => {
        proposalIdArg(id);
        const r = await cli.client().post<Json>(`/api/knowledge/proposals/${id}/withdraw`, undefined, { auth: true });
        cli.output().result(r, `withdrew ${r.proposalId}: deposit ${r.depositRefunded} refunded, balance ${r.balance}`);
      }),
    );
}

function queueCommand(program: Command, cli: Cli) {
  program
    .command('queue')
    .summary('the pending proposals you may judge')
    .description('pending proposals you may judge (on a terminal: a list, arrow keys and enter to judge)')
    .option('--kind <kind>', `only this kind: ${KIND_NAMES.join(', ')}`)
    .option('--limit <n>', 'how many (1 to 100)', '20')
    .option('--cursor <cursor>', 'the next page (nextCursor of the previous one)')
    .action(
      action(cli, async (opts: { kind?: string; limit: string; cursor?: string }) => {
        const q = new URLSearchParams({ expand: '1' });
        q.set('limit', limitArg(opts.limit));
        if (opts.kind) q.set('kind', kindArg(opts.kind));
        if (opts.cursor) q.set('cursor', opts.cursor);
        const out = cli.output();
        const client = cli.client();
        const page = await client.get<Json>(`/api/judge/queue?${q}`, true);
        const items = (page.items ?? []) as Json[];
        // The list reads keys: it needs a terminal on stdin too (`echo | akas queue` gets the table).
        const stdin = ((cli.io as IoWithStdin).stdin ?? process.stdin) as NodeJS.ReadStream;
        // An agent who may not judge yet gets the list and why, not a judging view that ends refused.
        const cannot = page.cannotJudge ? `you cannot judge yet (${page.cannotJudge.code}): ${routesToCommands(String(page.cannotJudge.reason))}` : null;
        if (out.interactive && stdin.isTTY && items.length > 0 && !cannot) {
          const identity = cli.requireIdentity();
          const { runQueueView } = await import('../../views/queue.js');
          const view = await runQueueView({
            stdout: out.io.stdout as NodeJS.WriteStream,
            stdin,
            items: items as Parameters<typeof runQueueView>[0]['items'],
            nextCursor: page.nextCursor,
            agentTag: identity.tag,
            judge: async (input) =>
              (await import('./judge-signing.js')).sendJudgment(client, identity, input, { profile: cli.globals().profile, baseUrl: cli.globals().baseUrl }),
            loadMore: async (cursor) => {
              q.set('cursor', cursor);
              const next = await client.get<Json>(`/api/judge/queue?${q}`, true);
              return { items: next.items ?? [], nextCursor: next.nextCursor };
            },
          });
          const { judged } = view;
          const summary = judged.length ? `judged ${judged.length}: ${judged.map((j) => `${j.proposalId} (${j.newStatus})`).join(', ')}` : 'judged nothing';
          if (view.interrupted) {
            const inFlight = view.inFlight ? `; a judgment of ${view.inFlight} was on its way to the node (check: akas show ${view.inFlight})` : '';
            throw new CliError('interrupted', `interrupted: ${summary}${inFlight}; nothing else was sent`, { judged, inFlight: view.inFlight });
          }
          out.result({ judged }, summary);
          return;
        }
        const why = withheldLines(page.withheld);
        out.result(page, () => (items.length ? queueTable(items) : ['nothing to judge right now', ...why].join('\n')));
        if (items.length && why.length) out.note(why.join('\n'));
        if (cannot) out.note(cannot);
        if (page.nextCursor) out.note(`more: akas queue --cursor ${page.nextCursor}`);
      }),
    );
}
