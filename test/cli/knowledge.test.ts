// akas node | brief | search | suggest | traverse | traversal | verify manifest | verify cas
// --node, in-process against a node listening on 127.0.0.1 (port 0). Everything the tree
// holds is published through the CLI itself: propose, then three judges.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalKind } from '../../src/core/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { Capture, cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
let work: string;
let proposer: { profile: string; tag: string };
let judges: Array<{ profile: string; tag: string }>;
const blob = Buffer.from('the weights of a very small model\n');
const blobSha = createHash('sha256').update(blob).digest('hex');

function file(name: string, content: string | Buffer): string {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
}

let files = 0;
/** Proposes through the CLI and has the three judges publish it; answers the proposal id. */
async function publish(kind: ProposalKind, payload: unknown): Promise<string> {
  const p = await h.akas(['--json', 'propose', kind, '--file', file(`payload-${++files}.json`, JSON.stringify(payload))], { profile: proposer.profile });
  expect(p.code, p.stdout + p.stderr).toBe(0);
  const id = p.json().proposalId as string;
  for (const j of judges) {
    const r = await h.akas(
      ['--json', 'judge', id, '--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.8', '--sources', '0.8', '--rationale', 'Sound.'],
      { profile: j.profile },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }
  return id;
}

const artifactPayload = (n: number, payload: Record<string, unknown>) => {
  const base = samplePayload('artifact', n) as { payload: Record<string, unknown> };
  return { ...base, payload: { ...base.payload, ...payload } };
};

let evalId: string;

beforeAll(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  work = mkdtempSync(join(tmpdir(), 'akas-cli-knowledge-'));
  proposer = await h.agent(0.8, 100);
  judges = [await h.agent(0.9, 0), await h.agent(0.8, 0), await h.agent(0.7, 0)];
  const put = await h.akas(['--json', 'cas', 'put', file('model.bin', blob)]);
  expect(put.code, put.stderr).toBe(0);
  await publish('brief', samplePayload('brief', 1));
  await publish('capability', samplePayload('capability', 1));
  await publish('graph', samplePayload('graph', 1));
  await publish('artifact', artifactPayload(1, { uri: `/api/cas/${blobSha}`, sha256: blobSha, bytes: blob.length }));
  await publish('artifact', artifactPayload(2, { uri: 's3://bucket/tiny.onnx' }));
  evalId = await publish('eval-result', samplePayload('eval-result', 1));
  await publish('tree-expansion', { parentPath: '/', children: [{ slug: 'tools', title: 'Tools', spec: 'Callable tools and how to use them.' }] });
}, 120_000);
afterAll(async () => {
  await h?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const json = async (url: string) => (await h.node.app.inject({ url })).json();

describe('akas node', () => {
  it('prints exactly the node response with --json, and a readable tree in a pipe', async () => {
    // The root is an implicit branch: no proposal published it, so it is the node's word (exit 3), said so.
    const r = await h.akas(['--json', 'node', '/']);
    const { verification, ...answer } = r.json();
    expect(r.code, JSON.stringify(verification)).toBe(3);
    expect(verification).toMatchObject({ verdict: 'unanchored', failed: [] });
    expect(answer).toEqual(await json('/api/knowledge/node/'));
    const text = await h.akas(['node']);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('UNANCHORED');
    expect(text.stdout).toContain('/  (branch)');
    expect(text.stdout).toMatch(/├── \/decisions\n/);
    expect(text.stdout).toMatch(/└── \/tools\n/);
    expect(text.stdout).not.toMatch(/\u001b\[/); // no terminal codes in a pipe

    const tools = await h.akas(['node', 'tools']);
    expect(tools.stdout).toContain('Tools');
    expect(tools.stdout).toContain('Callable tools and how to use them.');
    expect(tools.stdout).toContain('└── /tools/pdf-to-text-x1');
  });

  it('shows a capability, a decision with its branches, and an artifact with its evidence', async () => {
    const cap = await h.akas(['node', '/tools/pdf-to-text-x1']);
    expect(cap.stdout).toMatch(/trigger\s+a PDF must be searched/);
    expect(cap.stdout).toMatch(/whenNot\s+scanned PDFs without a text layer/);

    const dg = await h.akas(['node', '/decisions/pick-a-queue-x1']);
    expect(dg.stdout).toMatch(/question\s+Which queue fits\?/);
    expect(dg.stdout).toContain('kafka → /tools/kafka  when {">":[{"var":"throughput"},10000]}  (prior 0.4)');
    expect(dg.stdout).toContain('akas traverse /decisions/pick-a-queue-x1');

    const art = await h.akas(['node', '/models/tiny-classifier-x1']);
    expect(art.code).toBe(0);
    expect(art.stdout).toContain(`sha256        ${blobSha}`);
    expect(art.stdout).toMatch(/status\s+platform-verified/);
    expect(art.stdout).toContain('independent evals (1 by 1 runner)');
    expect(art.stdout).toContain(`${evalId}  accuracy 0.801 by ak_runner1`);
    expect(art.stdout).toMatch(/signingKeyId\s+hk_test/);
    expect((await h.akas(['node', '/models/tiny-classifier-x2'])).stdout).toMatch(/status\s+self-reported/);
  });

  it('draws the node with ink on a terminal', async () => {
    const stdout = new Capture(true);
    const r = await h.akas(['node', '/models/tiny-classifier-x1'], { stdout });
    expect(r.code).toBe(0);
    expect(stdout.text).toContain('╭'); // the heading's box
    expect(stdout.text).toContain('/models/tiny-classifier-x1');
    expect(stdout.text).toContain('platform-verified');
    expect(stdout.text).toContain('independent evals (1 by 1 runner)');
    // --json on a terminal is still exactly the answer.
    const js = new Capture(true);
    expect((await h.akas(['--json', 'node', '/tools'], { stdout: js })).code).toBe(0);
    const { verification, ...answer } = JSON.parse(js.text);
    expect(verification).toMatchObject({ verdict: 'verified', failed: [] });
    expect(answer).toEqual(await json('/api/knowledge/node/tools?evidence=full'));
  });

  it('pages children, reads an earlier version, and refuses bad input (2) or a missing node (1)', async () => {
    const first = await h.akas(['node', '/', '--limit', '1']);
    expect(first.stdout).toContain('├── /decisions');
    expect(first.stdout).toContain('└── … more: akas node / --limit 1 --cursor decisions');
    const next = await h.akas(['--json', 'node', '/', '--limit', '1', '--cursor', 'decisions']);
    expect(next.json().children).toEqual(['/distributed-systems']);

    expect((await h.akas(['--json', 'node', '/tools/pdf-to-text-x1', '--node-version', '1'])).json()).toMatchObject({ version: 1 });
    const gone = await h.akas(['--json', 'node', '/tools/pdf-to-text-x1', '--node-version', '9']);
    expect(gone.code).toBe(1);
    expect(gone.json()).toMatchObject({ ok: false, code: 'not_found', field: 'version' });

    const missing = await h.akas(['node', '/nowhere']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found, HTTP 404');
    expect((await h.akas(['node', '/Not_A_Path'])).code).toBe(2);
    expect((await h.akas(['node', '/', '--limit', '0'])).code).toBe(2);
    expect((await h.akas(['node', '/', '--level', 'everything'])).code).toBe(2);
  });
});

describe('akas brief', () => {
  it('reads a brief at each level, with its manifest', async () => {
    const tldr = await h.akas(['--json', 'brief', 'kb:retries-x1', '--level', 'tldr']);
    expect(tldr.code).toBe(0);
    expect(tldr.json()).toMatchObject({
      brief: { levels: { tldr: expect.any(String) } },
      manifest: { level: 'tldr', briefId: 'kb:retries-x1' },
      path: '/distributed-systems/retries-with-backoff-x1',
    });
    expect(tldr.json().brief.levels.core).toBeUndefined();
    const deep = await h.akas(['brief', 'kb:retries-x1', '--level', 'deep']);
    expect(deep.stdout).toContain('• Back off exponentially.');
    expect(deep.stdout).toContain('source: Exponential Backoff And Jitter, Marc Brooker (2015)');
    expect(deep.stdout).toMatch(/level\s+deep/);
    expect(deep.stdout).toContain('only the node can check it: akas verify manifest FILE');
  });

  it('exits 2 for a malformed id or level, 1 for a brief the node does not hold', async () => {
    expect((await h.akas(['brief', 'retries'])).code).toBe(2);
    expect((await h.akas(['brief', 'kb:retries-x1', '--level', 'all'])).code).toBe(2);
    expect((await h.akas(['brief', 'kb:retries-x1', '--brief-version', '2026-13'])).code).toBe(2);
    expect((await h.akas(['brief', 'kb:nothing'])).code).toBe(1);
  });
});

describe('akas search and suggest', () => {
  it('finds a brief by a word of its core, misspelt too, filtered by kind (aliases taken), paged', async () => {
    const r = await h.akas(['--json', 'search', 'exponentially']);
    expect(r.code, JSON.stringify(r.json().verification)).toBe(0);
    expect(r.json().items.map((i: { path: string }) => i.path)).toEqual(['/distributed-systems/retries-with-backoff-x1']);
    expect((await h.akas(['--json', 'search', 'exponentialy'])).json().items).toHaveLength(1);
    expect((await h.akas(['--json', 'search', 'jitter', '--kind', 'brief'])).json().items).toHaveLength(1);
    expect((await h.akas(['--json', 'search', 'jitter', '--kind', 'leaf-artifact'])).json().items).toEqual([]);
    const table = await h.akas(['search', 'tiny', 'classifier', '--limit', '1']);
    expect(table.stdout).toMatch(/^PATH\s+KIND\s+SCORE\s+VERDICT\s+TITLE\n\/models\/tiny-classifier-x\d\s+leaf-artifact\s+\S+\s+VERIFIED/);
    expect(table.stdout).toContain('1 of 2');
    expect(table.stderr).toMatch(/more: akas search tiny classifier --limit 1 --cursor 1/);
    expect((await h.akas(['search', 'thunderclap'])).stdout).toContain('nothing found for "thunderclap"');
    expect((await h.akas(['search', 'x', '--kind', 'widget'])).code).toBe(2);
    expect((await h.akas(['search', 'x', '--limit', '101'])).code).toBe(2);
  });

  it('completes a path prefix and a title word', async () => {
    const r = await h.akas(['--json', 'suggest', '/to']);
    expect(r.json().suggestions.map((s: { path: string }) => s.path)).toEqual(['/tools', '/tools/pdf-to-text-x1']);
    const text = await h.akas(['suggest', 'pic']);
    expect(text.stdout).toMatch(/\/decisions\/pick-a-queue-x1\s+Pick a message queue\s+\(leaf-decision\)/);
  });
});

describe('akas traverse', () => {
  it('walks a graph with inline or file inputs, and shows a kept traversal', async () => {
    const r = await h.akas(['--json', 'traverse', '/decisions/pick-a-queue-x1', '--inputs', '{"throughput": 20000, "ordered": true}']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const t = r.json();
    expect(t.leaves.map((l: { to: string }) => l.to)).toEqual(['/tools/kafka', '/tools/sqs']);
    expect(t.forks).toBe(1);
    const inputs = file('inputs.json', JSON.stringify({ throughput: 5, ordered: true }));
    const text = await h.akas(['traverse', 'decisions/pick-a-queue-x1', '--inputs', `@${inputs}`]);
    expect(text.stdout).toContain('✓ sqs-fifo → /tools/sqs-fifo');
    expect(text.stdout).toContain('✗ kafka → /tools/kafka');
    expect(text.stdout).toContain('leaves (2; 1 fork)');
    const again = await h.akas(['--json', 'show', t.traversalId]);
    // The node keeps a traversal without its inputs (their hash says which they were).
    const { inputs: sent, ...kept } = t;
    expect(sent).toEqual({ throughput: 20000, ordered: true });
    expect(again.json()).toEqual(kept);
    expect((await h.akas(['show', t.traversalId])).stdout).toContain(`inputs sha256 ${t.inputsSha256}`);
  });

  it('exits 2 without inputs or with inputs that are not an object, 1 when the node refuses', async () => {
    expect((await h.akas(['traverse', '/decisions/pick-a-queue-x1'])).code).toBe(2);
    expect((await h.akas(['traverse', '/decisions/pick-a-queue-x1', '--inputs', '[1]'])).code).toBe(2);
    expect((await h.akas(['traverse', '/decisions/pick-a-queue-x1', '--inputs', '{nope'])).code).toBe(2);
    const missing = await h.akas(['--json', 'traverse', '/decisions/pick-a-queue-x1', '--inputs', '{"throughput": 1}']);
    expect(missing.code).toBe(1);
    expect(missing.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'inputs.ordered' }] });
    expect((await h.akas(['show', 'trv_0000000000000000'])).code).toBe(1);
    expect((await h.akas(['show', 'nope'])).code).toBe(2);
  });
});

describe('akas verify manifest', () => {
  it('asks the node, says so, and exits 0 for a genuine brief, 1 for a changed byte in the manifest or the brief', async () => {
    const brief = await h.akas(['--json', 'brief', 'kb:retries-x1', '--level', 'core']);
    const genuine = file('brief.json', brief.stdout);
    const ok = await h.akas(['verify', 'manifest', genuine]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('VALID');
    expect(ok.stdout).toContain(`checked by the node at ${h.baseUrl}/api/knowledge/verify`);
    expect(ok.stdout).toContain('only the node holds');
    expect(ok.stdout).toMatch(/content\s+holds: the brief in the file hashes to contentSha256 \(checked here, offline\)/);

    const manifestEdited = file(
      'brief-m.json',
      brief.stdout.replace(/"tokenCount": (\d+)/, (_, n) => `"tokenCount": ${Number(n) + 1}`),
    );
    const bad = await h.akas(['--json', 'verify', 'manifest', manifestEdited]);
    expect(bad.code).toBe(1);
    expect(bad.json()).toMatchObject({ valid: false, kind: 'brief', node: { valid: false, reason: expect.any(String) } });

    const contentEdited = file('brief-c.json', brief.stdout.replace('Add full jitter.', 'Add full jitter!'));
    const changed = await h.akas(['verify', 'manifest', contentEdited]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/content\s+does not hold/);

    // The leaf-brief node carries the same manifest; a bare manifest works too.
    const nodeFile = file('brief-node.json', (await h.akas(['--json', 'node', '/distributed-systems/retries-with-backoff-x1'])).stdout);
    expect((await h.akas(['verify', 'manifest', nodeFile])).code).toBe(0);
    const bare = file('bare.json', JSON.stringify(JSON.parse(brief.stdout).manifest));
    expect((await h.akas(['verify', 'manifest', bare])).code).toBe(0);
  });

  it('checks artifact and eval manifests at their own routes', async () => {
    const art = await h.akas(['--json', 'node', '/models/tiny-classifier-x1']);
    const artFile = file('art.json', art.stdout);
    const ok = await h.akas(['verify', 'manifest', artFile]);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(`checked by the node at ${h.baseUrl}/api/knowledge/artifact/verify`);
    const edited = JSON.parse(art.stdout);
    edited.payload.bytes += 1;
    expect((await h.akas(['verify', 'manifest', file('art-p.json', JSON.stringify(edited))])).code).toBe(1);
    edited.manifest.bytes += 1;
    expect((await h.akas(['verify', 'manifest', file('art-m.json', JSON.stringify(edited))])).code).toBe(1);

    const ev = file('eval.json', JSON.stringify(await json(`/api/knowledge/eval/proposals/${evalId}`)));
    const evr = await h.akas(['verify', 'manifest', ev]);
    expect(evr.code, evr.stdout + evr.stderr).toBe(0);
  });

  it('exits 2 when there is no manifest, the file is unreadable, or the node cannot be asked', async () => {
    expect((await h.akas(['verify', 'manifest', file('none.json', '{"a": 1}')])).code).toBe(2);
    expect((await h.akas(['verify', 'manifest', join(work, 'missing.json')])).code).toBe(2);
    const genuine = file('again.json', (await h.akas(['--json', 'brief', 'kb:retries-x1'])).stdout);
    const down = await h.akas(['--base-url', 'http://127.0.0.1:9', 'verify', 'manifest', genuine]);
    expect(down.code).toBe(2);
    expect(down.stderr).toContain('nothing answers at');
  });
});

describe('akas verify cas --node', () => {
  it('checks a local file against the blob an artifact node names, offline, and says what the node claims', async () => {
    const nodeFile = file('art1.json', (await h.akas(['--json', 'node', '/models/tiny-classifier-x1'])).stdout);
    const ok = await h.akas(['verify', 'cas', '--node', nodeFile, join(work, 'model.bin')]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('(offline)');
    expect(ok.stdout).toContain(`checked   sha256 ${blobSha}, ${blob.length} bytes`);
    expect(ok.stdout).toContain("node's sha256Verification: platform-verified");

    const other = await h.akas(['--json', 'verify', 'cas', '--node', nodeFile, file('other.bin', 'other bytes')]);
    expect(other.code).toBe(1);
    expect(other.json()).toMatchObject({
      ok: false,
      expected: { sha256: blobSha, bytes: blob.length },
      actual: { bytes: 11 },
      nodeStatus: 'platform-verified',
    });
  });

  it('fetches nothing a proposer chose unless told to with --fetch (issue 22)', async () => {
    const { createServer } = await import('node:http');
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('bytes');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const sha = createHash('sha256').update('bytes').digest('hex');
      const chosen = file(
        'chosen.json',
        JSON.stringify({ kind: 'leaf-artifact', path: '/x', payload: { uri: `http://127.0.0.1:${port}/internal/admin`, sha256: sha, bytes: 5 } }),
      );
      const refused = await h.akas(['verify', 'cas', '--node', chosen]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--fetch');
      expect(refused.stderr).toContain(`http://127.0.0.1:${port}/internal/admin`);
      expect(hits).toBe(0);
      expect((await h.akas(['verify', 'cas', '--node', chosen, '--fetch'])).code).toBe(0);
      expect(hits).toBe(1);
      expect((await h.akas(['verify', 'cas', '--node', chosen, '--fetch', join(work, 'model.bin')])).code).toBe(2);
    } finally {
      server.close();
    }
  });

  it('fetches the bytes from the uri with --fetch, and exits 2 for a uri it cannot fetch', async () => {
    const nodeFile = file('art1b.json', (await h.akas(['--json', 'node', '/models/tiny-classifier-x1'])).stdout);
    const fetched = await h.akas(['--json', 'verify', 'cas', '--node', nodeFile, '--fetch']);
    expect(fetched.code, fetched.stdout).toBe(0);
    expect(fetched.json()).toMatchObject({ ok: true, source: { fetched: `${h.baseUrl}/api/cas/${blobSha}` }, actual: { sha256: blobSha, bytes: blob.length } });

    const s3 = file('art2.json', (await h.akas(['--json', 'node', '/models/tiny-classifier-x2'])).stdout);
    const cannot = await h.akas(['verify', 'cas', '--node', s3, '--fetch']);
    expect(cannot.code).toBe(2);
    expect(cannot.stderr).toContain('s3:');
    // With the bytes at hand, a self-reported artifact is checked: these are not the bytes it claims.
    const mismatch = await h.akas(['verify', 'cas', '--node', s3, join(work, 'model.bin')]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stdout).toContain("node's sha256Verification: self-reported (the node did not check these bytes");
  });

  it('refuses a node that is not an artifact, an edited one, and mixed options', async () => {
    const cap = file('cap.json', (await h.akas(['--json', 'node', '/tools/pdf-to-text-x1'])).stdout);
    expect((await h.akas(['verify', 'cas', '--node', cap, join(work, 'model.bin')])).code).toBe(2);
    const edited = JSON.parse(readFileSync(join(work, 'art1.json'), 'utf8'));
    edited.payload.sha256 = createHash('sha256').update('x').digest('hex');
    const r = await h.akas(['--json', 'verify', 'cas', '--node', file('art1-edited.json', JSON.stringify(edited)), join(work, 'model.bin')]);
    expect(r.code).toBe(1);
    expect(r.json().problems).toEqual(expect.arrayContaining([expect.stringContaining("the manifest's sha256 differ")]));
    expect((await h.akas(['verify', 'cas', '--node', cap, '--sha256', blobSha])).code).toBe(2);
    // The file forms of before still work.
    expect((await h.akas(['verify', 'cas', join(work, 'model.bin'), '--sha256', blobSha])).code).toBe(0);
  });
});

describe('akas completion', () => {
  it('completes node kinds for search --kind and levels for node and brief', async () => {
    const r = await h.akas(['completion', 'bash']);
    const path = file('akas.bash', r.stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${path}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _akas; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean);
    expect(complete('akas', 'search', 'x', '--kind', 'leaf-')).toEqual(['leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact']);
    expect(complete('akas', 'queue', '--kind', 'e')).toEqual(['eval-result']);
    expect(complete('akas', 'brief', 'kb:x', '--level', '')).toEqual(['tldr', 'core', 'deep']);
    expect(complete('akas', 'node', '/x', '--level', 'd')).toEqual(['deep']);
    expect(complete('akas', 'verify', 'ma')).toEqual(['manifest']);
    expect(complete('akas', 'tra')).toEqual(['traverse']); // not the hidden old `traversal` (akas show)
  });
});
