// Runs the README's shell examples against a node (test/e2e/readme.test.ts against
// `akas serve --demo`; test/e2e/newcomer.test.ts runs the first session on a fresh default
// node). The rules, which README authors follow when they add commands:
//
// 1. Blocks. Every ```sh block of README.md runs, in the order of the file, in one work folder
//    and one config folder (so profiles made by one block are there in the next). A block is
//    not run when the HTML comment just before it (blank lines between are fine) says
//    `<!-- readme-test: skip block: WHY -->`.
// 2. Commands. Each line of a block is one command; a line ending in `\` continues on the next.
//    A line that is only a comment (spaces then #) explains the line above and is not run.
//    Each command runs in bash (pipefail on) with `akas` on PATH being the built binary, AKAS_BASE_URL
//    the node, and must exit 0, unless the block's comment says otherwise:
//      skip "COMMAND": WHY      that command is not run (it needs a terminal, or runs until
//                               stopped); COMMAND is the line without its trailing comment
//      exit N "COMMAND": WHY    that command must exit N
//      input FILE: WHAT         a file the reader writes; the test writes it (below)
//      script: WHY              the block runs whole as one bash script (set -e, pipefail): for
//                               blocks whose commands share shell variables and background jobs.
//                               Each port given to --port in it is replaced by a free one
//                               everywhere in the block, placeholders are not replaced, and its
//                               background jobs are stopped when it ends.
//    Directives are separated by `;` in one comment: `<!-- readme-test: skip "x": why; exit 1 "y": why -->`.
// 3. Inputs the test writes: answers.json, before each command that names it, holds the
//    reference answers of both demo pools (A1..A5 and B1..B5: each agent sends its own pool's);
//    answer.json an answer in the schema of the challenge that profile drew last; review.json
//    the example of the review.attestation.v1 schema; verify-sigstore.cjs the sigstore-js snippet
//    of docs/INTEROP.md (docs/interop/verify-sigstore.cjs), its packages resolved from this
//    repository's node_modules (NODE_PATH) as after the `npm install` the README skips.
// 4. Placeholders, replaced before a command runs:
//      jdg_0123456789abcdef                                        a judgment id: the first credential file in creds/
//                                                                  (what `akas export --credentials creds/` wrote)
//      cprop_0123456789abcdef (any other prefix + 0123456789abcdef) the id the last `akas propose` printed
//      did:key:z6Mk...                                             the node's issuer (GET /healthz)
//      'akas/z6Mk...+1a2b3c4d+AW...'                               the node's log key (GET /api/node/keys)
//      att_0000000000000007                                        the id the last `akas attest` printed
//      ak_judge001                                                 the tag of profile judge1
//      http://127.0.0.1:7373                                       the node's URL
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, defaultStateDir } from './e2e.js';

export interface ReadmeCommand {
  /** The command as written (continuations joined), trailing comment kept. */
  line: string;
  /** Without its trailing comment: what directives name. */
  bare: string;
}

export interface ReadmeBlock {
  /** The section heading above the block. */
  section: string;
  /** 1-based line of the ```sh fence. */
  at: number;
  skip: string | null;
  /** Runs whole as one script (rule 2's `script:`), and why. */
  script: string | null;
  /** The block's text between its fences. */
  text: string;
  skipCommands: Map<string, string>;
  exits: Map<string, number>;
  inputs: Map<string, string>;
  commands: ReadmeCommand[];
}

const README = new URL('../../README.md', import.meta.url);

