import type { Command } from 'commander';
import type { CommandGroup } from '../program.js';
import { adminCommands } from './admin/index.js';
import { appealCommands } from './proposals/appeal.js';
import { calibrateCommands, calibrationCommands } from './calibration/index.js';
import { casCommands } from './cas/index.js';
import { challengeCommands } from './calibration/challenges.js';
import { completionCommands } from './completion/index.js';
import { demoCommands } from './demo/index.js';
import { discoveryCommands } from './discovery/index.js';
import { exportCommands } from './export/index.js';
import { identityCommands } from './identity/index.js';
import { journalCommands } from './journal/index.js';
import { knowledgeCommands } from './knowledge/index.js';
import { logCommands } from './log/index.js';
import { lookupCommands } from './lookup/index.js';
import { monitorCommands } from './monitor/index.js';
import { proposalCommands } from './proposals/index.js';
import { quotaCommands } from './identity/quota.js';
import { renamedSpellings } from './renamed/index.js';
import { schemasCommands } from './proposals/schemas.js';
import { serveCommands } from './serve/index.js';
import { showCommands } from './show/index.js';
import { standingCommands } from './standing/index.js';
import { storeCommands } from './store/index.js';
import { toolCommands } from './calibration/tools.js';
import { trustCommands } from './trust/index.js';
import { verifyCommands } from './verify/index.js';
import { witnessCommands } from './witness/index.js';

/**
 * `akas --help`'s groups: each top-level command under who uses it, in the order docs/CLI.md
 * "Commands" lists them (test/cli/grammar.test.ts holds the two the same). `help` joins the last.
 */
export const HELP_GROUPS: ReadonlyArray<readonly [heading: string, names: readonly string[]]> = [
  ['Running a node:', ['serve', 'demo', 'store', 'admin', 'calibration', 'witness']],
  [
    "An agent's work:",
    [
      'register',
      'me',
      'preview',
      'wakeup',
      'recover',
      'profile',
      'standing',
      'card',
      'quota',
      'appeal',
      'agents',
      'calibrate',
      'challenge',
      'tool',
      'schemas',
    ].concat(['propose', 'queue', 'judge', 'withdraw', 'attest', 'show', 'node', 'brief', 'search', 'suggest', 'traverse', 'cas', 'mcp', 'docs']),
  ],
  ['Auditing:', ['verify', 'export', 'node-keys', 'trust', 'log', 'lookup', 'gate', 'journal', 'monitor', 'explore']],
  ['This CLI:', ['completion']],
];

/** Puts each top-level command in its help group, in the groups' order (hidden ones last, in none). */
export function helpGroups(program: Command) {
  const rank = new Map(
    HELP_GROUPS.flatMap(([heading, names]) => names.map((name) => [name, heading] as const)).map(([name, heading], i) => [name, { heading, i }]),
  );
  for (const c of program.commands) {
    const at = rank.get(c.name());
    if (at) c.helpGroup(at.heading);
  }
  const place = (c: Command) => rank.get(c.name())?.i ?? Number.MAX_SAFE_INTEGER;
  (program.commands as Command[]).sort((a, b) => place(a) - place(b));
  program.commandsGroup(HELP_GROUPS[HELP_GROUPS.length - 1][0]).helpCommand(true);
}

/** Declares the top-level commands a group adds (CommandGroup.adds); test/cli/partial-program.test.ts holds each list to what its group builds. */
const adding = (group: CommandGroup, ...names: string[]): CommandGroup => Object.assign(group, { adds: names });

/**
 * Every command group; each file is named for what it registers. The old spellings are
 * registered onto the commands the others built, and the help groups set once all are in: those
 * two declare nothing, so they run at every start.
 */
export const commandGroups: CommandGroup[] = [
  adding(serveCommands, 'serve'),
  adding(demoCommands, 'demo'),
  adding(storeCommands, 'store'),
  adding(adminCommands, 'admin'),
  adding(identityCommands, 'register', 'me', 'preview', 'wakeup', 'recover', 'agents', 'profile'),
  adding(calibrateCommands, 'calibrate'),
  adding(challengeCommands, 'challenge'),
  adding(toolCommands, 'tool'),
  adding(schemasCommands, 'schemas'),
  adding(quotaCommands, 'quota'),
  adding(standingCommands, 'standing', 'card'),
  adding(appealCommands, 'appeal'),
  adding(calibrationCommands, 'calibration'),
  adding(proposalCommands, 'propose', 'judge', 'withdraw', 'queue'),
  adding(showCommands, 'show'),
  adding(casCommands, 'cas'),
  adding(knowledgeCommands, 'node', 'brief', 'search', 'suggest', 'traverse'),
  adding(verifyCommands, 'verify'),
  adding(exportCommands, 'export'),
  adding(trustCommands, 'trust'),
  adding(logCommands, 'attest', 'log', 'gate'),
  adding(lookupCommands, 'lookup'),
  adding(journalCommands, 'journal'),
  adding(monitorCommands, 'monitor'),
  adding(witnessCommands, 'witness'),
  adding(discoveryCommands, 'node-keys', 'mcp', 'explore', 'docs'),
  adding(completionCommands, 'completion'),
  renamedSpellings,
  helpGroups,
];
