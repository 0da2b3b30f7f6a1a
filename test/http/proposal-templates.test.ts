// What a proposal looks like (issue 23, item 3): a complete template per kind that a fresh
// node takes as it is, a dry run that lists every error at once with what each field holds,
// and the proposal section of GET /api/agent/v1/schemas.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROPOSAL_KINDS, type ProposalKind } from '../../src/core/index.js';
import { PROPOSAL_TEMPLATES } from '../../src/domain/proposals/templates.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, proposeAs, type Agent } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => node.close());

const dryRun = async (kind: string, payload: unknown, a?: Agent) => {
  const r = await node.app.inject({
    method: 'POST',
    url: '/api/knowledge/proposals/dry-run',
    payload: { kind, payload },
    headers: a ? bearer(a.apiKey) : {},
    remoteAddress: a?.ip,
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

const fields = (r: { errors: Array<{ field: string }> }) => r.errors.map((e) => e.field);

describe('proposal templates', () => {
  it('are each taken by a fresh node as they are (the artifact before its eval result)', async () => {
    const order: ProposalKind[] = ['artifact', ...PROPOSAL_KINDS.filter((k) => k !== 'artifact')];
    for (const kind of order) {
      const a = await agent(node);
      const dry = await dryRun(kind, PROPOSAL_TEMPLATES[kind], a);
      expect(dry, kind).toMatchObject({ valid: true, errors: [], ignored: [] });
      const r = await proposeAs(node, a, kind, PROPOSAL_TEMPLATES[kind]);
      expect(r.statusCode, `${kind}: ${r.body}`).toBe(200);
    }
  });

  it("are served with each kind's described schema by GET /api/agent/v1/schemas", async () => {
    const s = (await node.app.inject({ url: '/api/agent/v1/schemas' })).json();
    expect(Object.keys(s.proposals).sort()).toEqual([...PROPOSAL_KINDS].sort());
    expect(s.proposals.artifact.template).toEqual(PROPOSAL_TEMPLATES.artifact);
    expect(s.proposals.artifact.schema.properties.payload.properties.provenance.properties.createdAt.description).toMatch(/milliseconds/);
    expect(s.proposals.capability.proposeUrl).toMatch(/\/api\/knowledge\/cap\/propose$/);
  });
});

describe('the propose dry run', () => {
  it('lists every error of a payload at once, each with what its field holds', async () => {
    const brief = structuredClone(PROPOSAL_TEMPLATES.brief) as { brief: Record<string, unknown> & { levels: Record<string, unknown> } };
    brief.brief.version = '2026-11-25';
    brief.brief.levels.core = 'one string, not an array';
    delete brief.brief.title;
    const r = await dryRun('brief', brief);
    expect(r.valid).toBe(false);
    expect(fields(r)).toEqual(expect.arrayContaining(['brief.version', 'brief.levels.core', 'brief.title']));
    const version = r.errors.find((e: { field: string }) => e.field === 'brief.version');
    expect(version.fieldDescription).toMatch(/YYYY-MM/);
    expect(r.errors.find((e: { field: string }) => e.field === 'brief.levels.core').fieldDescription).toMatch(/array/);
  });

  it('names every missing field of a capability in one answer, nested ones included', async () => {
    const r = await dryRun('capability', { path: '/tools/x', title: 'T', spec: 'S', payload: { trigger: 't' }, colour: 'blue' });
    expect(fields(r)).toEqual(expect.arrayContaining(['payload.alternative', 'payload.cost', 'payload.whenNot', 'payload.recipe']));
    expect(r.ignored).toEqual(['colour']);
    for (const e of r.errors) expect(e.fieldDescription, e.field).toBeTruthy();
  });

  it('checks what the schema cannot: JSON Logic, a pending holder of the path, an artifact to evaluate, the caller', async () => {
    const graph = structuredClone(PROPOSAL_TEMPLATES.graph);
    graph.payload.branches[0].condition = { '>': [{ var: 'weight' }, 1] };
    const logic = (await dryRun('graph', graph)).errors.find((e: { field: string }) => e.field.startsWith('payload.branches[0].condition'));
    expect(logic.reason).toMatch(/inputsRequired/);
    expect(logic.fieldDescription).toMatch(/JSON Logic/);

    const a = await agent(node);
    expect((await proposeAs(node, a, 'capability', PROPOSAL_TEMPLATES.capability)).statusCode).toBe(200);
    const taken = await dryRun('capability', { ...PROPOSAL_TEMPLATES.capability, title: 'Another' }, a);
    expect(taken.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'path', reason: expect.stringContaining('id_conflict') })]));

    const orphan = await dryRun('eval-result', { ...PROPOSAL_TEMPLATES['eval-result'], artifactPath: '/models/none' }, a);
    expect(fields(orphan)).toContain('artifactPath');

    const anonymous = await dryRun('spec-sharpening', PROPOSAL_TEMPLATES['spec-sharpening']);
    expect(anonymous.errors).toEqual([expect.objectContaining({ field: '(caller)' })]);
    const uncalibrated = await agent(node, null);
    expect((await dryRun('spec-sharpening', PROPOSAL_TEMPLATES['spec-sharpening'], uncalibrated)).errors[0].reason).toMatch(/calibrat/);
  });

  it('stores and charges nothing, and says what proposing would do', async () => {
    const a = await agent(node, 0.8, 20);
    const r = await dryRun('capability', PROPOSAL_TEMPLATES.capability, a);
    expect(r).toMatchObject({ valid: true, would: { path: '/tools/my-capability', deposit: 2, tier: 'strong', requiredJudgments: 3 } });
    const me = (await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(a.apiKey) })).json();
    expect(me).toMatchObject({ balance: 20, reservedBalance: 0 });
    expect((await proposeAs(node, a, 'capability', PROPOSAL_TEMPLATES.capability)).statusCode).toBe(200);
  });

  it('refuses an unknown kind', async () => {
    const r = await node.app.inject({ method: 'POST', url: '/api/knowledge/proposals/dry-run', payload: { kind: 'poem', payload: {} } });
    expect(r.statusCode).toBe(400);
    expect(r.json().code).toBe('invalid_kind');
  });
});
