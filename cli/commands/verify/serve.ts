// akas verify serve: the offline verifier as a VC-API adapter on 127.0.0.1, for the W3C test
// suites (cli/commands/verify/server.ts serves it). A credential that names a status list has its status
// read from the list's URL (PROTOCOL 8.7), kept for the list's ttl: revoked, suspended or
// unreadable is never verified.
import type { Command } from 'commander';
import { readIssuerKeysFile, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { issuerArg, timeArg, trustArg } from './shared.js';

export function serveCommand(verify: Command, cli: Cli) {
  verify
    .command('serve')
    .summary('serve the offline verifier as a VC-API adapter on 127.0.0.1')
    .description(
      'serve the offline verifier as a VC-API adapter on 127.0.0.1 (POST /credentials/verify, /presentations/verify): for the W3C test ' +
        'suites (docs/W3C-SUITES.md); the status lists credentials name are read over HTTP(S), kept for their ttl',
    )
    .option('--port <n>', 'port to listen on (0: any free one)', '0')
    .option(
      '--trust <file>',
      'pin the issuers of the credentials, each in its window (a trust file: PROTOCOL 8.6); without it or --issuer every answer is unanchored',
    )
    .option('--issuer <did>', 'pin the issuer of every credential')
    .option('--issuer-keys <file>', "with --issuer: the node's key list, followed from the pinned DID")
    .option('--at <time>', "check validity windows at this instant (default: each request's now)")
    .action(
      action(cli, async (opts: { port: string; trust?: string; issuer?: string; issuerKeys?: string; at?: string }) => {
        const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer, '--issuer-keys': opts.issuerKeys });
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0 to 65535, got ${opts.port}`);
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID');
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { trustIssuerKeys } = await import('../../../verifier/index.js');
        const { serveVerifier } = await import('./server.js');
        const trust = pinned ? pinned.issuers : list && issuer ? trustIssuerKeys(issuer, list as never) : undefined;
        // What the verdicts are anchored on, in the words every verify command uses for it.
        const anchoredOn = opts.trust
          ? `the trust file ${opts.trust}`
          : issuer
            ? `issuer ${issuer}${opts.issuerKeys ? ` (rotations from ${opts.issuerKeys})` : ''}`
            : null;
        const server = await serveVerifier({ port, at, issuer, trust, anchoredOn });
        cli.io.stdout.write(`akas verify serve: listening on ${server.url} (POST /credentials/verify, /presentations/verify; Ctrl-C stops)\n`);
        await new Promise<void>((resolve) => {
          const stop = () => void server.close().then(resolve);
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      }),
    );
}
