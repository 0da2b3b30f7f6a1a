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
import { monitorCommands } from './monitor/index.js';
import { proposalCommands } from './proposals/index.js';
import { quotaCommands } from './identity/quota.js';
import { schemasCommands } from './proposals/schemas.js';
import { serveCommands } from './serve/index.js';
import { storeCommands } from './store/index.js';
import { toolCommands } from './calibration/tools.js';
import { verifyCommands } from './verify/index.js';
import { witnessCommands } from './witness/index.js';

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
