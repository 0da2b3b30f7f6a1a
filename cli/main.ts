#!/usr/bin/env node
// The `akas` entry. The program and its command table are static imports, so the bundle
// (scripts/bundle.mjs) puts them in this one file: a short command (`akas me`) loads one
// module, not a dozen chunks. Heavy modules (fastify, ink, undici, the VC stack) stay
// behind dynamic imports inside the actions that need them.
import { commandGroups } from './commands/index.js';
import { quietOnEpipe } from './output.js';
import { run } from './program.js';

quietOnEpipe();

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }, commandGroups).then((c) => (process.exitCode = c));
