// akas verify credential | verify bundle, and akas export: the auditor's L1 toolkit
// (PROTOCOL 8). The verifications run offline (verifier/, loaded inside the actions); export
// is the one call to a node. Exit codes: 0 every check that ran holds, 1 one does not, 2 the
// check could not run (unreadable input, not JSON, bad arguments).
import type { Command } from 'commander';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, usageError } from '../errors.js';
import { readIssuerKeysFile } from '../input.js';
import type { Output } from '../output.js';
import { action, type Cli } from '../program.js';
import type { CredentialReport } from '../../verifier/index.js';
import { verifyGroup } from './verify.js';
import { witnessPolicyArg } from './witness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface CheckLike {
  id: string;
  layer: string;
  what: string;
  valid: boolean | null;
  why?: string;
  subject?: string;
}

/** `--at`: an ISO 8601 time or epoch milliseconds. */
export function timeArg(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(t)) throw usageError(`--at must be an ISO 8601 time or epoch milliseconds, got ${value}`);
  return t;
}

function issuerArg(value: string | undefined) {
  if (value !== undefined && !/^did:key:z[1-9A-HJ-NP-Za-km-z]+$/.test(value)) throw usageError(`--issuer must be a did:key (did:key:z6Mk...), got ${value}`);
  return value;
}

const mark = (v: boolean | null) => (v === true ? 'ok  ' : v === false ? 'FAIL' : '--  ');
const failing = (checks: CheckLike[]) => checks.filter((c) => c.valid === false);

/** Reads the process's stdin whole (for `-`). */
const readStdin = () => readFileSync(0);

async function progressBar(out: Output, total: number) {
  if (!out.interactive || total < 50) return undefined;
  let view: typeof import('../views/progress.js');
  try {
    view = await import('../views/progress.js');
  } catch {
    return undefined; // the single-file verifier (dist/akas-verify.mjs) has no terminal views: no bar
  }
  return view.startProgress(out.io.stdout as NodeJS.WriteStream, 'verifying', total, view.items);
}

