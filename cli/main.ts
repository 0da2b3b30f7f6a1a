#!/usr/bin/env node
// `akas --version` answers before anything else loads; everything else builds the program.
import { VERSION } from '../src/core/version.js';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const [{ run }, { commandGroups }] = await Promise.all([import('./program.js'), import('./commands/index.js')]);
  process.exitCode = await run(argv, { stdout: process.stdout, stderr: process.stderr }, commandGroups);
}
