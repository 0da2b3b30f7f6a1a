// The built binary against a real `akas serve --allow-same-ip` (run `npm run build` first):
// four agents calibrated with the pools' expected answers, then propose, judge, read,
// withdraw, queue and recover, all through `akas`.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalKind } from '../../src/core/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, runCli, savedIdentity, startServe, tempDir, type RunningNode, judgeCommand } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;

const akas = (profile: string, args: string[], input?: string) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work, input });

const saved = (profile: string) => savedIdentity(profile);

function payloadFile(kind: ProposalKind, n: number): string {
  const file = join(work, `${kind}-${n}.json`);
  writeFileSync(file, JSON.stringify(samplePayload(kind, n)));
  return file;
}

async function propose(profile: string, kind: ProposalKind, n: number) {
  const r = await akas(profile, ['--json', 'propose', kind, '--file', payloadFile(kind, n)]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { proposalId: string; economy: { deposit: number; balanceRemaining: number } };
}

const me = async (profile: string) => JSON.parse((await akas(profile, ['--json', 'me'])).stdout) as { balance: number; reservedBalance: number; tag: string };

const judgeArgs = (id: string, ...extra: string[]) => ['--json', ...judgeCommand(id, 'Correct, clear and sourced.', ...extra)];

beforeAll(async () => {
  node = await startServe(['--allow-same-ip']);
  work = tempDir('akas-e2e-proposals-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
}, 60_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('proposals and judging (e2e)', () => {
  it('publishes a capability judged by three other agents, and shows their three judgments', async () => {
    const before = await me('p1');
    const { proposalId, economy } = await propose('p1', 'capability', 1);
    expect(proposalId).toMatch(/^cprop_[0-9a-f]{16}$/);
    expect((await me('p1')).reservedBalance).toBe(before.reservedBalance + economy.deposit);

    const statuses = [];
    for (const judge of ['p2', 'p3', 'p4']) {
      const r = await akas(judge, judgeArgs(proposalId));
      expect(r.code, r.stdout + r.stderr).toBe(0);
      statuses.push(JSON.parse(r.stdout).newStatus);
    }
    expect(statuses).toEqual(['pending', 'pending', 'published']);

    const shown = await akas('p2', ['--json', 'show', proposalId]);
    expect(shown.code).toBe(0);
    const p = JSON.parse(shown.stdout);
    expect(p).toMatchObject({ proposalId, status: 'published', judgmentCount: 3 });
    expect(p.judgments.map((j: { agentTag: string }) => j.agentTag)).toEqual(['p2', 'p3', 'p4'].map((x) => saved(x).tag));
    expect(await me('p1')).toMatchObject({ balance: before.balance, reservedBalance: before.reservedBalance });
    expect((await akas('p2', ['show', proposalId])).code).toBe(0);

    // An auditor checks the three judge signatures offline, keys tied to the judges' profiles.
    const detailFile = join(work, 'detail.json');
    writeFileSync(detailFile, shown.stdout);
    const profiles = [];
    for (const judge of ['p2', 'p3', 'p4']) {
      const file = join(work, `${judge}-profile.json`);
      writeFileSync(file, (await akas(judge, ['--json', 'agents', saved(judge).tag])).stdout);
      profiles.push(file);
    }
    const audit = await runCli(['verify', 'judgments', detailFile, '--agent-file', ...profiles], { env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(audit.stdout).toContain(`3/3 judgments of ${proposalId} hold`);
    expect(audit.stdout).toContain(`ok    content ${p.contentSha256} (hashed here)`);
    // No judgment left to check and a changed title: the text says what failed, not only "no judgments".
    writeFileSync(detailFile, JSON.stringify({ ...p, title: `${p.title} (edited)`, judgments: [] }));
    const bare = await runCli(['verify', 'judgments', detailFile]);
    expect(bare.code).toBe(1);
    expect(bare.stdout).toMatch(/^FAIL {2}content\n {6}.*\(edited\)/);
    expect(bare.stdout).toContain('has no judgments to check; its content does not hold (above)');
    writeFileSync(
      detailFile,
      JSON.stringify({ ...p, judgments: [{ ...p.judgments[0], scores: { ...p.judgments[0].scores, accuracy: 0.1 } }, ...p.judgments.slice(1)] }),
    );
    const tampered = await runCli(['verify', 'judgments', detailFile]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('FAIL');
    expect((await runCli(['verify', 'judgments', join(work, 'nope.json')])).code).toBe(2);
  }, 60_000);

  it('proposes from stdin with --file -', async () => {
    const r = await akas('p1', ['--json', 'propose', 'dg', '--file', '-'], JSON.stringify(samplePayload('graph', 2)));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).proposalId).toMatch(/^gprop_/);
  }, 30_000);

  it('withdraws a fresh proposal and refunds its deposit', async () => {
    const before = await me('p1');
    const { proposalId, economy } = await propose('p1', 'artifact', 3);
    const r = await akas('p1', ['--json', 'withdraw', proposalId]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ proposalId, status: 'withdrawn', depositRefunded: economy.deposit, balance: before.balance });
    expect(await me('p1')).toMatchObject({ balance: before.balance, reservedBalance: before.reservedBalance });
  }, 30_000);

  it('dry-runs a judgment without changing anything, and refuses a bad score with exit 2', async () => {
    const { proposalId } = await propose('p1', 'spec-sharpening', 4);
    const before = await me('p2');
    const dry = await akas('p2', judgeArgs(proposalId, '--dry-run'));
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dryRun: true, would: { proposalId, kind: 'spec-sharpening' } });
    expect(JSON.parse((await akas('p2', ['--json', 'show', proposalId])).stdout).judgmentCount).toBe(0);
    expect((await me('p2')).balance).toBe(before.balance);

    const bad = await akas('p2', [
      '--json',
      'judge',
      proposalId,
      '--accuracy',
      '1.2',
      '--clarity',
      '0.8',
      '--compression',
      '0.7',
      '--sources',
      '0.8',
      '--rationale',
      'x',
    ]);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).code).toBe('usage');
  }, 30_000);

  it('lists pending work as a plain table when stdout is not a terminal', async () => {
    const { proposalId } = await propose('p1', 'tree-expansion', 5);
    const r = await akas('p3', ['queue']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(proposalId);
    expect(r.stdout).not.toContain('\u001b['); // no cursor codes in a pipe
    const page = JSON.parse((await akas('p3', ['--json', 'queue', '--kind', 'tree-expansion'])).stdout);
    expect(page.items.map((i: { proposalId: string }) => i.proposalId)).toContain(proposalId);
  }, 30_000);

  it('recovers through the claimSecret akas propose saved; the old key is refused', async () => {
    const { proposalId } = await propose('p1', 'brief', 6);
    const oldKey = saved('p1').apiKey;
    const r = await akas('p1', ['--json', 'recover', '--proposal', proposalId]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const after = await akas('p1', ['--json', 'me']);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout).tag).toBe(saved('p1').tag);
    const old = await fetch(`${node.url}/api/agent/v1/me`, { headers: { authorization: `Bearer ${oldKey}` } });
    expect(old.status).toBe(401);
  }, 30_000);
});
