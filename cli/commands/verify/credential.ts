// akas verify credential: W3C VC 2.0 credentials checked offline and strictly, many at once on
// every core (cli/commands/verify/pool.ts), with a progress bar on a terminal.
import type { Command } from 'commander';
import { type Output, readIssuerKeysFile, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import type { CredentialReport } from '../../../verifier/index.js';
import type { StatusContext, StatusInputs } from './status-check.js';
import { anchoredOnOf, failing, finish, issuerArg, mark, readStdin, timeArg, trustArg } from './shared.js';

async function progressBar(out: Output, total: number) {
  if (!out.interactive || total < 50) return undefined;
  let view: typeof import('../../views/progress.js');
  try {
    view = await import('../../views/progress.js');
  } catch {
    return undefined; // the single-file verifier (dist/akas-verify.mjs) has no terminal views: no bar
  }
  return view.startProgress(out.io.stdout as NodeJS.WriteStream, 'verifying', total, view.items);
}

type Result = CredentialReport & { source: string };
type Unread = { source: string; reason: string };
const isStatus = (k: { id: string }) => k.id === 'status' || k.id.startsWith('status.');

/** The batch as one report: an input that could not be read is a failed `input` check (exit 2: the check could not run on it). */
function batchReport(results: Result[], unreadable: Unread[]) {
  const inputChecks = unreadable.map((u) => ({
    id: 'input' as const,
    layer: 'input' as const,
    what: 'the input is a credential in strict JSON',
    valid: false,
    why: u.reason,
    subject: u.source,
  }));
  const checks: Array<Result['checks'][number]> = [...inputChecks];
  for (const r of results) for (const k of r.checks) checks.push(k);
  const unanchored = [...new Set(results.filter((r) => !r.anchored).flatMap((r) => r.unanchored))];
  const failed = results.filter((r) => !r.verified).length;
  const batch = { verified: failed === 0 && inputChecks.length === 0 && results.length > 0, anchored: unanchored.length === 0, unanchored, checks };
  return { batch, checks, failed, unanchored };
}

/**
 * The lines before the verdict: each credential that did not hold (every one with --verbose, or
 * in a batch of 20 or fewer) with its checks, each input that could not be read, the status
 * left unknown (20 credentials at most), and the tally.
 */
function batchLines(results: Result[], unreadable: Unread[], failed: number, verbose: boolean | undefined): string[] {
  const many = results.length > 20;
  const lines = results
    .filter((r) => verbose || !many || !r.verified)
    .flatMap((r) => [
      `${mark(r.verified)}  ${r.source}  ${r.subject ?? ''}  ${r.issuer ? `issuer ${r.issuer}` : ''}`.trimEnd(),
      ...(verbose ? r.checks : failing(r.checks)).map((c) => `      ${mark(c.valid)} ${c.layer} ${c.id}: ${c.valid === true ? c.what : (c.why ?? c.what)}`),
    ]);
  for (const u of unreadable) lines.push(`--    ${u.source}: could not be read (${u.reason})`);
  const unknown = results.filter((r) => r.verified && r.checks.some((k) => k.valid === null && isStatus(k)));
  for (const r of unknown.slice(0, 20))
    for (const k of r.checks.filter((k) => k.valid === null && isStatus(k)).slice(0, 2)) lines.push(`--    ${r.source}  ${k.id}: ${k.why ?? k.what}`);
  lines.push(
    `${results.length - failed}/${results.length} credential(s) hold${failed ? `, ${failed} do(es) not` : ''}` +
      `${unreadable.length ? `; ${unreadable.length} input(s) unreadable` : ''}` +
      (unknown.length ? `; status unknown for ${unknown.length}` : ''),
  );
  return lines;
}

/**
 * The status read after the batch (the lists to fetch are known only from the credentials),
 * each credential's checks added to its report. Checked first, fetched after: a credential whose
 * proof or pinned issuer fails sends this reader nowhere.
 */
async function statusAfter(
  statusCheck: typeof import('./status-check.js'),
  results: Result[],
  checkedStatus: unknown[],
  inputs: Omit<StatusInputs, 'issuers'> & { issuers?: string[] },
): Promise<StatusContext> {
  const held = checkedStatus.filter((_, i) => results[i].verified);
  const issuers = [...new Set(results.filter((r) => r.verified).map((r) => r.issuer))].filter((i): i is string => i !== undefined);
  const ctx = await statusCheck.readStatusLists(held, { ...inputs, issuers: inputs.issuers ?? issuers });
  for (const [i, r] of results.entries()) {
    const checks = statusCheck.statusChecksOf(checkedStatus[i], ctx, r.subject);
    r.checks.push(...checks);
    if (checks.some((k) => k.valid === false)) r.verified = false;
  }
  return ctx;
}

/** The lists as the threads are handed them: data only (saved lists have no version records to give reasons from). */
const listsOnly = ({ lists, unreadable, listChecks }: StatusContext) => ({ lists, unreadable, listChecks });

/** The options of `akas verify credential`. */
function credentialOptions(cmd: Command): Command {
  return cmd
    .option('--at <time>', 'check the validity window at this instant (ISO 8601 or epoch ms; default now)')
    .option('--trust <file>', 'the issuers you pin, each in its window, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window",
    )
    .option('--judge-signature', "also check the judge's own signature (L2) a judgment credential carries")
    .option('--status', "check revocation and suspension: read each status list the credentials name, and the node's status head, from the node")
    .option('--status-list <files...>', 'check revocation and suspension against these saved status lists (and status heads), offline')
    .option(
      '--no-status',
      'do not check revocation and suspension (the verdict line says so); without this, --status or --status-list, ' +
        'a credential that names a status list is STATUS UNKNOWN (exit 3)',
    )
    .option('--verbose', 'list every check of every credential, not only those that failed or could not run');
}

export function credentialCommand(verify: Command, cli: Cli) {
  credentialOptions(
    verify
      .command('credential')
      .summary('check W3C VC 2.0 credentials offline, with their status')
      .description('check W3C VC 2.0 credentials (eddsa-jcs-2022) offline, strictly: files, folders, - for stdin, or JSON lines')
      .argument('<inputs...>', 'credential files, folders of .json/.jsonl files, or - (stdin)'),
  ).action(
    action(
      cli,
      async (
        paths: string[],
        opts: {
          trust?: string;
          at?: string;
          issuer?: string;
          issuerKeys?: string;
          judgeSignature?: boolean;
          status?: boolean;
          statusList?: string[];
          verbose?: boolean;
        },
      ) => {
        const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer, '--issuer-keys': opts.issuerKeys });
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const { isUnreadable, startWorkers, verifyMany } = await import('./pool.js');
        const { listInputFiles, readCredentialInputs } = await import('./credential-inputs.js');
        const statusAsk = await import('./status-ask.js');
        const { checksOut, isStatusCheck } = await import('../../../verifier/report.js');
        // commander: --status sets status true, --no-status sets it false, neither leaves it undefined.
        const ask = statusAsk.statusAskOf({ status: opts.status === true, statusList: opts.statusList, noStatus: opts.status === false });
        const out = cli.output();
        // The key list as GET /api/node/keys answers it ({issuer: {keys, rotations}}), or its issuer part alone.
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const listed = listInputFiles(paths);
        // A large batch's workers load while this thread reads it (cli/commands/verify/pool.ts).
        const started = await startWorkers(listed.bytes);
        const { inputs, unreadable } = readCredentialInputs(listed, readStdin);
        const bar = await progressBar(out, inputs.length);
        const results: Result[] = [];
        const withStatus = ask.fetch || ask.files.length > 0;
        const statusCheck = withStatus ? await import('./status-check.js') : undefined;
        // Status (PROTOCOL 8.7): each credential's entries read in the lists, checked first; the
        // lists' issuer is pinned as the credentials' is (--trust, or --issuer with its key list).
        // The lists' issuer trust (the credentials' own is rebuilt in each thread from plain values).
        const trust = !withStatus
          ? undefined
          : pinned
            ? pinned.issuers
            : list && issuer
              ? (await import('../../../verifier/issuer-keys.js')).trustIssuerKeys(issuer, list as never)
              : undefined;
        const pinnedDids = pinned ? pinned.file.issuers.map((i) => i.did) : issuer ? [issuer] : undefined;
        const statusInputs = { fetch: ask.fetch, files: ask.files, trust, at };
        // Saved lists with the issuer pinned are read first, and each thread checks the status of
        // what it verifies; lists to fetch are known only from the credentials, so read after.
        const before = withStatus && !ask.fetch && pinnedDids;
        const readFirst = before && statusCheck ? await statusCheck.readStatusLists([], { ...statusInputs, issuers: pinnedDids }) : undefined;
        const { reports, statuses } = await verifyMany(
          inputs.map((i) => i.bytes),
          {
            at,
            issuer,
            issuerKeys: list as never,
            trustIssuers: pinned?.file.issuers,
            checkJudgeSignature: opts.judgeSignature,
            keepStatus: withStatus && !before,
            // Neither read nor skipped: each thread says the status of a credential that names a list is unknown.
            statusUnread: !withStatus && !ask.skip,
            status: readFirst ? listsOnly(readFirst) : undefined,
          },
          (done) => bar?.update(done),
          started,
        );
        // Each checked credential's credentialStatus, as the verifier parsed it (the status check parses nothing again).
        const checkedStatus: Array<{ credentialStatus?: unknown; validFrom?: unknown }> = [];
        for (const [i, input] of inputs.entries()) {
          const r = reports[i];
          // Input that is not strict JSON is not a credential that failed: the check could not run on it.
          if (isUnreadable(r)) unreadable.push({ source: input.source, reason: r.checks[0].why! });
          else {
            results.push({ source: input.source, ...r });
            if (withStatus && !before) checkedStatus.push((statuses[i] as (typeof checkedStatus)[number] | undefined) ?? {});
          }
        }
        bar?.finish();
        const ctx = statusCheck && !before ? await statusAfter(statusCheck, results, checkedStatus, { ...statusInputs, issuers: pinnedDids }) : readFirst;
        const named = ask.skip || results.some((r) => r.checks.some((k) => isStatusCheck(k.id)));
        const { batch, checks, failed, unanchored } = batchReport(results, unreadable);
        const code = await finish(cli, batch, {
          anchoredOn: anchoredOnOf({ trust: opts.trust, issuer, issuerKeys: opts.issuerKeys }),
          status: statusAsk.statusSummaryOf(ask, ctx, named, checks),
          verbose: opts.verbose,
          ownChecks: true,
          head: batchLines(results, unreadable, failed, opts.verbose),
          extra: () => ({
            total: results.length,
            held: results.length - failed,
            failed,
            unreadable,
            issuerPinned: unanchored.length === 0,
            results: results.map((r) => ({ ...r, checks: checksOut(r.checks) })),
          }),
        });
        // Input that could not be read: the check could not run on it (2), whatever else held.
        return unreadable.length > 0 || results.length === 0 ? 2 : code;
      },
    ),
  );
}
