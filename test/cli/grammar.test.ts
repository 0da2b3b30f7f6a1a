// The CLI's grammar (issue 48, 1): the command tree commander builds (cli/commands/index.ts)
// against docs/CLI.md, its contract. Every visible command has its row and its one-line summary,
// every top-level command its help group; every flag name has one row, so one meaning and one
// shape, and every command taking it is listed there; every old spelling still parses, hidden,
// and says once what replaced it; and every `akas ...` command the README and docs show parses
// with the new spellings. The checks are functions answering the problems they find, and each
// is shown to find a problem planted in a small program of its own.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Command, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandGroups, HELP_GROUPS } from '../../cli/commands/index.js';
import { renamedNotice } from '../../cli/kit/index.js';
import { buildProgram, run } from '../../cli/program.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const CLI_MD = read('docs/CLI.md');

/** The text of a `## ` section of docs/CLI.md. */
function section(heading: string): string {
  const at = CLI_MD.indexOf(`\n## ${heading}`);
  if (at < 0) throw new Error(`docs/CLI.md has no section ${heading}`);
  const end = CLI_MD.indexOf('\n## ', at + 4);
  return CLI_MD.slice(at, end < 0 ? undefined : end);
}

interface CommandRow {
  path: string;
  args: string;
  summary: string;
  group: string;
}

/** "## Commands": `| \`akas PATH ARGS\` | summary |` rows, each under its `### ` group heading. */
function commandRows(text = section('Commands')): CommandRow[] {
  const rows: CommandRow[] = [];
  let group = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('### ')) group = `${line.slice(4).trim()}:`;
    const m = /^\| `akas ([^`]*)` \| (.*) \|$/.exec(line);
    if (!m) continue;
    const words = m[1].split(' ');
    const path = words.filter((w) => /^[a-z][a-z-]*$/.test(w));
    rows.push({ path: path.join(' '), args: words.slice(path.length).join(' '), summary: m[2], group });
  }
  return rows;
}

interface FlagRow {
  flags: string;
  long: string;
  value: string;
  commands: string[];
}

/** "## Flags": `| \`-o, --output\` | \`<file>\` | meaning | commands |` rows. */
function flagRows(text = section('Flags')): FlagRow[] {
  return [...text.matchAll(/^\| `([^`]*)` \| (`(?:[^`]*)`|—) \| .* \| ([^|]*) \|$/gm)].map((m) => ({
    flags: m[1],
    long: m[1].split(', ').pop() as string,
    value: m[2] === '—' ? '—' : m[2].slice(1, -1).replace(/\\\|/g, '|'),
    commands: m[3].split(', ').map((c) => c.trim()),
  }));
}

/** "## Spellings that changed": `| \`akas OLD\` | \`akas NEW\` | why | where |` rows. */
function renamedRows(text = section('Spellings that changed')): Array<{ old: string; now: string }> {
  return [...text.matchAll(/^\| `(akas [^`]*)` \| `(akas [^`]*)` \|/gm)].map((m) => ({ old: m[1], now: m[2] }));
}

const isHidden = (c: Command) => Boolean((c as unknown as { _hidden?: boolean })._hidden);
const hasAction = (c: Command) => Boolean((c as unknown as { _actionHandler?: unknown })._actionHandler);

/** Every command below the program, depth first, with its path ('serve', 'verify credential'); hidden ones too when asked. */
function commandsOf(program: Command, hidden = false): Array<{ path: string; cmd: Command }> {
  const out: Array<{ path: string; cmd: Command }> = [];
  const walk = (cmd: Command, prefix: string) => {
    for (const c of cmd.commands) {
      if (isHidden(c) && !hidden) continue;
      const path = prefix ? `${prefix} ${c.name()}` : c.name();
      out.push({ path, cmd: c });
      walk(c, path);
    }
  };
  walk(program, '');
  return out;
}

