// akas verify standing and akas verify card (PROTOCOL 8.9): an agent's standing checked as a
// credential with its status, its figures computed again from the log's entries (read from a
// node when told, --from-node, or from a saved range, --log-range); and an A2A Agent Card's JWS
// checked with jose, its key the agent's on the node, its standing as above.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Check } from '../../../verifier/report.js';
import type { StandingReport } from '../../../verifier/standing.js';
import { boundedGet, CliError, type Json, reasonOf, readJsonFile, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, issuerArg, readStdin, timeArg, trustArg } from './shared.js';

interface StandingOpts {
  trust?: string;
  issuer?: string;
  at?: string;
  fromNode?: string;
  logRange?: string;
  status?: boolean;
  statusList?: string[];
  verbose?: boolean;
}

const PAGE = 1000;
const ENTRIES_CAPS = { maxBytes: 64 * 1024 * 1024, headersMs: 15_000, totalMs: 60_000 };

/** The log's entries [0, size) read from a node, a page of 1,000 at a time (PROTOCOL 9.5). */
async function entriesFromNode(base: string, size: number): Promise<unknown[]> {
  const { parseStrictJson } = await import('../../../src/core/strict-json.js');
  const out: unknown[] = [];
  for (let start = 0; start < size; start += PAGE) {
    const url = `${base.replace(/\/$/, '')}/api/log/entries?start=${start}&end=${Math.min(size, start + PAGE)}`;
    let r: Awaited<ReturnType<typeof boundedGet>>;
    try {
      r = await boundedGet(url, ENTRIES_CAPS, { accept: 'application/json' });
    } catch (e) {
      throw new CliError('unreachable', `Cannot read the log entries from ${base}: ${reasonOf(e)}`, { url });
    }
    const parsed = parseStrictJson(new Uint8Array(r.body));
    const entries = parsed.ok ? (parsed.value as { entries?: unknown[] }).entries : undefined;
    if (r.status !== 200 || !Array.isArray(entries)) throw new CliError('unreachable', `${url} answered HTTP ${r.status}, not a page of entries`, { url });
    if (!entries.length) break;
    out.push(...entries);
  }
  return out;
}

/** GET of JSON from a node within caps: undefined for a 404 (a node without that route). */
async function nodeJson(url: string): Promise<Json | undefined> {
  const { parseStrictJson } = await import('../../../src/core/strict-json.js');
  let r: Awaited<ReturnType<typeof boundedGet>>;
  try {
    r = await boundedGet(url, ENTRIES_CAPS, { accept: 'application/json' });
  } catch (e) {
    throw new CliError('unreachable', `Cannot read ${url}: ${reasonOf(e)}`, { url });
  }
  if (r.status === 404) return undefined;
  const parsed = parseStrictJson(new Uint8Array(r.body));
  if (r.status !== 200 || !parsed.ok) throw new CliError('unreachable', `${url} answered HTTP ${r.status}`, { url });
  return parsed.value as Json;
}

/** One key's lookup in the node's verifiable index with every entry it names (pages of 100, one map), or undefined without an index. */
async function lookupWithEntries(base: string, key: string): Promise<Json | undefined> {
  const url = (offset: number) => `${base.replace(/\/$/, '')}/api/index/${encodeURIComponent(key)}?entries=true&offset=${offset}&limit=100`;
  const first = await nodeJson(url(0));
  if (!first) return undefined;
  const entries = [...((first.entries ?? []) as Json[])];
  const indices = (first.indices ?? []) as number[];
  while (entries.length < indices.length) {
    const next = await nodeJson(url(entries.length));
    // Pages of one map only: a root appended meanwhile makes another answer (read it again).
    if (!next || next.map?.root !== first.map?.root || !next.entries?.length)
      throw new CliError('unreachable', `the index moved while ${key} was read: try again`);
    entries.push(...next.entries);
  }
  return { ...first, entries, offset: 0 };
}

/**
 * The lookups the figures of `tag` need (PROTOCOL 8.9, 9.10): `agent:TAG`, and `credential:J` for
 * each judgment J below `size`; undefined when the node has no index or its map is behind `size`.
 */
async function lookupsFromNode(base: string, tag: string, size: number): Promise<Json[] | undefined> {
  const agent = await lookupWithEntries(base, `agent:${tag}`);
  if (!agent || Number(agent.map?.size) < size) return undefined;
  const judged = ((agent.entries ?? []) as Json[]).filter((e) => e.seq < size && e.body?.event === 'judgment.recorded').map((e) => String(e.body.judgmentId));
  const out = [agent];
  for (const j of judged) {
    const l = await lookupWithEntries(base, `credential:${j}`);
    if (!l || Number(l.map?.size) < size) return undefined;
    out.push(l);
  }
  return out;
}

/** A saved range: the answer of GET /api/log/entries, several of them in an array, or an array of entries. */
function entriesFromFile(path: string): unknown[] {
  const doc = readJsonFile(path) as unknown;
  const pages = Array.isArray(doc) ? doc : [doc];
  return pages.flatMap((p) => (p && typeof p === 'object' && Array.isArray((p as Json).entries) ? (p as Json).entries : [p]));
}

