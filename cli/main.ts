#!/usr/bin/env node
import { run } from './program.js';
import { commandGroups } from './commands/index.js';

const code = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }, commandGroups);
process.exitCode = code;
