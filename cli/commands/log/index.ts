// Attestations and the transparency log from the shell (PROTOCOL 9): attest and dry-run,
// read an attestation with its proof (`akas show att_...`: showAttestation, here; `verify
// log-proof` checks one offline: commands/verify/), read or follow the log's entries (`log
// events`), monitor the log for forks and rewrites, audit a data folder, and gate a merge on
// reviews. docs/CLI.md "Where the log is" maps each to its command.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  CliError,
  collect,
  configDir,
  errorLines,
  type Json,
  jsonArg,
  nodeLocation,
  readJsonFile,
  reasonOf,
  table,
  terminalSafe,
  unreachableError,
  usageError,
} from '../../kit/index.js';
import { appendJournal, attestationHash, sendJournaled } from '../journal/journal.js';
import type { GatePolicy } from './watch.js';
import { action, type Cli } from '../../program.js';
import { witnessPolicyArg } from '../verify/shared.js';

const SHA256 = /^[0-9a-f]{64}$/;
const slug = (baseUrl: string) => baseUrl.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');
/** Where `akas log watch` keeps the last checkpoint it verified for a node. */
export const watchStatePath = (baseUrl: string) => join(configDir(), 'log-watch', `${slug(baseUrl.replace(/\/$/, ''))}.json`);

function bodyOf(opts: { file?: string; body?: string }) {
  if (opts.file && opts.body) throw usageError('give --file or --body, not both');
  if (opts.file) return readJsonFile(opts.file);
  if (opts.body) return jsonArg(opts.body, '--body');
  throw usageError('the attestation body is needed: --file BODY.json (- for stdin) or --body JSON; akas attest KIND --template prints an example body to edit');
}

/** The node's attestation kinds (GET /credentials/index.json). */
async function attestationKinds(cli: Cli): Promise<Array<{ kind: string; description?: string }>> {
  const index = await cli.client().get<Json>('/credentials/index.json');
  return Array.isArray(index.kinds) ? index.kinds : [];
}

export function logCommands(program: Command, cli: Cli) {
  attestCommand(program, cli);
  logCommand(program, cli);
  gateCommand(program, cli);
}

function attestCommand(program: Command, cli: Cli) {
  program
    .command('attest')
    .summary("record an attestation in the node's log")
    .description("record an attestation in the node's log (Bearer, calibrated); --dry-run only checks it against its schema")
    .argument('<kind>', 'one of the 22 kinds, e.g. review.attestation.v1 (an unknown one lists them all)')
    .option('-f, --file <file>', 'the attestation body (- reads stdin)')
    .option('--body <json>', 'the body inline')
    .option('--template', "print the example body of this kind's schema, to edit: akas attest KIND --template > body.json")
    .option('--dry-run', "check the body against the kind's schema; nothing is recorded (no key needed)")
    .action(
      action(cli, async (kind: string, opts: { file?: string; body?: string; dryRun?: boolean; template?: boolean }) => {
        if (opts.template) {
          const kinds = await attestationKinds(cli);
          const known = kinds.find((k) => k.kind === kind);
          if (!known) throw usageError(`unknown attestation kind "${kind}"; the node's kinds:\n${kinds.map((k) => `  ${k.kind}`).join('\n')}`);
          const schema = await cli.client().get<Json>(`/credentials/schemas/${encodeURIComponent(kind)}.json`);
          const example = Array.isArray(schema.examples) ? schema.examples[0] : undefined;
          if (example === undefined)
            throw new CliError(
              'no_template',
              `the node's schema of ${kind} holds no example body; its fields: ${cli.globals().baseUrl}/credentials/schemas/${kind}.json`,
            );
          cli.io.stdout.write(JSON.stringify(example, null, 2) + '\n');
          return 0;
        }
        const body = bodyOf(opts);
        const client = cli.client();
        const out = cli.output();
        if (opts.dryRun) {
          const r = await client.post<Json>('/api/credentials/dry-run', { kind, body });
          out.result(r, () =>
            r.valid
              ? `valid ${r.kind} (schemaVersion ${r.schemaVersion}); record it with: akas attest ${kind} ${opts.file ? `--file ${opts.file}` : '--body ...'}`
              : [
                  `NOT valid for ${r.kind}:`,
                  ...errorLines(
                    r.errors,
                    r.errorCount,
                    (e) =>
                      `  ${(e as Json).instancePath || '(body)'} ${(e as Json).message}${
                        (e as Json).fieldDescription ? ` — ` + `${(e as Json).fieldDescription}` : ''
                      }`,
                  ),
                  r.hint,
                ].join('\n'),
          );
          return r.valid ? 0 : 1;
        }
        const g = cli.globals();
        // Journaled pending before it is sent, settled by the answer (accepted: the entry's hash):
        // `akas monitor` tells this agent's own attestations from a stolen api key's (cli/commands/journal/journal.ts).
        const journal = { profile: g.profile, baseUrl: g.baseUrl };
        const pending = appendJournal(journal, {
          kind: 'attestation',
          payloadSha256: attestationHash(kind, body),
          agent: cli.identity()?.tag ?? null,
          publicKey: null,
          subject: kind,
        });
        const r = await sendJournaled(
          journal,
          pending,
          () => client.post<Json>('/api/attestations', { kind, body }, { auth: true }),
          (a) => ({ state: 'accepted', ...(typeof a.hash === 'string' ? { entryHash: a.hash } : {}) }),
        );
        out.result(r, () =>
          table([
            ['attestation', r.id],
            ['kind', `${r.kind} (${r.tier})`],
            ['log index', r.seq],
            ['hash', r.hash],
            ['proof', `akas show ${r.id}`],
          ]),
        );
      }),
    );
}

