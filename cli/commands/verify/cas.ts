// akas verify cas: a file against its recorded sha256, every {path, sha256} of a manifest, or
// the blob an artifact node names (offline; with --fetch, fetched from the uri it names).
import type { Command } from 'commander';
import { CliError, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

interface CasOptions {
  sha256?: string;
  manifest?: string;
  node?: string;
  fetch?: boolean;
}

export function casCommand(verify: Command, cli: Cli) {
  verify
    .command('cas')
    .summary('check bytes against their sha256: a hash, a manifest or an artifact node')
    .description(
      'check that a file hashes to its recorded sha256, every {path, sha256} of a manifest, or the blob an artifact node names (exit 0 ' +
        'match, 1 mismatch, 2 unreadable)',
    )
    .argument('[file]', 'the file to check (with --sha256, or --node)')
    .option('--sha256 <hex>', 'the sha256 FILE should hash to')
    .option('--manifest <file>', 'a JSON list of {path, sha256} (paths relative to the manifest)')
    .option('--node <file>', 'an artifact node as `akas node PATH --json` prints it (- for stdin): check FILE (offline) against its sha256 and size')
    .option('--fetch', 'with --node and no FILE: fetch the bytes from the uri the artifact names, from this machine (a URI its proposer chose)')
    .action(
      action(cli, async (file: string | undefined, opts: CasOptions) => {
        if (opts.fetch && opts.node === undefined) throw usageError('--fetch goes with --node NODE.json (the artifact whose uri to fetch)');
        if (opts.node !== undefined) {
          if (opts.sha256 !== undefined || opts.manifest !== undefined)
            throw usageError('--node takes the sha256 from the node: give no --sha256 or --manifest with it');
          if (opts.fetch && file !== undefined) throw usageError('give FILE (checked offline) or --fetch (the bytes fetched from the uri), not both');
          return (await import('./artifact-check.js')).verifyArtifactBlob(cli, opts.node, file, Boolean(opts.fetch));
        }
        const { normalizeSha256, readCasManifest, verifyCasFile, verifyCasManifest } = await import('../../../verifier/index.js');
        const out = cli.output();

        if (opts.manifest !== undefined) {
          if (file !== undefined || opts.sha256 !== undefined) throw usageError('give either FILE --sha256 HEX or --manifest FILE, not both');
          let entries;
          try {
            entries = await readCasManifest(opts.manifest);
          } catch (e) {
            const err = e as NodeJS.ErrnoException;
            throw new CliError('unreadable', err.code ? `Cannot read ${opts.manifest}: ${err.code}` : err.message, { path: opts.manifest });
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

        if (file === undefined || opts.sha256 === undefined)
          throw usageError('usage: akas verify cas FILE --sha256 HEX, akas verify cas --manifest FILE, or akas verify cas --node NODE.json (FILE | --fetch)');
        const expected = normalizeSha256(opts.sha256);
        if (!expected) throw usageError(`--sha256 must be 64 hex characters, got ${opts.sha256}`);
        const c = await verifyCasFile(file, expected);
        if (c.status === 'unreadable') throw new CliError('unreadable', `Cannot read ${file}: ${c.reason}`, { ...c });
        const ok = c.status === 'match';
        out.result({ ok, ...c }, () =>
          ok ? `ok  ${file}  sha256 ${c.actual} (${c.bytes} bytes)` : `MISMATCH  ${file}\n  expected ${c.expected}\n  actual   ${c.actual}`,
        );
        return ok ? 0 : 1;
      }),
    );
}