// A trailing comment: whitespace, #, whitespace, outside quotes (the README's commands keep
// # out of their quoted arguments).
const stripComment = (line: string) =>
  line
    .replace(/\s+#\s.*$/, '')
    .replace(/\s+#$/, '')
    .trim();

function parseDirectives(text: string, block: ReadmeBlock) {
  for (const part of text.split(/;\s*(?=skip |exit |input |script:)/)) {
    const d = part.trim();
    let m: RegExpExecArray | null;
    if ((m = /^skip block:\s*(.+)$/s.exec(d))) block.skip = m[1].trim();
    else if ((m = /^script:\s*(.+)$/s.exec(d))) block.script = m[1].trim();
    else if ((m = /^skip "([^"]+)":\s*(.+)$/s.exec(d))) block.skipCommands.set(m[1], m[2].trim());
    else if ((m = /^exit (\d+) "([^"]+)":\s*(.+)$/s.exec(d))) block.exits.set(m[2], Number(m[1]));
    else if ((m = /^input (\S+):\s*(.+)$/s.exec(d))) block.inputs.set(m[1], m[2].trim());
    else throw new Error(`README: a readme-test directive the runner does not know: "${d}"`);
  }
}

/** The ```sh blocks of README.md with their directives and commands. */
export function readmeBlocks(): ReadmeBlock[] {
  const lines = readFileSync(README, 'utf8').split('\n');
  const blocks: ReadmeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('## ')) section = lines[i].slice(3).trim();
    if (lines[i].trim() !== '```sh') continue;
    const block: ReadmeBlock = {
      section,
      at: i + 1,
      skip: null,
      script: null,
      text: '',
      skipCommands: new Map(),
      exits: new Map(),
      inputs: new Map(),
      commands: [],
    };
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const m = k >= 0 ? /^<!--\s*readme-test:\s*(.*?)\s*-->$/.exec(lines[k].trim()) : null;
    if (m) parseDirectives(m[1], block);
    let j = i + 1;
    let pending = '';
    for (; j < lines.length && lines[j].trim() !== '```'; j++) {
      const raw = lines[j];
      if (!pending && /^\s*#/.test(raw)) continue; // a comment line explains the line above
      if (!pending && raw.trim() === '') continue;
      const joined = pending ? `${pending} ${raw.trim()}` : raw.trim();
      if (/\\$/.test(stripComment(joined)) || /\\$/.test(joined)) {
        pending = joined.replace(/\s*\\$/, '');
        continue;
      }
      pending = '';
      block.commands.push({ line: joined, bare: stripComment(joined) });
    }
    block.text = lines.slice(i + 1, j).join('\n');
    for (const name of block.skipCommands.keys()) {
      if (!block.commands.some((c) => c.bare === name)) throw new Error(`README line ${block.at}: skip "${name}" names no command of the block`);
    }
    for (const name of block.exits.keys()) {
      if (!block.commands.some((c) => c.bare === name)) throw new Error(`README line ${block.at}: exit "${name}" names no command of the block`);
    }
    blocks.push(block);
    i = j;
  }
  return blocks;
}

export interface ReadmeContext {
  url: string;
  issuer: string;
  logKey: string;
  work: string;
  configDir: string;
  lastProposal?: string;
  lastAttestation?: string;
  /** The pool of a saved profile, and its tag. */
  profile(name: string): { tag: string; calibrationPoolId: string };
}

export interface CommandRun {
  command: string;
  code: number;
  stdout: string;
  stderr: string;
}

function substitute(command: string, ctx: ReadmeContext): string {
  let out = command
    .replaceAll('http://127.0.0.1:7373', ctx.url)
    .replaceAll('did:key:z6Mk...', ctx.issuer)
    .replaceAll("'akas/z6Mk...+1a2b3c4d+AW...'", `'${ctx.logKey}'`);
  if (out.includes('jdg_0123456789abcdef')) {
    const creds = join(ctx.work, 'creds');
    const file = existsSync(creds) ? readdirSync(creds).find((f) => /^jdg_[0-9a-f]{16}\.json$/.test(f)) : undefined;
    if (!file) throw new Error(`"${command}" names a judgment before any \`akas export --credentials creds/\` wrote one`);
    out = out.replaceAll('jdg_0123456789abcdef', file.slice(0, -'.json'.length));
  }
  if (/\b[a-z]+_0123456789abcdef\b/.test(out)) {
    if (!ctx.lastProposal) throw new Error(`"${command}" names a proposal before any \`akas propose\` printed one`);
    out = out.replace(/\b[a-z]+_0123456789abcdef\b/g, ctx.lastProposal);
  }
  if (out.includes('att_0000000000000007')) {
    if (!ctx.lastAttestation) throw new Error(`"${command}" names an attestation before any \`akas attest\` printed one`);
    out = out.replaceAll('att_0000000000000007', ctx.lastAttestation);
  }
  if (out.includes('ak_judge001')) out = out.replaceAll('ak_judge001', ctx.profile('judge1').tag);
  return out;
}

// `akas` as the reader has it (npm link, or the alias): a program on PATH, so `akas ... &` is
// the node itself and `kill %1` stops it (a shell function would run in a subshell).
function akasOnPath(ctx: ReadmeContext): string {
  const bin = join(ctx.work, '.bin');
  if (!existsSync(join(bin, 'akas'))) {
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'akas'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
    chmodSync(join(bin, 'akas'), 0o755);
  }
  return bin;
}

function bash(command: string, ctx: ReadmeContext, opts: { script?: boolean } = {}): Promise<CommandRun> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AKAS_')) env[k] = v;
  Object.assign(env, { AKAS_BASE_URL: ctx.url, AKAS_CONFIG_DIR: ctx.configDir, NO_COLOR: '1', PATH: `${akasOnPath(ctx)}:${process.env.PATH}` });
  // The state folder the test file's node recorded itself in (test/helpers/e2e.ts): `akas admin` finds it there, as in the reader's shell.
  env.XDG_STATE_HOME = defaultStateDir();
  // The packages a README snippet requires (the sigstore-js one) resolve from this repository, as after its `npm install`.
  env.NODE_PATH = fileURLToPath(new URL('../../node_modules', import.meta.url));
  // A whole block stops what it started in the background when it ends, however it ends.
  const script = opts.script ? `set -eo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n${command}\n` : `set -o pipefail\n${command}\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ctx.work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.script ? 180_000 : 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ command, code: code ?? 128, stdout, stderr });
    });
  });
}

// The file a profile's identity is saved in (one node per config folder here).
function savedPath(ctx: ReadmeContext, profile: string): string {
  const dir = join(ctx.configDir, 'profiles', profile);
  return join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!);
}

const profileOf = (command: string) => /--profile\s+(\S+)/.exec(command)?.[1] ?? 'default';

/** Writes the inputs a command needs (rule 3). */
function writeInputs(block: ReadmeBlock, command: string, ctx: ReadmeContext) {
  if (block.inputs.has('answers.json') && command.includes('answers.json')) {
    const answers = ['A', 'B'].flatMap((poolId) => {
      const pool = JSON.parse(readFileSync(new URL(`../../data/calibration/pool-${poolId}.json`, import.meta.url), 'utf8')) as {
        questions: Array<{ id: string; expected: string }>;
      };
      return pool.questions.map((q) => [q.id, q.expected]);
    });
    writeFileSync(join(ctx.work, 'answers.json'), JSON.stringify(Object.fromEntries(answers)));
  }
  if (block.inputs.has('answer.json') && command.includes('@answer.json')) {
    const saved = JSON.parse(readFileSync(savedPath(ctx, profileOf(command)), 'utf8')) as { challenge?: { challenge: { schemaName: string } } };
    const schema = saved.challenge?.challenge.schemaName;
    if (!schema) throw new Error(`"${command}" answers a challenge, but profile ${profileOf(command)} has drawn none`);
    const answer =
      schema === 'tool-description'
        ? {
            answer: 'word-count counts the words, sentences and characters of a text and answers them as numbers, in one call.',
            confidence: 'medium',
            model: { family: 'other', version: 'readme' },
            via: 'local',
            elapsed_ms: 1,
          }
        : { answer: 'a short answer' };
    writeFileSync(join(ctx.work, 'answer.json'), JSON.stringify(answer));
  }
  if (block.inputs.has('verify-sigstore.cjs') && command.includes('verify-sigstore.cjs')) {
    writeFileSync(join(ctx.work, 'verify-sigstore.cjs'), readFileSync(new URL('../../docs/interop/verify-sigstore.cjs', import.meta.url)));
  }
  if (block.inputs.has('review.json') && command.includes('review.json')) {
    const schema = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')) as { examples: unknown[] };
    writeFileSync(join(ctx.work, 'review.json'), JSON.stringify(schema.examples[0]));
  }
}

/**
 * Runs one block's commands in order (rules 2 to 4); answers each run. Throws at the first
 * command that does not exit as the README says, with what it printed.
 */
export async function runBlock(block: ReadmeBlock, ctx: ReadmeContext): Promise<CommandRun[]> {
  if (block.script) return [await runScript(block, ctx)];
  const runs: CommandRun[] = [];
  for (const c of block.commands) {
    if (block.skipCommands.has(c.bare)) continue;
    writeInputs(block, c.bare, ctx);
    const command = substitute(c.line, ctx);
    const r = await bash(command, ctx);
    runs.push(r);
    const expected = block.exits.get(c.bare) ?? 0;
    if (r.code !== expected) {
      throw new Error(
        `README line ${block.at} (${block.section}): \`${command}\` exited ${r.code}, the README says ${expected}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`,
      );
    }
    if (/^akas(\s+--profile\s+\S+)?\s+propose\s/.test(c.bare) && !/--dry-run|--template/.test(c.bare)) {
      const m = /proposed ([a-z]+_[0-9a-f]{16})/.exec(r.stdout);
      if (!m) throw new Error(`\`${command}\` printed no proposal id:\n${r.stdout}`);
      ctx.lastProposal = m[1];
    }
    if (/^akas(\s+--profile\s+\S+)?\s+attest\s/.test(c.bare) && !/--dry-run|--template/.test(c.bare)) {
      const m = /att_[0-9a-f]{16}/.exec(r.stdout);
      if (!m) throw new Error(`\`${command}\` printed no attestation id:\n${r.stdout}`);
      ctx.lastAttestation = m[0];
    }
  }
  return runs;
}

/** A port free now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A `script:` block, whole (rule 2): its --port values replaced by free ports everywhere in it. */
async function runScript(block: ReadmeBlock, ctx: ReadmeContext): Promise<CommandRun> {
  let text = block.text;
  for (const port of new Set([...text.matchAll(/--port (\d+)/g)].map((m) => m[1]))) {
    text = text.replace(new RegExp(`(:|--port )${port}\\b`, 'g'), `$1${await freePort()}`);
  }
  const r = await bash(text, ctx, { script: true });
  if (r.code !== 0) {
    throw new Error(`README line ${block.at} (${block.section}): the block exited ${r.code} as one script\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return r;
}