/** An argument as commander prints it in a usage line. */
const argText = (a: { name(): string; required: boolean; variadic: boolean }) =>
  a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`;

/** An option's placeholder as --help prints it (`—` for a switch). */
const shapeOf = (o: Option) => /[<[].*$/.exec(o.flags)?.[0] ?? '—';
const flagsOf = (o: Option) => [o.short, o.long].filter(Boolean).join(', ');

/** The program as `akas` builds it. */
function akas(): Command {
  const sink = new Writable({ write: (_c, _e, done) => done() });
  return buildProgram({ stdout: sink, stderr: sink }, commandGroups, {}).program;
}

/** Commands the tree and the rows disagree on: missing either way, a summary not the row's or over 80 characters, other arguments. */
function commandProblems(program: Command, rows: CommandRow[]): string[] {
  const problems: string[] = [];
  const tree = new Map(commandsOf(program).map((c) => [c.path, c.cmd]));
  const byPath = new Map(rows.map((r) => [r.path, r]));
  for (const [path, cmd] of tree) {
    const row = byPath.get(path);
    if (!row) {
      problems.push(`akas ${path}: a command docs/CLI.md does not list`);
      continue;
    }
    if (!cmd.summary()) problems.push(`akas ${path}: no summary`);
    else if (cmd.summary() !== row.summary.replace(/`/g, '')) problems.push(`akas ${path}: summary "${cmd.summary()}", docs/CLI.md "${row.summary}"`);
    if (cmd.summary().length > 80) problems.push(`akas ${path}: a summary of ${cmd.summary().length} characters`);
    const args = cmd.registeredArguments.map(argText).join(' ');
    if (args !== row.args) problems.push(`akas ${path}: arguments "${args}", docs/CLI.md "${row.args}"`);
    if (!path.includes(' ') && cmd.helpGroup() !== row.group) problems.push(`akas ${path}: in help group "${cmd.helpGroup()}", docs/CLI.md "${row.group}"`);
  }
  for (const row of rows) if (!tree.has(row.path)) problems.push(`akas ${row.path}: listed by docs/CLI.md, not a command`);
  return problems;
}

/** Flags the tree and the rows disagree on: a name without its one row, a row twice, another shape, a command missing either way. */
function flagProblems(program: Command, rows: FlagRow[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, FlagRow>();
  for (const row of rows) {
    if (byName.has(row.long)) problems.push(`${row.long}: two rows (two meanings)`);
    else byName.set(row.long, row);
  }
  const taken = new Map<string, Set<string>>();
  const visit = (path: string, options: readonly Option[]) => {
    for (const o of options.filter((x) => !x.hidden && x.long)) {
      const name = o.long as string;
      const row = byName.get(name);
      if (!row) {
        problems.push(`${name} (${path}): a flag docs/CLI.md does not list`);
        continue;
      }
      if (flagsOf(o) !== row.flags) problems.push(`${name} (${path}): written "${flagsOf(o)}", docs/CLI.md "${row.flags}"`);
      if (shapeOf(o) !== row.value) problems.push(`${name} (${path}): takes "${shapeOf(o)}", docs/CLI.md "${row.value}" (one shape per name)`);
      if (!row.commands.includes(path)) problems.push(`${name}: taken by ${path}, which docs/CLI.md's row does not list`);
      taken.set(name, (taken.get(name) ?? new Set()).add(path));
    }
  };
  visit('(global)', program.options);
  for (const { path, cmd } of commandsOf(program)) visit(path, cmd.options);
  for (const row of rows) {
    for (const path of row.commands) if (!taken.get(row.long)?.has(path)) problems.push(`${row.long}: docs/CLI.md lists ${path}, which does not take it`);
  }
  return problems;
}

/** A Writable that keeps what is written. */
class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

interface Parsed {
  code: number;
  stderr: string;
  /** The command whose action ran (its path) and the options it had. */
  ran?: { path: string; opts: Record<string, unknown> };
}

/**
 * Parses `akas ARGV` as the shipped program does, hooks included (the old spellings' notices),
 * with every action replaced by one that records what it was given: nothing runs, nothing is asked.
 */
async function parse(argv: string[], groups = commandGroups): Promise<Parsed> {
  const stdout = new Capture();
  const stderr = new Capture();
  let ran: Parsed['ran'];
  const stub = (program: Command) => {
    for (const { path, cmd } of commandsOf(program, true)) {
      if (hasAction(cmd)) cmd.action(() => void (ran = { path, opts: cmd.opts() }));
    }
  };
  const code = await run(argv, { stdout, stderr }, groups, {}, stub);
  process.exitCode = 0;
  return { code, stderr: stderr.text, ran };
}

/**
 * The words of a shell line, quotes removed, with the operators that end a simple command
 * (`&&`, `||`, `|`, `;`, `&`, `$(`, `)`) as tokens of their own and redirections dropped with their targets.
 */
function shellWords(line: string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  let dropNext = false;
  const end = () => {
    if (word !== null) {
      if (dropNext) dropNext = false;
      else out.push(word);
    }
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    const rest = line.slice(i);
    if (word === null) {
      const redirect = /^(\d*)(>>|>|<)(&\d+)?/.exec(rest);
      if (redirect) {
        i += redirect[0].length - 1;
        if (!redirect[3]) dropNext = true;
        continue;
      }
      const op = /^(&&|\|\||\$\(|[|;&)])/.exec(rest);
      if (op) {
        out.push(op[0]);
        i += op[0].length - 1;
        continue;
      }
    }
    if (/\s/.test(c)) end();
    else if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, close < 0 ? undefined : close);
      i = close < 0 ? line.length : close;
    } else if (c === '\\' && i + 1 < line.length) word = (word ?? '') + line[++i];
    else if (word !== null && /^(&&|\|\||\$\(|[|;&)])/.test(rest)) {
      end();
      i--;
    } else word = (word ?? '') + c;
  }
  end();
  return out;
}

