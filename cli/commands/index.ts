import type { CommandGroup } from '../program.js';
import { identityCommands } from './identity.js';
import { serveCommands } from './serve.js';

/** Every command group, in the order `akas --help` lists them. */
export const commandGroups: CommandGroup[] = [serveCommands, identityCommands];
