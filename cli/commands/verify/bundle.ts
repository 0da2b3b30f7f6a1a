// akas verify bundle: an exported bundle (`akas export`) checked offline, layer by layer (the
// content judged is the content published, L2, L1, CAS, L3), saying what it could not check.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, readIssuerKeysFile, reasonOf, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, issuerArg, mark, readStdin, timeArg, trustArg, witnessPolicyArg } from './shared.js';

export function bundleCommand(verify: Command, cli: Cli) {
  verify
    .command('bundle')
    .summary('check an exported bundle offline: content, signatures, credentials, log')
    .description(
      'check an exported bundle offline: the content judged is the content published, judge signatures (L2), credentials (L1), log events ' +
        '(L3), content hashes; says what it could not check',
    )
    .argument('<file>', 'the bundle (`akas export ID > bundle.json`), or - for stdin')
    .option('--trust <file>', 'the issuers, log keys and witness quorum you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--blobs <dir>', 'a folder of the referenced bytes, each file named by its sha256 (`akas export --blobs DIR`)')
    .option('--issuer <did>', "the node's issuer DID to pin (akas node-keys prints it; or the node's /healthz)")
    .option('--at <time>', 'check credential validity at this instant (ISO 8601 or epoch ms; default now)')
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys) as you fetched it: its signed rotations are followed too," +
        " so a bundle exported before a rotation verifies pinned on today's issuer",
    )
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key: akas node-keys prints it); else the one the pinned --issuer endorses")
    .option(
      '--witness <key>',
      "a witness whose cosignature of the bundle's checkpoint counts (NAME+KEYID+KEY); repeatable",
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--witness-quorum <k>', 'how many of the given witnesses must have cosigned (default: all)')
    .option('--no-status', 'do not count the stapled status lists (revocation, suspension): the verdict line says they were not checked')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(
        cli,
        async (
          file: string,
          opts: {
            trust?: string;
            blobs?: string;
            issuer?: string;
            issuerKeys?: string;
            at?: string;
            logKey?: string;
            witness: string[];
            witnessQuorum?: string;
            status?: boolean;
            verbose?: boolean;
          },
        ) => {
          const pinned = await trustArg(opts.trust, {
            '--issuer': opts.issuer,
            '--issuer-keys': opts.issuerKeys,
            '--log-key': opts.logKey,
            '--witness': opts.witness,
            '--witness-quorum': opts.witnessQuorum,
          });
          const witnesses = pinned ? pinned.witnesses : witnessPolicyArg(opts.witness, opts.witnessQuorum);
          const at = timeArg(opts.at);
          const issuer = issuerArg(opts.issuer);
          if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
          const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
          const { verifyBundle, blobsInFolder } = await import('../../../verifier/index.js');
          let bytes: Buffer;
          try {
            bytes = file === '-' ? readStdin() : readFileSync(file);
          } catch (e) {
            throw new CliError('unreadable', `Cannot read ${file}: ${reasonOf(e)}`, { path: file });
          }
          const { inflateNode: inflate } = await import('./status-check.js');
          let report;
          try {
            report = await checkable(file, () =>
              verifyBundle(bytes, {
                blobs: opts.blobs ? blobsInFolder(opts.blobs) : undefined,
                issuer,
                issuerKeys: list as never,
                at,
                logKey: opts.logKey,
                trust: pinned?.issuers,
                logKeys: pinned?.logKeys,
                witnesses,
                inflate,
              }),
            );
          } catch (e) {
            const err = e as NodeJS.ErrnoException;
            if (!CliError.is(e) && err.code) throw new CliError('unreadable', `Cannot read ${opts.blobs}: ${err.code}`, { path: opts.blobs });
            throw e;
          }
          // --no-status: the status checks are left out, and the verdict line says so.
          const skip = opts.status === false;
          const { isStatusCheck } = await import('../../../verifier/report.js');
          const checks = skip ? report.checks.filter((c) => !isStatusCheck(c.id)) : report.checks;
          const counted = { verified: !checks.some((c) => c.valid === false), anchored: report.anchored, unanchored: report.unanchored, checks };
          const status: import('../../../verifier/report.js').StatusSummary = skip
            ? { checked: false, source: 'skipped', lists: [] }
            : report.status
              ? { checked: !checks.some((c) => c.valid === null && isStatusCheck(c.id)), source: 'stapled', lists: report.status.lists }
              : { checked: false, source: 'stapled', lists: [] };
          const { checks: _, ...rest } = report;
          return finish(cli, counted, {
            anchoredOn: anchoredOnOf({ trust: opts.trust, issuer, issuerKeys: opts.issuerKeys, logKey: opts.logKey }),
            status,
            verbose: opts.verbose,
            ownChecks: true,
            extra: rest,
            head: bundleLines(report, checks, opts.verbose),
            tail: report.status?.withdrawn.length ? [`withdrawn: ${report.status.withdrawn.map((w) => `${w.judgmentId} (${w.purpose})`).join(', ')}`] : [],
          });
        },
      ),
    );
}

type BundleReport = Awaited<ReturnType<typeof import('../../../verifier/index.js').verifyBundle>>;

// The report by layer: each layer's tally, then what failed and each distinct reason a check
// could not run (every check with --verbose).
function bundleLines(report: BundleReport, checks: BundleReport['checks'], verbose?: boolean): string[] {
  const order = ['input', 'content', 'L2', 'L1', 'CAS', 'L3'];
  const titles: Record<string, string> = {
    input: 'input',
    content: 'content  judged = published',
    L1: 'L1  credentials',
    L2: 'L2  judge signatures',
    L3: "L3  the node's log and MACs",
    CAS: 'CAS content hashes',
  };
  const b = report.binding;
  const lines = [
    `bundle of ${report.proposalId} (${report.kind}), ${report.format}`,
    ...(report.contentSha256
      ? [
          `content sha256 ${report.contentSha256} (recomputed here); judges who signed it: ${b.judgesSigned}` +
            (b.nodeOnly ? `, v1 judgments bound by the node's word only: ${b.nodeOnly}` : '') +
            (b.submitted === 'store' ? "; stored before content binding: bound by the node's store, not by the log" : ''),
        ]
      : []),
  ];
  for (const layer of order) {
    const inLayer = checks.filter((c) => c.layer === layer);
    if (!inLayer.length) continue;
    const held = inLayer.filter((c) => c.valid === true).length;
    const failed = inLayer.filter((c) => c.valid === false).length;
    const unchecked = inLayer.length - held - failed;
    lines.push(`${titles[layer].padEnd(34)} ${held} held${failed ? `, ${failed} FAILED` : ''}${unchecked ? `, ${unchecked} not checked` : ''}`);
    const seen = new Set<string>();
    for (const c of verbose ? inLayer : inLayer.filter((c) => c.valid !== true)) {
      const text = c.valid === true ? c.what : (c.why ?? c.what);
      if (c.valid === null && !verbose) {
        if (seen.has(c.id + text)) continue;
        seen.add(c.id + text);
      }
      lines.push(`  ${mark(c.valid)}  ${c.id.padEnd(28)} ${c.valid === null && !verbose ? '' : `${c.subject ?? ''}  `}${text}`);
    }
  }
  return lines;
}
