// The auditor's path with the built binary against a real `akas serve`: a published artifact
// whose bytes sit in the node's content store, exported as a bundle with its blobs, checked
// offline; every tampering named and refused; an issuer-key rotation that old credentials
// survive.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
let issuer: string;
let proposalId: string;
let bundleFile: string;
const blobs = () => join(work, 'blobs');

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });
/** An offline run: the base URL points nowhere, so anything that needed the node would fail. */
const offline = (args: string[], input?: string) => runCli(args, { cwd: work, input, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
const judgeArgs = (id: string) => ['--json', 'judge', id, '--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'Checked the bytes and the card.'];

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
  const proposed = await akas('p1', ['--json', 'propose', 'artifact', '--file', join(work, 'artifact.json')]);
  expect(proposed.code, proposed.stderr).toBe(0);
  proposalId = JSON.parse(proposed.stdout).proposalId;
  for (const j of ['p2', 'p3', 'p4']) expect((await akas(j, judgeArgs(proposalId))).code).toBe(0);

  bundleFile = join(work, 'bundle.json');
  const exported = await akas('p1', ['export', proposalId, '-o', bundleFile, '--blobs', blobs()]);
  expect(exported.code, exported.stderr).toBe(0);
}, 90_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Writes a changed copy of the bundle and answers its path. */
function tamperedBundle(name: string, change: (b: any) => void): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  const b = JSON.parse(readFileSync(bundleFile, 'utf8'));
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
    // Only the node's HMACs stay unchecked; the blob was given, so CAS is checked.
    expect(new Set(report.checks.filter((c: { valid: boolean | null }) => c.valid === null).map((c: { id: string }) => c.id))).toEqual(new Set(['judgment.nodeMac']));
  });

  it('says what it could not check without --issuer and --blobs, and still exits 0', async () => {
    const r = await offline(['verify', 'bundle', bundleFile]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('not checked: pass --issuer DID');
    expect(r.stdout).toContain('not checked: pass --blobs DIR');
  });

  const tamperings: Array<[string, (b: any) => void, string]> = [ // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a judgment signature', (b) => (b.proposal.judgments[0].signature.signature = b.proposal.judgments[0].signature.signature.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a'))), 'judgment.signature'],
    ['a judgment score', (b) => (b.proposal.judgments[1].scores.accuracy = 0.1), 'judgment.payload'],
    ['a credential value', (b) => (b.credentials[2].credentialSubject.rationale = 'Something else.'), 'credential.proof.signature'],
    ['a judge key', (b) => (b.judges[0].signing.publicKey = b.judges[1].signing.publicKey), 'judgment.key'],
    ['the issuer key list', (b) => (b.issuerKeys.rotations = [{ type: 'akas.issuer-rotation.v1', from: issuer, to: b.issuerKeys.current, at: 1, signatures: { from: '00'.repeat(64), to: '00'.repeat(64) } }]), 'issuer.chain'],
  ];
  it.each(tamperings)('refuses a changed %s with exit 1, naming %s', async (name, change, check) => {
    const r = await offline(['--json', 'verify', 'bundle', tamperedBundle(name.replace(/ /g, '-'), change), '--blobs', blobs(), '--issuer', issuer]);
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.parse(r.stdout).checks.filter((c: { valid: boolean | null }) => c.valid === false).map((c: { id: string }) => c.id)).toContain(check);
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
    b.credentials.forEach((c: unknown, i: number) => writeFileSync(join(dir, `c${i}.json`), JSON.stringify(c, null, 2)));
    writeFileSync(join(work, 'creds.jsonl'), b.credentials.map((c: unknown) => JSON.stringify(c)).join('\n') + '\n');
  });

  it('checks files, a folder, JSON lines and stdin, with the judge signatures too', async () => {
    const r = await offline(['verify', 'credential', dir, join(work, 'creds.jsonl'), '--issuer', issuer, '--judge-signature']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('6/6 credential(s) hold');
    const fromStdin = await offline(['--json', 'verify', 'credential', '-'], readFileSync(join(dir, 'c0.json'), 'utf8'));
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ verified: true, total: 1, issuerPinned: false });
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

    const withKeys = await offline(['verify', 'credential', cred, '--issuer', health.issuer, '--issuer-keys', join(work, 'keys.json')]);
    expect(withKeys.code, withKeys.stdout).toBe(0);
    const pinnedOnly = await offline(['verify', 'credential', cred, '--issuer', health.issuer]);
    expect(pinnedOnly.code).toBe(1); // the prior key's credentials need the key list

    // A bundle exported now carries the rotation: pinned on the new issuer, the old credentials verify.
    const fresh = join(work, 'bundle-after.json');
    expect((await akas('p1', ['export', proposalId, '-o', fresh])).code).toBe(0);
    const r = await offline(['verify', 'bundle', fresh, '--issuer', health.issuer]);
    expect(r.code, r.stdout).toBe(0);
  }, 60_000);
});
