// akas trust pin: a trust file (PROTOCOL 8.6) pinning a node's keys as it shows them now, for
// `akas verify ... --trust FILE` (trust-file.ts writes and checks it). `--trust FILE` is a trust
// file wherever it is given; this is where one is made (it was `akas node-keys --trust`).
// akas trust accept: the reader's own pin of a node (pins.ts, kept in the profile) moved to new
// keys once the reader confirms (accept.ts).
import type { Command } from 'commander';
import { CliError, collect, type Json, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

export interface PinOptions {
  agent: string[];
  judgesOf?: string;
  didWeb?: boolean;
}

export function trustCommands(program: Command, cli: Cli) {
  const trust = program
    .command('trust')
    .summary('trust files (PROTOCOL 8.6): the keys an auditor pins')
    .description("trust files (PROTOCOL 8.6): the issuer keys, log key, witnesses and judges' keys an auditor pins, for akas verify ... --trust FILE");
  trust
    .command('pin')
    .summary("print a trust file pinning this node's keys as it shows them now")
    .description(
      'print a trust file pinning this node (its issuer keys with their windows, its log key): `akas trust pin > trust.json`, then ' +
        '`akas verify ... --trust trust.json`. Trust on first use: it pins what the node shows now, and says so in the file',
    )
    .option('--agent <tag>', "pin this judge's keys too, in the file's agents section (for akas verify judgments); repeatable", collect, [])
    .option('--judges-of <proposalId>', 'pin the keys of every judge of this proposal')
    .option('--did-web', "also pin the node's did:web document (GET /.well-known/did.json), its keys checked against the key list (PROTOCOL 8.10)")
    .action(action(cli, (opts: PinOptions) => pinTrust(cli, opts)));
  trust
    .command('accept')
    .summary('pin the keys this node shows now in place of the ones pinned for it')
    .description(
      "move this profile's pin of the node (made by `akas register` or its first read: trust on first use) to the keys it shows now, " +
        'or to a trust file (--trust FILE): the old and new keys are printed, and the pin moves only when you confirm (y, or --yes). ' +
        'A rotation signed by both keys is followed without asking. Exit 0 pinned (or nothing to accept), 1 declined or keys that do not hold, ' +
        '2 no terminal to confirm on without --yes',
    )
    .option('--yes', 'accept without asking (the old and new keys are printed all the same)')
    .option('--trust <file>', 'pin this trust file (akas.trust.v1, PROTOCOL 8.6) instead of the keys the node shows')
    .action(
      action(cli, async (opts: { yes?: boolean; trust?: string }) => {
        const { acceptTrust } = await import('./accept.js');
        return acceptTrust(cli, opts);
      }),
    );
}

/** Prints the trust file on stdout, and on stderr what it pinned (trust on first use). */
export async function pinTrust(cli: Cli, opts: PinOptions) {
  const client = cli.client();
  const keys = await client.get<Json>('/api/node/keys');
  const { trustFileFrom } = await import('./trust-file.js');
  const url = client.baseUrl.replace(/\/$/, '');
  const tags = new Set(opts.agent);
  if (opts.judgesOf) {
    const detail = await client.get<Json>(`/api/knowledge/proposals/${encodeURIComponent(opts.judgesOf)}`);
    const judgments = (detail.judgments ?? []) as Json[];
    if (!judgments.length) throw usageError(`${opts.judgesOf} has no judgments yet: there is no judge to pin`);
    for (const j of judgments) tags.add(String(j.agentTag));
  }
  const judges: Json[] = [];
  for (const tag of tags) judges.push(await client.get<Json>(`/api/agents/${encodeURIComponent(tag)}`));
  const pinned = await trustFileFrom(keys, url, Date.now(), judges);
  // A did:web is resolved only from what is pinned here, fetched on this explicit ask (PROTOCOL 8.10).
  const doc = opts.didWeb ? await withDidWeb(pinned, await client.get<Json>('/.well-known/did.json')) : pinned;
  const what = [
    `${doc.issuers.length} issuer key(s)`,
    'the log key',
    ...(judges.length ? [`the keys of ${judges.length} judge(s) (${[...tags].join(', ')})`] : []),
  ];
  cli.io.stderr.write(
    `akas trust pin: trust on first use: pinned ${what.slice(0, -1).join(', ')} and ${what.at(-1)} as ${url} shows them now; ` +
      'compare them with keys you have from elsewhere (the file says where and when it was made)\n',
  );
  cli.io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

/** The trust file with the node's did:web document pinned: refused (exit 1) when a method's key is not one of the issuer keys the file pins. */
async function withDidWeb(doc: Json, did: Json): Promise<Json> {
  const { didWebMethods } = await import('../../../src/core/did-web.js');
  const read = didWebMethods(did);
  const pinned = new Set((doc.issuers as Json[]).map((i) => i.did));
  const foreign = read?.methods.filter((m) => !pinned.has(m.didKey)).map((m) => m.id) ?? [];
  if (!read?.methods.length || foreign.length)
    throw new CliError(
      'keys_do_not_hold',
      "The node's did:web document does not hold, so it is not pinned: " +
        (foreign.length ? `methods ${foreign.join(', ')} are not its issuer keys` : 'no Ed25519 Multikey method'),
    );
  return { ...doc, didWeb: [did] };
}
