import type { CommandGroup } from '../program.js';
import { casCommands } from './cas.js';
import { completionCommands } from './completion.js';
import { credentialCommands } from './credentials.js';
import { demoCommands } from './demo.js';
import { discoveryCommands } from './discovery.js';
import { logCommands } from './log.js';
import { calibrationCommands } from './calibration.js';
import { identityCommands } from './identity.js';
import { knowledgeCommands } from './knowledge.js';
import { proposalCommands } from './proposals.js';
import { serveCommands } from './serve.js';
import { storeCommands } from './store.js';
import { verifyCommands } from './verify.js';
import { witnessCommands } from './witness.js';

/** Every command group, in the order `akas --help` lists them. */
export const commandGroups: CommandGroup[] = [serveCommands, demoCommands, storeCommands, identityCommands, calibrationCommands, proposalCommands, casCommands, knowledgeCommands, verifyCommands, credentialCommands, logCommands, witnessCommands, discoveryCommands, completionCommands];
