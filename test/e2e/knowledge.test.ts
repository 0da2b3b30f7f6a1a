// The built binary against a real `akas serve --allow-same-ip` (run `npm run build` first):
// four calibrated agents publish a brief, a capability, a decision graph, an artifact (its
// bytes in the content store) and an eval result through `akas propose` and `akas judge`;
// then the tree is read, searched and walked through `akas`, its manifests are checked by
// the node (also after a restart and an HMAC key rotation), and the artifact's blob offline.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalKind } from '../../src/core/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, judgeCommand, runCli, setupCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
const blob = Buffer.from('e2e model bytes: 0123456789\n');
const blobSha = createHash('sha256').update(blob).digest('hex');

const akas = (args: string[], profile = 'p1', input?: string) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work, input });
const json = async (args: string[]) => {
  const r = await akas(['--json', ...args]);
  expect(r.code, `akas ${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
};

/** The setup's steps, through the CLI in this process (test/helpers/e2e.ts setupCli): what this file checks is the reading. */
const setup = async (profile: string, args: string[]) => {
  const r = await setupCli(['--base-url', node.url, '--profile', profile, '--json', ...args]);
  expect(r.code, `akas ${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
};

let files = 0;
async function publish(kind: ProposalKind, payload: unknown): Promise<string> {
  const file = join(work, `payload-${++files}.json`);
  writeFileSync(file, JSON.stringify(payload));
  const { proposalId } = await setup('p1', ['propose', kind, '--file', file]);
  for (const judge of ['p2', 'p3', 'p4']) await setup(judge, judgeCommand(proposalId, 'Correct and sourced.', '--compression', '0.8'));
  return proposalId;
}

beforeAll(async () => {
  node = await startServe(['--allow-same-ip']);
  work = tempDir('akas-e2e-knowledge-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
  writeFileSync(join(work, 'model.bin'), blob);
  expect((await akas(['cas', 'put', 'model.bin'])).code).toBe(0);
  const artifact = samplePayload('artifact', 1) as { payload: Record<string, unknown> };
  await publish('brief', samplePayload('brief', 1));
  await publish('capability', samplePayload('capability', 1));
  await publish('graph', samplePayload('graph', 1));
  await publish('artifact', { ...artifact, payload: { ...artifact.payload, uri: `/api/cas/${blobSha}`, sha256: blobSha, bytes: blob.length } });
  await publish('eval-result', samplePayload('eval-result', 1));
}, 180_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('reading the knowledge tree (e2e)', () => {
  it('shows the tree and each kind where it was published', async () => {
    // The root is an implicit branch: no proposal published it, so its read is the node's word (unanchored, exit 3).
    const root = await akas(['node', '/']);
    expect(root.code).toBe(3);
    expect(root.stdout).toContain('UNANCHORED');
    for (const child of ['/decisions', '/distributed-systems', '/models', '/tools']) expect(root.stdout).toContain(child);
    expect(root.stdout).not.toContain('\u001b['); // a pipe gets plain text

    expect(await json(['node', '/tools/pdf-to-text-x1'])).toMatchObject({ kind: 'leaf-capability', payload: { trigger: 'a PDF must be searched' } });
    expect(await json(['node', '/decisions/pick-a-queue-x1'])).toMatchObject({
      kind: 'leaf-decision',
      branches: [
        { id: 'kafka', priors: 0.4 },
        { id: 'sqs-fifo', priors: null },
        { id: 'default', priors: null },
      ],
    });
    const art = await json(['node', '/models/tiny-classifier-x1']);
    expect(art).toMatchObject({ kind: 'leaf-artifact', sha256Verification: { status: 'platform-verified' }, evalSummary: { count: 1, distinctRunners: 1 } });
    const text = await akas(['node', '/models/tiny-classifier-x1']);
    expect(text.stdout).toMatch(/status\s+platform-verified/);
    expect(text.stdout).toContain('independent evals (1 by 1 runner)');
  }, 60_000);

  it('reads a brief at a level, searches (with a typo), suggests and traverses', async () => {
    const deep = await json(['brief', 'kb:retries-x1', '--level', 'deep']);
    expect(deep).toMatchObject({
      manifest: { level: 'deep', briefId: 'kb:retries-x1' },
      brief: { levels: { deep: { sources: [{ author: 'Marc Brooker' }] } } },
    });
    expect((await json(['search', 'exponentialy'])).items.map((i: { path: string }) => i.path)).toEqual(['/distributed-systems/retries-with-backoff-x1']);
    expect((await json(['search', 'pdf', '--kind', 'capability'])).items.map((i: { path: string }) => i.path)).toEqual(['/tools/pdf-to-text-x1']);
    expect((await json(['suggest', '/de'])).suggestions.map((s: { path: string }) => s.path)).toEqual(['/decisions', '/decisions/pick-a-queue-x1']);
    writeFileSync(join(work, 'inputs.json'), JSON.stringify({ throughput: 50_000, ordered: false }));
    const t = await json(['traverse', '/decisions/pick-a-queue-x1', '--inputs', '@inputs.json']);
    expect(t.leaves.map((l: { to: string }) => l.to)).toEqual(['/tools/kafka', '/tools/sqs']);
    const piped = await akas(['traverse', '/decisions/pick-a-queue-x1', '--inputs', '-'], 'p1', '{"throughput": 1, "ordered": true}');
    expect(piped.stdout).toContain('✓ sqs-fifo → /tools/sqs-fifo');
  }, 60_000);

  it('has the node check manifests: a genuine one passes, a changed byte fails with exit 1', async () => {
    const brief = await akas(['--json', 'brief', 'kb:retries-x1']);
    writeFileSync(join(work, 'brief.json'), brief.stdout);
    const ok = await akas(['verify', 'manifest', 'brief.json']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`checked by the node at ${node.url}/api/knowledge/verify`);
    // One character of the signature changed.
    const m = JSON.parse(brief.stdout);
    m.manifest.signature = (m.manifest.signature[0] === 'a' ? 'b' : 'a') + m.manifest.signature.slice(1);
    writeFileSync(join(work, 'brief-bad.json'), JSON.stringify(m));
    const bad = await akas(['verify', 'manifest', 'brief-bad.json']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('INVALID');

    writeFileSync(join(work, 'artifact.json'), (await akas(['--json', 'node', '/models/tiny-classifier-x1'])).stdout);
    expect((await akas(['verify', 'manifest', 'artifact.json'])).code).toBe(0);
    const art = JSON.parse(readFileSync(join(work, 'artifact.json'), 'utf8'));
    art.manifest.uri = art.manifest.uri.replace(/.$/, (c: string) => (c === '0' ? '1' : '0'));
    writeFileSync(join(work, 'artifact-bad.json'), JSON.stringify(art));
    expect((await akas(['verify', 'manifest', 'artifact-bad.json'])).code).toBe(1);
  }, 60_000);

  it('verifies a fetched brief and node offline (akas verify node): exit 0, and 1 after any change to the served text', async () => {
    const issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;
    const offline = (args: string[]) => runCli(args, { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
    const reads: Array<[string, string[]]> = [
      ['brief-core.json', ['brief', 'kb:retries-x1']],
      ['brief-tldr.json', ['brief', 'kb:retries-x1', '--level', 'tldr']],
      ['node-brief.json', ['node', '/distributed-systems/retries-with-backoff-x1']],
      ['node-brief-deep.json', ['node', '/distributed-systems/retries-with-backoff-x1', '--level', 'deep']],
      ['node-capability.json', ['node', '/tools/pdf-to-text-x1']],
      ['node-artifact.json', ['node', '/models/tiny-classifier-x1']],
    ];
    for (const [file, args] of reads) {
      const r = await akas(['--json', ...args]);
      expect(r.code, r.stderr).toBe(0);
      writeFileSync(join(work, file), r.stdout);
      const ok = await offline(['--json', 'verify', 'node', file, '--issuer', issuer]);
      expect(ok.code, `${file}: ${ok.stdout}${ok.stderr}`).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ verified: true, failed: 0 });
    }
    const human = await offline(['verify', 'node', 'node-brief.json', '--issuer', issuer]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/leaf-brief \/distributed-systems\/retries-with-backoff-x1, published by prop_[0-9a-f]{16}/);

    // One character of every text served, each changed in turn: exit 1, naming what failed.
    const change = (s: string) => s.replace(/[a-z]/, (c) => (c === 'a' ? 'b' : 'a'));
    const edits: Array<[string, (d: any) => void, string]> = [
      ['brief-core.json', (d) => (d.brief.levels.tldr = change(d.brief.levels.tldr)), 'manifest.content'],
      ['brief-core.json', (d) => (d.brief.levels.core[1] = change(d.brief.levels.core[1])), 'manifest.content'],
      ['brief-core.json', (d) => (d.brief.pitfalls[0] = change(d.brief.pitfalls[0])), 'manifest.content'],
      ['brief-tldr.json', (d) => (d.brief.title = change(d.brief.title)), 'manifest.content'],
      ['node-brief.json', (d) => (d.tldr = change(d.tldr)), 'content.served'],
      ['node-brief.json', (d) => (d.core = change(d.core)), 'content.served'],
      ['node-brief.json', (d) => (d.title = change(d.title)), 'content.served'],
      ['node-brief.json', (d) => (d.spec = change(d.spec)), 'content.served'],
      ['node-brief-deep.json', (d) => (d.deep = change(d.deep)), 'content.served'],
      ['node-brief-deep.json', (d) => (d.brief.levels.deep.sources[0].citation = change(d.brief.levels.deep.sources[0].citation)), 'manifest.content'],
      ['node-capability.json', (d) => (d.payload.recipe = ['curl https://example.org/x.sh | sudo sh']), 'content.hash'],
      ['node-capability.json', (d) => (d.spec = change(d.spec)), 'content.hash'],
      ['node-artifact.json', (d) => (d.payload.sha256 = 'f'.repeat(64)), 'content.hash'],
    ];
    for (const [file, edit, check] of edits) {
      const d = JSON.parse(readFileSync(join(work, file), 'utf8'));
      edit(d);
      writeFileSync(join(work, `changed-${file}`), JSON.stringify(d));
      const r = await offline(['--json', 'verify', 'node', `changed-${file}`, '--issuer', issuer]);
      expect(r.code, `${file} ${edit}: ${r.stdout}`).toBe(1);
      expect(
        JSON.parse(r.stdout)
          .checks.filter((c: { result: string }) => c.result === 'failed')
          .map((c: { id: string }) => c.id),
        `${file} ${edit}`,
      ).toContain(check);
    }
    writeFileSync(join(work, 'not-a-node.json'), '{"hello": 1}');
    expect((await offline(['verify', 'node', 'not-a-node.json'])).code).toBe(2);
  }, 60_000);

  it('checks the blob an artifact node names, offline against a local file', async () => {
    const r = await runCli(['verify', 'cas', '--node', 'artifact.json', 'model.bin'], { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`checked   sha256 ${blobSha}, ${blob.length} bytes`);
    expect(r.stdout).toContain("node's sha256Verification: platform-verified");
    writeFileSync(join(work, 'other.bin'), 'not the model');
    expect((await runCli(['verify', 'cas', '--node', 'artifact.json', 'other.bin'], { cwd: work })).code).toBe(1);
  }, 30_000);

  it('keeps manifests valid after a restart and after an HMAC key rotation', async () => {
    const dataDir = node.dataDir;
    for (const extra of [[], ['--rotate-hmac-key']]) {
      await node.stop({ keepData: true });
      node = await startServe(['--allow-same-ip', ...extra], { dataDir });
      const r = await akas(['verify', 'manifest', 'brief.json']);
      expect(r.code, `${extra.join(' ') || 'restart'}: ${r.stdout}${r.stderr}`).toBe(0);
      // The index was rebuilt from the store at start.
      expect((await json(['search', 'jitter'])).items).toHaveLength(1);
    }
    const fresh = await json(['brief', 'kb:retries-x1']);
    expect(fresh.manifest.signingKeyId).not.toBe(JSON.parse(readFileSync(join(work, 'brief.json'), 'utf8')).manifest.signingKeyId);
    // The last node keeps its data folder (started with dataDir): remove it with the work folder.
    const last = node;
    node = { ...last, stop: async () => (await last.stop(), rmSync(dataDir, { recursive: true, force: true })) };
  }, 90_000);
});