/**
 * One attestation from the log, with its inclusion proof and the signed checkpoint (`akas show
 * att_...`; its --json is what `akas verify log-proof` takes); with `format` (the old `akas
 * attestation ID --format tlog-proof`, now `akas export ID --format tlog-proof`) its C2SP
 * tlog-proof file instead.
 */
/** `akas show ATT_ID`; `read`: the attestation already read (akas show verifies it first: cli/commands/show/index.ts). */
export async function showAttestation(cli: Cli, id: string, opts: { format?: string; output?: string } = {}, read?: Json) {
  if (!/^att_[0-9a-f]{16}$/.test(id)) throw usageError(`not an attestation id: ${id}`);
  if (opts.format !== undefined && opts.format !== 'tlog-proof') throw usageError(`--format is tlog-proof, got ${opts.format}`);
  const r = read ?? (await cli.client().get<Json>(`/api/attestations/${id}`));
  if (opts.format) {
    const { tlogProofOf, writeOut } = await import('../export/supply-chain.js');
    const text = tlogProofOf(r as never);
    if (opts.output) {
      writeOut(opts.output, text);
      cli.output().note(`tlog-proof of ${id} written to ${opts.output}`);
    } else cli.io.stdout.write(text);
    return 0;
  }
  cli.output().result(r, () =>
    [
      table([
        ['attestation', r.entry.id],
        ['kind', `${r.entry.kind} (${r.entry.tier})`],
        ['by', r.entry.agent ?? '(the node)'],
        ['log index', `${r.entry.seq} of ${r.inclusion.size}`],
        ['attested', new Date(r.entry.attestedAt).toISOString()],
      ]),
      JSON.stringify(r.entry.body, null, 2),
    ].join('\n'),
  );
  return 0;
}

