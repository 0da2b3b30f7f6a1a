// akas monitor and akas journal (issue 34) over real nodes listening on port 0, the monitor run
// as the built binary (dist/bin/main.cjs: `npm run build` first) in a child process: a judgment
// made with the agent's key copied out of its profile is flagged, its own through `akas judge`
// are not, and so is an attestation sent with its api key by another client; a node showing
// another history is a fork with evidence a third party checks, and a smaller checkpoint than
// one seen before a rollback; a run stopped mid-round, or right after an alert is saved or
// printed, as a SIGKILL would stop it (the round's hooks, given to the command in this process),
// neither loses nor repeats an alert; a rotated key stays watched; no node is exit 2 and a
// malformed tile an alert. (Revocations and suspensions: test/e2e/monitor-status.test.ts.)
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AkasClient } from '../../cli/kit/client.js';
import { monitorCommands } from '../../cli/commands/monitor/index.js';
import type { RoundHooks } from '../../cli/commands/monitor/follow.js';
import { run } from '../../cli/program.js';
import { McpStdioProxy } from '../../cli/commands/discovery/mcp-stdio.js';
import { loadIdentity, saveIdentity } from '../../cli/kit/profile.js';
import { FakeClock } from '../../src/core/index.js';
import { KIND_ROUTES } from '../../src/domain/proposals/kinds.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { verifyLogProof } from '../../verifier/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { bearer } from '../helpers/app.js';
import { Capture, type CliHarness, cliHarness } from '../helpers/cli.js';
import { CLI, judgeCommand } from '../helpers/e2e.js';
import { agent, contentOf, proposeAs, SCORES_HIGH, signedBodyV2 } from '../helpers/flows.js';
import { openTestStore } from '../helpers/stores.js';
import { untilLogSettled } from '../helpers/written.js';

let h: CliHarness;
beforeAll(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterAll(async () => {
  await h.close();
});

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  lines: () => Array<Record<string, any>>;
}

/** Runs the built `akas` in a child process against the harness's node and config folder. */
function akas(args: string[], env: Record<string, string> = {}): Promise<Child> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, AKAS_CONFIG_DIR: h.configDir, AKAS_BASE_URL: h.baseUrl, NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout,
        stderr,
        lines: () =>
          stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l)),
      }),
    );
  });
}

/** What a hook throws to stop a round where a kill would: nothing of the round runs after it. */
class Stopped extends Error {}

/**
 * Runs `akas monitor` in this process with the round's hooks (cli/commands/monitor/follow.ts
 * RoundHooks), which the command table never passes: a hook that throws stops the round as a
 * SIGKILL there would, leaving on disk only what was saved before it.
 */
async function monitorStopped(args: string[], hooks: RoundHooks): Promise<Child> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(args, { stdout, stderr }, [(program, cli) => monitorCommands(program, cli, hooks)], { AKAS_BASE_URL: h.baseUrl });
  process.exitCode = 0;
  return {
    code,
    signal: null,
    stdout: stdout.text,
    stderr: stderr.text,
    // The records printed before the stop, one JSON line each (the failure after them is one pretty-printed object).
    lines: () =>
      stdout.text
        .split('\n')
        .filter((l) => l.startsWith('{"'))
        .map((l) => JSON.parse(l)),
  };
}

/** A proposal by a fresh agent, and its content hash (what a v2 judgment signs). */
async function proposal(n: number) {
  const proposer = await agent(h.node);
  const res = await proposeAs(h.node, proposer, 'brief', samplePayload('brief', n));
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().proposalId as string;
  return { id, content: await contentOf(h.node, id) };
}

/** A judgment made with the profile's keys copied out of it: another client, not this CLI. */
async function stolenJudgment(profile: string, proposalId: string, content: string) {
  const id = loadIdentity(profile, h.baseUrl)!;
  const thief = { tag: id.tag, apiKey: id.apiKey, signing: id.signing } as Parameters<typeof signedBodyV2>[0];
  const res = await h.node.app.inject({
    method: 'POST',
    url: `${KIND_ROUTES.brief.judge}/${proposalId}`,
    payload: signedBodyV2(thief, 'brief', proposalId, content),
    headers: bearer(id.apiKey),
    remoteAddress: '10.9.9.9',
  });
  expect(res.statusCode, res.body).toBe(200);
}

