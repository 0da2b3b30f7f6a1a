// `akas --help` from a model of the top-level commands. The program's own help lists each
// top-level command's term, description and group and nothing below them, yet building those
// commands ran every command group: most of `akas --help`'s start (`npm run bench -- coldstart`).
// The bundle (scripts/bundle.mjs) reads the model from the whole program as the build made it and
// puts it in the front as __AKAS_HELP_MODEL__; the front answers a bare `--help` by building the
// model's commands alone. test/cli/help-model.test.ts holds the text to the whole program's.
import { type Command, Help } from 'commander';

/** What `akas --help` shows of one top-level command. */
export interface HelpEntry {
  name: string;
  /** As commander's help writes it: name, alias, `[options]`, arguments. */
  term: string;
  description: string;
  /** Its heading; empty for commander's default ("Commands:"). */
  group: string;
}

export interface HelpModel {
  /** The visible top-level commands, in the order the help lists them. */
  commands: HelpEntry[];
  /** The heading of commander's own `help [command]`. */
  helpGroup: string;
}

/** The model as JSON text (a string, which the bundle writes at its one use, not an object every module's start initialises). */
declare const __AKAS_HELP_MODEL__: string | undefined;

/** The model the bundle carries: none when the CLI runs from its sources (the tests), where `--help` builds everything. */
export const bundledHelpModel = (): HelpModel | undefined =>
  typeof __AKAS_HELP_MODEL__ === 'undefined' ? undefined : (JSON.parse(__AKAS_HELP_MODEL__) as HelpModel);

/** The model of a whole program's help. */
export function helpModelOf(program: Command): HelpModel {
  const help = program.createHelp();
  const visible = help.visibleCommands(program);
  const own = new Set(program.commands);
  return {
    commands: visible
      .filter((c) => own.has(c))
      .map((c) => ({ name: c.name(), term: help.subcommandTerm(c), description: help.subcommandDescription(c), group: c.helpGroup() })),
    helpGroup: visible.find((c) => !own.has(c))?.helpGroup() ?? '',
  };
}

/** Gives a program with no commands the model's, as its help lists them (they have no options and no action). */
export function addHelpModel(program: Command, model: HelpModel) {
  const terms = new Map<string, string>();
  for (const entry of model.commands) {
    program.command(entry.name).description(entry.description).helpGroup(entry.group);
    terms.set(entry.name, entry.term);
  }
  program.configureHelp({
    subcommandTerm(this: Help, command: Command) {
      return terms.get(command.name()) ?? Help.prototype.subcommandTerm.call(this, command);
    },
  });
  program.commandsGroup(model.helpGroup).helpCommand(true);
}
