// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the completion scripts are shell text, where ${...} is the shell's own expansion
// `akas completion bash|zsh|fish`: a completion script generated from the program itself
// (every command, subcommand and option commander knows), so it can never fall behind the
// CLI. Values that are known in advance complete too: proposal kinds, tool names, shells,
// pools, log levels. Install with `eval "$(akas completion bash)"` (or zsh), or
// `akas completion fish | source`.
import type { Command } from 'commander';
import { KIND_NAMES } from '../proposals/judge-input.js';
import { NODE_KINDS } from '../knowledge/index.js';
import { TOOLS } from '../calibration/tools.js';
import { usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** Known values of positional arguments, by "command path:argument name". */
const ARGUMENT_VALUES: Record<string, readonly string[]> = {
  'propose:kind': KIND_NAMES,
  'tool:name': TOOLS,
  'completion:shell': SHELLS,
};
/** Known values of options, by long flag (whatever the command). */
const OPTION_VALUES: Record<string, readonly string[]> = {
  '--kind': KIND_NAMES,
  '--pool': ['A', 'B'],
  '--log-level': ['trace', 'debug', 'info', 'warn', 'error', 'silent'],
};
/**
 * Values of an option on one command, where they differ from OPTION_VALUES ("command path
 * flag"). Options declared with commander's choices() need no entry: their choices are read.
 */
const COMMAND_OPTION_VALUES: Record<string, readonly string[]> = {
  'search --kind': NODE_KINDS,
};

interface Node {
  /** Space-separated path of command names below the program ('' for the program itself). */
  path: string;
  subcommands: string[];
  /** Long (or short) flags, whether each takes a value, and the values it takes when known. */
  options: Array<{ flag: string; takesValue: boolean; description: string; values?: readonly string[] }>;
  /** Values the next positional argument may take. */
  argumentValues: string[];
  /** Its summary (what its parent's help shows), else its description. */
  description: string;
}

/** Whether commander hides a command from help (an old spelling kept a release: cli/commands/renamed/index.ts). */
const hidden = (c: Command) => Boolean((c as unknown as { _hidden?: boolean })._hidden);

/** Every visible command of the program, depth first, with its visible options. */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const walk = (cmd: Command, path: string) => {
    const visible = cmd.commands.filter((c) => c.name() !== 'help' && !hidden(c));
    const args = cmd.registeredArguments ?? [];
    const first = args[0];
    const argumentValues = first ? [...(first.argChoices ?? ARGUMENT_VALUES[`${path}:${first.name()}`] ?? [])] : [];
    nodes.push({
      path,
      subcommands: visible.map((c) => c.name()),
      options: [
        ...cmd.options
          .filter((o) => !o.hidden)
          .flatMap((o) =>
            [o.long, o.short]
              .filter((f): f is string => Boolean(f))
              .map((flag) => ({
                flag,
                takesValue: o.required || o.optional,
                description: o.description,
                values: o.argChoices ?? COMMAND_OPTION_VALUES[`${path} ${flag}`] ?? OPTION_VALUES[flag],
              })),
          ),
        { flag: '--help', takesValue: false, description: 'display help' },
      ],
      argumentValues,
      description: cmd.summary() || cmd.description(),
    });
    for (const c of visible) walk(c, path ? `${path} ${c.name()}` : c.name());
  };
  walk(program, '');
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** Associative-array keys: the root path '' becomes '_' (zsh refuses an empty subscript). */
const key = (path: string) => quote(path || '_');

/** The bash script; zsh runs the same function through bashcompinit. */
function bashScript(nodes: Node[], forZsh: boolean): string {
  const valued = [...new Set(nodes.flatMap((n) => n.options.filter((o) => o.takesValue).map((o) => o.flag)))];
  const lines = [
    `# akas completion for ${forZsh ? 'zsh' : 'bash'}: add to your shell profile`,
    `#   eval "$(akas completion ${forZsh ? 'zsh' : 'bash'})"`,
    ...(forZsh ? ['autoload -U +X compinit && compinit', 'autoload -U +X bashcompinit && bashcompinit'] : []),
    'typeset -A _akas_sub _akas_opt _akas_arg _akas_val',
    ...nodes.map((n) => `_akas_sub[${key(n.path)}]=${quote(n.subcommands.join(' '))}`),
    ...nodes.map((n) => `_akas_opt[${key(n.path)}]=${quote(n.options.map((o) => o.flag).join(' '))}`),
    ...nodes.filter((n) => n.argumentValues.length).map((n) => `_akas_arg[${key(n.path)}]=${quote(n.argumentValues.join(' '))}`),
    ...Object.entries(OPTION_VALUES).map(([flag, values]) => `_akas_val[${quote(flag)}]=${quote(values.join(' '))}`),
    // Values particular to one command: `_akas_val['search --kind']`.
    ...nodes.flatMap((n) =>
      n.options
        .filter((o) => o.values && o.values !== OPTION_VALUES[o.flag])
        .map((o) => `_akas_val[${quote(`${n.path || '_'} ${o.flag}`)}]=${quote(o.values!.join(' '))}`),
    ),
    `_akas_valued=${quote(` ${valued.join(' ')} `)}`,
    '_akas() {',
    '  local cur prev path w i words',
    '  cur="${COMP_WORDS[COMP_CWORD]}"',
    '  prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '  path=_',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    w="${COMP_WORDS[i]}"',
    '    if [[ "$_akas_valued" == *" $w "* ]]; then ((i++)); continue; fi',
    '    [[ "$w" == -* ]] && continue',
    '    if [[ " ${_akas_sub[$path]} " == *" $w "* ]]; then',
    '      if [[ $path == _ ]]; then path="$w"; else path="$path $w"; fi',
    '    fi',
    '  done',
    '  if [[ "$_akas_valued" == *" $prev "* ]]; then',
    '    local vals="${_akas_val["$path $prev"]}"',
    '    [[ -z "$vals" ]] && vals="${_akas_val[$prev]}"',
    '    if [[ -n "$vals" ]]; then COMPREPLY=($(compgen -W "$vals" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi',
    '    return 0',
    '  fi',
    '  if [[ "$cur" == -* ]]; then',
    '    COMPREPLY=($(compgen -W "$(printf "%s\\n" ${_akas_opt[$path]} ${_akas_opt[_]} | sort -u)" -- "$cur"))',
    '    return 0',
    '  fi',
    '  words="${_akas_sub[$path]} ${_akas_arg[$path]}"',
    '  if [[ -n "${words// /}" ]]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi',
    '  return 0',
    '}',
    'complete -o default -F _akas akas',
  ];
  return lines.join('\n') + '\n';
}

function fishScript(nodes: Node[]): string {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  const lines = ['# akas completion for fish:  akas completion fish | source', 'complete -c akas -f'];
  const all = nodes.filter((n) => n.path !== '').map((n) => n.path);
  for (const n of nodes) {
    const words = n.path ? n.path.split(' ') : [];
    // The condition "the command line is at exactly this command": every word of the path
    // seen, and none of its subcommands yet.
    const seen = words.map((w) => `__fish_seen_subcommand_from ${w}`);
    const notDeeper = n.subcommands.length ? [`not __fish_seen_subcommand_from ${n.subcommands.join(' ')}`] : [];
    const atRoot = n.path === '' ? [`not __fish_seen_subcommand_from ${[...new Set(all.map((p) => p.split(' ')[0]))].join(' ')}`] : [];
    const cond = [...seen, ...notDeeper, ...atRoot].join('; and ');
    const when = cond ? ` -n '${esc(cond)}'` : '';
    for (const sub of n.subcommands) {
      const child = nodes.find((c) => c.path === (n.path ? `${n.path} ${sub}` : sub));
      lines.push(`complete -c akas${when} -a ${sub} -d '${esc(child?.description.split('\n')[0].slice(0, 80) ?? '')}'`);
    }
    if (n.argumentValues.length) lines.push(`complete -c akas${when} -a '${esc(n.argumentValues.join(' '))}'`);
    const optCond = words.length ? ` -n '${esc(seen.join('; and '))}'` : '';
    for (const o of n.options) {
      if (o.flag === '--help' && n.path !== '') continue;
      const flag = o.flag.startsWith('--') ? `-l ${o.flag.slice(2)}` : `-s ${o.flag.slice(1)}`;
      const values = o.values;
      const arg = o.takesValue ? (values ? ` -x -a '${esc(values.join(' '))}'` : ' -r -F') : '';
      lines.push(`complete -c akas${optCond} ${flag}${arg} -d '${esc(o.description.slice(0, 80))}'`);
    }
  }
  return lines.join('\n') + '\n';
}

/** The completion script of a shell for this program. */
export function completionScript(program: Command, shell: Shell): string {
  const nodes = commandTree(program);
  return shell === 'fish' ? fishScript(nodes) : bashScript(nodes, shell === 'zsh');
}

export function completionCommands(program: Command, cli: Cli) {
  program
    .command('completion')
    .summary('print a shell completion script (bash, zsh or fish)')
    .description('print a shell completion script: eval "$(akas completion bash)", or zsh; `akas completion fish | source`')
    .argument('<shell>', `one of ${SHELLS.join(', ')}`)
    .action(
      action(cli, async (shell: string) => {
        if (!(SHELLS as readonly string[]).includes(shell)) throw usageError(`no completion for ${shell}: one of ${SHELLS.join(', ')}`);
        cli.io.stdout.write(completionScript(program, shell as Shell));
      }),
    );
}
