// A newcomer's first hour, scripted (issue 23, "Must hold"; run `npm run build` first): on a
// fresh default node (`akas serve`, loopback), four profiles of one machine go from register
// to a published proposal and a verified bundle with exactly the README's first-session
// commands. Beside it: the same-IP rule where the node can tell clients apart (--trust-proxy),
// a closed pipe ending `akas log events` quietly, and the queue on a terminal (an answer and its
// Enter in one chunk; a real SIGINT).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROPOSAL_TEMPLATES } from '../../src/domain/proposals/templates.js';
import { calibratedProfiles, CLI, runCli, savedIdentity, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { onTerminal } from '../helpers/pty.js';
import { readmeBlocks, runBlock, type ReadmeContext } from '../helpers/readme.js';
import { eventually } from '../helpers/written.js';

let node: RunningNode;
let ctx: ReadmeContext;

beforeAll(async () => {
  node = await startServe();
  const work = tempDir('akas-newcomer-');
  const configDir = join(work, '.config');
  mkdirSync(configDir);
  const health = (await (await fetch(`${node.url}/healthz`)).json()) as any;
  const keys = (await (await fetch(`${node.url}/api/node/keys`)).json()) as any;
  ctx = { url: node.url, issuer: health.issuer, logKey: keys.log.verifierKey, work, configDir, profile: (name) => savedIdentity(name, configDir) };
}, 30_000);
afterAll(async () => {
  await node?.stop();
  if (ctx) rmSync(ctx.work, { recursive: true, force: true });
});

const akas = (args: string[], input?: string) => runCli(['--base-url', node.url, ...args], { configDir: ctx.configDir, cwd: ctx.work, input });

describe("the README's first session on a fresh default node", () => {
  it('goes from register to a published proposal and a verified bundle, four profiles on one machine', async () => {
    const health = (await (await fetch(`${node.url}/healthz`)).json()) as any;
    expect(health.sameIpRule).toMatchObject({ enforced: false, reason: expect.stringContaining('loopback only') });

    const block = readmeBlocks().find((b) => b.section === 'A first session as an agent' && !b.skip)!;
    expect(block.commands.length).toBeGreaterThan(15);
    const runs = await runBlock(block, ctx);

    const queue = runs.find((r) => /--profile judge1 queue/.test(r.command))!;
    expect(queue.stdout).toContain(ctx.lastProposal);
    const third = runs.find((r) => /--profile judge3 judge/.test(r.command))!;
    expect(third.stdout).toContain('now published (decided by this judgment)');
    const verified = runs.find((r) => /verify bundle/.test(r.command))!;
    expect(verified.code).toBe(0);
    expect(verified.stdout).not.toMatch(/FAIL/);

    const p = JSON.parse((await akas(['--json', 'show', ctx.lastProposal!])).stdout);
    expect(p).toMatchObject({ status: 'published', judgmentCount: 3 });
  }, 180_000);
});

describe('a closed pipe', () => {
  // `akas log events --follow | head -N`: head leaves after N lines; the next entry akas writes
  // (made here once head is gone) meets a closed pipe, which must end akas quietly with 0.
  let reviews = 0;
  async function attestOne() {
    writeFileSync(join(ctx.work, 'review-pipe.json'), JSON.stringify({ ...PROPOSAL_REVIEW, reviewId: `pipe-${++reviews}` }));
    const attested = await akas(['--profile', 'piper', 'attest', 'review.attestation.v1', '--file', 'review-pipe.json']);
    expect(attested.code, attested.stderr).toBe(0);
  }

  async function followIntoHead(args: string[], lines: number) {
    // Once head has its lines and has left, the group closes the pipe's last reader and says
    // so on stderr: only then does the test append the entry whose write finds no reader.
    const script =
      `akas() { "$AKAS_NODE" "$AKAS_BIN" "$@"; }\nakas ${args.join(' ')} | { head -${lines}; exec 0<&-; echo head-left >&2; }\n` +
      `echo "akas-exit=\${PIPESTATUS[0]}" >&2\n`;
    const child = spawn('bash', ['-c', script], {
      cwd: ctx.work,
      env: { ...process.env, AKAS_BASE_URL: node.url, AKAS_CONFIG_DIR: ctx.configDir, AKAS_BIN: CLI, AKAS_NODE: process.execPath, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    await eventually(() => err.includes('head-left'));
    await attestOne(); // a new log entry for the stream to write
    await closed;
    return { out, err };
  }

  it('ends akas log events --follow quietly with exit 0, in human and JSON output', async () => {
    await calibratedProfiles(node.url, ctx.work, ['piper'], ctx.configDir);
    for (let i = 0; i < 2; i++) await attestOne(); // entries to stream before head leaves
    for (const [args, lines] of [
      [['log', 'events', '--follow'], 2],
      [['log', 'events', '--follow', '--json'], 1],
    ] as const) {
      const { out, err } = await followIntoHead([...args], lines);
      expect(out.split('\n').filter(Boolean)).toHaveLength(lines);
      expect(err).toContain('akas-exit=0');
      expect(err).not.toMatch(/EPIPE|Error|at /);
    }
  }, 60_000);
});

// The example body of the review attestation schema.
const PROPOSAL_REVIEW = (
  JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')) as {
    examples: Array<Record<string, unknown>>;
  }
).examples[0];

describe('akas queue on a terminal', () => {
  beforeAll(async () => {
    await calibratedProfiles(node.url, ctx.work, ['proposer', 'queuer1', 'queuer2'], ctx.configDir);
  }, 60_000);

  it('takes the scores and rationale pasted in one chunk, then q quits with exit 0', async () => {
    writeFileSync(join(ctx.work, 'brief.json'), JSON.stringify(PROPOSAL_TEMPLATES.brief));
    const proposed = await akas(['--profile', 'proposer', '--json', 'propose', 'brief', '--file', 'brief.json']);
    expect(proposed.code, proposed.stderr).toBe(0);
    const r = await onTerminal(
      ['--base-url', node.url, '--profile', 'queuer1', 'queue'],
      [
        { wait: 'waiting for' },
        { send: '\r' },
        { wait: 'accuracy' },
        { send: '0.9\r0.8\r0.7\r0.8\rClear and sourced\r' },
        { wait: 'Sign with your key and send?' },
        { send: 'y' },
        { wait: 'recorded' },
        { send: ' ' },
        { wait: 'q to quit' },
        { send: 'q' },
      ],
      { AKAS_CONFIG_DIR: ctx.configDir },
    );
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`judged 1: ${JSON.parse(proposed.stdout).proposalId} (pending)`);
  }, 60_000);

  it('exits 130 on a real SIGINT, saying what was judged', async () => {
    writeFileSync(join(ctx.work, 'graph.json'), JSON.stringify(PROPOSAL_TEMPLATES.graph));
    expect((await akas(['--profile', 'proposer', 'propose', 'graph', '--file', 'graph.json'])).code).toBe(0);
    const r = await onTerminal(['--base-url', node.url, '--profile', 'queuer2', 'queue'], [{ wait: 'waiting for' }, { signal: 'INT' }], {
      AKAS_CONFIG_DIR: ctx.configDir,
    });
    expect(r.code, r.output).toBe(130);
    expect(r.output).toContain('interrupted: judged nothing; nothing else was sent');
  }, 60_000);
});

describe('a node that can tell its clients apart (--trust-proxy)', () => {
  it('keeps one judge per IP, and akas queue says why a pending proposal is not offered', async () => {
    const proxied = await startServe(['--trust-proxy', '--public-url', 'https://akas.example.org']);
    const work = tempDir('akas-newcomer-proxy-');
    try {
      const health = (await (await fetch(`${proxied.url}/healthz`)).json()) as any;
      expect(health.sameIpRule.enforced).toBe(true);
      await calibratedProfiles(proxied.url, work, ['q1', 'q2', 'q3'], work);
      const run = (profile: string, args: string[]) => runCli(['--base-url', proxied.url, '--profile', profile, ...args], { configDir: work, cwd: work });
      writeFileSync(join(work, 'cap.json'), JSON.stringify(PROPOSAL_TEMPLATES.capability));
      const id = JSON.parse((await run('q1', ['--json', 'propose', 'capability', '--file', 'cap.json'])).stdout).proposalId;
      const judgeArgs = ['judge', id, '--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'Fine'];
      expect((await run('q2', judgeArgs)).code).toBe(0);

      const q = await run('q3', ['queue']);
      expect(q.code).toBe(0);
      expect(q.stdout).toContain('nothing to judge right now');
      expect(q.stdout).toContain('1 judged by another agent on your IP');
      expect(q.stdout).toContain(`${id}: judged by another agent on your IP`);
      const j = await run('q3', judgeArgs);
      expect(j.code).toBe(1);
      expect(j.stderr).toContain('same_ip_collusion');
    } finally {
      await proxied.stop();
      rmSync(work, { recursive: true, force: true });
    }
  }, 90_000);
});
