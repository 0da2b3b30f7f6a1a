// The spellings that changed (docs/CLI.md "Spellings that changed") are kept for one release:
// hidden from --help and `akas completion`, working as before, and saying once, on stderr (so
// also under --json: stdout keeps its one document), what replaced them. The mechanics live here;
// cli/commands/renamed/index.ts lists the old spellings themselves.
import { type Command, Option } from 'commander';
import type { Io } from './output.js';

/** The one line an old spelling prints: "OLD" and "NEW" as docs/CLI.md's table writes them. */
export const renamedNotice = (old: string, now: string) => `akas: "${old}" is now "${now}"; the old spelling is removed in the next release (docs/CLI.md)\n`;

/** Prints an old spelling's notice on stderr, once per run however often it is given. */
export type Say = (old: string, now: string) => void;

/** A Say for one run of the program (one per buildProgram). */
export function noticesOnce(io: Io): Say {
  const said = new Set<string>();
  return (old, now) => {
    if (said.has(old)) return;
    said.add(old);
    io.stderr.write(renamedNotice(old, now));
  };
}

/** A hidden command's first steps: its notice before its action runs (`notice` answers which, or nothing). */
export function noticeBefore(cmd: Command, say: Say, notice: (cmd: Command) => [old: string, now: string] | undefined): Command {
  return cmd.hook('preAction', () => {
    const words = notice(cmd);
    if (words) say(...words);
  });
}

/**
 * An old option kept on its command, hidden, taking a value as the old one did (a list when
 * `repeatable`); when given, its notice is said before the action runs.
 */
export function oldOption(cmd: Command, say: Say, flags: string, notice: [old: string, now: string], repeatable = false): Option {
  const old = new Option(flags).hideHelp();
  if (repeatable) old.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  cmd.addOption(old);
  cmd.hook('preAction', () => {
    if (cmd.getOptionValue(old.attributeName()) !== undefined) say(...notice);
  });
  return old;
}

/** The old flag of a renamed option and the new one it stands for (the option's own command). */
export interface RenamedOption {
  /** The old flags as commander reads them, e.g. `--from <dir>`. */
  old: string;
  /** The new option's flags as the command declares it, e.g. `--data <dir>`. */
  now: string;
  /** The command's path as its notice says it, e.g. `akas store copy`. */
  path: string;
}

/**
 * An old option kept on its command (oldOption), its value moved onto the new option's key
 * before the action runs. A list (repeatable or variadic) is added to what the new option holds;
 * a single value given under both names is a usage error.
 */
export function renamedOption(cmd: Command, say: Say, spec: RenamedOption): void {
  const now = cmd.options.find((o) => o.flags === spec.now);
  if (!now) throw new Error(`${spec.path} has no option ${spec.now} to rename ${spec.old} to`);
  // A repeatable new option (collect, default []) is repeatable under its old name too.
  const repeatable = Array.isArray(now.defaultValue) && !now.variadic;
  const old = oldOption(cmd, say, spec.old, [`${spec.path} ${new Option(spec.old).long}`, `${spec.path} ${now.long}`], repeatable);
  const from = old.attributeName();
  const to = now.attributeName();
  cmd.hook('preAction', () => {
    const value = cmd.getOptionValue(from);
    if (value === undefined) return;
    const current = cmd.getOptionValue(to);
    if (Array.isArray(value)) cmd.setOptionValueWithSource(to, [...((current as string[] | undefined) ?? []), ...value], 'cli');
    else if (cmd.getOptionValueSource(to) === 'cli') cmd.error(`error: give ${now.long} or ${old.long}, not both (${old.long} is its old name)`);
    else cmd.setOptionValueWithSource(to, value, 'cli');
  });
}
