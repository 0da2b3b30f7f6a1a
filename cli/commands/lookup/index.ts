// akas lookup: every log entry about a key, from the node's verifiable index (PROTOCOL 9.10),
// checked here under the profile's pin of the node's keys (trust on first use, as every read):
// the verdict line last, --json the whole answer with the verdict.
import type { Command } from 'commander';
import { type Json, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { finish } from '../verify/shared.js';
import { lookupLine } from '../verify/lookup.js';

export function lookupCommands(program: Command, cli: Cli) {
  program
    .command('lookup')
    .summary('every log entry about a key, proven complete by the verifiable index')
    .description(
      'every log entry about a key, proven complete by the verifiable index (PROTOCOL 9.10): ' +
        'KEY is agent:TAG, key:DID, proposal:ID, path:/PATH, sha256:HEX or credential:ID',
    )
    .argument('<key>', 'agent:TAG, key:did:key:..., proposal:ID, path:/PATH, sha256:HEX or credential:jdg_...')
    .option('--with-entries', 'also show the entries (the first 100)')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (key: string, opts: { withEntries?: boolean; verbose?: boolean }) => {
        const { lookupKeyProblem } = await import('../../../src/core/lookup-keys.js');
        const problem = lookupKeyProblem(key);
        if (problem) throw usageError(`not a lookup key: ${problem} (agent:TAG, key:did:key:..., proposal:ID, path:/PATH, sha256:HEX, credential:jdg_...)`);
        const client = cli.client();
        // Entries come with their inclusion proofs, so each is held to the log itself (index.entries).
        const answer = await client.get<Json>(`/api/index/${encodeURIComponent(key)}${opts.withEntries ? '?entries=true&proofs=true' : ''}`);
        const { pinnedTrust, sayPinned } = await import('../trust/pins.js');
        const pin = await pinnedTrust(cli.globals().profile, client);
        sayPinned(cli.io.stderr, pin);
        const { issuerTrustOf } = await import('../../../verifier/trust.js');
        const { verifyLookup } = await import('../../../verifier/lookup.js');
        const q = pin.trust.policy.quorum;
        const witnesses = q ? { keys: pin.trust.policy.witnesses, rule: q, now: Math.floor(Date.now() / 1000) } : undefined;
        const r = verifyLookup(answer, pin.trust.policy.logs, witnesses, issuerTrustOf(pin.trust));
        const entries = Array.isArray(answer.entries) ? (answer.entries as Json[]) : [];
        return finish(cli, r, {
          anchoredOn: `the keys pinned for ${client.baseUrl} (${pin.source}, ${pin.pinnedAt})`,
          status: null,
          verbose: opts.verbose,
          head: [
            lookupLine(r),
            ...entries.map((e) => `  ${String(e.id)}  ${String(e.kind)}  ${e.agent ?? '-'}  ${new Date(Number(e.attestedAt)).toISOString()}`),
          ],
          extra: () => answer,
        });
      }),
    );
}
