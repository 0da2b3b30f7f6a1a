// Verified reads through `akas mcp --stdio` (issue 50; PROTOCOL 12.5): what an agent pays for
// having each read checked on its own machine. Two built `akas mcp --stdio` servers against one
// node listening on 127.0.0.1, each spoken to by the official MCP client over stdio as an agent's
// client would: one verifying (the default), one with --no-verify (the node's word, as every
// read was before). Two reads, as agents make them: a 10-hit search and a node read, called one
// after another (an agent waits for each answer), alternating between the servers in short
// slices so a busy machine weighs on both alike. Target: verified >= 0.7 of unverified calls a
// second, for each read; p95 of each printed.
//
// What the steady rate measures: an agent reading what it has read before at the same
// checkpoint, as agents do (the tree's paths, a recurring search). The verifier then keeps the
// verdict (cli/commands/read/cache.ts) and each call costs the plain read and the node's
// checkpoint, asked together. A first read, which fetches the full evidence and checks every
// signature, is printed as its own line (cold p50 and p95 over distinct nodes): its cost is the
// evidence's size and the signatures in it, paid once a checkpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { canonicalize, FakeClock, sign } from '../src/core/index.js';
import { register } from '../src/domain/identity/identity.js';
import { judge, signingPayload } from '../src/domain/proposals/judging.js';
import { propose } from '../src/domain/proposals/proposals.js';
import type { Scores } from '../src/domain/records.js';
import { createApp } from '../src/http/app.js';
import { strategiesFor } from '../src/node/strategies.js';
import { openTempStore } from '../src/store/index.js';
import { BENCH_CLI, benchKeys, calibrateForBench, header, line } from './lib.js';

const TARGET = 0.7;
/** Published capabilities: the search's hits and the nodes read. */
const NODES = 24;
const SLICE_MS = 1_500;
const SLICES = 8;
const HIGH: Scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };

const capability = (n: number) => ({
  path: `/tools/pdf-to-text-b${n}`,
  title: 'Turn a PDF into plain text',
  spec: 'Extract the text layer of a PDF in reading order.',
  payload: {
    trigger: 'a PDF must be searched',
    alternative: 'OCR every page',
    cost: 'about 50 ms per page',
    whenNot: 'scanned PDFs without a text layer',
    recipe: [`pdftotext -layout in-${n}.pdf out.txt`],
  },
});

/** A node with NODES capabilities published by three judges' v2 judgments, listening on 127.0.0.1. */
async function publishedNode() {
  const { store, dispose } = await openTempStore();
  const clock = new FakeClock();
  const app = await createApp({
    store,
    clock,
    keys: benchKeys(),
    strategies: strategiesFor(store),
    config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 }, sameIpCollusionCheck: false },
  });
  const ctx = app.akas;
  const agentAt = async (i: number, score: number, credits: number) => {
    const r = await register(ctx, { ip: `10.9.0.${i}` });
    return { record: await calibrateForBench(ctx, r.agent.tag, score, credits), privateKey: r.signing.privateKey!, ip: `10.9.0.${i}` };
  };
  const proposer = await agentAt(1, 0.8, 10_000);
  const judges = [await agentAt(2, 0.9, 0), await agentAt(3, 0.8, 0), await agentAt(4, 0.7, 0)];
  for (let n = 0; n < NODES; n++) {
    const p = await propose(ctx, { kind: 'capability', payload: capability(n), agent: proposer.record, ip: proposer.ip });
    const { proposalId, contentSha256 } = p.proposal;
    for (const j of judges) {
      const rationale = 'Sound and sourced.';
      const signature = sign(j.privateKey, canonicalize(signingPayload('capability', proposalId, j.record.tag, HIGH, rationale, contentSha256)));
      await judge(ctx, { routeKind: 'capability', proposalId, judge: j.record, ip: j.ip, scores: HIGH, rationale, signature, contentSha256, dryRun: false });
    }
  }
  await ctx.log.drain();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      await app.close();
      await dispose();
    },
  };
}

