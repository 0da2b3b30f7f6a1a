// akas verify ...: offline checks, no node and no network (verifier/, loaded lazily inside
// each action). Exit codes: 0 the check holds, 1 it does not, 2 it could not be run
// (unreadable file, bad arguments). Two exceptions say so when they run: `verify manifest`
// asks the node (an HMAC only it can check), and `verify cas --node --fetch` fetches the bytes
// the artifact names (a URI its proposer chose: only when told to).
import type { Command } from 'commander';
import { CliError, usageError } from '../errors.js';
import { readIssuerKeysFile, readJsonFile, readSource } from '../input.js';
import { action, type Cli } from '../program.js';

/**
 * The `verify` command that every offline check hangs under. Other command groups add
 * their own subcommands to it (verify credential, verify bundle, ...) through this.
 */
export function verifyGroup(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'verify') ??
    program.command('verify').description('check credentials, judge signatures, log proofs and CAS hashes offline (no node, no network); `verify manifest` asks the node')
  );
}

interface CasOptions {
  sha256?: string;
  manifest?: string;
  node?: string;
  fetch?: boolean;
}

export function verifyCommands(program: Command, cli: Cli) {
  verifyGroup(program)
    .command('cas')
    .description('check that a file hashes to its recorded sha256, every {path, sha256} of a manifest, or the blob an artifact node names (exit 0 match, 1 mismatch, 2 unreadable)')
    .argument('[file]', 'the file to check (with --sha256, or --node)')
    .option('--sha256 <hex>', 'the sha256 FILE should hash to')
    .option('--manifest <file>', 'a JSON list of {path, sha256} (paths relative to the manifest)')
    .option('--node <file>', 'an artifact node as `akas node PATH --json` prints it (- for stdin): check FILE (offline) against its sha256 and size')
    .option('--fetch', 'with --node and no FILE: fetch the bytes from the uri the artifact names, from this machine (a URI its proposer chose)')
    .action(
      action(cli, async (file: string | undefined, opts: CasOptions) => {
        if (opts.fetch && opts.node === undefined) throw usageError('--fetch goes with --node NODE.json (the artifact whose uri to fetch)');
        if (opts.node !== undefined) {
          if (opts.sha256 !== undefined || opts.manifest !== undefined) throw usageError('--node takes the sha256 from the node: give no --sha256 or --manifest with it');
          if (opts.fetch && file !== undefined) throw usageError('give FILE (checked offline) or --fetch (the bytes fetched from the uri), not both');
          return (await import('../artifact-check.js')).verifyArtifactBlob(cli, opts.node, file, Boolean(opts.fetch));
        }
        const { normalizeSha256, readCasManifest, verifyCasFile, verifyCasManifest } = await import('../../verifier/index.js');
        const out = cli.output();

        if (opts.manifest !== undefined) {
          if (file !== undefined || opts.sha256 !== undefined) throw usageError('give either FILE --sha256 HEX or --manifest FILE, not both');
          let entries;
          try {
            entries = await readCasManifest(opts.manifest);
          } catch (e) {
            const err = e as NodeJS.ErrnoException;
            throw new CliError(2, err.code ? `Cannot read ${opts.manifest}: ${err.code}` : err.message, { code: 'unreadable', path: opts.manifest });
          }
          const r = await verifyCasManifest(entries);
          out.result(r, () =>
            [
              ...r.results.map((c) =>
                c.status === 'match'
                  ? `ok          ${c.path}`
                  : c.status === 'mismatch'
                    ? `MISMATCH    ${c.path}\n  expected ${c.expected}\n  actual   ${c.actual}`
                    : `UNREADABLE  ${c.path} (${c.reason})`,
              ),
              `${r.matched}/${r.checked} match${r.mismatched ? `, ${r.mismatched} mismatch` : ''}${r.unreadable ? `, ${r.unreadable} unreadable` : ''}`,
            ].join('\n'),
          );
          // A mismatch is a definite "no" (1); otherwise a file that could not be read leaves the check undone (2).
          return r.mismatched > 0 ? 1 : r.unreadable > 0 ? 2 : 0;
        }

        if (file === undefined || opts.sha256 === undefined) throw usageError('usage: akas verify cas FILE --sha256 HEX, akas verify cas --manifest FILE, or akas verify cas --node NODE.json (FILE | --fetch)');
        const expected = normalizeSha256(opts.sha256);
        if (!expected) throw usageError(`--sha256 must be 64 hex characters, got ${opts.sha256}`);
        const c = await verifyCasFile(file, expected);
        if (c.status === 'unreadable') throw new CliError(2, `Cannot read ${file}: ${c.reason}`, { code: 'unreadable', ...c });
        const ok = c.status === 'match';
        out.result({ ok, ...c }, () =>
          ok ? `ok  ${file}  sha256 ${c.actual} (${c.bytes} bytes)` : `MISMATCH  ${file}\n  expected ${c.expected}\n  actual   ${c.actual}`,
        );
        return ok ? 0 : 1;
      }),
    );
  verifyGroup(program)
    .command('judgments')
    .description("check every judge's Ed25519 signature (L2) of a proposal, and the content it signed, offline (exit 0 all hold, 1 one does not, 2 unreadable)")
    .argument('<file>', 'the proposal as `akas proposal ID --json` prints it (- for stdin)')
    .option('--agent <file...>', "judges' public profiles (`akas agents TAG --json`): also check each key was that judge's when it signed")
    .action(
      action(cli, async (file: string, opts: { agent?: string[] }) => {
        const { NotCheckableError, parseAgentKeys, verifyProposalJudgments } = await import('../../verifier/index.js');
        const out = cli.output();
        // Each input is read and recognised on its own, so a bad one is named in the error.
        const checkable = <T,>(path: string, read: () => T): T => {
          try {
            return read();
          } catch (e) {
            if (e instanceof NotCheckableError) throw new CliError(2, e.message, { code: 'not_checkable', path });
            throw e;
          }
        };
        const profiles = (opts.agent ?? []).map((f) => checkable(f, () => parseAgentKeys(readJsonFile(f), f)));
        const report = checkable(file, () => verifyProposalJudgments(readJsonFile(file), profiles));
        const keyNote = { current: 'current key', prior: 'prior key, in its window', 'not-the-judges': 'NOT the judge key', unchecked: 'key owner unchecked' };
        // The content first: with no judgment yet, it is the one thing checked (and may be why exit is 1).
        const content = report.content;
        const contentLines = !content
          ? []
          : content.ok
            ? [`ok    content ${content.contentSha256 ?? ''} (hashed here) is the contentSha256 the proposal states`]
            : ['FAIL  content', ...content.problems.map((p) => `      ${p}`)];
        out.result(report, () =>
          [
            ...contentLines,
            ...report.checks.map((c) =>
              [
                `${c.ok ? 'ok  ' : 'FAIL'}  ${c.judgmentId}  by ${c.agentTag}  (${keyNote[c.key]}; ${c.signed === 'v2' ? 'signed the content' : c.signed === 'v1' ? "v1: content bound by the node's word only" : 'unknown payload'})`,
                ...c.problems.map((p) => `      ${p}`),
              ].join('\n'),
            ),
            report.checked === 0
              ? `${report.proposalId} has no judgments to check${content && !content.ok ? '; its content does not hold (above)' : ''}`
              : `${report.checked - report.failed}/${report.checked} judgments of ${report.proposalId} hold` +
                (report.contentSha256 ? `, over content ${report.contentSha256} (hashed here)` : '') +
                (report.keysUnchecked ? `; ${report.keysUnchecked} key owner(s) unchecked (pass --agent PROFILE.json to tie keys to judges)` : ''),
          ].join('\n'),
        );
        return report.ok ? 0 : 1;
      }),
    );

  verifyGroup(program)
    .command('node')
    .description('check a published node or brief offline against its evidence: what is served is the content judged, the manifest signed by the node, the publication in the log (exit 0 holds, 1 does not, 2 unreadable)')
    .argument('<file>', 'the node as `akas node PATH --json` prints it, or a brief as `akas brief ID --json` prints it (- for stdin)')
    .option('--issuer <did>', "the node's issuer DID to pin (akas node-keys prints it; or the node's /healthz)")
    .option('--issuer-keys <file>', "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys), to follow the pinned issuer's signed rotations")
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key); else the one the pinned --issuer endorses")
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { issuer?: string; issuerKeys?: string; logKey?: string; verbose?: boolean }) => {
        if (opts.issuer !== undefined && !/^did:key:z[1-9A-HJ-NP-Za-km-z]+$/.test(opts.issuer)) throw usageError(`--issuer must be a did:key (did:key:z6Mk...), got ${opts.issuer}`);
        if (opts.issuerKeys && !opts.issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const { verifyNode, NotCheckableError, tally } = await import('../../verifier/index.js');
        const text = readSource(file);
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        let report;
        try {
          report = verifyNode(text, { issuer: opts.issuer, issuerKeys: list as never, logKey: opts.logKey });
        } catch (e) {
          if (e instanceof NotCheckableError) throw new CliError(2, e.message, { code: 'not_checkable', path: file });
          throw e;
        }
        const t = tally(report.checks);
        cli.output().result({ ...report, ...t }, () => {
          const mark = (v: boolean | null) => (v === true ? 'ok  ' : v === false ? 'FAIL' : '--  ');
          const lines = [
            `${report.shape === 'brief' ? 'brief' : report.kind} ${report.path}` +
              (report.proposalId ? `, published by ${report.proposalId} (content ${report.contentSha256 ?? '?'}${report.contentBinding === 'store' ? "; stored before content binding: bound by the node's store, not by the log" : ''})` : ''),
          ];
          for (const ch of report.checks) {
            if (!opts.verbose && ch.valid === true) continue;
            lines.push(`  ${mark(ch.valid)}  ${ch.layer.padEnd(7)} ${ch.id.padEnd(20)} ${ch.valid === true ? ch.what : (ch.why ?? ch.what)}`);
          }
          lines.push(`held ${t.held}, failed ${t.failed}, not checked ${t.unchecked} (never counted as verified)${opts.verbose ? '' : '; --verbose lists every check'}`);
          return lines.join('\n');
        });
        return report.verified ? 0 : 1;
      }),
    );
}
