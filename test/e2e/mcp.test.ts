// Both official MCP clients against a running `akas serve` (PROTOCOL 12): the v2 client
// (@modelcontextprotocol/client, negotiating 2026-07-28, and with its default 2025 handshake) and
// the v1 SDK (@modelcontextprotocol/sdk). Each lists the tools anonymously and searches, then
// with a Bearer reads me and dry-runs a judgment; a judgment with a bad signature comes back as
// the invalid_signature tool error.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningNode } from '../helpers/e2e.js';
import { calibrated, ok } from '../helpers/remote.js';

type Json = Record<string, any>;
type AnyClient = {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
  close(): Promise<void>;
};

let node: RunningNode;
let agent: Json;
let proposals: string[];

const call = (method: string, path: string, body?: unknown, apiKey?: string): Promise<Json> => ok(node, method, path, body, apiKey);
const calibratedAgent = () => calibrated(node);

async function connect(generation: string, apiKey?: string): Promise<AnyClient> {
  const url = new URL(`${node.url}/api/mcp`);
  const requestInit = apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : undefined;
  if (generation === 'v1') {
    const client = new ClientV1({ name: 'e2e', version: '1.0.0' });
    await client.connect(new TransportV1(url, { requestInit }));
    return client as unknown as AnyClient;
  }
  const client = new ClientV2({ name: 'e2e', version: '1.0.0' }, generation === 'v2' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new TransportV2(url, { requestInit }));
  expect(client.getNegotiatedProtocolVersion()).toBe(generation === 'v2' ? '2026-07-28' : '2025-11-25');
  return client as unknown as AnyClient;
}

beforeAll(async () => {
  node = await startServe();
  agent = await calibratedAgent();
  const proposer = await calibratedAgent();
  proposals = [];
  for (const slug of ['one', 'two', 'three']) {
    const p = await call(
      'POST',
      '/api/knowledge/cap/propose',
      {
        path: `/e2e/mcp-${slug}`,
        title: `MCP e2e ${slug}`,
        spec: 'A capability to judge.',
        payload: { trigger: 't', alternative: 'a', cost: 'c', whenNot: 'w', recipe: 'r' },
      },
      proposer.apiKey,
    );
    proposals.push(p.proposalId);
  }
});
afterAll(() => node?.stop());

describe.each(['v2', 'v2-2025', 'v1'])('the %s client against akas serve', (generation) => {
  it('lists tools anonymously and searches, then with a Bearer reads me, dry-runs a judgment and gets invalid_signature', async () => {
    const id = proposals[['v2', 'v2-2025', 'v1'].indexOf(generation)];
    const anonymous = await connect(generation);
    const names = (await anonymous.listTools()).tools.map((t) => t.name);
    expect(names).toContain('search');
    expect(names).not.toContain('judge');
    const found = await anonymous.callTool({ name: 'search', arguments: { q: 'capability' } });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toMatchObject({ query: 'capability', items: expect.any(Array) });
    await anonymous.close();

    const authed = await connect(generation, agent.apiKey);
    expect((await authed.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['me', 'judge', 'propose_capability', 'queue']));
    const me = await authed.callTool({ name: 'me', arguments: {} });
    expect(me.structuredContent).toMatchObject({ tag: agent.tag, tier: 'frontier' });
    const scores = { accuracy: 0.8, clarity: 0.8, compression: 0.8, sources: 0.8 };
    const dry = await authed.callTool({ name: 'judge', arguments: { id, scores, rationale: 'Fine.', dryRun: true } });
    expect(dry.structuredContent).toMatchObject({ ok: true, dryRun: true, would: { proposalId: id }, signingPayload: expect.stringContaining(agent.tag) });
    const bad = await authed.callTool({ name: 'judge', arguments: { id, scores, rationale: 'Fine.', signature: '0'.repeat(128) } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ code: 'invalid_signature' });
    await authed.close();
  });
});
