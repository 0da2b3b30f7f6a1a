// akas verify presentation: a W3C VC 2.0 verifiable presentation checked offline, its holder's
// proof and every credential it carries.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, readIssuerKeysFile, reasonOf, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, issuerArg, readStdin, timeArg, trustArg } from './shared.js';

export function presentationCommand(verify: Command, cli: Cli) {
  verify
    .command('presentation')
    .summary('check a W3C VC 2.0 presentation and its credentials offline')
    .description("check a W3C VC 2.0 verifiable presentation offline: its holder's proof (authentication, eddsa-jcs-2022) and every credential it carries")
    .argument('<file>', 'the presentation (- for stdin)')
    .option('--challenge <text>', 'the challenge you gave the holder: the proof must carry it')
    .option('--domain <domain...>', 'the domain(s) you gave the holder: the proof must carry exactly these')
    .option('--require-proof', 'refuse a presentation without a proof (otherwise reported as not checked)')
    .option('--at <time>', 'check the validity windows at this instant (ISO 8601 or epoch ms; default now)')
    .option('--trust <file>', 'the issuers you pin, each in its window, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window",
    )
    .option('--judge-signature', "also check the judge's own signature (L2) each judgment credential carries")
    .option('--status', "check each credential's revocation and suspension: read the status lists, and the node's status head, from the node")
    .option('--status-list <files...>', 'check revocation and suspension against these saved status lists (and status heads), offline')
    .option(
      '--no-status',
      'do not check revocation and suspension (the verdict line says so); without this, --status or --status-list, ' +
        'a credential that names a status list is STATUS UNKNOWN (exit 3)',
    )
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(
        cli,
        async (
          file: string,
          opts: {
            trust?: string;
            challenge?: string;
            domain?: string[];
            requireProof?: boolean;
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
          const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
          const { verifyPresentation, trustIssuerKeys } = await import('../../../verifier/index.js');
          let bytes: Buffer;
          try {
            bytes = file === '-' ? readStdin() : readFileSync(file);
          } catch (e) {
            throw new CliError('unreadable', `Cannot read ${file}: ${reasonOf(e)}`, { path: file });
          }
          const trust = pinned ? pinned.issuers : list && issuer ? trustIssuerKeys(issuer, list as never) : undefined;
          const domain = opts.domain === undefined ? undefined : opts.domain.length === 1 ? opts.domain[0] : opts.domain;
          const r = await checkable(file, () =>
            verifyPresentation(bytes, {
              at,
              issuer,
              trust,
              challenge: opts.challenge,
              domain,
              requireProof: opts.requireProof,
              checkJudgeSignature: opts.judgeSignature,
            }),
          );
          // Each carried credential's status (PROTOCOL 8.7): read, skipped on purpose, or said unknown.
          const statusAsk = await import('./status-ask.js');
          const ask = statusAsk.statusAskOf({ status: opts.status === true, statusList: opts.statusList, noStatus: opts.status === false });
          const { parseStrictJson } = await import('../../../src/core/strict-json.js');
          const parsed = parseStrictJson(bytes);
          const vcs =
            parsed.ok && parsed.value && typeof parsed.value === 'object'
              ? (parsed.value as { verifiableCredential?: unknown }).verifiableCredential
              : undefined;
          const carried = (Array.isArray(vcs) ? vcs : vcs === undefined ? [] : [vcs]).map((vc, i) => ({ vc, report: r.credentials[i] }));
          const named = !ask.skip && carried.some((x) => statusAsk.namesStatus(x.vc));
          let ctx: Awaited<ReturnType<typeof import('./status-check.js').readStatusLists>> | undefined;
          if (named && (ask.fetch || ask.files.length)) {
            const statusCheck = await import('./status-check.js');
            // Nothing is read for a credential whose proof or issuer failed.
            const held = carried.filter((x) => x.report?.verified);
            const issuers = pinned ? pinned.file.issuers.map((i) => i.did) : issuer ? [issuer] : [...new Set(held.map((x) => x.report.issuer ?? ''))];
            ctx = await statusCheck.readStatusLists(
              held.map((x) => x.vc),
              { fetch: ask.fetch, files: ask.files, trust, at, issuers },
            );
            for (const x of held) r.checks.push(...statusCheck.statusChecksOf(x.vc, ctx, x.report.subject));
          } else if (named) for (const x of carried) if (statusAsk.namesStatus(x.vc)) r.checks.push(statusAsk.statusNotAsked(x.report?.subject));
          if (r.checks.some((c) => c.valid === false)) r.verified = false;
          const { checks: _, ...rest } = r;
          return finish(cli, r, {
            anchoredOn: anchoredOnOf({ trust: opts.trust, issuer, issuerKeys: opts.issuerKeys }),
            status: statusAsk.statusSummaryOf(ask, ctx, named || (ask.skip && carried.some((x) => statusAsk.namesStatus(x.vc))), r.checks),
            verbose: opts.verbose,
            extra: rest,
            head: [`presentation${r.holder ? ` of ${r.holder}` : ''}: ${r.credentials.length} credential(s)`],
          });
        },
      ),
    );
}
