// `akas mcp --stdio` (PROTOCOL 12.5; the security review's finding 9) driven by the official
// MCP clients over stdio: the built binary launched as each agent's local MCP server, against a
// real `akas serve`. A proposer lists the tools, reads and proposes; three judges, each through
// its own stdio server (the v2 client negotiating 2026-07-28, the v2 client's 2025 handshake,
// the v1 SDK), judge the proposal to published; the judgments verify offline as v2 (akas verify
// bundle), and no message of any session, nor the servers' stderr, holds an api key, a private
// key or a recovery token (nor the claimSecret not asked for).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { PassThrough } from 'node:stream';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, CLI, defaultConfigDir, runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

type Json = Record<string, any>;
type Generation = 'v2' | 'v2-2025' | 'v1';
interface Session {
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
  listTools(): Promise<{ tools: Array<{ name: string; description?: string; inputSchema: Json }> }>;
  close(): Promise<void>;
}

let node: RunningNode;
let work: string;
/** Every JSON-RPC message of every recorded session, both ways, and each server's stderr. */
const messages: string[] = [];
const stderrs: Array<() => string> = [];
const PROFILES = ['proposer', 'j1', 'j2', 'j3'];
const SCORES = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };

/** The saved identity of a profile (one node per config folder). */
function saved(profile: string): Json {
  const slug = node.url.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');
  return JSON.parse(readFileSync(join(defaultConfigDir(), 'profiles', profile, `${slug}.json`), 'utf8'));
}

const launches = new Map<string, { command: string; args: string[]; env?: Record<string, string> }>();

/** The stdio launch `akas mcp --json` prints for a profile (the built CLI, run as a user runs it). */
async function printedLaunch(profile: string) {
  if (!launches.has(profile)) {
    const r = await runCli(['--base-url', node.url, '--profile', profile, '--json', 'mcp']);
    expect(r.code, r.stderr).toBe(0);
    const { command, args, env } = JSON.parse(r.stdout).stdio;
    expect([command, args.slice(0, 1)]).toEqual([process.execPath, [CLI]]);
    expect(env).toEqual({ AKAS_CONFIG_DIR: defaultConfigDir() });
    launches.set(profile, { command, args, env });
  }
  return launches.get(profile)!;
}

/** The built `akas mcp --stdio` of a profile, connected with the client of that generation, every message recorded. */
async function connect(profile: string, generation: Generation, record = messages): Promise<Session> {
  // Launched as the configuration `akas mcp` prints says, with what a desktop client passes on
  // (the SDK's default environment, a PATH without node or akas, the configuration's env).
  const launch = await printedLaunch(profile);
  const params = {
    command: launch.command,
    args: launch.args,
    env: { ...getDefaultEnvironment(), PATH: '/nonexistent', ...launch.env, NO_COLOR: '1' },
    stderr: 'pipe' as const,
  };
  const transport = generation === 'v1' ? new StdioV1(params) : new StdioV2(params);
  let err = '';
  (transport.stderr as PassThrough).on('data', (c: Buffer) => (err += c.toString()));
  stderrs.push(() => err);
  // Both directions: what the client sends, and what reaches its onmessage.
  const send = transport.send.bind(transport);
  transport.send = ((m: unknown, o?: unknown) => (
    record.push(JSON.stringify(m)), (send as (a: unknown, b?: unknown) => Promise<void>)(m, o)
  )) as typeof transport.send;
  let handler: ((m: unknown, extra?: unknown) => void) | undefined;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler && ((m: unknown, extra?: unknown) => (record.push(JSON.stringify(m)), handler!(m, extra))),
    set: (h) => (handler = h),
  });
  if (generation === 'v1') {
    const client = new ClientV1({ name: 'e2e-stdio', version: '1.0.0' });
    await client.connect(transport as StdioV1);
    return client as unknown as Session;
  }
  const client = new ClientV2({ name: 'e2e-stdio', version: '1.0.0' }, generation === 'v2' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(transport as StdioV2);
  expect(client.getNegotiatedProtocolVersion()).toBe(generation === 'v2' ? '2026-07-28' : '2025-11-25');
  return client as unknown as Session;
}

