// Issue 30, finding 7: `akas mcp --stdio` signed a v1 judgment (no content hash) when the node's
// proposal named no contentSha256, so a node could strip the binding and the judge would vouch
// for content it never named. The proxy of `akas mcp --stdio` (its real MCP client and the CLI's
// real client) talks here, over HTTP, to a node listening on 127.0.0.1 through a pass-through
// that strips contentSha256 from proposal details, as such a node would answer; and, as the
// control, to the node directly. `akas judge` refuses the same way, by the same rule (issue 54).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AkasClient } from '../../cli/kit/client.js';
import { commandGroups } from '../../cli/commands/index.js';
import { readJournal } from '../../cli/commands/journal/journal.js';
import { McpStdioProxy } from '../../cli/commands/discovery/mcp-stdio.js';
import { type SavedIdentity, saveIdentity } from '../../cli/kit/profile.js';
import { run } from '../../cli/program.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { Capture } from '../helpers/cli.js';
import { judgeCommand } from '../helpers/e2e.js';
import { agent, proposeAs, SCORES_HIGH, type Agent } from '../helpers/flows.js';

let node: TestNode;
let direct: string;
let stripping: string;
let strip: Server;

// The judge tool journals what it signs in the profile's folder (cli/commands/journal/journal.ts): a temp config folder, never the user's.
let configDir: string;
beforeAll(async () => {
  configDir = mkdtempSync(join(tmpdir(), 'akas-mcp-config-'));
  process.env.AKAS_CONFIG_DIR = configDir;
  node = await testNode();
  direct = await node.app.listen({ host: '127.0.0.1', port: 0 });
  // Every request passed on as it is; a proposal's detail answered without its contentSha256.
  strip = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const upstream = await fetch(`${direct}${req.url}`, { method: req.method, headers, body });
    let bytes = Buffer.from(await upstream.arrayBuffer());
    if (req.method === 'GET' && /^\/api\/knowledge\/proposals\/[^/?]+$/.test(req.url ?? '') && upstream.status === 200) {
      const detail = JSON.parse(bytes.toString('utf8'));
      delete detail.contentSha256;
      bytes = Buffer.from(JSON.stringify(detail));
    }
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
    });
    res.writeHead(upstream.status, { ...out, 'content-length': String(bytes.length) });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => strip.listen(0, '127.0.0.1', resolve));
  stripping = `http://127.0.0.1:${(strip.address() as AddressInfo).port}`;
});
afterAll(async () => {
  delete process.env.AKAS_CONFIG_DIR;
  rmSync(configDir, { recursive: true, force: true });
  await new Promise<void>((resolve) => strip.close(() => resolve()));
  await node.close();
});

const identityOf = (a: Agent, baseUrl: string): SavedIdentity => ({
  baseUrl,
  tag: a.tag,
  apiKey: a.apiKey,
  recoveryToken: a.recoveryToken,
  signing: a.signing,
  createdAt: 0,
});

/** `akas mcp --stdio`'s proxy for this agent, talking to the node at baseUrl. */
function stdioProxy(a: Agent, baseUrl: string) {
  const identity = identityOf(a, baseUrl);
  return new McpStdioProxy({
    endpoint: `${baseUrl}/api/mcp`,
    profile: 'judge',
    identity,
    client: new AkasClient({ baseUrl, apiKey: a.apiKey }),
    keepClaimSecret: () => ({ error: 'not kept in this test' }),
    log: () => undefined,
  });
}

const judgmentsOf = async (id: string) => (await node.app.inject({ url: `/api/knowledge/proposals/${id}` })).json().judgmentCount as number;

describe('akas mcp --stdio signs only what the node names (finding 7)', () => {
  it('refuses to sign a proposal whose detail names no contentSha256, with a tool error saying so, and sends nothing', async () => {
    const proposer = await agent(node);
    const id = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 1))).json().proposalId as string;
    const judge = await agent(node, 0.9, 0);
    const proxy = stdioProxy(judge, stripping);
    try {
      const r = await proxy.callTool('judge', { id, scores: SCORES_HIGH, rationale: 'Looks right.' });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({
        code: 'content_not_named',
        proposalId: id,
        error: expect.stringContaining("the node did not name the proposal's content"),
      });
      expect(await judgmentsOf(id)).toBe(0);
    } finally {
      await proxy.close();
    }
    // The control: the same judge through the node itself signs v2 and is recorded.
    const honest = stdioProxy(judge, direct);
    try {
      const r = await honest.callTool('judge', { id, scores: SCORES_HIGH, rationale: 'Looks right.' });
      expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        judgmentRecorded: true,
        contentSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        signedLocally: { payloadType: 'akas.judgment.v2' },
      });
      expect(await judgmentsOf(id)).toBe(1);
    } finally {
      await honest.close();
    }
  });

  it("passes the node's untrustedContent mark on untouched", async () => {
    const reader = await agent(node, 0.9, 0);
    const proxy = stdioProxy(reader, direct);
    try {
      const r = await proxy.callTool('queue', {});
      expect(r.structuredContent).toMatchObject({ untrustedContent: { authoredBy: 'other agents', fields: ['items'] } });
    } finally {
      await proxy.close();
    }
  });
});

describe('akas judge signs only what the node names (issue 54)', () => {
  it('refuses, before signing or sending, a proposal whose detail names no contentSha256, as akas mcp --stdio does', async () => {
    const proposer = await agent(node);
    const id = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 2))).json().proposalId as string;
    const judge = await agent(node, 0.9, 0);
    saveIdentity('judge-cli', identityOf(judge, stripping));
    const akas = async (args: string[], baseUrl: string) => {
      const stdout = new Capture();
      const stderr = new Capture();
      const code = await run(['--json', '--profile', 'judge-cli', ...args], { stdout, stderr }, commandGroups, { AKAS_BASE_URL: baseUrl });
      process.exitCode = 0;
      return { code, body: stdout.text ? JSON.parse(stdout.text) : undefined, stderr: stderr.text };
    };
    const refused = await akas(judgeCommand(id, 'Looks right.'), stripping);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.body).toMatchObject({ code: 'content_not_named', proposalId: id });
    expect(await judgmentsOf(id)).toBe(0);
    // Nothing was signed: the journal holds no judgment of it.
    expect(readJournal('judge-cli').entries.filter((e) => e.subject === id)).toEqual([]);
    // The control: the same command through the node itself signs v2 and is recorded.
    saveIdentity('judge-cli', identityOf(judge, direct));
    const signed = await akas(judgeCommand(id, 'Looks right.'), direct);
    expect(signed.code, signed.stderr).toBe(0);
    expect(await judgmentsOf(id)).toBe(1);
  });
});