const judgeArgs = (id: string) => judgeCommand(id, 'Accurate.');

/** A review attestation body (PROTOCOL 9.1's review.attestation.v1), unique per i. */
const review = (i: number) => ({
  schemaVersion: '1.0.0',
  reviewId: `rev-monitor-${i}`,
  reviewerId: `reviewer-${i}`,
  reviewerDid: 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2',
  subjectId: 'release v3',
  subjectSha256: 'e'.repeat(64),
  verdict: 'approve',
  reviewedAt: 1767268800000,
});

/** The node's log answered by a proxy that may change what it serves (`change` sees each path and the node's bytes). */
async function logProxy(change: (path: string, body: Buffer) => Buffer) {
  const proxy: Server = createServer(async (req, res) => {
    const r = await h.node.app.inject({ url: `/log${req.url}` });
    const body = change(req.url ?? '/', Buffer.from(r.rawPayload));
    res.writeHead(r.statusCode, { 'content-type': String(r.headers['content-type'] ?? 'application/octet-stream') }).end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => proxy.close() };
}

/** The size of the node's log once every write is in it. */
async function logSize() {
  await untilLogSettled(h.node);
  return Number((await h.node.app.inject({ url: '/log/checkpoint' })).body.split('\n')[1].trim());
}

describe('akas journal', () => {
  it('holds each signature the CLI made (hashes and public keys, mode 0600), never a secret', async () => {
    const me = await h.agent();
    const p = await proposal(100);
    expect((await h.akas(judgeArgs(p.id), { profile: me.profile })).code).toBe(0);
    const r = await akas(['--json', '--profile', me.profile, 'journal']);
    expect(r.code, r.stderr).toBe(0);
    const { entries, path } = JSON.parse(r.stdout);
    expect(entries.map((e: any) => e.kind)).toEqual(['possession', 'judgment']);
    const judged = (await h.node.app.inject({ url: `/api/knowledge/proposals/${p.id}` })).json().judgments[0];
    // The judgment's sending, settled by the node's answer: accepted, naming the judgment and its signature.
    expect(entries[1]).toMatchObject({
      agent: me.tag,
      subject: p.id,
      node: h.baseUrl,
      payloadSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      state: 'accepted',
      judgmentId: judged.judgmentId,
      signature: judged.signature.signature,
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const saved = loadIdentity(me.profile, h.baseUrl)!;
    const text = readFileSync(path, 'utf8');
    for (const secret of [saved.apiKey, saved.recoveryToken, saved.signing.privateKey]) expect(text).not.toContain(secret);
  });
});

describe('akas monitor', () => {
  it(
    "flags a judgment made with the agent's copied key within one poll, not its own (akas judge, akas mcp --stdio), and keeps a rotated " + 'key watched',
    async () => {
      const me = await h.agent();
      const [mine, stolen, later] = [await proposal(1), await proposal(2), await proposal(3)];
      expect((await h.akas(judgeArgs(mine.id), { profile: me.profile })).code).toBe(0);
      // ...and one through akas mcp --stdio's judge tool, signed with the same profile's key.
      const viaMcp = await proposal(5);
      const identity = loadIdentity(me.profile, h.baseUrl)!;
      const proxy = new McpStdioProxy({
        endpoint: `${h.baseUrl}/api/mcp`,
        profile: me.profile,
        identity,
        client: new AkasClient({ baseUrl: h.baseUrl, apiKey: identity.apiKey }),
        keepClaimSecret: () => ({ error: 'not kept in this test' }),
        log: () => undefined,
      });
      try {
        const r = await proxy.callTool('judge', { id: viaMcp.id, scores: SCORES_HIGH, rationale: 'Looks right.' });
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
      } finally {
        await proxy.close();
      }
      await stolenJudgment(me.profile, stolen.id, stolen.content);
      await untilLogSettled(h.node);
      const state = join(h.configDir, 'm1.json');
      const first = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', state]);
      expect(first.code, first.stderr).toBe(1);
      const alerts = first.lines().filter((l) => l.type === 'alert');
      expect(alerts.map((a) => [a.what, a.entry.body.proposalId])).toEqual([['unjournaled-judgment', stolen.id]]);
      const oldKey = loadIdentity(me.profile, h.baseUrl)!.signing.publicKey;
      expect(alerts[0].key).toMatchObject({ publicKey: oldKey, watched: true });
      // The evidence is an inclusion proof `akas verify log-proof` checks.
      expect(verifyLogProof(alerts[0], h.node.keys.log.verifierKey ?? '').verified).toBe(true);

      // The key is rotated (akas recover); a judgment with the old key made before, seen only now, is still this agent's.
      const p = await proposal(4);
      await stolenJudgment(me.profile, p.id, p.content);
      expect((await h.akas(['recover'], { profile: me.profile })).code).toBe(0);
      await stolenJudgment(me.profile, later.id, later.content);
      await untilLogSettled(h.node);
      const second = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', state]);
      expect(second.code, second.stderr).toBe(1);
      const next = second.lines().filter((l) => l.type === 'alert');
      expect(next.map((a) => a.entry.body.proposalId)).toEqual([p.id, later.id]);
      expect(next[0].key).toMatchObject({ publicKey: oldKey, watched: true, current: false });
      expect(next[1].key).toMatchObject({ publicKey: loadIdentity(me.profile, h.baseUrl)!.signing.publicKey, watched: true, current: true });
      // Nothing new: no alert is printed twice.
      const third = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', state]);
      expect(third.lines().filter((l) => l.type === 'alert')).toEqual([]);
    },
  );

  it("flags a thief's judgment made first with copied keys, though the agent's own (akas judge, akas mcp --stdio) was sent and refused after", async () => {
    const me = await h.agent();
    const from = await logSize();
    const [x, y, own] = [await proposal(71), await proposal(72), await proposal(73)];
    // The owner's keys copied into a second profile: the thief judges first with this very CLI,
    // X with the very payload the owner signs next, Y with one of its own.
    const thief = `${me.profile}-thief`;
    saveIdentity(thief, loadIdentity(me.profile, h.baseUrl)!);
    expect((await h.akas(judgeArgs(x.id), { profile: thief })).code).toBe(0);
    expect((await h.akas(judgeCommand(y.id, 'Stolen.'), { profile: thief })).code).toBe(0);
    // The owner's own judge of X is refused (already_judged), and so is its mcp --stdio judge of Y.
    const refused = await h.akas(['--json', ...judgeArgs(x.id)], { profile: me.profile });
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({ code: 'already_judged' });
    const identity = loadIdentity(me.profile, h.baseUrl)!;
    const proxy = new McpStdioProxy({
      endpoint: `${h.baseUrl}/api/mcp`,
      profile: me.profile,
      identity,
      client: new AkasClient({ baseUrl: h.baseUrl, apiKey: identity.apiKey }),
      keepClaimSecret: () => ({ error: 'not kept in this test' }),
      log: () => undefined,
    });
    try {
      const r = await proxy.callTool('judge', { id: y.id, scores: SCORES_HIGH, rationale: 'Looks right.' });
      expect(r.structuredContent).toMatchObject({ code: 'already_judged' });
    } finally {
      await proxy.close();
    }
    expect((await h.akas(judgeArgs(own.id), { profile: me.profile })).code).toBe(0);
    const journal = await akas(['--json', '--profile', me.profile, 'journal']);
    expect(
      JSON.parse(journal.stdout)
        .entries.filter((e: any) => e.kind === 'judgment')
        .map((e: any) => [e.subject, e.state]),
    ).toEqual([
      [x.id, 'refused'],
      [y.id, 'refused'],
      [own.id, 'accepted'],
    ]);
    await untilLogSettled(h.node);
    const r = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', join(h.configDir, 'm-thief.json'), '--from', String(from)]);
    expect(r.code, r.stderr).toBe(1);
    const alerts = r.lines().filter((l) => l.type === 'alert');
    expect(alerts.map((a) => [a.what, a.entry.body.proposalId])).toEqual([
      ['unjournaled-judgment', x.id],
      ['unjournaled-judgment', y.id],
    ]);
  });

  it('resumes after a run stopped mid-round (as by a SIGKILL) with no missed and no repeated alert', async () => {
    const me = await h.agent();
    await untilLogSettled(h.node);
    const from = Number((await h.node.app.inject({ url: '/log/checkpoint' })).body.split('\n')[1].trim());
    const ps = [await proposal(11), await proposal(12), await proposal(13), await proposal(14)];
    for (const p of ps) await stolenJudgment(me.profile, p.id, p.content);
    await untilLogSettled(h.node);
    const state = join(h.configDir, 'm2.json');
    // 4 proposals, then 4 judgments: stopped after the second judgment's entry was read.
    const args = ['--json', '--profile', me.profile, 'monitor', '--once', '--state', state, '--from', String(from)];
    const stopAfter6: RoundHooks = {
      entriesRead: (read) => {
        if (read >= 6) throw new Stopped('stopped after 6 entries');
      },
    };
    const killed = await monitorStopped(args, stopAfter6);
    expect(killed.code, killed.stdout).toBe(3);
    expect(killed.stdout).toContain('stopped after 6 entries');
    const rest = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', state]);
    expect(rest.code, rest.stderr).toBe(1);
    const ids = [...killed.lines(), ...rest.lines()].filter((l) => l.type === 'alert').map((a) => a.entry.body.proposalId);
    expect(killed.lines().filter((l) => l.type === 'alert').length).toBe(2);
    expect(ids).toEqual(ps.map((p) => p.id));
  });

  it('flags a node that shows another history, with evidence akas verify fork checks', async () => {
    // A second node holding the same keys: the same log key signs a history of its own.
    const { store, dir, dispose } = await openTestStore();
    const clock = new FakeClock();
    const twin = await createApp({
      store,
      strategies: strategiesFor(store),
      clock,
      keys: h.node.keys,
      config: { rateLimit: { burst: 1e6, refillPerSecond: 1e6 } },
    });
    await twin.listen({ port: 0, host: '127.0.0.1' });
    const twinNode = { app: twin, store, clock, keys: h.node.keys, dir, close: async () => {} };
    try {
      const twinUrl = `http://127.0.0.1:${(twin.server.address() as AddressInfo).port}`;
      const res = await proposeAs(twinNode, await agent(twinNode), 'brief', samplePayload('brief', 99));
      expect(res.statusCode, res.body).toBe(200);
      await untilLogSettled(twinNode);
      const me = await h.agent();
      await proposal(21);
      await untilLogSettled(h.node);
      const state = join(h.configDir, 'm3.json');
      const r = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', state, '--compare', twinUrl]);
      expect(r.code, r.stderr).toBe(1);
      const fork = r.lines().find((l) => l.what === 'fork')!;
      expect(fork.evidence.older.from).toBe(twinUrl);
      const check = await akas(['--json', 'verify', 'fork', fork.evidenceFile, '--log-key', h.node.keys.log.verifierKey]);
      expect(check.code, check.stdout).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ proven: true });
      // The same checkpoints under another log key prove nothing.
      const other = await akas(['--json', 'verify', 'fork', fork.evidenceFile, '--log-key', 'x+00000000+AXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX']);
      expect(other.code).toBe(1);
    } finally {
      await twin.close();
      await dispose();
    }
  });

  it('is exit 2 when no node answers, and a malformed tile is an alert, not a crash', async () => {
    const me = await h.agent();
    const none = await akas([
      '--json',
      '--profile',
      me.profile,
      'monitor',
      '--once',
      '--state',
      join(h.configDir, 'm4.json'),
      '--base-url',
      'http://127.0.0.1:9',
    ]);
    expect(none.code, none.stdout + none.stderr).toBe(2);
    // A proxy in front of the node that serves every level-0 tile with a flipped byte.
    const proxy = await logProxy((path, body) => (path.startsWith('/tile/0/') ? Buffer.from(body.map((b, i) => (i === 0 ? b ^ 1 : b))) : body));
    try {
      const r = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', join(h.configDir, 'm5.json'), '--tiles', proxy.url]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.lines().find((l) => l.type === 'alert')).toMatchObject({ what: 'malformed-log' });
    } finally {
      proxy.close();
    }
  });

  it("flags an attestation sent with the agent's api key by another client, not its own through akas attest", async () => {
    const me = await h.agent();
    const from = await logSize();
    expect((await h.akas(['attest', 'review.attestation.v1', '--body', JSON.stringify(review(1))], { profile: me.profile })).code).toBe(0);
    const id = loadIdentity(me.profile, h.baseUrl)!;
    const stolen = await h.node.app.inject({
      method: 'POST',
      url: '/api/attestations',
      payload: { kind: 'review.attestation.v1', body: review(2) },
      headers: bearer(id.apiKey),
      remoteAddress: '10.9.9.8',
    });
    expect(stolen.statusCode, stolen.body).toBe(200);
    await untilLogSettled(h.node);
    const r = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', join(h.configDir, 'm7.json'), '--from', String(from)]);
    expect(r.code, r.stderr).toBe(1);
    const alerts = r.lines().filter((l) => l.type === 'alert');
    expect(alerts.map((a) => [a.what, a.entry.kind, a.entry.body.reviewId])).toEqual([['unjournaled-attestation', 'review.attestation.v1', 'rev-monitor-2']]);
    expect(verifyLogProof(alerts[0], h.node.keys.log.verifierKey ?? '').verified).toBe(true);
  });

  it('flags a checkpoint smaller than the last one it verified (rollback), with both checkpoints', async () => {
    const me = await h.agent();
    await logSize();
    const older = (await h.node.app.inject({ url: '/log/checkpoint' })).body;
    await proposal(41);
    await logSize();
    const newer = (await h.node.app.inject({ url: '/log/checkpoint' })).body;
    const state = join(h.configDir, 'm8.json');
    const args = ['--json', '--profile', me.profile, 'monitor', '--once', '--state', state];
    const first = await akas(args);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // The same node's tiles, but the checkpoint it signed before the last proposal.
    const proxy = await logProxy((path, body) => (path === '/checkpoint' ? Buffer.from(older) : body));
    try {
      const r = await akas([...args, '--tiles', proxy.url]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.lines().filter((l) => l.type === 'alert')).toEqual([expect.objectContaining({ what: 'rollback', older, newer })]);
    } finally {
      proxy.close();
    }
  });

  it('a stop right after an alert is saved, or right after it is printed, neither loses nor repeats it; the output log holds each once', async () => {
    for (const [k, point] of ['saved', 'printed'].entries()) {
      const me = await h.agent();
      const from = await logSize();
      const ps = [await proposal(51 + 10 * k), await proposal(52 + 10 * k), await proposal(53 + 10 * k)];
      for (const p of ps) await stolenJudgment(me.profile, p.id, p.content);
      await untilLogSettled(h.node);
      const state = join(h.configDir, `m9-${point}.json`);
      const args = ['--json', '--profile', me.profile, 'monitor', '--once', '--state', state];
      // Stopped at the second alert: after saving it as pending (not yet printed), or after printing it (not yet saved as printed).
      const atSecond: RoundHooks = {
        record: (at, n) => {
          if (at === point && n === 2) throw new Stopped(`stopped at record 2, ${point}`);
        },
      };
      const killed = await monitorStopped([...args, '--from', String(from)], atSecond);
      expect(killed.code, killed.stdout).toBe(3);
      expect(killed.stdout).toContain(`stopped at record 2, ${point}`);
      const before = killed.lines().filter((l) => l.type === 'alert');
      expect(before.length).toBe(point === 'saved' ? 1 : 2);
      const rest = await akas(args);
      expect(rest.code, rest.stderr).toBe(1);
      const printed = [...before, ...rest.lines().filter((l) => l.type === 'alert')].map((a) => a.entry.body.proposalId);
      expect(printed, point).toEqual(ps.map((p) => p.id));
      const logged = readFileSync(join(h.configDir, `m9-${point}.alerts.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(logged.map((l) => JSON.parse(l).entry.body.proposalId)).toEqual(ps.map((p) => p.id));
    }
  });

  it('ships no test hook: the built akas reads no kill switch from its environment', async () => {
    const me = await h.agent();
    const from = await logSize();
    const p = await proposal(81);
    await stolenJudgment(me.profile, p.id, p.content);
    await untilLogSettled(h.node);
    const state = join(h.configDir, 'm10.json');
    const args = ['--json', '--profile', me.profile, 'monitor', '--once', '--state', state, '--from', String(from)];
    const r = await akas(args, { AKAS_MONITOR_TEST_KILL_AFTER: '1', AKAS_MONITOR_TEST_KILL_AT: 'saved:1' });
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(1);
    expect(
      r
        .lines()
        .filter((l) => l.type === 'alert')
        .map((a) => a.entry.body.proposalId),
    ).toEqual([p.id]);
  });

  it("the CI workflow (docs/ci/akas-monitor.yml) passes with only the agent's own judgments and fails on a stolen-key one", async () => {
    const me = await h.agent();
    const p = await proposal(31);
    expect((await h.akas(judgeArgs(p.id), { profile: me.profile })).code).toBe(0);
    await untilLogSettled(h.node);
    const workflow = readFileSync(new URL('../../docs/ci/akas-monitor.yml', import.meta.url), 'utf8');
    const line = /- name: akas monitor\n\s+run: (.+)\n/.exec(workflow)![1];
    const runner = mkdtempSync(join(tmpdir(), 'akas-ci-'));
    // The CI job's journal is a copy of the profile's (its secret), its config folder its own.
    copyFileSync(join(h.configDir, 'profiles', me.profile, 'journal.jsonl'), join(runner, 'journal.jsonl'));
    const env = { AKAS: `${process.execPath} ${CLI}`, AKAS_AGENT: me.tag, RUNNER_TEMP: runner, AKAS_CONFIG_DIR: join(runner, '.akas-config') };
    const run = () =>
      new Promise<number | null>((resolve) =>
        spawn('bash', ['-c', line], { env: { ...process.env, AKAS_BASE_URL: h.baseUrl, ...env }, stdio: 'ignore' }).on('close', resolve),
      );
    try {
      expect(await run()).toBe(0);
      const q = await proposal(32);
      await stolenJudgment(me.profile, q.id, q.content);
      await untilLogSettled(h.node);
      expect(await run()).toBe(1);
    } finally {
      rmSync(runner, { recursive: true, force: true });
    }
  });

  // Last in this file: it moves the node's clock ahead of this machine's and leaves it there.
  it("watches the status of a judgment whose credential is not yet valid by this machine's clock (a node whose clock runs ahead)", async () => {
    const me = await h.agent();
    const p = await proposal(60);
    h.node.clock.set(Date.now() + 3_600_000); // the node an hour ahead of the monitor's machine
    expect((await h.akas(judgeArgs(p.id), { profile: me.profile })).code).toBe(0);
    await untilLogSettled(h.node);
    const r = await akas(['--json', '--profile', me.profile, 'monitor', '--once', '--state', join(h.configDir, 'm-ahead.json')]);
    expect(r.lines().filter((l) => l.what === 'incomplete')).toEqual([]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
});
