// The auditor's tamper matrix, the cases the other tests leave out: a change to what a node
// published that each verifier build (verifier/ in-process, the browser build, and for one case
// `akas verify` and the single file) must refuse with a check naming it, where the untouched
// document holds. One bundle per kind reused, mutations in-process.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle, verifyLogProof, verifyNode } from '../../verifier/index.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { CLI } from '../helpers/e2e.js';
import { agent, decide, judgeAs, proposeAs, signedBodyV2 } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

type Json = Record<string, any>;
type Report = { verified: boolean; checks: Array<{ id: string; valid: boolean | null }> };

const BROWSER = fileURLToPath(new URL('../../dist/akas-verify.browser.js', import.meta.url));
const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
let node: TestNode;
let issuer: string;
let published: Json;
let rejected: Json;
let pending: Json;
let graphNode: Json;
let artifactNode: Json;
let attestation: Json;
let browser: any;

const get = async (url: string) => {
  const r = await node.app.inject({ url });
  expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
  return r.json() as Json;
};
const failed = (r: Report) => [...new Set(r.checks.filter((c) => c.valid === false).map((c) => c.id))];

beforeAll(async () => {
  node = await testNode();
  issuer = node.keys.issuer.did;
  published = await get(`/api/knowledge/proposals/${(await decide(node, 'capability', { n: 301, sign: 'v2' })).proposalId}/bundle`);
  rejected = await get(`/api/knowledge/proposals/${(await decide(node, 'capability', { n: 302, sign: 'v2', outcome: 'rejected' })).proposalId}/bundle`);
  // A proposal one judge of three has judged.
  const p = await proposeAs(node, await agent(node), 'capability', samplePayload('capability', 303));
  const pid = p.json().proposalId as string;
  const judge = await agent(node, 0.9, 0);
  expect((await judgeAs(node, judge, 'capability', pid, signedBodyV2(judge, 'capability', pid, p.json().contentSha256))).statusCode).toBe(200);
  pending = await get(`/api/knowledge/proposals/${pid}/bundle`);
  await decide(node, 'graph', { n: 304, sign: 'v2' });
  await decide(node, 'artifact', { n: 305, sign: 'v2' });
  await node.app.akas.log.drain();
  graphNode = await get('/api/knowledge/node/decisions/pick-a-queue-x304');
  artifactNode = await get('/api/knowledge/node/models/tiny-classifier-x305');
  attestation = await get('/api/attestations/att_0000000000000001');
  browser = existsSync(BROWSER) ? await import(BROWSER) : undefined;
});
afterAll(() => node.close());

/** The bundle changed by `change`, checked by verifier/ and (when built) the browser build: the same failed checks. */
async function bundleVerdict(from: Json, change: (b: Json) => void): Promise<string[]> {
  const b = structuredClone(from);
  change(b);
  const mine = failed(await verifyBundle(structuredClone(b), { issuer }));
  if (browser) expect(failed(await browser.verifyBundle(structuredClone(b), { issuer })), 'the browser build').toEqual(mine);
  return mine;
}

