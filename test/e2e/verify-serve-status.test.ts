// `akas verify serve` (the built binary) reads the status of the judgment credentials of a real
// `akas serve` (issue 47; PROTOCOL 8.7): the operator revokes one, suspends one and suspends then
// unsuspends a third through `akas admin revoke`; the adapter, pinning the node's issuer, fetches
// the lists and the status head from the node and answers revoked and suspended verified: false
// naming the purpose and the reason, the unsuspended one verified: true with the list versions it
// speaks for. With the node stopped, a fresh adapter answers status unknown, never 200.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { CLI, calibratedProfiles, judgeCommand, type RunningNode, runCli, setupCli, startServe, tempDir } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
let dataDir: string;
let issuer: string;
let credentials: unknown[];
const adapters: ChildProcess[] = [];

type Body = {
  verified: boolean;
  verdict: string;
  anchoredOn: string | null;
  status: { checked: boolean; source: string; lists: Array<{ purpose: string; version?: number; at: string }> } | null;
  errors: Array<{ type: string; title: string; statusPurpose?: string; reason?: string; changedAt?: string }>;
};

/** Starts `akas verify serve --issuer ISSUER`; answers its URL. */
async function serve(): Promise<string> {
  const proc = spawn(process.execPath, [CLI, 'verify', 'serve', '--port', '0', '--issuer', issuer], { stdio: ['ignore', 'pipe', 'pipe'] });
  adapters.push(proc);
  return new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`akas verify serve exited ${code}: ${out}`)));
  });
}

async function verify(url: string, vc: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${url}/credentials/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ verifiableCredential: vc }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

const admin = async (args: string[]) => {
  const r = await runCli(['admin', 'revoke', '--data', dataDir, ...args], { cwd: work });
  expect(r.code, r.stdout + r.stderr).toBe(0);
};

beforeAll(async () => {
  dataDir = tempDir('akas-e2e-serve-status-data-');
  node = await startServe(['--allow-same-ip'], { dataDir });
  work = tempDir('akas-e2e-serve-status-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
  issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;
  writeFileSync(join(work, 'capability.json'), JSON.stringify(samplePayload('capability', 1)));
  const setup = (profile: string, args: string[]) => setupCli(['--base-url', node.url, '--profile', profile, ...args]);
  const proposed = await setup('p1', ['--json', 'propose', 'capability', '--file', join(work, 'capability.json')]);
  expect(proposed.code, proposed.stderr).toBe(0);
  const proposalId = JSON.parse(proposed.stdout).proposalId as string;
  for (const j of ['p2', 'p3', 'p4']) {
    const r = await setup(j, ['--json', ...judgeCommand(proposalId, 'Checked.')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }
  const judgments = (await (await fetch(`${node.url}/api/knowledge/proposals/${proposalId}`)).json()) as {
    judgments: Array<{ judgmentId: string; credentialUrl: string }>;
  };
  credentials = await Promise.all(judgments.judgments.map(async (j) => (await fetch(`${node.url}${j.credentialUrl}`)).json()));
  const [revoked, suspended, lifted] = judgments.judgments.map((j) => j.judgmentId);
  await admin([revoked, '--reason', 'the key was stolen']);
  await admin([suspended, '--suspend', '--reason', 'under review']);
  await admin([lifted, '--suspend', '--reason', 'a second look']);
  await admin([lifted, '--unsuspend', '--reason', 'cleared']);
}, 180_000);
afterAll(async () => {
  for (const p of adapters) if (p.exitCode === null) p.kill('SIGTERM');
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('akas verify serve reads the status lists of a real node (e2e)', () => {
  it('answers revoked and suspended verified: false naming the purpose and reason, and unsuspended verified: true as of the status head', async () => {
    const url = await serve();
    const revoked = await verify(url, credentials[0]);
    expect(revoked.status).toBe(400);
    expect(revoked.body).toMatchObject({ verified: false, verdict: 'not verified', anchoredOn: `issuer ${issuer}` });
    expect(revoked.body.errors).toEqual([
      expect.objectContaining({ type: 'urn:akas:problem:revoked', statusPurpose: 'revocation', reason: 'the key was stolen', changedAt: expect.any(String) }),
    ]);

    const suspended = await verify(url, credentials[1]);
    expect(suspended.status).toBe(400);
    expect(suspended.body.errors).toEqual([
      expect.objectContaining({ type: 'urn:akas:problem:suspended', statusPurpose: 'suspension', reason: 'under review' }),
    ]);

    const lifted = await verify(url, credentials[2]);
    expect(lifted.status, JSON.stringify(lifted.body.errors)).toBe(200);
    expect(lifted.body).toMatchObject({ verified: true, verdict: 'verified', errors: [] });
    // The lists as the node's status head names them: revocation at version 1, suspension at version 3 (suspend, suspend, unsuspend).
    expect(lifted.body.status).toMatchObject({
      checked: true,
      source: 'node',
      lists: [
        { purpose: 'revocation', version: 1 },
        { purpose: 'suspension', version: 3 },
      ],
    });
  });

  it('answers status unknown (400, STATUS_RETRIEVAL_ERROR) when the node is gone, never 200', async () => {
    await node.stop({ keepData: true });
    const r = await verify(await serve(), credentials[2]);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ verified: false, verdict: 'status unknown', status: { checked: false } });
    expect(new Set(r.body.errors.map((e) => e.type))).toEqual(new Set(['https://www.w3.org/ns/credentials/status-list#STATUS_RETRIEVAL_ERROR']));
  });
});