/** The standing report with its status checks (a standing names status lists: PROTOCOL 8.7, 8.9). */
async function standingReport(doc: Json, opts: StandingOpts & { noStatus?: boolean }, subject?: string) {
  const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer });
  const at = timeArg(opts.at);
  const issuer = issuerArg(opts.issuer);
  if (opts.fromNode && opts.logRange) throw usageError('--from-node and --log-range are two sources of the entries: give one');
  const size = Number(doc.credentialSubject?.checkpoint?.size);
  const tag = String(doc.credentialSubject?.tag);
  // From a node: through its verifiable index where it has one that covers the standing, else the whole range.
  const lookups = opts.fromNode && Number.isSafeInteger(size) && !opts.logRange ? await lookupsFromNode(opts.fromNode, tag, size) : undefined;
  const entries = opts.logRange
    ? entriesFromFile(opts.logRange)
    : opts.fromNode && Number.isSafeInteger(size) && !lookups
      ? await entriesFromNode(opts.fromNode, size)
      : undefined;
  const { verifyStanding } = await import('../../../verifier/standing.js');
  const report: StandingReport = verifyStanding(doc, {
    at,
    issuer,
    trust: pinned?.issuers,
    didWeb: pinned?.file.didWeb,
    logKeys: pinned?.logKeys,
    entries,
    lookups,
    entriesFrom: opts.logRange ?? opts.fromNode,
  });
  report.recomputedFrom = lookups ? 'index' : entries ? (opts.logRange ? 'saved range' : 'log range') : undefined;
  const statusAsk = await import('./status-ask.js');
  const ask = statusAsk.statusAskOf({ status: opts.status === true, statusList: opts.statusList, noStatus: opts.status === false });
  let ctx: Awaited<ReturnType<typeof import('./status-check.js').readStatusLists>> | undefined;
  if (ask.fetch || ask.files.length) {
    const statusCheck = await import('./status-check.js');
    const issuers = pinned ? pinned.file.issuers.map((i) => i.did) : issuer ? [issuer] : report.issuer ? [report.issuer] : [];
    ctx = await statusCheck.readStatusLists(report.verified ? [doc] : [], { fetch: ask.fetch, files: ask.files, trust: pinned?.issuers, at, issuers });
    // A credential that fails is not trusted to say where to read: its lists are not fetched, and the verdict says why.
    if (!report.verified && ask.fetch) for (const url of statusCheck.statusListUrls(doc)) ctx.unreadable.set(url, NOT_FETCHED);
    const checks = statusCheck.statusChecksOf(doc, ctx, subject);
    report.checks.push(...checks);
    if (checks.some((k) => k.valid === false)) report.verified = false;
  } else if (!ask.skip && statusAsk.namesStatus(doc)) report.checks.push(statusAsk.statusNotAsked(subject));
  const status = statusAsk.statusSummaryOf(ask, ctx, statusAsk.namesStatus(doc), report.checks as Check[]);
  return { report, status, anchoredOn: anchoredOnOf({ trust: opts.trust, issuer }) };
}

const NOT_FETCHED = 'not fetched: the standing does not verify, so the lists it names are not read on its word';

