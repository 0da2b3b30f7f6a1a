// akas monitor (issue 34, docs/MONITORING.md): follows a node's log through its C2SP tiles and
// reports what the watched agent did not do, and what befell its credentials (cli/commands/monitor/follow.ts). Exit codes: 0 no alert,
// 1 an alert, 2 it could not run (no node answers: never "no alerts"), 3 it ran but something
// given could not be checked (a --compare view unreadable or unsigned).
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import {
  AkasClient,
  boundedGet,
  boundedTransport,
  CliError,
  collect,
  configDir,
  isFetchError,
  type Json,
  reasonOf,
  terminalSafe,
  unreachableError,
  usageError,
} from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import type { JournalEntry } from '../journal/journal.js';
import type { MonitorRound, RoundHooks, Watched } from './follow.js';

const slug = (s: string) => s.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');

/** Where `akas monitor` keeps its state for a log and an agent (evidence files beside it). */
export const monitorStatePath = (tiles: string, tag: string) => join(configDir(), 'monitor', `${slug(tiles.replace(/\/+$/, ''))}__${tag}.json`);

/** A checkpoint note from a text that is one, or from a saved monitor state / attestation answer that holds one. */
function noteOf(text: string): string {
  const t = text.trimStart();
  if (t.startsWith('{')) {
    const doc = JSON.parse(t) as Json;
    if (typeof doc.checkpoint === 'string') return doc.checkpoint;
    throw new Error('a JSON file without a checkpoint field');
  }
  return text;
}

interface MonitorOpts {
  tiles?: string;
  agent?: string;
  from?: string;
  once?: boolean;
  interval: string;
  logKey?: string;
  policy?: string;
  compare: string[];
  state?: string;
  journal?: string;
  maxEntries?: string;
  index?: boolean;
}

/**
 * The `monitor` command. `hooks` are a test's (test/cli/monitor.test.ts runs the command
 * in-process with them, to stop a round where a kill would); the command table passes none.
 */
export function monitorCommands(program: Command, cli: Cli, hooks?: RoundHooks) {
  program
    .command('monitor')
    .summary('follow the log and alert on what your agent did not do')
    .description(
      "follow the node's log through its tiles and alert on what you did not do: an entry as your agent that your journal lacks, " +
        'a fork, a checkpoint short of its witness quorum, a node key changed outside its history, a revocation or suspension of your ' +
        'credentials (exit 1 on an alert, 2 no node)',
    )
    .option('--once', 'catch up, report and exit (for cron and CI)')
    .option('--interval <seconds>', 'seconds between polls without --once', '60')
    .option('--agent <tag>', "watch another agent (an auditor's view): every entry it signed is reported, as there is no journal")
    .option('--from <index>', 'start reading at this log index')
    .option('--tiles <url>', "the log's tile prefix (default: the node's /log)")
    .option('--log-key <key>', "pin the log key (default: the one kept in the state, else the policy's log line, else the one the node publishes now)")
    .option('--policy <file>', 'a C2SP tlog-policy file: each checkpoint must carry its witness quorum')
    .option('--compare <url|file>', "another view's checkpoint (a node, a witness, another monitor's state file); repeatable", collect, [])
    .option('--journal <file>', "check the agent's entries against this journal file (a copy of `akas journal`'s, e.g. in CI), not the profile's")
    .option('--state <file>', 'where to keep the state (default: under the config folder, per log and agent)')
    .option('--index', 'rebuild the verifiable index from the tiles and compare every root the log holds (exit 1 with evidence on one it does not give)')
    .option('--max-entries <n>', 'read at most this many entries per catch-up; a log with more says so and stops (exit 3), saved (default 10,000,000)')
    .action(action(cli, (opts: MonitorOpts) => monitor(cli, opts, hooks)));
}

