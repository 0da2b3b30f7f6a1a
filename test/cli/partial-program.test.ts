// A one-shot command builds only the top-level command its argv names (cli/program.ts): the
// program it then parses must be, for that command, the program every other start builds whole
// (its options, arguments, subcommands and the old spellings registered onto them), and what
// reads the whole program (help, completion, a mistyped name) still gets it whole.
import type { Argument, Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { completionScript } from '../../cli/commands/completion/index.js';
import { buildProgram, type Cli, type CommandGroup, NO_COMMAND, namedCommand, run } from '../../cli/program.js';
import { VERSION } from '../../src/core/version.js';
import { Capture } from '../helpers/cli.js';

const io = () => ({ stdout: new Capture(), stderr: new Capture() });

/** Everything of a command that parsing and help read, its subcommands' too. */
function shape(c: Command): unknown {
  return {
    name: c.name(),
    aliases: c.aliases(),
    description: c.description(),
    summary: c.summary(),
    usage: c.usage(),
    options: (c.options as Option[]).map((o) => ({
      flags: o.flags,
      hidden: o.hidden,
      default: o.defaultValue,
      choices: o.argChoices,
      description: o.description,
    })),
    arguments: (c.registeredArguments as readonly Argument[]).map((a) => ({ name: a.name(), required: a.required, variadic: a.variadic })),
    commands: (c.commands as Command[]).map(shape),
  };
}

describe('the program built for one command', () => {
  const whole = buildProgram(io(), commandGroups, {}).program;
  const names = (whole.commands as Command[]).map((c) => c.name());

  it('is, for each top-level command, the command the whole program builds, and holds that command alone', () => {
    expect(names.length).toBeGreaterThan(30);
    for (const name of names) {
      const { program, only } = buildProgram(io(), commandGroups, {}, ['--base-url', 'http://127.0.0.1:1', name, '--json']);
      if (name === 'help' || name === 'completion') {
        expect(only, name).toBeUndefined();
        continue;
      }
      expect(only, name).toBe(name);
      expect((program.commands as Command[]).map((c) => c.name()).filter((n) => n !== 'help')).toEqual([name]);
      expect(shape((program.commands as Command[])[0] ?? program), name).toEqual(shape(whole.commands.find((c) => c.name() === name) as Command));
      expect((program.options as Option[]).map((o) => o.flags)).toEqual((whole.options as Option[]).map((o) => o.flags));
    }
  });

  it("runs only the groups that add the command argv names, and every group that declares none; each group's list is what it adds", () => {
    const ran: string[] = [];
    const group = (name: string, adds?: string[]): CommandGroup =>
      Object.assign(
        (p: Command) => {
          ran.push(name);
          p.command(name);
        },
        adds ? { adds } : {},
      );
    const { program } = buildProgram(io(), [group('alpha', ['alpha']), group('beta', ['beta']), group('gamma')], {}, ['beta', '--json']);
    expect(ran).toEqual(['beta', 'gamma']);
    expect((program.commands as Command[]).map((c) => c.name())).toEqual(['beta']);
    for (const g of commandGroups) {
      if (!g.adds) continue;
      const alone = buildProgram(io(), [], {}).program;
      g(alone, {} as Cli);
      expect(
        (alone.commands as Command[]).map((c) => c.name()),
        g.name,
      ).toEqual(g.adds);
    }
    // The two that work on what the others built declare nothing, so every start runs them.
    expect(commandGroups.filter((g) => !g.adds).map((g) => g.name)).toEqual(['renamedSpellings', 'helpGroups']);
  });

  it('reads the command past the global options and their values, and builds everything when argv asks the program itself', () => {
    const program = buildProgram(io(), [], {}).program;
    expect(namedCommand(program, ['me'])).toBe('me');
    expect(namedCommand(program, ['--json', '--profile', 'ci', 'me', '--help'])).toBe('me');
    expect(namedCommand(program, ['--base-url=http://127.0.0.1:1', 'verify', 'credential', 'x'])).toBe('verify');
    expect(namedCommand(program, ['--base-url', 'me', 'register'])).toBe('register');
    for (const argv of [
      ['--json', '--version'],
      ['-V', 'me'],
    ])
      expect(namedCommand(program, argv), argv.join(' ')).toBe(NO_COMMAND);
    for (const argv of [[], ['--help'], ['-h', 'me'], ['--help', '--version'], ['--no-such-flag', 'me'], ['--', 'me'], ['completion', 'bash'], ['help', 'me']])
      expect(namedCommand(program, argv), argv.join(' ')).toBeUndefined();
  });

  it('answers --version with no command built', async () => {
    expect(buildProgram(io(), commandGroups, {}, ['--version']).program.commands).toEqual([]);
    const out = io();
    expect(await run(['--version'], out, commandGroups, {})).toBe(0);
    expect(out.stdout.text).toBe(`${VERSION}\n`);
  });

  it('writes the completion script of the whole program, and says "Did you mean" for a mistyped command', async () => {
    const out = io();
    expect(await run(['completion', 'bash'], out, commandGroups, {})).toBe(0);
    expect(out.stdout.text).toBe(completionScript(whole, 'bash'));
    const typo = io();
    expect(await run(['verfy', 'credential', 'x.json'], typo, commandGroups, {})).toBe(2);
    expect(typo.stderr.text).toContain('(Did you mean verify?)');
  });
});