/** `akas log events` (and, hidden, the old `akas events`: cli/commands/renamed/index.ts): the log's entries, or a stream of them. */
export function eventsCommand(parent: Command, cli: Cli, hidden = false): Command {
  return parent
    .command('events', { hidden })
    .summary("the log's entries so far, or as they are appended (--follow)")
    .description("the node's log entries as they are appended (Server-Sent Events); without --follow, those so far")
    .option('--follow', 'keep streaming new entries (Ctrl-C stops)')
    .option('--kind <kind>', 'only this attestation kind')
    .option('--proposal <id>', 'only entries about this proposal')
    .option('--agent <tag>', 'only entries from or about this agent')
    .option('--from <index>', 'start at this log index (default 0)')
    .action(
      action(cli, async (opts: { follow?: boolean; kind?: string; proposal?: string; agent?: string; from?: string }) => {
        if (opts.from !== undefined && !/^\d+$/.test(opts.from)) throw usageError('--from is a log index');
        const q = new URLSearchParams({ follow: opts.follow ? '1' : '0' });
        if (opts.kind) q.set('kind', opts.kind);
        if (opts.proposal) q.set('proposalId', opts.proposal);
        if (opts.agent) q.set('agent', opts.agent);
        if (opts.from) q.set('from', opts.from);
        const out = cli.output();
        const client = cli.client();
        const { readEvents } = await import('./sse.js');
        let last: string | undefined;
        const onEvent = (e: { id?: string; data: string }) => {
          last = e.id ?? last;
          const entry = JSON.parse(e.data) as Json;
          if (out.json) out.io.stdout.write(JSON.stringify(entry) + '\n');
          else
            out.io.stdout.write(
              terminalSafe(
                `${String(entry.seq).padStart(6)}  ${new Date(entry.attestedAt).toISOString()}  ${entry.kind.padEnd(32)} ` +
                  `${entry.agent ?? '-'}  ${entry.body.event ?? entry.body.subjectSha256 ?? ''} ${entry.body.proposalId ?? ''}`,
              ) + '\n',
            );
        };
        // A dropped stream (a slow reader, a restart) is resumed where it stopped.
        let connected = false;
        for (let attempt = 0; ; attempt++) {
          try {
            await readEvents(client.url(`/api/events?${q}`), last ? { 'last-event-id': last } : {}, onEvent, undefined, () => (connected = true));
            if (!opts.follow) return;
          } catch (e) {
            const { status, body, contentType } = e as { status?: number; body?: string; contentType?: string };
            if (status !== undefined) {
              // An answer that is not an event stream: the node's refusal envelope, or some other server.
              let envelope: Json | undefined;
              try {
                envelope = contentType?.includes('json') && body ? (JSON.parse(body) as Json) : undefined;
              } catch {
                envelope = undefined;
              }
              if (envelope && typeof envelope === 'object' && typeof envelope.code === 'string') {
                if (status < 500 || !opts.follow || attempt > 20)
                  throw CliError.fromNode(
                    status < 500 ? 1 : 2,
                    `${String(envelope.error ?? envelope.detail ?? `HTTP ${status}`)} (${envelope.code}, HTTP ${status})`,
                    { status, ...envelope },
                  );
              } else if (!connected) {
                throw new CliError(
                  'not_akas',
                  `${client.baseUrl} is not an akas node: asked for /api/events, it answered HTTP ${status}${
                    contentType ? ` with ` + `${contentType.split(';')[0]}` : ''
                  }. Check --base-url / AKAS_BASE_URL.`,
                  { baseUrl: client.baseUrl, status },
                );
              } else if (!opts.follow || attempt > 20) throw new CliError('unreachable', `The event stream broke off: HTTP ${status}`, { status });
            } else if (!connected) {
              throw unreachableError(client.baseUrl, e);
            } else if (!opts.follow || attempt > 20) throw new CliError('unreachable', `The event stream broke off: ${(e as Error).message}`);
          }
          await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** Math.min(attempt, 4))));
        }
      }),
    );
}