/**
 * The `akas` commands of a shell line, each as its argv (after `akas`, leading VAR=value words
 * skipped); the single-file verifier's (`node akas-verify.mjs verify ...`) too, as it is the same program cut down.
 */
function akasCommands(line: string): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  for (const w of [...shellWords(line), ';']) {
    if (['&&', '||', '|', ';', '&', '$(', ')'].includes(w)) {
      const words = current.slice(current.findIndex((x) => !/^[A-Z_][A-Z0-9_]*=/.test(x)));
      if (words[0] === 'akas' && current.some((x) => !/^[A-Z_][A-Z0-9_]*=/.test(x))) commands.push(words.slice(1));
      else if (words[0] === 'node' && /(^|\/)akas-verify\.mjs$/.test(words[1] ?? '')) {
        // `akas-verify credential X` reads as `akas-verify verify credential X` (cli/commands/verify/main.ts: withVerify).
        const rest = words.slice(2);
        commands.push(rest[0] === 'verify' || !rest[0] || rest[0].startsWith('-') ? rest : ['verify', ...rest]);
      }
      current = [];
    } else current.push(w);
  }
  return commands;
}

/** Shell lines of a markdown file's code blocks (```sh and the unlabelled ones): continuations joined, comments dropped. */
function shellLines(file: string): Array<{ at: string; line: string }> {
  const lines = read(file).split('\n');
  const out: Array<{ at: string; line: string }> = [];
  let fence: string | null = null;
  let pending = '';
  lines.forEach((raw, i) => {
    const f = /^\s*```(\S*)/.exec(raw);
    if (f) {
      fence = fence === null ? f[1] : null;
      return;
    }
    if (fence === null || !['sh', 'bash', ''].includes(fence)) return;
    const bare = raw.replace(/\s+#(\s.*)?$/, '').trim();
    if (!pending && (bare === '' || bare.startsWith('#'))) return;
    const joined = pending ? `${pending} ${bare}` : bare;
    if (joined.endsWith('\\')) pending = joined.slice(0, -1).trim();
    else {
      pending = '';
      out.push({ at: `${file}:${i + 1}`, line: joined });
    }
  });
  return out;
}

/** README.md and docs/*.md (docs/CLI.md names the old spellings on purpose). */
const MARKDOWN = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'CLI.md')
    .map((f) => `docs/${f}`),
];

/** The commands the markdown files' code blocks show, each as its argv. */
function shownCommands(): Array<{ at: string; argv: string[] }> {
  return MARKDOWN.flatMap((file) => shellLines(file).flatMap(({ at, line }) => akasCommands(line).map((argv) => ({ at, argv }))));
}

/** The `akas ...` code spans of their prose (`akas node PATH`), but for those with `...` standing for more. */
function mentionedCommands(): Array<{ at: string; argv: string[] }> {
  return MARKDOWN.flatMap((file) =>
    read(file)
      .split('\n')
      .flatMap((text, i) =>
        [...text.matchAll(/(?<!`)`(akas [^`]+)`(?!`)/g)]
          .filter((m) => !/\.\.\.|…/.test(m[1]))
          .flatMap((m) => akasCommands(m[1]).map((argv) => ({ at: `${file}:${i + 1}`, argv }))),
      ),
  );
}

