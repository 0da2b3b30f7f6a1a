// Scale-out (ARCHITECTURE 7) with the built binary: several `akas serve --store postgres://...`
// processes on one throwaway database. What one process writes, the other serves at once;
// judging, the ledger, token buckets and per-day caps hold across them as for one process; a
// rotated api key is refused by every process within the documented bound; a process killed
// with SIGKILL in the middle of a write load loses nothing it acknowledged, and rejoins.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { openPgStore, WATCH_BOUND_MS } from '../../src/store/postgres/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { runCli, startServe, type RunningNode } from '../helpers/e2e.js';
import { call, calibrated, judgeBody, nextIp, pipelineFacet, register, untilTrue, type Agent } from '../helpers/remote.js';
import { describePg, dropSchema, freshSchemaUrl } from '../helpers/postgres.js';
import { startTempCluster, type TempCluster } from '../../src/store/postgres/cluster.js';
import { FAULT_MIX, seeded, Workload } from '../../bench/workload.js';
import { assertAcknowledgedPresent, assertAuditClean } from '../helpers/faults.js';

const SECRET = `test-node-secret-${randomBytes(8).toString('hex')}`;
const env = { AKAS_NODE_SECRET: SECRET };

/** Stops the processes of a test (those started), then drops its schema. */
async function stopAndDrop(nodes: Array<RunningNode | undefined>, url: string) {
  for (const node of nodes) await node?.stop();
  const store = await openPgStore(url, { migrate: false }).catch(() => undefined);
  if (store) {
    await dropSchema(store);
    await store.close();
  }
}

async function ledgerOf(url: string) {
  const store = await openPgStore(url, { migrate: false });
  try {
    return await checkLedger(store);
  } finally {
    await store.close();
  }
}