/** The flags that do not parse: usage errors (exit 2) before anything is read. Answers the seconds between polls. */
function checkOptions(opts: MonitorOpts): number {
  const seconds = Number(opts.interval);
  if (!Number.isFinite(seconds) || seconds < 0.1) throw usageError('--interval is a number of seconds (at least 0.1)');
  if (opts.from !== undefined && !/^\d+$/.test(opts.from)) throw usageError('--from is a log index');
  if (opts.maxEntries !== undefined && !/^[1-9]\d{0,14}$/.test(opts.maxEntries)) throw usageError('--max-entries is a number of entries (at least 1)');
  if (opts.agent !== undefined && !/^ak_[A-Za-z0-9]{8}$/.test(opts.agent)) throw usageError(`--agent is an agent tag (ak_ + 8 characters), got ${opts.agent}`);
  if (opts.tiles !== undefined && !/^https?:\/\//.test(opts.tiles)) throw usageError(`--tiles is the http(s) URL of a tiled log's prefix, got ${opts.tiles}`);
  return seconds;
}

async function monitor(cli: Cli, opts: MonitorOpts, hooks: RoundHooks | undefined) {
  const g = cli.globals();
  const seconds = checkOptions(opts);
  const [{ monitorRound, Unreachable, MONITOR_API_CAPS }, { parsePolicy }, { tileFetcher }, { StateError }] = await Promise.all([
    import('./follow.js'),
    import('./policy.js'),
    import('../log/tile-reader.js'),
    import('./state.js'),
  ]);
  let policy;
  if (opts.policy) {
    try {
      policy = parsePolicy(readFileSync(opts.policy, 'utf8'));
    } catch (e) {
      throw usageError(`--policy ${opts.policy}: ${(e as Error).message}`);
    }
  }
  if (opts.index) return indexAudit(cli, opts, tileFetcher);
  const watched = await watchedOf(cli, opts);
  // Every read of the node within its caps, redirects to its own origin only (cli/kit/http1.ts).
  const client = new AkasClient({ baseUrl: g.baseUrl, fetch: boundedTransport(MONITOR_API_CAPS) });
  const tilesUrl = (opts.tiles ?? `${g.baseUrl.replace(/\/+$/, '')}/log`).replace(/\/+$/, '');
  const statePath = opts.state ?? monitorStatePath(tilesUrl, watched.tag);
  const print = printer(cli);
  const round: MonitorRound = {
    fetchBytes: tileFetcher(tilesUrl),
    statePath,
    evidenceDir: join(dirname(statePath), 'evidence'),
    watched,
    emit: print,
    logKey: opts.logKey,
    policy,
    compare: compareSources(opts.compare, tileFetcher),
    ...nodeReads(client),
    maxEntries: opts.maxEntries === undefined ? undefined : Number(opts.maxEntries),
    origins: [g.baseUrl, tilesUrl].flatMap((u) => (URL.canParse(u) ? [new URL(u).origin] : [])),
    ...(hooks ? { hooks } : {}),
  };
  for (let n = 0; ; n++) {
    let r;
    try {
      r = await monitorRound({ ...round, fetchBytes: tileFetcher(tilesUrl), from: n === 0 && opts.from !== undefined ? Number(opts.from) : undefined });
    } catch (e) {
      if (e instanceof StateError) throw new CliError('unreadable', e.message, { path: statePath });
      // A read its caps refused (too long, too large, sent to another origin): it could not run.
      if (isFetchError(e) && (opts.once || n === 0)) throw new CliError(e.code, e.message, { url: e.url });
      const unreachable = e instanceof Unreachable || (CliError.is(e) && e.exitCode === 2);
      if (opts.once || n === 0) {
        if (CliError.is(e)) throw e;
        if (unreachable) throw unreachableError(tilesUrl, e);
        throw new CliError('incomplete', `the monitor could not complete: ${(e as Error).message}`);
      }
      print({ type: 'event', what: unreachable ? 'unreachable' : 'incomplete', message: (e as Error).message });
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    const code = caughtUp(print, r, Boolean(opts.once));
    if (code !== undefined) return code;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

/** --index: one rebuild of the verifiable index from the tiles (PROTOCOL 9.10), under the log key pinned or the one the node shows. */
async function indexAudit(cli: Cli, opts: MonitorOpts, tileFetcher: typeof import('../log/tile-reader.js').tileFetcher): Promise<number> {
  const g = cli.globals();
  const tilesUrl = (opts.tiles ?? `${g.baseUrl.replace(/\/+$/, '')}/log`).replace(/\/+$/, '');
  const logKey = opts.logKey ?? String((await cli.client().get<Json>('/api/node/keys')).log?.verifierKey ?? '');
  const statePath = opts.state ?? monitorStatePath(tilesUrl, 'index');
  const { auditIndex } = await import('./index-audit.js');
  try {
    return await auditIndex({ fetchBytes: tileFetcher(tilesUrl), logKey, evidenceDir: join(dirname(statePath), 'evidence'), emit: printer(cli) });
  } catch (e) {
    if (CliError.is(e)) throw e;
    if (isFetchError(e)) throw new CliError(e.code, e.message, { url: e.url });
    throw unreachableError(tilesUrl, e);
  }
}

/** Who is watched: the profile's agent (checked against its journal, or the file given), or with --agent anyone's. */
async function watchedOf(cli: Cli, opts: MonitorOpts): Promise<Watched> {
  const g = cli.globals();
  const { journalHolds, readJournal, readJournalFile } = await import('../journal/journal.js');
  const identity = cli.identity();
  const tag = opts.agent ?? identity?.tag;
  if (!tag) throw usageError(`profile "${g.profile}" holds no identity for ${g.baseUrl}: register (akas register), or watch someone with --agent TAG`);
  // One's own agent is checked against a journal (the profile's, or the file given); anyone else's is reported entry by entry.
  const own = opts.journal !== undefined || opts.agent === undefined || opts.agent === identity?.tag;
  let journal: JournalEntry[] = [];
  if (own) {
    try {
      if (opts.journal) statSync(opts.journal);
      journal = (opts.journal ? readJournalFile(opts.journal) : readJournal(g.profile)).entries.filter((e) => e.agent === tag);
    } catch (e) {
      throw new CliError('unreadable', `Cannot read the journal ${opts.journal ?? ''}: ${reasonOf(e)}`);
    }
  }
  return {
    tag,
    own,
    // Matched by what was accepted, never by the proposal alone (cli/commands/journal/journal.ts).
    journal: journalHolds(journal),
    keys: [...new Set([...journal.map((e) => e.publicKey ?? ''), ...(own && identity ? [identity.signing.publicKey] : [])].filter(Boolean))],
  };
}

/** The --compare views: a node's (or witness's) checkpoint with its tiles, or a file holding one. */
function compareSources(given: string[], tileFetcher: typeof import('../log/tile-reader.js').tileFetcher): MonitorRound['compare'] {
  return given.map((c) => {
    if (/^https?:\/\//.test(c)) {
      const noteUrl = c.replace(/\/+$/, '').endsWith('/checkpoint') ? c : `${c.replace(/\/+$/, '')}/log/checkpoint`;
      const prefix = noteUrl.slice(0, -'/checkpoint'.length);
      return {
        from: c,
        note: async () => {
          const r = await boundedGet(noteUrl, (await import('../log/tile-reader.js')).CHECKPOINT_CAPS);
          if (r.status !== 200) throw new Error(`GET ${noteUrl} answered ${r.status}`);
          return noteOf(r.body.toString('utf8'));
        },
        tiles: tileFetcher(prefix),
      };
    }
    return { from: c, note: async () => noteOf(readFileSync(c, 'utf8')) };
  });
}

/** What a round asks of the node's API: its keys, an agent's keys, a judgment as signed, a credential. */
function nodeReads(client: AkasClient): Pick<MonitorRound, 'nodeKeys' | 'agentKeys' | 'judgmentSigned' | 'credential'> {
  return {
    nodeKeys: () => client.get<Json>('/api/node/keys'),
    agentKeys: async (t) => {
      const p = await client.get<Json>(`/api/agents/${encodeURIComponent(t)}`).catch(() => undefined);
      return p?.signing ? [...(p.signing.priorKeys ?? []).map((k: Json) => String(k.publicKey)), String(p.signing.publicKey)] : [];
    },
    judgmentSigned: async (proposalId, judgmentId) => {
      const d = await client.get<Json>(`/api/knowledge/proposals/${encodeURIComponent(proposalId)}`);
      const s = (d.judgments ?? []).find((x: Json) => x.judgmentId === judgmentId)?.signature;
      return typeof s?.publicKey === 'string' && typeof s.signature === 'string' && typeof s.signingPayload === 'string'
        ? { publicKey: s.publicKey, signature: s.signature, signingPayload: s.signingPayload }
        : null;
    },
    credential: (kind, proposalId, judgmentId) =>
      client.get(`/api/credentials/judgment/${[kind, proposalId, judgmentId].map(encodeURIComponent).join('/')}`).catch((e: unknown) => {
        if (CliError.is(e) && e.body.status === 404) return null;
        if (CliError.is(e) && e.exitCode === 2) throw e;
        throw new Error(`the credential of ${judgmentId}: ${(e as Error).message}`);
      }),
  };
}

/** Prints a record: a JSON line under --json, else a line of text (an alert with its evidence file). */
function printer(cli: Cli) {
  const out = cli.output();
  return (r: Json) => {
    if (out.json) out.io.stdout.write(`${JSON.stringify(r)}\n`);
    else if (r.type === 'alert')
      out.io.stdout.write(`${terminalSafe(`ALERT ${r.what}: ${r.message}`)}${r.evidenceFile ? `\n  evidence: ${r.evidenceFile}` : ''}\n`);
    else out.io.stdout.write(`${terminalSafe(`${r.what}: ${r.message}`)}\n`);
  };
}

/** A round's end said; the exit code when the monitor stops here (--once, or a log longer than one catch-up reads). */
function caughtUp(print: (r: Json) => void, r: Awaited<ReturnType<typeof import('./follow.js').monitorRound>>, once: boolean): number | undefined {
  for (const why of r.incomplete) print({ type: 'event', what: 'incomplete', message: why });
  print({
    type: 'event',
    what: 'caught-up',
    message: `${r.size} entries, ${r.read} read now, ${r.alerts} alert(s)`,
    size: r.size,
    read: r.read,
    alerts: r.alerts,
  });
  // A log longer than one catch-up reads: said, and the monitor stops there (saved) rather than follow it for ever.
  if (r.capped) {
    print({
      type: 'event',
      what: 'max-entries',
      message: `the log holds ${r.capped.left} entries more than this catch-up reads (--max-entries ${r.capped.max}): ` + 'stopped; run again to read on',
      ...r.capped,
    });
    return r.alerts > 0 ? 1 : 3;
  }
  if (once) return r.alerts > 0 ? 1 : r.incomplete.length ? 3 : 0;
  return undefined;
}