/**
 * What a mention names that the program does not show: a command path that is hidden (an old
 * spelling), a flag its command does not have or hides. A mention may leave out arguments and
 * values (`akas verify credential --status`), so it is read word by word, not parsed.
 */
function mentionProblems(program: Command, argv: string[]): string[] {
  const problems: string[] = [];
  const global = (w: string | undefined) => program.options.find((o) => o.long === w?.split('=')[0]);
  let cmd = program;
  // `[--flag VALUE]` is an optional part: read as given.
  let words = argv.map((w) => w.replace(/^\[/, '').replace(/\]$/, ''));
  for (;;) {
    while (global(words[0])) words = words.slice(global(words[0])?.required && !words[0].includes('=') ? 2 : 1);
    const next = cmd.commands.find((c) => c.name() === words[0] || c.aliases().includes(words[0]));
    if (!next) break;
    if (isHidden(next)) problems.push(`${words[0]}: an old spelling`);
    cmd = next;
    words = words.slice(1);
  }
  for (const w of words.filter((x) => /^--?[a-z]/.test(x))) {
    const flag = w.split('=')[0];
    const o = [...cmd.options, ...program.options].find((x) => x.long === flag || x.short === flag);
    if (!o && !['--help', '-h'].includes(flag)) problems.push(`${flag}: not a flag of akas ${cmd.name()}`);
    else if (o?.hidden) problems.push(`${flag}: an old spelling`);
  }
  return problems;
}

describe('docs/CLI.md "Commands"', () => {
  const program = akas();
  const rows = commandRows();

  it('lists every visible command with its arguments, its summary word for word (80 characters at most) and its help group, and no other', () => {
    expect(rows.length).toBeGreaterThan(60);
    expect(commandProblems(program, rows)).toEqual([]);
  });

  it('finds a command without a summary, one it does not list and one it lists that is not there', () => {
    const p = new Command('akas');
    p.command('me').helpGroup("An agent's work:");
    p.command('extra').summary('x').helpGroup("An agent's work:");
    const problems = commandProblems(p, [...commandRows("### An agent's work\n| `akas me` | your agent |\n| `akas gone` | x |")]);
    expect(problems).toEqual(['akas me: no summary', 'akas extra: a command docs/CLI.md does not list', 'akas gone: listed by docs/CLI.md, not a command']);
  });

  it('is the order and grouping of `akas --help`, help under "This CLI"', async () => {
    const stdout = new Capture();
    expect(await run(['--help'], { stdout, stderr: new Capture() }, commandGroups, {})).toBe(0);
    process.exitCode = 0;
    const headings = stdout.text.split('\n').filter((l) => /^\S.*:$/.test(l) && !['Options:', 'Usage:'].includes(l));
    expect(headings).toEqual(['Running a node:', "An agent's work:", 'Auditing:', 'This CLI:']);
    expect(HELP_GROUPS.map(([heading]) => heading)).toEqual(headings);
    const topLevel = rows.filter((r) => !r.path.includes(' '));
    expect(HELP_GROUPS.flatMap(([heading, names]) => names.map((n) => `${heading} ${n}`))).toEqual(topLevel.map((r) => `${r.group} ${r.path}`));
    const visible = program.commands.filter((c) => !isHidden(c)).map((c) => c.name());
    expect(visible).toEqual(topLevel.map((r) => r.path));
    expect(stdout.text).toMatch(/This CLI:\n {2}completion <shell> [\s\S]*\n {2}help \[command\] /);
  });
});

