// `akas --help` from the help model (cli/kit/help-model.ts): the bundle carries a model of the
// top-level commands read from the whole program, and a bare `--help` builds those alone. What
// it prints must be, byte for byte, what the whole program prints; the built binary's too.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commandGroups, HELP_GROUPS } from '../../cli/commands/index.js';
import { helpModelOf } from '../../cli/kit/index.js';
import { buildProgram, type CommandGroup, run } from '../../cli/program.js';
import { Capture } from '../helpers/cli.js';

const io = () => ({ stdout: new Capture(), stderr: new Capture() });
const CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));

/** What `akas <argv>` prints when the program is built from the model, no command group run. */
async function fromModel(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const model = helpModelOf(buildProgram(io(), commandGroups, env).program);
  const refuse: CommandGroup = () => {
    throw new Error('a command group ran');
  };
  const out = io();
  const { program } = buildProgram(out, [refuse], env, argv, () => model);
  await program.parseAsync(argv, { from: 'user' }).catch((e: { exitCode?: number }) => expect(e.exitCode).toBe(0));
  return out.stdout.text;
}

describe('akas --help from the help model', () => {
  it('prints what the whole program prints, for --help and -h, with every heading and the global options as the environment sets them', async () => {
    for (const [argv, env] of [
      [['--help'], {}],
      [['-h'], { AKAS_BASE_URL: 'http://node.example:7373' }],
    ] as const) {
      const whole = io();
      expect(await run([...argv], whole, commandGroups, { ...env })).toBe(0);
      expect(await fromModel([...argv], { ...env })).toBe(whole.stdout.text);
    }
    const text = await fromModel(['--help']);
    for (const [heading] of HELP_GROUPS) expect(text).toContain(`\n${heading}\n`);
    expect(text).toContain('serve [options]');
    expect(text).toContain('help [command]');
  });

  it('is used for a bare --help only: anything more builds the program as before', () => {
    const model = helpModelOf(buildProgram(io(), commandGroups, {}).program);
    let ran = 0;
    const count: CommandGroup = () => void ran++;
    for (const argv of [['--help', 'me'], ['me', '--help'], ['--json', '--help'], []]) buildProgram(io(), [count], {}, argv, () => model);
    expect(ran).toBe(4);
  });

  it('is carried by the built akas, whose --help is its `help` (the whole program) byte for byte', () => {
    expect(readFileSync(CLI, 'utf8')).toContain('"term":"serve [options]"');
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    const whole = spawnSync(process.execPath, [CLI, 'help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(whole.status).toBe(0);
    expect(help.stdout).toBe(whole.stdout);
    expect(help.stdout).toContain('completion <shell>');
  });
});