function logCommand(program: Command, cli: Cli) {
  const log = program
    .command('log')
    .summary("the node's transparency log: its entries, a watch on it, an audit")
    .description("the node's transparency log: its entries (events), a watch on it (watch), an audit of a stopped node (check)");
  eventsCommand(log, cli);

  log
    .command('check')
    .summary("audit a stopped node's folder or store: log, ledger, proposals")
    .description(
      "audit a data folder offline (stop the node first), or a shared PostgreSQL store: the log's chain, MACs, tree and checkpoints, the " +
        'credit ledger, and the proposals (judgments, status, escrow)',
    )
    .option('--data <dir>', 'data folder (env AKAS_DATA; default ./.akas)')
    .option('--store <url>', 'a postgres:// store instead (env AKAS_STORE; the node keys are opened with AKAS_NODE_SECRET or AKAS_NODE_SECRET_FILE)')
    .action(
      action(cli, async (opts: { data?: string; store?: string }) => {
        const where = nodeLocation(opts);
        const { dataDir } = where;
        const storeUrl = where.kind === 'store' ? where.store : undefined;
        const { checkNode, startError } = await import('../../../src/node/index.js');
        const { readNodeSecret } = await import('../../../src/ops/index.js');
        let r;
        try {
          r = await checkNode(where.kind === 'store' ? { dataDir, store: where.store, nodeSecret: readNodeSecret(where.secretFile, where.secret) } : dataDir);
        } catch (e) {
          // No node there, the folder in use, unreadable: said in one line, exit 2.
          const known = startError(e, { dataDir, store: storeUrl });
          if (known) throw new CliError(known.code, known.message, { error: known.message, path: storeUrl ? 'store' : dataDir });
          const what = storeUrl ? 'the store' : dataDir;
          throw new CliError('unreadable', `Cannot open ${what}: ${(e as Error).message}`, { path: storeUrl ? 'store' : dataDir });
        }
        cli
          .output()
          .result(r, () =>
            [
              `log: ${r.log.entries} entries, ${r.log.checkpoints} checkpoints: ${r.log.ok ? 'ok' : 'PROBLEMS'}`,
              ...r.log.problems.map((p) => `  ${p}`),
              `ledger: ${r.ledger.ok ? 'ok' : 'PROBLEMS'}`,
              ...r.ledger.problems.map((p) => `  ${p}`),
              `proposals: ${r.proposals.proposals} checked: ${r.proposals.ok ? 'ok' : 'PROBLEMS'}`,
              ...r.proposals.problems.map((p) => `  ${p}`),
              `agents: ${r.records.agents} (${r.records.liveKeys} live api keys), blobs: ${r.records.blobs.acknowledged} acknowledged, ` +
                `${r.records.blobs.stored} stored: ${r.records.ok ? 'ok' : 'PROBLEMS'}`,
              ...r.records.problems.map((p) => `  ${p}`),
            ].join('\n'),
          );
        return r.ok ? 0 : 1;
      }),
    );

  log
    .command('watch')
    .summary('check that each new checkpoint extends the last (exit 1 on a fork)')
    .description(
      "monitor the node's log: each new checkpoint must extend the last one seen (consistency proof) and the entries must rebuild its root; " +
        'exit 1 on a fork or a rewrite',
    )
    .option('--interval <seconds>', 'seconds between polls', '30')
    .option('--once', 'check once and exit (for cron)')
    .option('--full', 'audit every entry from the start again, not only the new ones')
    .option('--log-key <key>', 'pin this log key (default: the one the node published at the first run, kept with the state)')
    .option('--witness <key>', 'a witness whose cosignature counts (NAME+KEYID+KEY); repeatable: each checkpoint must carry the quorum', collect, [])
    .option('--witness-quorum <k>', 'how many of the given witnesses must have cosigned each checkpoint (default: all)')
    .option(
      '--tiles <url>',
      "follow the log through its C2SP tiles alone (the node's /log/ prefix, e.g. http://127.0.0.1:7373/log), checking every tile against " +
        'the checkpoint; needs --log-key on the first run',
    )
    .action(
      action(
        cli,
        async (opts: { interval: string; once?: boolean; full?: boolean; logKey?: string; witness: string[]; witnessQuorum?: string; tiles?: string }) => {
          const seconds = Number(opts.interval);
          if (!Number.isFinite(seconds) || seconds < 0.1) throw usageError('--interval is a number of seconds (at least 0.1)');
          const witnesses = witnessPolicyArg(opts.witness, opts.witnessQuorum);
          if (opts.tiles !== undefined && !/^https?:\/\//.test(opts.tiles))
            throw usageError(`--tiles is the http(s) URL of a tiled log's prefix, got ${opts.tiles}`);
          const { watchOnce, watchTilesOnce, tileFetcher } = await import('./watch.js');
          const out = cli.output();
          for (;;) {
            if (witnesses) witnesses.now = Math.floor(Date.now() / 1000);
            const r = opts.tiles
              ? await watchTilesOnce(tileFetcher(opts.tiles), watchStatePath(opts.tiles), { full: Boolean(opts.full), logKey: opts.logKey, witnesses }).catch(
                  (e: Error) => {
                    throw new CliError('unreachable', `Cannot read the tiles at ${opts.tiles}: ${e.message}`);
                  },
                )
              : await watchOnce(cli.client(), watchStatePath(cli.globals().baseUrl), { full: Boolean(opts.full), logKey: opts.logKey, witnesses });
            opts.full = false;
            if (out.json) out.io.stdout.write(JSON.stringify(r) + '\n');
            else out.io.stdout.write(terminalSafe(`${new Date().toISOString()}  ${r.ok ? 'ok  ' : 'FAIL'}  ${r.message}`) + '\n');
            if (!r.ok) return 1;
            if (opts.once) return 0;
            await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
          }
        },
      ),
    );
}

function gateCommand(program: Command, cli: Cli) {
  program
    .command('gate')
    .summary("merge gates on the node's log")
    .description("merge gates on the node's log")
    .command('review')
    .summary('exit 0 only when enough calibrated agents attested an approving review')
    .description('exit 0 only when enough calibrated agents (meeting the policy flags) attested an approving review of SUBJECT, each proven in the log')
    .requiredOption('--subject <sha256>', "the reviewed artifact's sha256 (e.g. of the release tarball)")
    .option('--require <verdict>', 'the verdict that counts', 'approve')
    .option('--min <n>', 'how many distinct reviewers', '1')
    .option('--min-tier <tier>', 'count only reviewers of this tier or better: frontier, strong, mid, weak')
    .option('--min-reputation <score>', 'count only reviewers with at least this reputationScore (0 to 1)')
    .option('--min-age <age>', "count only agents registered at least this long ago, by the node's clock (e.g. 30d, 12h, 45m)")
    .option('--trusted <file>', 'count only these reviewers: a file of agent tags (ak_...) or current public keys (64 hex), one a line, # comments')
    .option('--log-key <key>', "pin the log key (default: the one `akas log watch` keeps for this node, else the node's)")
    .action(
      action(
        cli,
        async (opts: {
          subject: string;
          require: string;
          min: string;
          minTier?: string;
          minReputation?: string;
          minAge?: string;
          trusted?: string;
          logKey?: string;
        }) => {
          const subject = opts.subject.toLowerCase();
          if (!SHA256.test(subject)) throw usageError('--subject is a sha256 (64 hex)');
          const min = Number(opts.min);
          if (!Number.isInteger(min) || min < 1) throw usageError('--min is a whole number from 1');
          const { reviewGate } = await import('./watch.js');
          const policy = gatePolicy(opts);
          const r = await reviewGate(cli.client(), {
            subject,
            verdict: opts.require,
            min,
            logKey: opts.logKey,
            statePath: watchStatePath(cli.globals().baseUrl),
            policy,
          });
          const claim = (x: (typeof r.reviews)[number]) => {
            const parts = [
              x.claimed.reviewerId !== null ? `reviewerId ${JSON.stringify(x.claimed.reviewerId)}` : '',
              x.claimed.reviewerDid !== null ? `reviewerDid ${String(x.claimed.reviewerDid)}` : '',
            ].filter(Boolean);
            return parts.length ? `  claims ${parts.join(', ')} (as claimed, not verified)` : '';
          };
          const policyText = [
            policy.minTier ? `tier ${policy.minTier} or better` : '',
            policy.minReputation !== undefined ? `reputation >= ${policy.minReputation}` : '',
            policy.minAgeMs !== undefined ? `registered at least ${opts.minAge} ago` : '',
            policy.trusted ? `in ${opts.trusted} (${policy.trusted.size})` : '',
          ].filter(Boolean);
          cli
            .output()
            .result(r, () =>
              [
                ...r.reviews.map((x) => `${x.counted ? 'ok  ' : '--  '}  ${x.id}  ${x.reviewer}  ${x.verdict}${x.counted ? '' : `  (${x.why})`}${claim(x)}`),
                `${r.approvals} of ${min} required ${opts.require} review(s) from distinct calibrated agents${
                  policyText.length ? ` (` + `${policyText.join(', ')})` : ''
                }, each proven in the log: ${r.passed ? 'PASS' : 'FAIL'}`,
                'the agent counted is the one the node vouches made each attestation; who it says it is (reviewerId, reviewerDid) is its own claim',
              ].join('\n'),
            );
          return r.passed ? 0 : 1;
        },
      ),
    );
}

const AGE = /^(\d+(?:\.\d+)?)(d|h|m)$/;
const TIER_NAMES = ['frontier', 'strong', 'mid', 'weak'] as const;

/** The gate's policy from its flags (usage errors for values that do not parse). */
function gatePolicy(opts: { minTier?: string; minReputation?: string; minAge?: string; trusted?: string }): GatePolicy {
  const policy: GatePolicy = {};
  if (opts.minTier !== undefined) {
    if (!(TIER_NAMES as readonly string[]).includes(opts.minTier)) throw usageError(`--min-tier is one of ${TIER_NAMES.join(', ')}`);
    policy.minTier = opts.minTier as GatePolicy['minTier'];
  }
  if (opts.minReputation !== undefined) {
    const x = Number(opts.minReputation);
    if (!(x >= 0 && x <= 1)) throw usageError('--min-reputation is a number from 0 to 1');
    policy.minReputation = x;
  }
  if (opts.minAge !== undefined) {
    const m = AGE.exec(opts.minAge);
    if (!m) throw usageError('--min-age is a number with d, h or m (30d, 12h, 45m)');
    policy.minAgeMs = Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
  }
  if (opts.trusted !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.trusted, 'utf8');
    } catch (e) {
      throw new CliError('unreadable', `Cannot read ${opts.trusted}: ${reasonOf(e)}`, { path: opts.trusted });
    }
    const trusted = new Set<string>();
    for (const [i, raw] of text.split(/\r?\n/).entries()) {
      const line = raw.replace(/#.*/, '').trim();
      if (!line) continue;
      if (/^ak_[A-Za-z0-9]{8}$/.test(line) || /^[0-9a-fA-F]{64}$/.test(line)) trusted.add(line.startsWith('ak_') ? line : line.toLowerCase());
      else throw usageError(`${opts.trusted}:${i + 1}: not an agent tag (ak_ + 8 characters) or a public key (64 hex): ${line.slice(0, 80)}`);
    }
    policy.trusted = trusted;
  }
  return policy;
}