describe('bundles (PROTOCOL 8.4, 8.5)', () => {
  it('hold untouched, in every build', async () => {
    for (const b of [published, rejected, pending]) expect(await bundleVerdict(b, () => {})).toEqual([]);
  });

  it('refuse a v2 bundle relabelled akas.bundle.v1, which would switch off the content, decision and log checks', async () => {
    // The rejected proposal shown published, its bundle labelled v1: exit 0 before (bundle.format did not exist).
    const relabel = (b: Json) => {
      b.format = 'akas.bundle.v1';
      b.proposal.status = 'published';
      b.proposal.outcome = { weightedComposite: 0.91, decision: 'published', depositSettlement: 'refunded' };
    };
    expect(await bundleVerdict(rejected, relabel)).toEqual(expect.arrayContaining(['bundle.format', 'log.decision', 'decision.recompute']));
    // Its proposer changed, labelled v1.
    expect(await bundleVerdict(published, (b) => ((b.format = 'akas.bundle.v1'), (b.proposal.proposer = b.proposal.judgments[0].agentTag)))).toEqual(
      expect.arrayContaining(['bundle.format', 'log.submitted']),
    );
    // The binary and the single file, from a folder with no node_modules, say the same.
    const dir = mkdtempSync(join(tmpdir(), 'akas-tamper-'));
    try {
      const b = structuredClone(rejected);
      relabel(b);
      writeFileSync(join(dir, 'b.json'), JSON.stringify(b));
      copyFileSync(SINGLE, join(dir, 'akas-verify.mjs'));
      const run = (file: string) =>
        spawnSync(process.execPath, [file, '--json', 'verify', 'bundle', 'b.json', '--issuer', issuer], {
          cwd: dir,
          encoding: 'utf8',
          env: { PATH: process.env.PATH, HOME: dir, AKAS_CONFIG_DIR: join(dir, '.config') },
        });
      for (const r of [run(CLI), run(join(dir, 'akas-verify.mjs'))]) {
        expect(r.status, r.stderr).toBe(1);
        const out = JSON.parse(r.stdout) as { checks: Array<{ id: string; result: string }> };
        const cliFailed = [...new Set(out.checks.filter((c) => c.result === 'failed').map((c) => c.id))];
        expect(cliFailed).toEqual(expect.arrayContaining(['bundle.format', 'log.decision', 'decision.recompute']));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse a second credential of a judgment (a forged one put first was never checked)', async () => {
    const forged = (b: Json) => {
      const f = structuredClone(b.credentials[0]);
      f.credentialSubject.rationale = 'Forged: never issued.';
      b.credentials.unshift(f);
    };
    expect(await bundleVerdict(published, forged)).toEqual(['set.credentials']);
    expect(await bundleVerdict(published, (b) => b.credentials.push(structuredClone(b.credentials[1])))).toEqual(['set.credentials']);
  });

  it('refuse a judgment shown twice, in a pending proposal too (no decision event to count them against)', async () => {
    expect(await bundleVerdict(pending, (b) => b.proposal.judgments.push(structuredClone(b.proposal.judgments[0])))).toEqual(['set.judgments']);
  });

  it("refuse a judgment's attestation that restates another key, signature or payload hash", async () => {
    expect(await bundleVerdict(published, (b) => (b.proposal.judgments[0].attestation.judgeSignature.publicKey = 'f'.repeat(64)))).toEqual([
      'judgment.payload',
    ]);
    expect(await bundleVerdict(published, (b) => (b.proposal.judgments[1].attestation.payloadSha256 = 'f'.repeat(64)))).toEqual(['judgment.payload']);
  });

  it("refuse a log entry's leafHash that is not its leaf", async () => {
    expect(await bundleVerdict(published, (b) => (b.log.entries[1].entry.leafHash = b.log.entries[2].entry.leafHash))).toContain('log.entry');
  });
});

describe('node reads and log proofs (PROTOCOL 10.7, 9.4)', () => {
  const pin = () => ({ issuer });
  async function nodeVerdict(from: Json, change: (n: Json) => void): Promise<string[]> {
    const n = structuredClone(from);
    change(n);
    const mine = failed(verifyNode(structuredClone(n), pin()));
    if (browser) expect(failed(await browser.verifyNode(structuredClone(n), pin())), 'the browser build').toEqual(mine);
    return mine;
  }

  it("refuse a decision node whose branches served are not its payload's (an agent routes by them)", async () => {
    expect(await nodeVerdict(graphNode, () => {})).toEqual([]);
    expect(await nodeVerdict(graphNode, (n) => (n.branches[0].to = '/tools/attacker'))).toEqual(['content.served']);
    expect(await nodeVerdict(graphNode, (n) => n.branches.reverse())).toEqual(['content.served']);
  });

  it("refuse an artifact node whose manifest is not its payload's (the sha256 an agent fetches by)", async () => {
    expect(await nodeVerdict(artifactNode, () => {})).toEqual([]);
    expect(await nodeVerdict(artifactNode, (n) => (n.manifest.sha256 = 'f'.repeat(64)))).toEqual(['content.served']);
    expect(await nodeVerdict(artifactNode, (n) => (n.manifest.uri = 'https://attacker.example/model.onnx'))).toEqual(['content.served']);
    // The summary of its evals is what the evals shown give (each eval against the log is the verified read's: test/e2e/verified-evals.test.ts).
    expect(verifyNode(artifactNode, pin()).checks.find((c) => c.id === 'content.evals')).toMatchObject({ valid: true });
    expect(await nodeVerdict(artifactNode, (n) => (n.evalSummary = { ...n.evalSummary, count: n.evalSummary.count + 1 }))).toEqual(['content.evals']);
  });

  it("refuse a log proof whose entry's leafHash is not its leaf", async () => {
    const t = structuredClone(attestation);
    expect(verifyLogProof(t, t.logKey).verified).toBe(true);
    t.entry.leafHash = t.inclusion.proof[0];
    expect(failed(verifyLogProof(t, t.logKey))).toEqual(['log.entry']);
  });
});
