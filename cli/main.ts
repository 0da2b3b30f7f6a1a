#!/usr/bin/env node
// The `akas` entry. The program and its command table are static imports, so the bundle
// (scripts/bundle.mjs) puts them in this one file: a short command (`akas me`) loads one
// module, not a dozen chunks. Heavy modules (fastify, ink, undici, the VC stack) stay
// behind dynamic imports inside the actions that need them.
import { commandGroups } from './commands/index.js';
import { run } from './program.js';

// A reader that stops early (`akas events | head -2`) closes the pipe: what was asked for
// has been read, so the command ends quietly with exit 0, whatever it was writing.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }, commandGroups).then((c) => (process.exitCode = c));
