// The commander program. Command groups live in cli/commands/, one file each; heavy
// modules (fastify, ink, the VC stack, undici) are imported inside the actions that need
// them so `akas --help` and `akas me` start fast.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { VERSION } from '../src/core/version.js';
import { AkasClient, CliError, configDir, EXIT, type Io, loadIdentity, Output, ProfileFileError, ProfileModeError, type SavedIdentity } from './kit/index.js';

export interface GlobalOptions {
  baseUrl: string;
  profile: string;
  json: boolean;
  showSecrets: boolean;
}

/** What every command action gets: parsed global options, output, a client, the saved identity. */
export interface Cli {
  io: Io;
  globals(): GlobalOptions;
  output(): Output;
  identity(): SavedIdentity | undefined;
  /** The saved identity, or exit 2 telling how to get one. */
  requireIdentity(): SavedIdentity;
  client(): AkasClient;
}

export type CommandGroup = (program: Command, cli: Cli) => void;

export const DEFAULT_BASE_URL = 'http://127.0.0.1:7373';

export function buildProgram(io: Io, groups: CommandGroup[], env: NodeJS.ProcessEnv = process.env): { program: Command; cli: Cli } {
  const program = new Command('akas');
  program
    .description('Agent Knowledge and Attestation Service: run a node, act as an agent of any node, verify offline.')
    .version(VERSION)
    .option('--base-url <url>', 'node to talk to (env AKAS_BASE_URL)', env.AKAS_BASE_URL ?? DEFAULT_BASE_URL)
    .option('--profile <name>', 'saved identity to use (env AKAS_PROFILE)', env.AKAS_PROFILE ?? 'default')
    .option('--json', 'print exactly the response or result as JSON', false)
    .option('--show-secrets', 'print saved secrets (api key, private key, recovery token)', false)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  const cli: Cli = {
    io,
    globals: () => program.opts<GlobalOptions>(),
    output: () => new Output(program.opts<GlobalOptions>().json, io),
    identity: () => {
      const g = program.opts<GlobalOptions>();
      try {
        return loadIdentity(g.profile, g.baseUrl.replace(/\/$/, ''));
      } catch (e) {
        if (e instanceof ProfileModeError) throw new CliError('profile_mode', e.message);
        if (e instanceof ProfileFileError) throw new CliError('profile_unreadable', e.message, { path: e.path });
        throw e;
      }
    },
    requireIdentity: () => {
      const id = cli.identity();
      if (!id) {
        const g = program.opts<GlobalOptions>();
        throw new CliError('no_identity', `No saved identity for profile "${g.profile}" at ${g.baseUrl}. Run \`akas register\` first.`);
      }
      return id;
    },
    client: () => new AkasClient({ baseUrl: program.opts<GlobalOptions>().baseUrl, apiKey: cli.identity()?.apiKey }),
  };
  for (const group of groups) group(program, cli);
  return { program, cli };
}

/** Wraps an action: CliErrors become output + exit code, anything else is a crash (exit 2). */
// biome-ignore lint/suspicious/noConfusingVoidType: an action that only prints returns nothing (void); one that decides the exit code returns it
export function action<A extends unknown[]>(cli: Cli, fn: (...args: A) => Promise<number | void>) {
  return async (...args: A) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const code = await fn(...args);
        process.exitCode = code ?? EXIT.ok;
        return;
      } catch (e) {
        let err = CliError.is(e) ? e : new CliError('crash', (e as Error).message ?? String(e));
        if (err.body.code === 'no_identity') err = await explainNoIdentity(cli, err);
        // The saved api key refused: is the identity another node's (a fresh node on the port)?
        // When the one kept for this node is put back, the command runs once more (a 401 did nothing).
        if (err.body.status === 401 && attempt === 0) {
          const { otherNodesIdentity } = await import('./commands/identity/node-identity.js');
          const other = await otherNodesIdentity(cli, err).catch(() => undefined);
          if (other === 'switched') continue;
          if (other) err = other;
        }
        cli.output().failure(err);
        process.exitCode = err.exitCode;
        return;
      }
    }
  };
}

/**
 * "No identity" is often a wrong --base-url (identities are saved per node): when nothing
 * answers there, or something that is not an akas node, say that instead; otherwise name
 * the nodes this profile does hold identities for.
 */
async function explainNoIdentity(cli: Cli, err: CliError): Promise<CliError> {
  const g = cli.globals();
  try {
    await new AkasClient({ baseUrl: g.baseUrl }).health();
  } catch (e) {
    if (CliError.is(e) && (e.body.code === 'unreachable' || e.body.code === 'not_akas' || e.body.code === 'bad_base_url')) return e;
  }
  const elsewhere = savedNodes(g.profile).filter((url) => url !== g.baseUrl.replace(/\/$/, ''));
  if (elsewhere.length === 0) return err;
  return err.restated(`${err.message}\nProfile "${g.profile}" holds identities for: ${elsewhere.join(', ')} (--base-url URL to use one).`, {
    savedFor: elsewhere,
  });
}

// The nodes a profile holds identities for (each file names its baseUrl).
function savedNodes(profile: string): string[] {
  try {
    const dir = join(configDir(), 'profiles', profile);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => {
        try {
          return String((JSON.parse(readFileSync(join(dir, f), 'utf8')) as { baseUrl?: unknown }).baseUrl ?? '');
        } catch {
          return '';
        }
      })
      .filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Runs the program on argv (without node and script) and answers the exit code. `shape`, if
 * given, trims the program before it parses (the single-file verifier keeps `verify` only).
 */
export async function run(argv: string[], io: Io, groups: CommandGroup[], env?: NodeJS.ProcessEnv, shape?: (program: Command) => void): Promise<number> {
  const { program } = buildProgram(io, groups, env);
  shape?.(program);
  // Set after any reshaping (the single file renames the program): an unknown command gets
  // commander's "Did you mean ...?" and a pointer, not the whole command list after it (which
  // pushed the suggestion off the screen); a subcommand's usage error still shows its short help.
  program.showHelpAfterError(`(${program.name()} --help lists every command)`);
  // A mistyped option of a subcommand gets the same: the error, commander's "Did you mean
  // --port?" and one pointer, not the whole help (83 lines for serve) pushing the suggestion off.
  const pointTo = (command: Command, path: string) => {
    for (const sub of command.commands) {
      const name = `${path} ${sub.name()}`;
      sub.showHelpAfterError(`(${name} --help lists its options)`);
      pointTo(sub, name);
    }
  };
  pointTo(program, program.name());
  process.exitCode = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 0;
      // Under --json a usage error is JSON on stdout too, as every other failure is (the
      // message and help stay on stderr).
      const dashdash = argv.indexOf('--');
      if ((dashdash < 0 ? argv : argv.slice(0, dashdash)).includes('--json')) {
        io.stdout.write(JSON.stringify({ ok: false, code: 'usage', error: e.message.replace(/^error: /, '') }, null, 2) + '\n');
      }
      return EXIT.broken;
    }
    throw e;
  }
  return Number(process.exitCode ?? 0);
}
