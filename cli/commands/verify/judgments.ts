// akas verify judgments: every judge's Ed25519 signature (L2) of a proposal, and the content it
// signed, offline; with --agent-file, that each key was its judge's when it signed; with --trust
// FILE, that each key is one the trust file pins for that judge (its `agents` section, PROTOCOL 8.6).
// The verdict rests on the judges' keys, so that is what anchors it: a judge whose key no
// profile or pin ties to it leaves the verdict unanchored (exit 3), a key other than the one
// pinned fails (exit 1).
import type { Command } from 'commander';
import type { AgentKeys } from '../../../verifier/judgment.js';
import { CliError, readJsonFile, readSource, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish } from './shared.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The judges' keys a trust file pins (`agents: [{tag, publicKey, validFrom, validUntil}]`), as
 * the profiles verifyProposalJudgments takes: each pinned key a key of its judge within its
 * window (no current key without a bound). A file without the section pins no judge (older
 * files stay valid); the rest of the file is read by the one trust file parser (verifier/trust.ts).
 */
async function trustedJudges(path: string): Promise<{ profiles: AgentKeys[]; tags: Set<string> }> {
  const text = readSource(path);
  const { parseTrust, TrustFileError } = await import('../../../verifier/trust.js');
  const { parseStrictJson } = await import('../../../src/core/strict-json.js');
  const { isDateTimeStamp, timeOf } = await import('../../../src/core/credential.js');
  const notOne = (why: string) => new CliError('not_a_trust_file', `${path} is not a trust file: ${why}`, { path });
  try {
    parseTrust(text);
  } catch (e) {
    if (e instanceof TrustFileError) throw notOne(e.message);
    throw e;
  }
  const doc = (parseStrictJson(text) as { value: Json }).value;
  if (doc.agents === undefined) return { profiles: [], tags: new Set() };
  if (!Array.isArray(doc.agents)) throw notOne('agents is not an array');
  const byTag = new Map<string, AgentKeys>();
  doc.agents.forEach((a, i) => {
    if (!isObject(a) || typeof a.tag !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(a.tag)) throw notOne(`agents[${i}].tag is not an agent tag`);
    if (typeof a.publicKey !== 'string' || !/^[0-9a-f]{64}$/.test(a.publicKey))
      throw notOne(`agents[${i}].publicKey is not a raw Ed25519 key in 64 lowercase hex (akas agents TAG --json: signing.publicKey)`);
    const bound = (v: unknown, field: string, open: number) => {
      if (v === null || v === undefined) return open;
      if (!isDateTimeStamp(v)) throw notOne(`agents[${i}].${field} is ${JSON.stringify(v)}: an ISO 8601 dateTimeStamp (with its zone), or null`);
      return timeOf(v);
    };
    const validFrom = bound(a.validFrom, 'validFrom', -Infinity);
    const validUntil = bound(a.validUntil, 'validUntil', Infinity);
    if (!(validFrom < validUntil)) throw notOne(`agents[${i}]: validFrom is not before validUntil`);
    const p = byTag.get(a.tag) ?? { tag: a.tag, signing: { publicKey: '', validFrom: Infinity, priorKeys: [] } };
    p.signing.priorKeys.push({ publicKey: a.publicKey, validFrom, validUntil });
    byTag.set(a.tag, p);
  });
  return { profiles: [...byTag.values()], tags: new Set(byTag.keys()) };
}

/** What a judgment's signature covers, in words. */
const signedNote = (signed: string) =>
  signed === 'v2' ? 'signed the content' : signed === 'v1' ? "v1: content bound by the node's word only" : 'unknown payload';

