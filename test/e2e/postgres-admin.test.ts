// `akas store migrate` and `akas store copy` with the built binary: a LevelDB node with agents,
// a published proposal, credentials, log entries and blobs is moved into PostgreSQL, the copy
// is checked (counts, ledger, log), and `akas serve --store` then serves the same node: the
// same issuer, the same keys and bytes.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { LATEST_VERSION, openPgStore } from '../../src/store/postgres/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { runCli, startServe, tempDir } from '../helpers/e2e.js';
import { describePg, dropSchema, freshSchemaUrl } from '../helpers/postgres.js';
import { call, calibrated, judgeBody, untilTrue, type Agent } from '../helpers/remote.js';

const SECRET = `admin-node-secret-${randomBytes(8).toString('hex')}`;
const schemas: string[] = [];
const fresh = () => {
  const url = freshSchemaUrl('adm');
  schemas.push(url);
  return url;
};

afterAll(async () => {
  for (const url of schemas) {
    const store = await openPgStore(url, { migrate: false }).catch(() => undefined);
    if (store) {
      await dropSchema(store);
      await store.close();
    }
  }
});

describePg('akas store (e2e)', () => {
  it('migrate creates the schema, reports each version, then finds nothing to do', async () => {
    const url = fresh();
    const first = await runCli(['--json', 'store', 'migrate', '--store', url]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      from: 0,
      to: LATEST_VERSION,
      applied: [{ version: 1 }, { version: 2 }, { version: 3 }],
      search: { indexed: 0 },
    });
    const again = await runCli(['store', 'migrate'], { env: { AKAS_STORE: url } });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`schema at version ${LATEST_VERSION}, nothing to apply`);
    const usage = await runCli(['store', 'migrate', '--store', '/tmp/not-a-url']);
    expect(usage.code).toBe(2);
    const down = await runCli(['--json', 'store', 'migrate', '--store', 'postgres://nobody:hunter2@127.0.0.1:9/none']);
    expect(down.code).toBe(2);
    expect(down.stdout + down.stderr).not.toContain('hunter2');
  });

  it('copy moves a stopped LevelDB node into PostgreSQL, checks it, and akas serve --store serves the same node', async () => {
    const dataDir = tempDir('akas-e2e-copy-');
    const level = await startServe(['--allow-same-ip'], { dataDir });
    let agents: Agent[];
    let proposalId: string;
    const blobs = [randomBytes(3000), randomBytes(2 * 1024 * 1024 + 17)];
    let issuer: string;
    try {
      issuer = (await call(level, 'GET', '/healthz')).body.issuer;
      agents = [];
      for (let i = 0; i < 4; i++) agents.push(await calibrated(level));
      const proposed = await call(level, 'POST', '/api/knowledge/propose', { key: agents[0].apiKey, body: samplePayload('brief', 7) });
      expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
      proposalId = proposed.body.proposalId;
      for (const j of agents.slice(1))
        expect((await call(level, 'POST', `/api/knowledge/judge/${proposalId}`, { key: j.apiKey, body: judgeBody(j, proposalId) })).status).toBe(200);
      for (const b of blobs) expect((await call(level, 'POST', '/api/cas', { raw: b })).status).toBe(200);
      await untilTrue(async () => (await call(level, 'GET', `/api/attestations?proposalId=${proposalId}`)).body.items.length >= 4, 15_000, 'the log entries');
      await call(level, 'GET', '/api/log/checkpoint');
    } finally {
      await level.stop({ keepData: true });
    }

    const url = fresh();
    const env = { AKAS_NODE_SECRET: SECRET };
    const copy = await runCli(['--json', 'store', 'copy', '--data', dataDir, '--store', url], { env, timeoutMs: 120_000 });
    expect(copy.code, copy.stdout + copy.stderr).toBe(0);
    const report = JSON.parse(copy.stdout);
    expect(report).toMatchObject({ ok: true, issuer, problems: [], ledger: { ok: true }, log: { ok: true }, blobs: { source: 2, target: 2 } });
    expect(report.log.entries).toBeGreaterThanOrEqual(4);
    const agentsSpace = report.spaces.find((s: { space: string }) => s.space === 'agents');
    expect(agentsSpace).toEqual({ space: 'agents', source: 4, target: 4 });
    for (const s of report.spaces) expect(s.target).toBe(s.source);
    // The published node is in the target's text index: searchable at once.
    expect(report.search).toEqual({ indexed: 1 });

    // Into a database that holds data: refused, nothing touched.
    const twice = await runCli(['store', 'copy', '--data', dataDir, '--store', url], { env });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('already holds data');
    // Without the secret: refused.
    const noSecret = await runCli(['store', 'copy', '--data', dataDir, '--store', fresh()]);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('AKAS_NODE_SECRET');

    const pg = await startServe([], { store: url, env });
    try {
      expect((await call(pg, 'GET', '/healthz')).body.issuer).toBe(issuer!);
      for (const agent of agents!) expect((await call(pg, 'GET', '/api/agent/v1/me', { key: agent.apiKey })).status).toBe(200);
      const detail = (await call(pg, 'GET', `/api/knowledge/proposals/${proposalId!}`)).body;
      expect(detail).toMatchObject({ status: 'published', judgmentCount: 3 });
      for (const b of blobs) expect((await call(pg, 'GET', `/api/cas/${sha256Hex(b)}`)).raw.equals(b)).toBe(true);
      const found = (await call(pg, 'GET', '/api/knowledge/search?q=exponentialy')).body.items.map((i: { path: string }) => i.path);
      expect(found).toEqual(['/distributed-systems/retries-with-backoff-x7']);
      // The credentials the LevelDB node issued, served from PostgreSQL, verify offline against its issuer.
      const bundle = await call(pg, 'GET', `/api/knowledge/proposals/${proposalId!}/bundle`);
      expect(bundle.status).toBe(200);
      const file = join(dataDir, 'bundle.json');
      writeFileSync(file, bundle.raw);
      const verified = await runCli(['verify', 'bundle', file, '--issuer', issuer!]);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    } finally {
      await pg.stop();
    }
    const audit = await runCli(['--json', 'log', 'check', '--store', url], { env });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