/** The built `akas mcp --stdio` (anonymous: read tools), connected by the official client over stdio. */
async function stdioServer(url: string, configDir: string, flags: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BENCH_CLI, '--base-url', url, '--profile', flags.length ? 'unverified' : 'verified', 'mcp', '--stdio', ...flags],
    env: { ...getDefaultEnvironment(), AKAS_CONFIG_DIR: configDir, NO_COLOR: '1' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-verified-reads', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

type Read = { name: string; args: Record<string, unknown> };
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Calls one read (at least once) over and over for ms; answers the latencies (each call checked to be the read asked, verified where it should be). */
async function slice(client: Client, read: Read, ms: number, verified: boolean): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + ms;
  do {
    const t = performance.now();
    const r = (await client.callTool({ name: read.name, arguments: read.args })) as { isError?: boolean; structuredContent?: Record<string, any> };
    times.push(performance.now() - t);
    const v = r.structuredContent?.verification;
    if (r.isError || (verified ? v?.verdict !== 'verified' : v?.verdict !== null))
      throw new Error(`${read.name}: ${verified ? 'not verified' : "not the node's word"}: ${JSON.stringify(r).slice(0, 300)}`);
  } while (performance.now() < end);
  return times;
}

export async function run() {
  header('verified reads through akas mcp --stdio (issue 50)');
  const node = await publishedNode();
  const configDir = mkdtempSync(join(tmpdir(), 'akas-bench-reads-'));
  const verified = await stdioServer(node.url, configDir, []);
  const unverified = await stdioServer(node.url, configDir, ['--no-verify']);
  try {
    // First reads: every node once, each fetching and checking its full evidence.
    const cold: number[] = [];
    for (let n = 0; n < NODES; n++) {
      const t = performance.now();
      await slice(verified, { name: 'node', args: { path: `/tools/pdf-to-text-b${n}` } }, 0, true);
      cold.push(performance.now() - t);
    }
    const reads: Array<{ label: string; read: Read }> = [
      { label: 'search, 10 hits', read: { name: 'search', args: { q: 'pdf', limit: 10 } } },
      { label: 'node read', read: { name: 'node', args: { path: '/tools/pdf-to-text-b3' } } },
    ];
    for (const { label, read } of reads) {
      const times = { verified: [] as number[], unverified: [] as number[] };
      const spent = { verified: 0, unverified: 0 };
      // Warm both (the pin, the first verification, the processes' JIT), then alternate slices.
      await slice(verified, read, 300, true);
      await slice(unverified, read, 300, false);
      for (let s = 0; s < SLICES; s++) {
        for (const which of s % 2 ? (['unverified', 'verified'] as const) : (['verified', 'unverified'] as const)) {
          const t = performance.now();
          times[which].push(...(await slice(which === 'verified' ? verified : unverified, read, SLICE_MS, which === 'verified')));
          spent[which] += performance.now() - t;
        }
      }
      const rate = (w: 'verified' | 'unverified') => (times[w].length / spent[w]) * 1000;
      const ratio = rate('verified') / rate('unverified');
      const p95 = (w: 'verified' | 'unverified') => pct(times[w], 0.95).toFixed(2);
      line(
        `${label}: verified / unverified`,
        `${rate('verified').toFixed(0)}/s vs ${rate('unverified').toFixed(0)}/s; p95 ${p95('verified')} ms vs ${p95('unverified')} ms`,
        ratio,
        `>= ${TARGET}`,
        ratio >= TARGET,
      );
    }
    line('first read of a node (full evidence checked)', `p50 ${pct(cold, 0.5).toFixed(1)} ms, p95 ${pct(cold, 0.95).toFixed(1)} ms over ${NODES} nodes`);
  } finally {
    await verified.close();
    await unverified.close();
    await node.close();
    rmSync(configDir, { recursive: true, force: true });
  }
}
