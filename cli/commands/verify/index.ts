// akas verify ...: offline checks, no node and no network, one file per subcommand in this
// folder (verifier/ is loaded lazily inside each action). Exit codes: 0 the check holds, 1 it
// does not, 2 it could not be run (unreadable file, bad arguments), 3 it held but is unanchored:
// no issuer or log key pinned by the auditor (--trust, --issuer, --log-key; PROTOCOL 8.6). Two exceptions say so when
// they run: `verify manifest` asks the node (an HMAC only it can check), and `verify cas --node
// --fetch` fetches the bytes the artifact names (a URI its proposer chose: only when told to).
//
// The single-file verifier (scripts/build-verifier.mjs) finds this group by running every
// group and bundles it alone: a subcommand added here is in dist/akas-verify.mjs at the next build.
import type { Command } from 'commander';
import type { Cli } from '../../program.js';
import { bundleCommand } from './bundle.js';
import { casCommand } from './cas.js';
import { credentialCommand } from './credential.js';
import { dsseCommand, sigstoreCommand } from './dsse.js';
import { forkCommand } from './fork.js';
import { judgmentsCommand } from './judgments.js';
import { logProofCommand } from './log-proof.js';
import { indexEvidenceCommand } from './index-evidence.js';
import { lookupCommand } from './lookup.js';
import { manifestCommand } from './manifest.js';
import { nodeCommand } from './node.js';
import { presentationCommand } from './presentation.js';
import { serveCommand } from './serve.js';
import { cardCommand, standingCommand } from './standing.js';

/** The subcommands, in the order `akas verify --help` lists them. */
const SUBCOMMANDS: Array<(verify: Command, cli: Cli) => void> = [
  manifestCommand,
  casCommand,
  judgmentsCommand,
  nodeCommand,
  credentialCommand,
  presentationCommand,
  serveCommand,
  bundleCommand,
  logProofCommand,
  dsseCommand,
  sigstoreCommand,
  forkCommand,
  lookupCommand,
  indexEvidenceCommand,
  standingCommand,
  cardCommand,
];

export function verifyCommands(program: Command, cli: Cli) {
  const verify = program
    .command('verify')
    .summary('check credentials, signatures, log proofs and hashes offline')
    .description('check credentials, judge signatures, log proofs and CAS hashes offline (no node, no network); `verify manifest` asks the node');
  for (const add of SUBCOMMANDS) add(verify, cli);
}