describePg('several akas serve processes on one PostgreSQL database (e2e)', () => {
  describe('two processes sharing one store', () => {
    let url: string;
    let a: RunningNode;
    let b: RunningNode;
    const serveArgs = ['--allow-same-ip', '--registration-cap', '100000', '--trust-proxy', '--public-url', 'https://akas.example.org'];

    beforeAll(async () => {
      url = freshSchemaUrl('e2e');
      // Started together on an empty database: one creates the schema and the keys, both agree.
      [a, b] = await Promise.all([startServe(serveArgs, { store: url, env }), startServe(serveArgs, { store: url, env })]);
    }, 60_000);
    afterAll(() => stopAndDrop([a, b], url));

    it('shows one issuer on every process, and refuses a process given another node secret', async () => {
      const [ha, hb] = [(await call(a, 'GET', '/healthz')).body, (await call(b, 'GET', '/healthz')).body];
      expect(ha.issuer).toMatch(/^did:key:z6Mk/);
      expect(hb.issuer).toBe(ha.issuer);
      const keysA = (await call(a, 'GET', '/api/node/keys')).body;
      expect((await call(b, 'GET', '/api/node/keys')).body).toEqual(keysA);
      const wrong = await startServe([], { store: url, env: { AKAS_NODE_SECRET: 'another-secret-of-enough-length' } }).then(
        async (n) => (await n.stop(), 'started'),
        (e: Error) => e.message,
      );
      expect(wrong).toMatch(/exited \(2\)/);
      expect(wrong).toContain('does not open the node keys');
      expect(wrong).toContain(ha.issuer);
      expect(wrong).not.toContain(SECRET);
    });

    it('serves at once, on one process, an agent registered on the other', async () => {
      const agent = await register(a);
      const me = await call(b, 'GET', '/api/agent/v1/me', { key: agent.apiKey });
      expect(me.status).toBe(200);
      expect(me.body.tag).toBe(agent.tag);
      const blob = randomBytes(5000);
      const put = await call(b, 'POST', '/api/cas', { raw: blob });
      expect(put.status).toBe(200);
      const got = await call(a, 'GET', `/api/cas/${sha256Hex(blob)}`);
      expect(got.status).toBe(200);
      expect(got.raw.equals(blob)).toBe(true);
    });

    it('records exactly requiredJudgments of 50 concurrent judges split between them, decides once, and keeps the ledger balanced', async () => {
      const proposer = await calibrated(a);
      const judges: Agent[] = [];
      for (let i = 0; i < 50; i++) judges.push(await calibrated(i % 2 ? a : b));
      const proposed = await call(b, 'POST', '/api/knowledge/propose', { key: proposer.apiKey, body: samplePayload('brief', 41) });
      expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
      const { proposalId } = proposed.body as { proposalId: string };
      const answers = await Promise.all(
        judges.map((j, i) => call(i % 2 ? b : a, 'POST', `/api/knowledge/judge/${proposalId}`, { key: j.apiKey, body: judgeBody(j, proposalId) })),
      );
      const ok = answers.filter((r) => r.status === 200);
      expect(ok).toHaveLength(3);
      expect(ok.filter((r) => r.body.statusChanged)).toHaveLength(1);
      const refused = answers.filter((r) => r.status !== 200);
      expect(refused.map((r) => r.body.code)).toEqual(Array(47).fill('already_decided'));
      for (const node of [a, b]) {
        const detail = (await call(node, 'GET', `/api/knowledge/proposals/${proposalId}`)).body;
        expect(detail).toMatchObject({ status: 'published', judgmentCount: 3 });
        expect(new Set(detail.judgments.map((j: { agentTag: string }) => j.agentTag)).size).toBe(3);
      }
      // One decision in the log, with the three judgments (the appender of either process wrote them).
      await untilTrue(
        async () => (await call(a, 'GET', `/api/attestations?proposalId=${proposalId}`)).body.items.length >= 5,
        15_000,
        'the log entries of the proposal',
      );
      const events = (await call(b, 'GET', `/api/attestations?proposalId=${proposalId}&limit=100`)).body.items.map(
        (e: { body: { event: string } }) => e.body.event,
      );
      expect(events.sort()).toEqual(['judgment.recorded', 'judgment.recorded', 'judgment.recorded', 'proposal.published', 'proposal.submitted']);
      const ledger = await ledgerOf(url);
      expect(ledger.problems).toEqual([]);
      expect(ledger.totals.minted).toBeGreaterThan(0);
    });

    it('publishes through each process and finds what the other published in the very next request: misspelt, by prefix, in suggest', async () => {
      const proposer = await calibrated(a);
      const judges = [await calibrated(a), await calibrated(b), await calibrated(a)];
      // Proposed and judged through one process; the other searches right after the last judgment's 200.
      const publish = async (via: RunningNode, n: number, title: string) => {
        const proposed = await call(via, 'POST', '/api/knowledge/propose', {
          key: proposer.apiKey,
          body: { brief: { ...(samplePayload('brief', n) as { brief: object }).brief, title } },
        });
        expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
        const { proposalId } = proposed.body as { proposalId: string };
        for (const j of judges) {
          const judged = await call(via, 'POST', `/api/knowledge/judge/${proposalId}`, { key: j.apiKey, body: judgeBody(j, proposalId) });
          expect(judged.status, JSON.stringify(judged.body)).toBe(200);
        }
        return `/distributed-systems/retries-with-backoff-x${n}`;
      };
      const paths = async (node: RunningNode, q: string) =>
        (await call(node, 'GET', `/api/knowledge/search?q=${encodeURIComponent(q)}`)).body.items.map((i: { path: string }) => i.path);
      const onA = await publish(a, 61, 'Quaternion interpolator for robot arms');
      expect(await paths(b, 'quaternion interpolator')).toEqual([onA]);
      expect(await paths(b, 'quaternon')).toEqual([onA]); // one letter missing
      const onB = await publish(b, 62, 'Xylophone tuning schedule');
      expect(await paths(a, 'xyloph')).toEqual([onB]); // as typed
      expect((await call(a, 'GET', '/api/knowledge/suggest?q=xylo')).body.suggestions).toEqual([
        { path: onB, title: 'Xylophone tuning schedule', kind: 'leaf-brief' },
      ]);
      expect(await paths(a, 'quaternion')).toEqual([onA]);
    });

    it(`refuses a rotated api key on both processes within the documented bound (${WATCH_BOUND_MS} ms)`, async () => {
      const agent = await calibrated(a); // recovery is for calibrated agents
      // Both processes now hold the agent in their auth caches.
      for (const node of [a, b, a, b]) expect((await call(node, 'GET', '/api/agent/v1/me', { key: agent.apiKey })).status).toBe(200);
      const recovered = await call(b, 'POST', '/api/agent/v1/recover', { body: { tag: agent.tag, recoveryToken: agent.recoveryToken } });
      expect(recovered.status, JSON.stringify(recovered.body)).toBe(200);
      await Promise.all(
        [a, b].map((node) =>
          untilTrue(async () => (await call(node, 'GET', '/api/agent/v1/me', { key: agent.apiKey })).status === 401, WATCH_BOUND_MS, 'the old key refused'),
        ),
      );
      for (const node of [a, b]) expect((await call(node, 'GET', '/api/agent/v1/me', { key: recovered.body.apiKey })).status).toBe(200);
    });

    it(`has every running process follow a key rotation another process made, within the bound (${WATCH_BOUND_MS} ms)`, async () => {
      const before = (await call(a, 'GET', '/healthz')).body.issuer;
      // The operator restarts one process with --rotate-issuer-key: the others keep running.
      const rotating = await startServe([...serveArgs, '--rotate-issuer-key'], { store: url, env });
      try {
        const after = (await call(rotating, 'GET', '/healthz')).body.issuer;
        expect(after).not.toBe(before);
        await Promise.all(
          [a, b].map((node) => untilTrue(async () => (await call(node, 'GET', '/healthz')).body.issuer === after, WATCH_BOUND_MS, 'the new issuer')),
        );
        const keys = (await call(a, 'GET', '/api/node/keys')).body;
        expect(keys).toEqual((await call(rotating, 'GET', '/api/node/keys')).body);
        expect(JSON.stringify(keys)).toContain(before); // the prior key stays published
      } finally {
        await rotating.stop();
      }
    });

    it('runs a request with one Idempotency-Key once when it reaches both processes at the same time', async () => {
      const agent = await calibrated(a);
      const body = { kind: 'pipeline.facet.v1', body: { ...pipelineFacet(), stepId: 'idem-1' } };
      const headers = { authorization: `Bearer ${agent.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'same-key-both-processes' };
      const send = (node: RunningNode) =>
        fetch(node.url + '/api/attestations', { method: 'POST', headers, body: JSON.stringify(body) }).then(async (r) => ({
          status: r.status,
          replayed: r.headers.get('idempotent-replayed'),
          body: await r.json(),
        }));
      const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(answers.map((r) => JSON.stringify(r.body))).size).toBe(1);
      expect(answers.filter((r) => r.replayed === 'true')).toHaveLength(3);
      const listed = (await call(b, 'GET', `/api/attestations?agent=${agent.tag}&limit=100`)).body.items;
      expect(listed.filter((e: { body: { stepId?: string } }) => e.body.stepId === 'idem-1')).toHaveLength(1);
    });

    it('loses nothing it acknowledged when a process is killed with SIGKILL mid-load; the other keeps serving; the restarted one rejoins', async () => {
      const attester = await calibrated(b);
      const acked = { agents: [] as Agent[], blobs: [] as Buffer[], attestations: [] as string[] };
      let running = true;
      let victimDead = false;
      const load = async (node: RunningNode, n: number) => {
        let i = 0;
        while (running) {
          if (node === a && victimDead) return;
          i++;
          try {
            const r = await call(node, 'POST', '/api/agent/v1/register', { ip: nextIp() });
            if (r.status === 200) acked.agents.push(r.body);
            const bytes = randomBytes(2000 + ((n * 7919 + i) % 3000));
            const put = await call(node, 'POST', '/api/cas', { raw: bytes });
            if (put.status === 200) acked.blobs.push(bytes);
            const att = await call(node, 'POST', '/api/attestations', {
              key: attester.apiKey,
              body: { kind: 'pipeline.facet.v1', body: { ...pipelineFacet(), stepId: `w${n}-${i}` } },
            });
            if (att.status === 200) acked.attestations.push(att.body.attestationId ?? att.body.id);
          } catch {
            // The killed process: a request it never answered was never acknowledged.
          }
        }
      };
      const workers = [0, 1, 2, 3].map((n) => load(n % 2 ? a : b, n));
      await untilTrue(async () => acked.agents.length >= 24, 60_000, 'some load acknowledged');
      a.process.kill('SIGKILL');
      await new Promise<void>((r) => (a.process.exitCode !== null || a.process.signalCode !== null ? r() : a.process.once('exit', () => r())));
      victimDead = true;
      const atKill = acked.agents.length;
      await untilTrue(async () => acked.agents.length >= atKill + 8, 60_000, 'the survivor keeps acknowledging writes');
      running = false;
      await Promise.all(workers);

      // Everything acknowledged, by either process, is there, read from fresh addresses: hundreds
      // of reads from one would meet its token bucket, which uncalibrated agents draw from too.
      for (const agent of acked.agents) expect((await call(b, 'GET', '/api/agent/v1/me', { key: agent.apiKey, ip: nextIp() })).status).toBe(200);
      for (const bytes of acked.blobs) {
        const got = await call(b, 'GET', `/api/cas/${sha256Hex(bytes)}`, { ip: nextIp() });
        expect(got.status).toBe(200);
        expect(got.raw.equals(bytes)).toBe(true);
      }
      for (const id of acked.attestations) expect((await call(b, 'GET', `/api/attestations/${id}`, { ip: nextIp() })).status).toBe(200);
      expect(acked.attestations.length).toBeGreaterThan(0);

      // The restarted process rejoins: same keys, serves what was written while it was down.
      a = await startServe(serveArgs, { store: url, env });
      expect((await call(a, 'GET', '/healthz')).body.issuer).toBe((await call(b, 'GET', '/healthz')).body.issuer);
      const latest = acked.agents[acked.agents.length - 1];
      expect((await call(a, 'GET', '/api/agent/v1/me', { key: latest.apiKey })).status).toBe(200);
      const blob = acked.blobs[acked.blobs.length - 1];
      expect((await call(a, 'GET', `/api/cas/${sha256Hex(blob)}`)).raw.equals(blob)).toBe(true);
      expect((await ledgerOf(url)).problems).toEqual([]);

      // The log the two wrote through one appender lock is whole (audited by the CLI, on the live store).
      await untilTrue(
        async () => {
          const head = (await call(a, 'GET', '/api/attestations/head')).body;
          return head.size > 0;
        },
        10_000,
        'a log head',
      );
      const audit = await runCli(['--json', 'log', 'check', '--store', url], { env });
      expect(audit.code, audit.stdout + audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true, ledger: { ok: true } });
    });
  });

  describe('limits across processes', () => {
    let url: string;
    let a: RunningNode;
    let b: RunningNode;
    beforeAll(async () => {
      url = freshSchemaUrl('e2e');
      // A bucket of 30 that refills one token in 1000 s: no refill during the test.
      const args = ['--trust-proxy', '--public-url', 'https://akas.example.org', '--rate-limit', '30:0.001', '--registration-cap', '5'];
      a = await startServe(args, { store: url, env });
      b = await startServe(args, { store: url, env });
    }, 60_000);
    afterAll(() => stopAndDrop([a, b], url));

    it('limit a burst split between the two processes as one token bucket', async () => {
      const ip = '10.88.0.1';
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => call(i % 2 ? a : b, 'GET', '/api/agent/v1/wakeup', { ip })));
      expect(answers.filter((r) => r.status === 200)).toHaveLength(30);
      const limited = answers.filter((r) => r.status === 429);
      expect(limited).toHaveLength(20);
      for (const r of limited) expect(r.body).toMatchObject({ code: 'rate_limited', scope: 'per-ip' });
      // Another caller has a bucket of its own.
      expect((await call(a, 'GET', '/api/agent/v1/wakeup', { ip: '10.88.0.2' })).status).toBe(200);
    });

    it('hold the per-day registration cap across both processes', async () => {
      const ip = '10.88.1.1';
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2 ? a : b, 'POST', '/api/agent/v1/register', { ip })));
      expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
      const capped = answers.filter((r) => r.status !== 200);
      expect(capped).toHaveLength(7);
      for (const r of capped) expect(r.body).toMatchObject({ code: 'rate_limited', scope: 'per-ip-per-day', cap: 5 });
    });
  });

  describe('the database server stopped and restarted under load', () => {
    // A cluster of its own: the test stops its server, which the other suites share otherwise.
    let cluster: TempCluster | undefined;
    let node: RunningNode | undefined;
    afterAll(async () => {
      await node?.stop();
      await cluster?.stop();
    });

    it('answers 503 storage_unavailable (never 500, never 200) while PostgreSQL is down, resumes once it is back, and loses nothing it ' +
      'acknowledged', async () => {
      cluster = await startTempCluster({ fsync: false });
      const url = `${cluster.url}?schema=faults`;
      const args = ['--trust-proxy', '--public-url', 'https://akas.example.org', '--registration-cap', '100000'];
      node = await startServe(args, { store: url, env });
      const load = new Workload(node.url, seeded(Date.now() % 1e9), 16);
      try {
        for (let i = 0; i < 6; i++) await load.seedAgent();
        const run = load.run(FAULT_MIX, 8);
        try {
          const acked = () => Object.values(load.acked).reduce((n, xs) => n + xs.length, 0);
          await untilTrue(async () => acked() > 40, 60_000, 'writes before the server stops');
          await cluster.kill();
          const killedAt = load.answers.length;
          await untilTrue(async () => load.answers.some((x) => x.status >= 500), 30_000, 'a write refused while the server is down').catch((e) => {
            const byStatus: Record<string, number> = {};
            for (const x of load.answers.slice(killedAt))
              byStatus[`${x.op} ${x.status} ${x.code ?? ''}`] = (byStatus[`${x.op} ${x.status} ${x.code ?? ''}`] ?? 0) + 1;
            throw new Error(`${(e as Error).message}; answers since: ${JSON.stringify(byStatus)}\n${node!.stderr().slice(-3000)}`);
          });
          const h = await call(node, 'GET', '/healthz');
          expect.soft(h.status).toBe(503);
          expect.soft(h.body?.storage).toMatchObject({ ok: false, cause: 'unavailable', where: 'database' });
          const put = await call(node, 'POST', '/api/cas', { raw: randomBytes(3000) });
          expect.soft(put.status).toBe(503);
          expect.soft(put.body).toMatchObject({ code: 'storage_unavailable', storage: { cause: 'unavailable' } });
          await cluster.restart();
          await untilTrue(async () => (await call(node!, 'GET', '/healthz')).status === 200, 30_000, '/healthz ok once the server is back');
          const before = acked();
          await untilTrue(async () => acked() > before + 30, 60_000, 'writes acknowledged after the server came back');
        } finally {
          run.stop();
          await run.done;
        }
        // Restarted on the same database: every acknowledged write is there, the audit is clean.
        await node.stop();
        node = await startServe(args, { store: url, env });
        expect((await call(node, 'GET', '/api/agent/v1/me', { key: load.acked.agents.at(-1)!.apiKey })).status).toBe(200);
        await node.stop();
        node = undefined;
        await assertAcknowledgedPresent(url, load.acked);
        await assertAuditClean(url, load.acked, env);
        const bad = load.answers.filter((x) => x.status >= 500 && x.code !== 'storage_unavailable');
        expect(
          bad.map((x) => `${x.op} ${x.status} ${x.code ?? ''}`),
          'answers other than 503 storage_unavailable among the 5xx',
        ).toEqual([]);
      } finally {
        await load.close();
      }
    }, 180_000);
  });
});