function read(path: string): Buffer {
  try {
    return path === '-' ? readStdin() : readFileSync(path);
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${path}: ${reasonOf(e)}`, { path });
  }
}

function standingOptions(cmd: Command): Command {
  return cmd
    .option('--trust <file>', 'the issuers and log keys you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', 'the issuer the standing must have (instead of --trust)')
    .option('--at <time>', 'check the validity window at this instant (ISO 8601 or epoch ms; default now)')
    .option('--from-node <url>', "recompute the figures from this node's log entries, read up to the standing's checkpoint (verify card: the agent's keys too)")
    .option('--log-range <file>', 'recompute the figures from saved log entries (GET /api/log/entries answers, one or an array)')
    .option('--status', "check revocation and suspension: read the status lists the standing names, and the node's status head")
    .option('--status-list <files...>', 'check revocation and suspension against these saved status lists (and status heads), offline')
    .option('--no-status', 'do not check revocation and suspension (the verdict line says so)')
    .option('--verbose', 'list every check, not only those that failed or could not run');
}

export function standingCommand(verify: Command, cli: Cli) {
  standingOptions(
    verify
      .command('standing')
      .summary("check an agent's standing, its status, and its figures against the log")
      .description("check an agent's standing credential offline, its status, and each figure recomputed from the log's entries (PROTOCOL 8.9)")
      .argument('<file>', 'the standing credential (akas standing -o FILE), or - for stdin'),
  ).action(
    action(cli, async (path: string, opts: StandingOpts) => {
      const doc = await checkable(path, async () => (await import('../../../verifier/report.js')).readJsonInput(read(path), 'a standing credential') as Json);
      const { report, status, anchoredOn } = await standingReport(doc, opts);
      const how = report.recomputedFrom === 'index' ? 'through the verifiable index' : `from the ${report.recomputedFrom}`;
      const figures = report.figures
        ? [`figures recomputed ${how}:`, ...Object.entries(report.figures).map(([k, v]) => `  ${v ? 'agrees' : 'DIFFERS'}  ${k}`)]
        : [];
      return finish(cli, report, {
        anchoredOn,
        status,
        verbose: opts.verbose,
        head: [`standing of ${report.tag ?? '?'} issued by ${report.issuer ?? '?'}`, ...figures],
        extra: () => ({ tag: report.tag, issuer: report.issuer, figures: report.figures ?? null, recomputedFrom: report.recomputedFrom ?? null }),
      });
    }),
  );
}

export function cardCommand(verify: Command, cli: Cli) {
  standingOptions(
    verify
      .command('card')
      .summary("check an A2A Agent Card: its JWS, the agent's key on the node, its standing")
      .description("check an A2A v1.0 Agent Card akas signed: its JWS with jose, the key against the agent's key history, its standing (PROTOCOL 8.9)")
      .argument('<file>', 'the card (akas card -o FILE), or - for stdin')
      .option('--agent-file <file...>', "the agent's public profile (akas agents TAG --json): its keys and their windows, offline"),
  ).action(
    action(cli, async (path: string, opts: StandingOpts & { agentFile?: string[] }) => {
      const card = await checkable(path, async () => (await import('../../../verifier/report.js')).readJsonInput(read(path), 'an Agent Card') as Json);
      const { checkCardSignatures, standingOfCard } = await import('../standing/card.js');
      const sigs = await checkCardSignatures(card);
      const standing = standingOfCard(card);
      const tag = standing?.credentialSubject?.tag;
      // The agent's keys: from its saved profile (offline), else from the node (--from-node, else --base-url).
      const profile = opts.agentFile?.length ? (readJsonFile(opts.agentFile[0]) as Json) : tag ? await agentProfile(cli, tag, opts.fromNode) : undefined;
      const { report, status, anchoredOn } = standing
        ? await standingReport(standing, opts, 'standing')
        : { report: { verified: false, anchored: true, unanchored: [], checks: [] as Check[] } as StandingReport, status: null, anchoredOn: null };
      const keyCheck = cardKeyCheck(sigs, profile, standing);
      report.checks.unshift(keyCheck);
      if (keyCheck.valid === false || !standing) report.verified = false;
      return finish(cli, report, {
        anchoredOn,
        status,
        verbose: opts.verbose,
        head: [`A2A Agent Card ${String(card.name)} of ${tag ?? '?'}: ${sigs.filter((s) => s.valid).length}/${sigs.length} signature(s) verify (jose)`],
        extra: () => ({ signatures: sigs, tag: tag ?? null }),
      });
    }),
  );
}

async function agentProfile(cli: Cli, tag: string, node: string | undefined): Promise<Json> {
  if (!node) return cli.client().get<Json>(`/api/agents/${tag}`);
  const url = `${node.replace(/\/$/, '')}/api/agents/${tag}`;
  const r = await boundedGet(url, { maxBytes: 1024 * 1024, headersMs: 15_000, totalMs: 30_000 }, { accept: 'application/json' }).catch((e) => {
    throw new CliError('unreachable', `Cannot read ${url}: ${reasonOf(e)}`, { url });
  });
  if (r.status !== 200) throw new CliError('unreachable', `${url} answered HTTP ${r.status}`, { url });
  return JSON.parse(Buffer.from(r.body).toString('utf8')) as Json;
}

/** The card's key check: a signature verifies, by a key that is the agent's (now or in its history) and the standing's subject. */
function cardKeyCheck(
  sigs: Awaited<ReturnType<typeof import('../standing/card.js').checkCardSignatures>>,
  profile: Json | undefined,
  standing: Json | undefined,
): Check {
  const good = sigs.filter((s) => s.valid);
  const keys = new Set<string>([profile?.signing?.publicKey, ...((profile?.signing?.priorKeys ?? []) as Json[]).map((k) => k.publicKey)].filter(Boolean));
  const standingKey = standing?.credentialSubject?.publicKey;
  // Each key that signed was the agent's (its current key or one of its history), and so is the key its standing names.
  const ok = good.length > 0 && good.every((s) => keys.has(s.publicKey!)) && keys.has(standingKey);
  const why = !sigs.length
    ? 'the card carries no signature'
    : !good.length
      ? `no signature verifies: ${sigs.map((s) => s.why).join('; ')}`
      : !standing
        ? 'the card carries no akas standing'
        : !profile
          ? 'no agent profile to read its keys from'
          : ok
            ? undefined
            : `the signing key ${good.find((s) => !keys.has(s.publicKey!))?.publicKey} is not one the node shows for ${profile.tag}`;
  return {
    id: 'standing.card',
    layer: 'L1',
    what: "the card's JWS (detached, over its JCS) verifies under the agent's key, one the node shows it held",
    valid: ok,
    why,
  };
}