describe('docs/CLI.md "Flags"', () => {
  const program = akas();

  it('has one row per flag name, its shape, and every command that takes it, both ways', () => {
    expect(flagRows().length).toBeGreaterThan(100);
    expect(flagProblems(program, flagRows())).toEqual([]);
  });

  it('finds a flag name with two meanings, a flag it does not list and a command its row names that lacks it', () => {
    const p = new Command('akas');
    p.command('a').option('--trust', 'a switch');
    p.command('b').option('--trust <file>', 'a file').option('--extra');
    const rows = flagRows('| `--trust` | `<file>` | a trust file | b, c |\n| `--trust` | — | a switch | a |');
    expect(flagProblems(p, rows)).toEqual([
      '--trust: two rows (two meanings)',
      '--trust (a): takes "—", docs/CLI.md "<file>" (one shape per name)',
      "--trust: taken by a, which docs/CLI.md's row does not list",
      '--extra (b): a flag docs/CLI.md does not list',
      '--trust: docs/CLI.md lists c, which does not take it',
    ]);
  });
});

/** An old or new spelling as the argv of a parse: placeholders, required arguments and mandatory options given a value. */
function argvOf(spelling: string, program: Command): { argv: string[]; cmd: Command | undefined; path: string } {
  const words = spelling.split(' ').slice(1);
  let cmd: Command | undefined = program;
  const path: string[] = [];
  while (words.length && cmd?.commands.some((c) => c.name() === words[0])) {
    cmd = cmd.commands.find((c) => c.name() === words[0]);
    path.push(words.shift() as string);
  }
  const args: string[] = [];
  while (words.length && !words[0].startsWith('-')) args.push(words.shift() === '<id>' ? 'prop_0123456789abcdef' : 'X');
  const flags: string[] = [];
  for (const w of words) {
    if (!w.startsWith('-')) flags.push(/^<.*>$/.test(w) ? 'X' : w);
    else {
      flags.push(w);
      const o = cmd?.options.find((x) => x.long === w);
      if (o && (o.required || o.optional) && !words[words.indexOf(w) + 1]?.match(/^[^-]/)) flags.push('X');
    }
  }
  for (const a of cmd?.registeredArguments.slice(args.length) ?? []) if (a.required) args.push('X');
  for (const o of cmd?.options ?? []) if (o.mandatory && !flags.includes(o.long as string)) flags.push(o.long as string, 'X');
  return { argv: [...path, ...args, ...flags], cmd, path: path.join(' ') };
}