export function judgmentsCommand(verify: Command, cli: Cli) {
  verify
    .command('judgments')
    .summary("check every judge's signature of a proposal offline")
    .description(
      "check every judge's Ed25519 signature (L2) of a proposal, and the content it signed, offline (exit 0 all hold, 1 one does not, 2 " +
        "unreadable, 3 a judge's key not tied to it by --agent-file or --trust)",
    )
    .argument('<file>', 'the proposal as `akas show ID --json` prints it (- for stdin)')
    .option('--agent-file <file...>', "judges' public profiles (`akas agents TAG --json`): also check each key was that judge's when it signed")
    .option('--trust <file>', "a trust file (akas.trust.v1, PROTOCOL 8.6) whose agents section pins the judges' keys, each in its window")
    .option('--verbose', 'list every judgment, not only those that failed or could not be tied to their judge')
    .action(
      action(cli, async (file: string, opts: { agentFile?: string[]; trust?: string; verbose?: boolean }) => {
        const { parseAgentKeys, verifyProposalJudgments } = await import('../../../verifier/index.js');
        if (opts.trust !== undefined && opts.agentFile?.length)
          throw usageError('--trust pins the judges: leave out --agent-file (or add their keys to the trust file: agents)');
        // Each input is read and recognised on its own, so a bad one is named in the error.
        const pinned = opts.trust !== undefined ? await trustedJudges(opts.trust) : undefined;
        const profiles = pinned
          ? pinned.profiles
          : await Promise.all((opts.agentFile ?? []).map((f) => checkable(f, () => parseAgentKeys(readJsonFile(f), f))));
        const report = await checkable(file, () => verifyProposalJudgments(readJsonFile(file), profiles));
        if (pinned)
          for (const c of report.checks) c.problems = c.problems.map((p) => p.replace('(per the profile given)', '(per the keys the trust file pins)'));
        const keyNote = pinned
          ? {
              current: 'pinned key',
              prior: 'key the trust file pins, in its window',
              'not-the-judges': 'NOT a key the trust file pins',
              unchecked: 'key not pinned',
            }
          : { current: 'current key', prior: 'prior key, in its window', 'not-the-judges': 'NOT the judge key', unchecked: 'key owner unchecked' };
        // The content first: with no judgment yet, it is the one thing checked (and may be why exit is 1).
        const content = report.content;
        const contentLines = !content
          ? []
          : content.ok
            ? [`ok    content ${content.contentSha256 ?? ''} (hashed here) is the contentSha256 the proposal states`]
            : ['FAIL  content', ...content.problems.map((p) => `      ${p}`)];
        const unpinned = [...new Set(report.checks.filter((c) => c.key === 'unchecked').map((c) => c.agentTag))];
        // The report as named checks (one per judgment, and the content): the one verdict shape every verify command ends with.
        const checks = [
          ...(content
            ? [
                {
                  id: 'content.hash' as const,
                  layer: 'content' as const,
                  what: 'the content shown hashes to the contentSha256 the proposal states',
                  valid: content.ok,
                  why: content.ok ? content.contentSha256 : content.problems.join('; '),
                },
              ]
            : []),
          ...report.checks.map((c) => ({
            id: 'judgment.signature' as const,
            layer: 'L2' as const,
            what: `${c.agentTag}'s Ed25519 signature (${keyNote[c.key]}; ${signedNote(c.signed)})`,
            valid: c.ok ? (c.key === 'unchecked' ? null : true) : false,
            ...(c.problems.length ? { why: c.problems.join('; ') } : c.key === 'unchecked' ? { why: `${keyNote.unchecked}: not tied to ${c.agentTag}` } : {}),
            subject: c.judgmentId,
          })),
        ];
        const verdictable = { verified: report.ok, anchored: report.anchored, unanchored: report.unanchored, checks };
        return finish(cli, verdictable, {
          anchoredOn: anchoredOnOf({ trust: opts.trust, agents: opts.agentFile }),
          status: null,
          verbose: opts.verbose,
          extra: { ...report, judgments: report.checks, ...(pinned ? { pinnedBy: 'trust' } : {}) },
          // Every judgment, one line each (a proposal has a few): what held is worth seeing here.
          ownChecks: true,
          head: [
            ...contentLines,
            ...report.checks.map((c) =>
              [
                `${c.ok ? 'ok  ' : 'FAIL'}  ${c.judgmentId}  by ${c.agentTag}  (${keyNote[c.key]}; ${signedNote(c.signed)})`,
                ...c.problems.map((p) => `      ${p}`),
              ].join('\n'),
            ),
          ],
          tail: [
            report.checked === 0
              ? `${report.proposalId} has no judgments to check${content && !content.ok ? '; its content does not hold (above)' : ''}`
              : `${report.checked - report.failed}/${report.checked} judgments of ${report.proposalId} hold` +
                (report.contentSha256 ? `, over content ${report.contentSha256} (hashed here)` : '') +
                (report.keysUnchecked
                  ? pinned
                    ? `; ${report.keysUnchecked} judge key(s) not pinned by ${opts.trust}`
                    : `; ${report.keysUnchecked} key owner(s) unchecked (pass --agent-file PROFILE.json to tie keys to judges)`
                  : ''),
          ],
          unanchoredHint: pinned
            ? `${opts.trust} pins no key for ${unpinned.join(', ')}; pin ${unpinned.length === 1 ? 'it' : 'them'}: ` +
              'an agents entry {tag, publicKey, validFrom, validUntil} for each judge (akas agents TAG --json shows its keys)'
            : undefined,
        });
      }),
    );
}