export function credentialCommands(program: Command, cli: Cli) {
  verifyGroup(program)
    .command('credential')
    .description('check W3C VC 2.0 credentials (eddsa-jcs-2022) offline, strictly: files, folders, - for stdin, or JSON lines')
    .argument('<inputs...>', 'credential files, folders of .json/.jsonl files, or - (stdin)')
    .option('--at <time>', 'check the validity window at this instant (ISO 8601 or epoch ms; default now)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option('--issuer-keys <file>', "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window")
    .option('--judge-signature', "also check the judge's own signature (L2) a judgment credential carries")
    .action(
      action(cli, async (paths: string[], opts: { at?: string; issuer?: string; issuerKeys?: string; judgeSignature?: boolean }) => {
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const { verifyMany } = await import('../verify-pool.js');
        const { readCredentialInputs } = await import('../credential-inputs.js');
        const out = cli.output();
        // The key list as GET /api/node/keys answers it ({issuer: {keys, rotations}}), or its issuer part alone.
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { inputs, unreadable } = readCredentialInputs(paths, readStdin);
        const bar = await progressBar(out, inputs.length);
        const results: Array<CredentialReport & { source: string }> = [];
        // Many credentials are checked on every core (cli/verify-pool.ts), in input order.
        const reports = await verifyMany(
          inputs.map((i) => i.bytes),
          { at, issuer, issuerKeys: list as never, checkJudgeSignature: opts.judgeSignature },
          (done) => bar?.update(done),
        );
        for (const [i, input] of inputs.entries()) {
          const r = reports[i];
          // Text that is not JSON at all is not a credential that failed: the check could not run on it.
          const first = r.checks[0];
          if (first.id === 'json' && first.valid === false && first.why?.startsWith('not JSON')) unreadable.push({ source: input.source, reason: first.why });
          else results.push({ source: input.source, ...r });
        }
        bar?.finish();
        const failed = results.filter((r) => !r.verified).length;
        const unpinned = !issuer;
        const summary = {
          verified: failed === 0 && unreadable.length === 0,
          total: results.length,
          held: results.length - failed,
          failed,
          unreadable,
          issuerPinned: !unpinned,
          results,
        };
        out.result(summary, () => {
          const many = results.length > 20;
          const lines = results
            .filter((r) => !many || !r.verified)
            .flatMap((r) => [
              `${mark(r.verified)}  ${r.source}  ${r.subject ?? ''}  ${r.issuer ? `issuer ${r.issuer}` : ''}`.trimEnd(),
              ...failing(r.checks).map((c) => `      ${c.layer} ${c.id}: ${c.why ?? c.what}`),
            ]);
          for (const u of unreadable) lines.push(`--    ${u.source}: could not be read (${u.reason})`);
          lines.push(
            `${summary.held}/${results.length} credential(s) hold${failed ? `, ${failed} do(es) not` : ''}${unreadable.length ? `; ${unreadable.length} input(s) unreadable` : ''}` +
              (unpinned ? '; issuer not pinned (--issuer DID ties the credentials to a node)' : ''),
          );
          return lines.join('\n');
        });
        return failed > 0 ? 1 : unreadable.length > 0 || results.length === 0 ? 2 : 0;
      }),
    );

  verifyGroup(program)
    .command('presentation')
    .description('check a W3C VC 2.0 verifiable presentation offline: its holder\'s proof (authentication, eddsa-jcs-2022) and every credential it carries')
    .argument('<file>', 'the presentation (- for stdin)')
    .option('--challenge <text>', 'the challenge you gave the holder: the proof must carry it')
    .option('--domain <domain...>', 'the domain(s) you gave the holder: the proof must carry exactly these')
    .option('--require-proof', 'refuse a presentation without a proof (otherwise reported as not checked)')
    .option('--at <time>', 'check the validity windows at this instant (ISO 8601 or epoch ms; default now)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option('--issuer-keys <file>', "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window")
    .option('--judge-signature', "also check the judge's own signature (L2) each judgment credential carries")
    .action(
      action(cli, async (file: string, opts: { challenge?: string; domain?: string[]; requireProof?: boolean; at?: string; issuer?: string; issuerKeys?: string; judgeSignature?: boolean }) => {
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { verifyPresentation, trustIssuerKeys } = await import('../../verifier/index.js');
        let bytes: Buffer;
        try {
          bytes = file === '-' ? readStdin() : readFileSync(file);
        } catch (e) {
          throw new CliError(2, `Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { code: 'unreadable', path: file });
        }
        const trust = list && issuer ? trustIssuerKeys(issuer, list as never) : undefined;
        const domain = opts.domain === undefined ? undefined : opts.domain.length === 1 ? opts.domain[0] : opts.domain;
        const r = verifyPresentation(bytes, { at, issuer, trust, challenge: opts.challenge, domain, requireProof: opts.requireProof, checkJudgeSignature: opts.judgeSignature });
        const first = r.checks[0];
        if (first.id === 'json' && first.valid === false && first.why?.startsWith('not JSON')) throw new CliError(2, `${file} is not JSON: ${first.why}`, { code: 'invalid_json', path: file });
        cli.output().result(r, () =>
          [
            `presentation${r.holder ? ` of ${r.holder}` : ''}: ${r.credentials.length} credential(s)`,
            ...r.checks.filter((c) => c.valid !== true).map((c) => `  ${mark(c.valid)}  ${c.id.padEnd(28)} ${c.subject ? `${c.subject}  ` : ''}${c.why ?? c.what}`),
            `${r.verified ? 'holds' : 'does NOT hold'}: ${r.checks.filter((c) => c.valid === true).length} checks held, ${failing(r.checks).length} failed, ${r.checks.filter((c) => c.valid === null).length} not checked`,
          ].join('\n'),
        );
        return r.verified ? 0 : 1;
      }),
    );

  verifyGroup(program)
    .command('serve')
    .description('serve the offline verifier as a VC-API adapter on 127.0.0.1 (POST /credentials/verify, /presentations/verify): for the W3C test suites (docs/W3C-SUITES.md)')
    .option('--port <port>', 'port (0: any free one)', '0')
    .option('--issuer <did>', 'pin the issuer of every credential')
    .option('--issuer-keys <file>', "with --issuer: the node's key list, followed from the pinned DID")
    .option('--at <time>', 'check validity windows at this instant (default: each request\'s now)')
    .action(
      action(cli, async (opts: { port: string; issuer?: string; issuerKeys?: string; at?: string }) => {
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0 to 65535, got ${opts.port}`);
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID');
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { trustIssuerKeys } = await import('../../verifier/index.js');
        const { serveVerifier } = await import('../verify-serve.js');
        const server = await serveVerifier({ port, at, issuer, trust: list && issuer ? trustIssuerKeys(issuer, list as never) : undefined });
        cli.io.stdout.write(`akas verify serve: listening on ${server.url} (POST /credentials/verify, /presentations/verify; Ctrl-C stops)\n`);
        await new Promise<void>((resolve) => {
          const stop = () => void server.close().then(resolve);
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      }),
    );

  verifyGroup(program)
    .command('bundle')
    .description('check an exported bundle offline: the content judged is the content published, judge signatures (L2), credentials (L1), log events (L3), content hashes; says what it could not check')
    .argument('<file>', 'the bundle (`akas export ID > bundle.json`), or - for stdin')
    .option('--blobs <dir>', 'a folder of the referenced bytes, each file named by its sha256 (`akas export --blobs DIR`)')
    .option('--issuer <did>', "the node's issuer DID to pin (akas node-keys prints it; or the node's /healthz)")
    .option('--at <time>', 'check credential validity at this instant (ISO 8601 or epoch ms; default now)')
    .option('--issuer-keys <file>', "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys) as you fetched it: its signed rotations are followed too, so a bundle exported before a rotation verifies pinned on today's issuer")
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key: akas node-keys prints it); else the one the pinned --issuer endorses")
    .option('--witness <key>', "a witness whose cosignature of the bundle's checkpoint counts (NAME+KEYID+KEY); repeatable", (v: string, p: string[]) => [...p, v], [] as string[])
    .option('--witness-quorum <k>', 'how many of the given witnesses must have cosigned (default: all)')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { blobs?: string; issuer?: string; issuerKeys?: string; at?: string; logKey?: string; witness: string[]; witnessQuorum?: string; verbose?: boolean }) => {
        const witnesses = witnessPolicyArg(opts.witness, opts.witnessQuorum);
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { verifyBundle, blobsInFolder, NotCheckableError, tally } = await import('../../verifier/index.js');
        let bytes: Buffer;
        try {
          bytes = file === '-' ? readStdin() : readFileSync(file);
        } catch (e) {
          throw new CliError(2, `Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { code: 'unreadable', path: file });
        }
        let report;
        try {
          report = await verifyBundle(bytes, { blobs: opts.blobs ? blobsInFolder(opts.blobs) : undefined, issuer, issuerKeys: list as never, at, logKey: opts.logKey, witnesses });
        } catch (e) {
          if (e instanceof NotCheckableError) throw new CliError(2, e.message, { code: 'not_checkable', path: file });
          const err = e as NodeJS.ErrnoException;
          if (err.code) throw new CliError(2, `Cannot read ${opts.blobs}: ${err.code}`, { code: 'unreadable', path: opts.blobs });
          throw e;
        }
        const t = tally(report.checks);
        cli.output().result({ ...report, ...t }, () => {
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
            const checks = report.checks.filter((c) => c.layer === layer);
            if (!checks.length) continue;
            const lt = tally(checks);
            lines.push(`${titles[layer].padEnd(34)} ${lt.held} held${lt.failed ? `, ${lt.failed} FAILED` : ''}${lt.unchecked ? `, ${lt.unchecked} not checked` : ''}`);
            // Every check with --verbose; otherwise what failed, and each distinct reason a check could not run.
            const shown = opts.verbose ? checks : checks.filter((c) => c.valid !== true);
            const seen = new Set<string>();
            for (const c of shown) {
              const text = c.valid === true ? c.what : (c.why ?? c.what);
              if (c.valid === null && !opts.verbose) {
                if (seen.has(c.id + text)) continue;
                seen.add(c.id + text);
              }
              lines.push(`  ${mark(c.valid)}  ${c.id.padEnd(28)} ${c.valid === null && !opts.verbose ? '' : `${c.subject ?? ''}  `}${text}`);
            }
          }
          lines.push(`held ${t.held}, failed ${t.failed}, not checked ${t.unchecked} (never counted as verified)${opts.verbose ? '' : '; --verbose lists every check'}`);
          return lines.join('\n');
        });
        return report.verified ? 0 : 1;
      }),
    );

  program
    .command('export')
    .description('download the offline bundle of a proposal (its judgments, signatures, credentials, keys, content hashes)')
    .argument('<id>', 'proposal id')
    .option('-o, --output <file>', 'write the bundle here instead of stdout')
    .option('--blobs <dir>', "also fetch the blobs it references that this node stores, into DIR/<sha256> (each hash checked)")
    .option('--credentials <dir>', 'also write each judgment credential to DIR/<judgmentId>.json (for akas verify credential DIR)')
    .action(
      action(cli, async (id: string, opts: { output?: string; blobs?: string; credentials?: string }) => {
        const bundle = await cli.client().get<Json>(`/api/knowledge/proposals/${encodeURIComponent(id)}/bundle`);
        const text = JSON.stringify(bundle, null, 2) + '\n';
        const out = cli.output();
        if (opts.credentials) {
          try {
            mkdirSync(opts.credentials, { recursive: true });
            for (const c of (bundle.credentials ?? []) as Json[]) {
              const name = String(c.credentialSubject?.id ?? '').replace(/^urn:akas:judgment:/, '') || `credential-${(bundle.credentials as Json[]).indexOf(c)}`;
              writeFileSync(join(opts.credentials, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`), JSON.stringify(c, null, 2) + '\n');
            }
          } catch (e) {
            throw new CliError(2, `Cannot write into ${opts.credentials}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { code: 'unwritable', path: opts.credentials });
          }
        }
        if (opts.blobs) {
          mkdirSync(opts.blobs, { recursive: true });
          const { getBlob } = await import('../cas-transfer.js');
          for (const ref of bundle.cas ?? []) {
            if (!ref.platformVerified) continue;
            await getBlob(cli, out, ref.sha256, join(opts.blobs, ref.sha256));
          }
        }
        if (opts.output) {
          try {
            writeFileSync(opts.output, text);
          } catch (e) {
            throw new CliError(2, `Cannot write ${opts.output}: ${(e as NodeJS.ErrnoException).code}`, { code: 'unwritable', path: opts.output });
          }
          out.note(`bundle of ${id} written to ${opts.output}`);
        } else cli.io.stdout.write(text);
      }),
    );
}
