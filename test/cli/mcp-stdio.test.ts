// The proxy of `akas mcp --stdio` (PROTOCOL 12.5) over a stand-in for the node's MCP tools: what
// it changes in the listing, the guard on the profile's secrets both ways, the claimSecret kept
// in the profile, and how a failed exchange answers. The whole server, over stdio against a real
// node, is test/e2e/mcp-stdio.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AkasClient } from '../../cli/kit/client.js';
import { localListing, McpStdioProxy, type NodeTools, type ToolResult } from '../../cli/commands/discovery/mcp-stdio.js';
import type { SavedIdentity } from '../../cli/kit/profile.js';
import { generateKeyPair } from '../../src/core/index.js';

const identity: SavedIdentity = {
  baseUrl: 'http://node.test',
  tag: 'ak_tester',
  apiKey: `ak_${'Q'.repeat(40)}`,
  recoveryToken: `rt_${'7'.repeat(48)}`,
  signing: generateKeyPair(),
  createdAt: 0,
};

const ok = (structured: Record<string, unknown>): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

function proxyOver(upstream: Partial<NodeTools>, opts: { kept?: Array<[string, string]>; keepFails?: boolean } = {}) {
  const calls: Array<[string, Record<string, unknown>]> = [];
  const logs: string[] = [];
  const tools: NodeTools = {
    listTools: async () => [],
    close: async () => undefined,
    ...upstream,
    callTool: async (name, args) => (calls.push([name, args]), upstream.callTool ? upstream.callTool(name, args) : ok({})),
  };
  const proxy = new McpStdioProxy({
    endpoint: 'http://node.test/api/mcp',
    profile: 'p',
    identity,
    client: {} as AkasClient,
    keepClaimSecret: (id, cs) => (opts.keepFails ? { error: 'disk full' } : (opts.kept?.push([id, cs]), { path: '/profile.json' })),
    log: (l) => logs.push(l),
    upstream: tools,
  });
  return { proxy, calls, logs };
}

// The judge tool journals what it signs in the profile's folder (cli/commands/journal/journal.ts): a temp config folder, never the user's.
let configDir: string;
beforeAll(() => {
  configDir = mkdtempSync(join(tmpdir(), 'akas-mcp-config-'));
  process.env.AKAS_CONFIG_DIR = configDir;
});
afterAll(() => {
  delete process.env.AKAS_CONFIG_DIR;
  rmSync(configDir, { recursive: true, force: true });
});

