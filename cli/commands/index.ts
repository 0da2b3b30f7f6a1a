import type { CommandGroup } from '../program.js';
import { adminCommands } from './admin.js';
import { appealCommands } from './appeal.js';
import { calibrateCommands, calibrationCommands } from './calibration.js';
import { casCommands } from './cas.js';
import { challengeCommands } from './challenges.js';
import { completionCommands } from './completion.js';
import { demoCommands } from './demo.js';
import { discoveryCommands } from './discovery.js';
import { exportCommands } from './export.js';
import { identityCommands } from './identity.js';
import { journalCommands } from './journal.js';
import { knowledgeCommands } from './knowledge.js';
import { logCommands } from './log.js';
import { monitorCommands } from './monitor.js';
import { proposalCommands } from './proposals.js';
import { quotaCommands } from './quota.js';
import { schemasCommands } from './schemas.js';
import { serveCommands } from './serve.js';
import { storeCommands } from './store.js';
import { toolCommands } from './tools.js';
import { verifyCommands } from './verify/index.js';
import { witnessCommands } from './witness.js';

/** Every command group, in the order `akas --help` lists them; each file is named for what it registers. */
export const commandGroups: CommandGroup[] = [
  serveCommands,
  demoCommands,
  storeCommands,
  adminCommands,
  identityCommands,
  calibrateCommands,
  challengeCommands,
  toolCommands,
  schemasCommands,
  quotaCommands,
  appealCommands,
  calibrationCommands,
  proposalCommands,
  casCommands,
  knowledgeCommands,
  verifyCommands,
  exportCommands,
  logCommands,
  journalCommands,
  monitorCommands,
  witnessCommands,
  discoveryCommands,
  completionCommands,
];
