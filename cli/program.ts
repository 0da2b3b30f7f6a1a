// The commander program. Command groups live in cli/commands/, one file each; heavy
// modules (fastify, ink, the VC stack, undici) are imported inside the actions that need
// them so `akas --help` and `akas me` start fast.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, type Option } from 'commander';
import { VERSION } from '../src/core/version.js';
import {
  AkasClient,
  addHelpModel,
  bundledHelpModel,
  CliError,
  configDir,
  EXIT,
  type HelpModel,
  type Io,
  loadIdentity,
  Output,
  ProfileFileError,
  ProfileModeError,
  type SavedIdentity,
} from './kit/index.js';

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

/**
 * Adds commands to the program. `adds`, where a group declares it, names the top-level commands
 * it adds: a one-shot command runs only the groups that add the command it names, and every
 * group that declares none (those that work on what the others built).
 */
export type CommandGroup = ((program: Command, cli: Cli) => void) & { readonly adds?: readonly string[] };

export const DEFAULT_BASE_URL = 'http://127.0.0.1:7373';

/**
 * Builds the program. Given the argv it will parse, it builds only the top-level command argv
 * names (namedCommand): building the whole command table took 10 to 15 ms of `akas me`'s start
 * here, its own group about 3 (`npm run bench -- coldstart` measures the starts). `only` says
 * which command was built alone, if one was. A bare `--help` is answered from the help model
 * when there is one (cli/kit/help-model.ts: the bundle carries it), with no group run.
 */
export function buildProgram(
  io: Io,
  groups: CommandGroup[],
  env: NodeJS.ProcessEnv = process.env,
  argv?: string[],
  helpModel: () => HelpModel | undefined = bundledHelpModel,
): { program: Command; cli: Cli; only?: string } {
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
  const model = argv?.length === 1 && (argv[0] === '--help' || argv[0] === '-h') ? helpModel() : undefined;
  if (model) {
    addHelpModel(program, model);
    return { program, cli, only: NO_COMMAND };
  }
  const only = argv === undefined ? undefined : namedCommand(program, argv);
  const target = only === undefined ? program : onlyCommand(program, only);
  // A group that adds other commands would only make inert calls, but V8 would still compile
  // its code to make them: about 1.5 ms of `akas me`'s CPU for the two dozen groups.
  for (const group of groups) if (only === undefined || !group.adds || group.adds.includes(only)) group(target, cli);
  return { program, cli, only };
}

/**
 * Top-level commands that read the whole program, built with every other command whatever
 * argv names: commander's `help <command>`, and `completion`, whose script lists them all.
 */
const WHOLE_PROGRAM = new Set(['help', 'completion']);

/** namedCommand's answer for an argv that needs no command built: the program's own --version (and a bare --help from the help model). */
export const NO_COMMAND = '';

/**
 * The top-level command argv names, when the program need build only that one: the first
 * operand after the program's own options (skipping the values of those that take one);
 * NO_COMMAND when the program's --version comes first (commander prints it and stops). None
 * (build everything) when argv names no command, asks the program itself for its help, uses an
 * option whose value may be left out, or names a command of WHOLE_PROGRAM.
 */
export function namedCommand(program: Command, argv: string[]): string | undefined {
  const flags = new Map<string, Option>();
  for (const o of program.options as Option[]) for (const f of [o.long, o.short]) if (f) flags.set(f, o);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return undefined;
    if (!arg.startsWith('-')) return WHOLE_PROGRAM.has(arg) ? undefined : arg;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const option = flags.get(eq === -1 ? arg : arg.slice(0, eq));
    if (!option || option.optional) return undefined;
    if (option.required && eq === -1) i++;
    if (option.long === '--version') return NO_COMMAND;
  }
  return undefined;
}

/**
 * What a command other than the one being built answers: each of commander's Command methods,
 * returning it again, so a chain of them does nothing (plain functions, not a Proxy's traps: the
 * groups make a few thousand such calls at every start).
 */
const inert = {} as Record<string, () => unknown>;
for (let proto = Command.prototype; proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
  for (const method of Object.getOwnPropertyNames(proto)) if (method !== 'constructor') inert[method] ??= () => inert;

/**
 * The program as the command groups see it when one top-level command is built: its
 * `program.command(name)` builds that command, any other is inert. (The single-file verifier
 * builds `verify` only this way: cli/commands/verify/main.ts.)
 */
export function onlyCommand(program: Command, name: string): Command {
  return new Proxy(program, {
    get(target, prop) {
      if (prop === 'command')
        return (nameAndArgs: string, ...rest: unknown[]) =>
          nameAndArgs.split(' ')[0] === name ? (target.command as (...a: unknown[]) => Command)(nameAndArgs, ...rest) : (inert as unknown as Command);
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const hasCommand = (program: Command, name: string) => program.commands.some((c) => c.name() === name || c.aliases().includes(name));

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
  let { program, only } = buildProgram(io, groups, env, argv);
  // A name no group builds by that name (a typo, an alias): everything, for commander's
  // "Did you mean ...?" or the command the alias names.
  if (only !== undefined && only !== NO_COMMAND && !hasCommand(program, only)) ({ program } = buildProgram(io, groups, env));
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