beforeAll(async () => {
  node = await startServe(['--allow-same-ip']);
  work = tempDir('akas-e2e-mcp-stdio-');
  await calibratedProfiles(node.url, work, PROFILES);
}, 90_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('akas mcp --stdio (e2e, over stdio)', () => {
  let proposalId: string;
  let claimSecret: string;

  it("offers the node's tools, reads and proposes, with the claimSecret kept in the profile", async () => {
    const proposer = await connect('proposer', 'v2-2025');
    const { tools } = await proposer.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['search', 'node', 'proposal', 'me', 'propose_capability', 'judge', 'queue']) expect(names).toContain(name);
    // The listing is the node's own (its tools/list with this Bearer), judge and propose adapted.
    const remote = (await (
      await fetch(`${node.url}/api/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          authorization: `Bearer ${saved('proposer').apiKey}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    ).json()) as Json;
    expect(names).toEqual(remote.result.tools.map((t: Json) => t.name));
    const judge = tools.find((t) => t.name === 'judge')!;
    expect(Object.keys(judge.inputSchema.properties).sort()).toEqual(['contentSha256', 'dryRun', 'id', 'rationale', 'scores']);
    expect(judge.description).toContain('Signed here');

    const root = await proposer.callTool({ name: 'node', arguments: { path: '/' } });
    expect(root.structuredContent).toMatchObject({ path: '/', kind: 'branch' });
    const me = await proposer.callTool({ name: 'me', arguments: {} });
    expect(me.structuredContent).toMatchObject({ tag: saved('proposer').tag });

    const proposed = await proposer.callTool({ name: 'propose_capability', arguments: samplePayload('capability', 1) as Record<string, unknown> });
    expect(proposed.isError, JSON.stringify(proposed)).toBeFalsy();
    expect(proposed.structuredContent).toMatchObject({ proposalId: expect.stringMatching(/^cprop_/), claimSecretWithheld: true });
    proposalId = proposed.structuredContent.proposalId;
    claimSecret = saved('proposer').claimSecrets[proposalId];
    expect(claimSecret).toMatch(/^cs_[0-9a-f]{64}$/);
    // Asked for, it is shown (and kept too).
    const asked = await connect('proposer', 'v2-2025', []);
    const shown = await asked.callTool({
      name: 'propose_capability',
      arguments: { ...(samplePayload('capability', 2) as Record<string, unknown>), includeClaimSecret: true },
    });
    expect(shown.structuredContent.claimSecret).toBe(saved('proposer').claimSecrets[shown.structuredContent.proposalId]);
    await asked.close();
    await proposer.close();
  });

  it('judges the proposal to published with three stdio judges, each judgment signed locally over the content', async () => {
    const detail = (await (await fetch(`${node.url}/api/knowledge/proposals/${proposalId}`)).json()) as Json;
    const statuses: string[] = [];
    for (const [profile, generation] of [
      ['j1', 'v2'],
      ['j2', 'v2-2025'],
      ['j3', 'v1'],
    ] as const) {
      const session = await connect(profile, generation);
      if (profile === 'j1') {
        // Content other than what the agent read: refused here, nothing sent.
        const other = await session.callTool({ name: 'judge', arguments: { id: proposalId, scores: SCORES, rationale: 'x', contentSha256: 'f'.repeat(64) } });
        expect(other.structuredContent).toMatchObject({ code: 'content_mismatch', contentSha256: detail.contentSha256 });
        const dry = await session.callTool({ name: 'judge', arguments: { id: proposalId, scores: SCORES, rationale: 'Dry.', dryRun: true } });
        expect(dry.structuredContent).toMatchObject({ ok: true, dryRun: true });
      }
      const r = await session.callTool({
        name: 'judge',
        arguments: { id: proposalId, scores: SCORES, rationale: `Judged by ${profile} over stdio.`, contentSha256: detail.contentSha256 },
      });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        judgmentRecorded: true,
        proposalId,
        contentSha256: detail.contentSha256,
        signedLocally: { by: saved(profile).tag, payloadType: 'akas.judgment.v2' },
      });
      statuses.push(r.structuredContent.newStatus);
      await session.close();
    }
    expect(statuses).toEqual(['pending', 'pending', 'published']);
  });

  it('the judgments verify offline as v2, bound by their judges', async () => {
    const issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;
    const bundle = join(work, 'bundle.json');
    const exported = await runCli(['--base-url', node.url, '--profile', 'proposer', 'export', proposalId, '-o', bundle], { cwd: work });
    expect(exported.code, exported.stderr).toBe(0);
    const r = await runCli(['--json', 'verify', 'bundle', bundle, '--issuer', issuer], { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ verified: true, proposalId, failed: 0, binding: { judgesSigned: 3, nodeOnly: 0 } });
    const judgments = JSON.parse(readFileSync(bundle, 'utf8')).proposal.judgments as Json[];
    expect(judgments.map((j) => JSON.parse(j.signature.signingPayload).type)).toEqual(['akas.judgment.v2', 'akas.judgment.v2', 'akas.judgment.v2']);
  });

  it('refuses arguments that hold a secret of the profile, sending nothing', async () => {
    const own: string[] = [];
    const session = await connect('j1', 'v2-2025', own);
    const key = saved('j1').signing.privateKey;
    const r = await session.callTool({ name: 'search', arguments: { q: key } });
    expect(r.structuredContent).toMatchObject({ code: 'secret_in_arguments' });
    expect(JSON.stringify(r)).not.toContain(key);
    await session.close();
    expect(node.stderr()).not.toContain(key);
  });

  it('without a saved identity, serves the read tools anonymously', async () => {
    const session = await connect('nobody', 'v1', []);
    const names = (await session.listTools()).tools.map((t) => t.name);
    expect(names).toContain('search');
    expect(names).not.toContain('judge');
    await session.close();
    expect(existsSync(join(defaultConfigDir(), 'profiles', 'nobody'))).toBe(false);
  });

  it('writes nothing but MCP on stdout, and ends when the client closes its stdin', async () => {
    const child = spawn(process.execPath, [CLI, '--base-url', node.url, '--profile', 'j2', 'mcp', '--stdio'], {
      env: { ...getDefaultEnvironment(), AKAS_CONFIG_DIR: defaultConfigDir() },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const rpc = (m: Json) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
    rpc({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    rpc({ method: 'notifications/initialized' });
    rpc({ id: 2, method: 'tools/call', params: { name: 'me', arguments: {} } });
    await new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('"id":2') && resolve()));
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(lines.map((l) => l.id)).toEqual([1, 2]);
    expect(lines[1].result.structuredContent).toMatchObject({ tag: saved('j2').tag });
    messages.push(out);
  });

  it("no message of any session, nor any server's stderr or the node's log, holds a key, a recovery token or the claimSecret not asked for", () => {
    expect(messages.length).toBeGreaterThan(20);
    const secrets = PROFILES.flatMap((p) => [saved(p).apiKey, saved(p).signing.privateKey, saved(p).recoveryToken]).concat(claimSecret);
    for (const secret of secrets) expect(secret.length).toBeGreaterThan(20);
    const texts = [...messages, ...stderrs.map((s) => s()), node.stderr()].map((t) => t.toLowerCase());
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret.toLowerCase()), `a secret in: ${text.slice(0, 200)}`).toBe(false);
    expect(stderrs.map((s) => s()).join('')).toContain('akas mcp --stdio: MCP on stdin/stdout');
  });
});
