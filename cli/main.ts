#!/usr/bin/env node
// The `akas` entry. The program and its command table are static imports, so the bundle
// (scripts/bundle.mjs) puts them in this one file: a short command (`akas me`) loads one
// module, not a dozen chunks. Heavy modules (fastify, ink, undici, the VC stack) stay
// behind dynamic imports inside the actions that need them.
import { setFlagsFromString } from 'node:v8';
import { commandGroups } from './commands/index.js';
import { quietOnEpipe } from './kit/index.js';
import { run } from './program.js';

quietOnEpipe();
// The HTTP parser of undici and of Node's fetch is llhttp built to WebAssembly. V8 compiles it
// with Liftoff at once, then again with TurboFan in the background, and the process waits for
// that second compile before it exits: about 300 ms of CPU after a one-shot command such as
// `akas cas put` or `akas verify credential --status` has printed its answer (660 ms of CPU
// against 400 ms with Liftoff alone, here). Liftoff's code parses a response's headers just as
// well. Set before any WebAssembly is compiled, as V8 reads it when it compiles. Only where
// Liftoff is complete (x64, arm64): elsewhere V8 falls back to TurboFan for what Liftoff cannot
// compile, which this flag would turn into a fatal error.
if (process.arch === 'x64' || process.arch === 'arm64') setFlagsFromString('--liftoff-only');

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }, commandGroups).then((c) => (process.exitCode = c));
