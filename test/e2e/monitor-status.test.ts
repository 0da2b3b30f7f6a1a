// akas monitor and the status lists (issue 34, 2; PROTOCOL 8.7), with the built binary against a
// real `akas serve` on LevelDB: an agent judges with `akas judge`, the operator revokes with
// `akas admin revoke` through the node's admin socket, and `akas monitor --once --json` says so
// once (exit 1, the version's log entry and inclusion proof as evidence), never again; a
// suspension is an alert and its lifting an event; a list version that does not hash to its log
// entry is an alert. The node names its lists under a --public-url answered by a proxy in this
// test, which can alter a list on its way: the monitor reads a list from the node it watches,
// never from the origin the log names (issue 54, 3), so it watches the proxy to see the change.
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLogProof } from '../../verifier/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, judgeCommand, runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { eventually } from '../helpers/written.js';

let node: RunningNode;
let proxy: Server;
let work: string;
let dataDir: string;
let logKey: string;
/** The node's --public-url, answered by the proxy. */
let publicUrl: string;
/** The judgments of p2 (the watched agent), one per proposal of p1. */
const judgments: string[] = [];
/** The proxy alters the list versions it forwards while this is set. */
let tamper = false;

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });
const admin = (args: string[]) => runCli(['admin', 'revoke', '--data', dataDir, ...args], { cwd: work });
const getJson = async (path: string) => (await fetch(`${node.url}${path}`)).json() as Promise<any>;
const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
/** `akas monitor --once` of p2, or with `via` of p2's tag watched through that URL (an auditor's view). */
const monitor = async (via?: { url: string; tag: string }) => {
  const watch = ['--json', 'monitor', '--once', '--state', join(work, 'monitor.json')];
  const r = via ? await runCli(['--base-url', via.url, ...watch, '--agent', via.tag], { cwd: work }) : await akas('p2', watch);
  return { code: r.code, stderr: r.stderr, records: lines(r.stdout).filter((l) => l.what !== 'caught-up') };
};

/** Waits until the log holds `count` status-list versions (admin revoke answers once the version is stored; the log appends it next). */
async function untilVersions(count: number) {
  await eventually(async () => {
    const { entries } = await getJson('/api/log/entries?start=0&end=1000');
    return entries.filter((e: { kind: string }) => e.kind === 'status-list.version.v1').length >= count;
  }, 50);
}

beforeAll(async () => {
  // The proxy answers for the node's public URL: it forwards each request, altering list versions when told.
  proxy = createServer(async (req, res) => {
    const r = await fetch(`${node.url}${req.url}`);
    let body = Buffer.from(await r.arrayBuffer());
    if (tamper && r.status === 200 && req.url?.startsWith('/credentials/status/') && req.url.includes('version=')) {
      const list = JSON.parse(body.toString());
      list.validFrom = '2020-01-01T00:00:00.000Z';
      body = Buffer.from(JSON.stringify(list));
    }
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  publicUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  work = tempDir('akas-e2e-monitor-status-');
  dataDir = join(work, 'data');
  node = await startServe(['--allow-same-ip', '--public-url', publicUrl], { dataDir });
  await calibratedProfiles(node.url, work, ['p1', 'p2']);
  logKey = (await getJson('/api/node/keys')).log.verifierKey;
  for (const n of [1, 2]) {
    writeFileSync(join(work, `capability-${n}.json`), JSON.stringify(samplePayload('capability', n)));
    const proposed = await akas('p1', ['--json', 'propose', 'capability', '--file', join(work, `capability-${n}.json`)]);
    expect(proposed.code, proposed.stderr).toBe(0);
    const proposalId = JSON.parse(proposed.stdout).proposalId;
    const judged = await akas('p2', ['--json', ...judgeCommand(proposalId, 'Checked.')]);
    expect(judged.code, judged.stdout + judged.stderr).toBe(0);
    judgments.push((await getJson(`/api/knowledge/proposals/${proposalId}`)).judgments[0].judgmentId);
  }
}, 180_000);
afterAll(async () => {
  await node?.stop();
  proxy?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('akas monitor: revocations and suspensions (e2e)', () => {
  it('alerts once on a revocation of one of my credentials, with the list version and its log entry as evidence', async () => {
    const quiet = await monitor();
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.records).toEqual([]);

    const revoked = await admin([judgments[0], '--reason', 'the key was stolen']);
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    await untilVersions(1);
    const r = await monitor();
    expect(r.code, r.stderr).toBe(1);
    expect(r.records).toEqual([
      expect.objectContaining({
        type: 'alert',
        what: 'credential-revoked',
        judgmentId: judgments[0],
        purpose: 'revocation',
        version: 1,
        action: 'revoke',
        reason: 'the key was stolen',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
    ]);
    const [alert] = r.records;
    expect(alert.entry).toMatchObject({ kind: 'status-list.version.v1', body: { purpose: 'revocation', version: 1 } });
    expect(alert.inclusion.index).toBe(alert.logIndex);
    // The evidence is the version's log entry with an inclusion proof `akas verify log-proof` checks.
    expect(verifyLogProof(alert, logKey).verified).toBe(true);

    const again = await monitor();
    expect(again.code, again.stderr).toBe(0);
    expect(again.records).toEqual([]);
  });

  it('alerts on a suspension, and reports its lifting as an event (exit 0)', async () => {
    expect((await admin([judgments[1], '--suspend', '--reason', 'under review'])).code).toBe(0);
    await untilVersions(2);
    const suspended = await monitor();
    expect(suspended.code, suspended.stderr).toBe(1);
    expect(suspended.records).toEqual([
      expect.objectContaining({ type: 'alert', what: 'credential-suspended', judgmentId: judgments[1], reason: 'under review' }),
    ]);
    expect((await admin([judgments[1], '--unsuspend', '--reason', 'cleared'])).code).toBe(0);
    await untilVersions(3);
    const lifted = await monitor();
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(lifted.records).toEqual([expect.objectContaining({ type: 'event', what: 'suspension-lifted', judgmentId: judgments[1], reason: 'cleared' })]);
  });

  it('alerts on a list version that does not hash to its log entry', async () => {
    tamper = true;
    try {
      expect((await admin([judgments[1], '--suspend', '--reason', 'again'])).code).toBe(0);
      await untilVersions(4);
      const tag = JSON.parse((await akas('p2', ['--json', 'me'])).stdout).tag;
      const r = await monitor({ url: publicUrl, tag });
      expect(r.code, r.stderr).toBe(1);
      expect(r.records).toEqual([expect.objectContaining({ type: 'alert', what: 'status-list-mismatch', purpose: 'suspension', version: 3 })]);
      expect(r.records[0].served).not.toBe(r.records[0].logged);
    } finally {
      tamper = false;
    }
  });
});