describe('akas mcp --stdio: the proxy', () => {
  it('lists the judge tool without signature or privateKey, the propose tools keeping the claimSecret', () => {
    const judge = {
      name: 'judge',
      description: 'node text',
      inputSchema: {
        type: 'object' as const,
        properties: { id: {}, scores: {}, rationale: {}, signature: {}, contentSha256: {}, dryRun: {} },
        required: ['id', 'scores', 'rationale'],
      },
    };
    const propose = { name: 'propose_brief', inputSchema: { type: 'object' as const, properties: { title: {}, includeClaimSecret: { type: 'boolean' } } } };
    const [j, p] = localListing([judge, propose], identity);
    expect(Object.keys(j.inputSchema.properties!)).toEqual(['id', 'scores', 'rationale', 'contentSha256', 'dryRun']);
    expect(j.description).toContain('Signed here');
    expect((p.inputSchema.properties!.includeClaimSecret as { description: string }).description).toContain('keeps it in your saved profile');
    // Anonymous: the node's listing as it is (it has no judge tool for an anonymous caller anyway).
    expect(localListing([judge], undefined)[0]).toBe(judge);
  });

  it('refuses arguments holding a secret of the profile, sending nothing', async () => {
    const { proxy, calls } = proxyOver({});
    for (const secret of [identity.apiKey, identity.signing.privateKey.toUpperCase(), identity.recoveryToken]) {
      const r = await proxy.callTool('search', { q: `look ${secret}` });
      expect(r.structuredContent).toMatchObject({ code: 'secret_in_arguments' });
      expect(JSON.stringify(r)).not.toContain(secret);
    }
    expect(calls).toEqual([]);
  });

  it('cuts a secret of the profile out of any result', async () => {
    const { proxy, logs } = proxyOver({ callTool: async () => ok({ leaked: `key ${identity.apiKey.toLowerCase()} and ${identity.signing.privateKey}` }) });
    const r = await proxy.callTool('me', {});
    expect(JSON.stringify(r)).not.toMatch(new RegExp(`${identity.apiKey}|${identity.signing.privateKey}`, 'i'));
    expect(r.structuredContent!.leaked).toBe('key [withheld by akas mcp --stdio] and [withheld by akas mcp --stdio]');
    expect(logs.join('\n')).toContain('cut out');
  });

  it('keeps the claimSecret in the profile and withholds it unless asked', async () => {
    const kept: Array<[string, string]> = [];
    const answer = () => ok({ proposalId: 'cprop_0123456789abcdef', claimSecret: `cs_${'1'.repeat(64)}`, claimSecretWithheld: undefined });
    const { proxy, calls } = proxyOver({ callTool: async () => answer() }, { kept });
    const plain = await proxy.callTool('propose_capability', { title: 't' });
    expect(calls[0]).toEqual(['propose_capability', { title: 't', includeClaimSecret: true }]);
    expect(plain.structuredContent).toMatchObject({
      proposalId: 'cprop_0123456789abcdef',
      claimSecretWithheld: true,
      claimSecretNote: expect.stringContaining('akas recover --proposal cprop_0123456789abcdef'),
    });
    expect(JSON.stringify(plain)).not.toContain('cs_');
    const asked = await proxy.callTool('propose_capability', { title: 't', includeClaimSecret: true });
    expect(asked.structuredContent).toMatchObject({ claimSecret: `cs_${'1'.repeat(64)}`, claimSecretSaved: true });
    expect(kept).toEqual([
      ['cprop_0123456789abcdef', `cs_${'1'.repeat(64)}`],
      ['cprop_0123456789abcdef', `cs_${'1'.repeat(64)}`],
    ]);
    const { proxy: failing } = proxyOver({ callTool: async () => answer() }, { keepFails: true });
    expect((await failing.callTool('propose_capability', {})).structuredContent!.claimSecretNote).toContain('could not be kept in your profile (disk full)');
  });

  it('judge: refuses a privateKey, and passes a dry run and malformed arguments on unsigned for the node to answer', async () => {
    const { proxy, calls } = proxyOver({ callTool: async () => ok({ ok: true }) });
    const refused = await proxy.callTool('judge', { id: 'cprop_0123456789abcdef', privateKey: 'ab'.repeat(32) });
    expect(refused.structuredContent).toMatchObject({ code: 'validation_failed', errors: [{ field: 'privateKey' }] });
    await proxy.callTool('judge', { id: 'cprop_0123456789abcdef', scores: {}, rationale: 'r', dryRun: true, signature: 'x' });
    await proxy.callTool('judge', { id: 'not-an-id', scores: { accuracy: 1 }, rationale: 'r' });
    expect(calls).toEqual([
      ['judge', { id: 'cprop_0123456789abcdef', scores: {}, rationale: 'r', dryRun: true }],
      ['judge', { id: 'not-an-id', scores: { accuracy: 1 }, rationale: 'r' }],
    ]);
  });

  it("answers a failed exchange as the tool error unreachable, and passes the node's JSON-RPC refusals on", async () => {
    const { proxy } = proxyOver({ callTool: async () => Promise.reject(new Error(`fetch failed for ${identity.apiKey}`)) });
    const r = await proxy.callTool('suggest', { q: 'x' });
    expect(r.structuredContent).toMatchObject({ code: 'unreachable', error: expect.stringContaining('fetch failed for [withheld]') });
    const unknown = Object.assign(new Error('Unknown tool nope'), { code: -32602 });
    const { proxy: refusing } = proxyOver({ callTool: async () => Promise.reject(unknown) });
    await expect(refusing.callTool('nope', {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool nope') });
    const { proxy: down } = proxyOver({ listTools: async () => Promise.reject(new Error('ECONNREFUSED')) });
    await expect(down.listTools()).rejects.toThrow(/could not be listed.*ECONNREFUSED/);
  });
});