describe('docs/CLI.md "Spellings that changed"', () => {
  const program = akas();
  const rows = renamedRows();

  it('lists the old spellings', () => {
    expect(rows.length).toBeGreaterThanOrEqual(18);
  });

  it.each(rows)('$old still parses, hidden, saying that it is now $now', async ({ old, now }) => {
    const { argv, cmd, path } = argvOf(old, program);
    const r = await parse(argv);
    expect(r.stderr, old).toBe(renamedNotice(old, now));
    expect(r.code, r.stderr).toBe(0);
    // Hidden: the old command, or the old flag on its command, is listed by no help and no completion.
    const flag = old.split(' ').find((w) => w.startsWith('--'));
    expect(Boolean(cmd && (isHidden(cmd) || cmd.options.find((o) => o.long === flag)?.hidden)), old).toBe(true);
    // Where a flag moved on its own command, its value reached the new one.
    const moved = now.split(' ').find((w) => w.startsWith('--'));
    if (flag && moved && argvOf(now, program).path === path && r.ran) {
      const to = cmd?.options.find((o) => o.long === moved);
      expect(JSON.stringify(r.ran.opts[to?.attributeName() ?? '']), old).toContain('X');
    }
  });

  it.each(rows)('$now is visible and says nothing', async ({ now }) => {
    const { argv, cmd } = argvOf(now, program);
    expect(cmd && !isHidden(cmd), now).toBe(true);
    for (const flag of now.split(' ').filter((w) => w.startsWith('--'))) expect(cmd?.options.find((o) => o.long === flag)?.hidden, now).toBe(false);
    const r = await parse(argv);
    expect([r.code, r.stderr]).toEqual([0, '']);
  });

  it('prints nothing but the one notice on stderr under --json, the command still run', async () => {
    const r = await parse(['--json', 'events', '--follow']);
    expect(r.stderr).toBe(renamedNotice('akas events', 'akas log events'));
    expect(r.ran?.path).toBe('events');
    expect(r.ran?.opts.follow).toBe(true);
  });

  it('says an old spelling once however often it is given, its values all kept', async () => {
    const r = await parse(['serve', '--cosigner', 'c', '--witness', 'a', '--witness', 'b']);
    expect(r.stderr).toBe(renamedNotice('akas serve --witness', 'akas serve --cosigner'));
    expect(r.ran?.opts.cosigner).toEqual(['c', 'a', 'b']);
  });

  it('refuses a single value given under both its old and new name', async () => {
    const r = await parse(['--json', 'store', 'copy', '--from', 'a', '--data', 'b', '--store', 'postgres://db']);
    expect(r.code).toBe(2);
    expect(r.ran).toBeUndefined();
  });
});

describe('the commands README.md and docs/*.md show', () => {
  const shown = shownCommands();

  it('are found (the scan is not empty) and the shell words are read as a shell reads them', () => {
    expect(shown.filter((c) => c.at.startsWith('README.md')).length).toBeGreaterThan(80);
    expect(akasCommands(`X=1 akas node-keys --json > keys.json && akas verify judgments p.json --agent-file "a b.json" 2>&1 | head`)).toEqual([
      ['node-keys', '--json'],
      ['verify', 'judgments', 'p.json', '--agent-file', 'a b.json'],
    ]);
    expect(akasCommands(`LOG_KEY=$(akas --base-url http://x node-keys --json | jq -r .log) && echo 1 >/dev/null &`)).toEqual([
      ['--base-url', 'http://x', 'node-keys', '--json'],
    ]);
  });

  it('each parse with the spellings of today: no usage error, no old spelling', async () => {
    const wrong: string[] = [];
    for (const { at, argv } of shown) {
      const r = await parse(argv);
      if (r.code !== 0 || r.stderr) wrong.push(`${at}: akas ${argv.join(' ')}: ${r.stderr.split('\n')[0]}`);
    }
    expect(wrong).toEqual([]);
  });

  it('and each command their prose names is one, with its flags (arguments may be left out)', () => {
    const mentioned = mentionedCommands();
    expect(mentioned.length).toBeGreaterThan(100);
    const program = akas();
    const wrong = mentioned.flatMap(({ at, argv }) => mentionProblems(program, argv).map((p) => `${at}: akas ${argv.join(' ')}: ${p}`));
    expect(wrong).toEqual([]);
    expect(mentionProblems(program, ['node-keys', '--trust'])).toEqual(['--trust: an old spelling']);
    expect(mentionProblems(program, ['--json', 'events', '--follow'])).toEqual(['events: an old spelling']);
    expect(mentionProblems(program, ['verify', 'credential', '--statuz'])).toEqual(['--statuz: not a flag of akas credential']);
  });

  it('finds an old spelling shown', async () => {
    const r = await parse(akasCommands('akas node-keys --trust > trust.json')[0]);
    expect(r.stderr).toBe(renamedNotice('akas node-keys --trust', 'akas trust pin'));
  });

  it('finds a command that does not parse, and a flag it does not have', async () => {
    expect((await parse(['verify', 'bundle'])).code).toBe(2);
    expect((await parse(['me', '--trust', 'x'])).code).toBe(2);
    expect((await parse(['proposals'])).code).toBe(2);
  });
});
