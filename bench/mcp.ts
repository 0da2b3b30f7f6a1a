// MCP tools/call throughput (PROTOCOL 12): a read tool (search, node) called through POST
// /api/mcp, as a ratio to the same read over plain HTTP in the same run, both loaded by the
// child-process load generator of bench/http.ts (undici Pool, targets alternating in short
// slices): the same 32 keep-alive connections per target, the same node, the same read (the
// tool's route runs with the same query). Answer sizes are printed: an MCP result carries the
// read twice (as text and as structuredContent, PROTOCOL 12.3) in a JSON-RPC envelope. Both MCP
// eras are measured: 2025 JSON-RPC posts (the v1 SDK, and the v2 client by default) and
// 2026-07-28 per-request envelopes (the v2 client negotiating). Target (issue 13): MCP search
// >= 0.5 of HTTP search. A diagnostic line loads an MCP ping, which the SDK answers with no tool
// at all: the ceiling of any tool call through the mounted SDK.
import { canonicalize, sign } from '../src/core/index.js';
import { strategiesFor } from '../src/node/strategies.js';
import { createApp } from '../src/http/app.js';
import { openTempStore } from '../src/store/index.js';
import { CONNECTIONS, CYCLES, load, SLICE_MS, type Target, type TargetResult } from './http.js';
import { benchKeys, calibrateForBench, header, line, perSec } from './lib.js';

const TARGET = 0.5;
/** Published capabilities the search runs over. */
const NODES = 40;
const QUERY = 'cache';

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rateOf = (r: TargetResult) => `${perSec({ name: '', opsPerSec: (r.ok / r.ms) * 1000, ops: r.ok, ms: r.ms })}`;

const legacy = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const modern = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const modernHeaders = (name: string) => ({ ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });

export async function run() {
  header(
    `mcp: a read tool through POST /api/mcp vs the same read over HTTP (child-process undici load, ${CONNECTIONS} in flight, ${SLICE_MS} ms ` +
      `slices x ${CYCLES} cycles)`,
  );
  const { store, dispose } = await openTempStore();
  const app = await createApp({
    store,
    strategies: strategiesFor(store),
    keys: benchKeys(),
    config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } },
    logger: false,
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    // A published tree to read: one proposer, three judges on IPs of their own.
    const agents = [];
    for (let i = 0; i < 4; i++) {
      const res = await app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: `10.77.0.${i + 1}` });
      const a = res.json() as { apiKey: string; tag: string; signing: { privateKey: string } };
      await calibrateForBench(app.akas, a.tag, 0.9, 1000);
      agents.push({ ...a, ip: `10.77.0.${i + 1}` });
    }
    const [proposer, ...judges] = agents;
    let samplePath = '';
    for (let n = 0; n < NODES; n++) {
      const path = `/bench/${QUERY}-pattern-${n}`;
      samplePath ||= path;
      const payload = {
        path,
        title: `${QUERY[0].toUpperCase()}${QUERY.slice(1)} pattern ${n}: invalidate on write`,
        spec: `When reads dominate and a stale answer costs little, keep a ${QUERY} in front of the store (variant ${n}).`,
        payload: {
          trigger: 'repeated identical reads',
          alternative: 'read through every time',
          cost: 'memory',
          whenNot: 'writes dominate',
          recipe: ['cache on read', 'drop on write'],
        },
      };
      const p = await app.inject({
        method: 'POST',
        url: '/api/knowledge/cap/propose',
        payload,
        headers: { authorization: `Bearer ${proposer.apiKey}` },
        remoteAddress: proposer.ip,
      });
      const id = (p.json() as { proposalId: string }).proposalId;
      for (const j of judges) {
        const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
        const rationale = 'Accurate.';
        const signature = sign(
          j.signing.privateKey,
          canonicalize({ type: 'akas.judgment.v1', kind: 'capability', proposalId: id, judge: j.tag, scores, rationale }),
        );
        const r = await app.inject({
          method: 'POST',
          url: `/api/knowledge/judge/${id}`,
          payload: { scores, rationale, signature },
          headers: { authorization: `Bearer ${j.apiKey}` },
          remoteAddress: j.ip,
        });
        if (r.statusCode !== 200) throw new Error(`judge answered ${r.statusCode}: ${r.body}`);
      }
    }

    const searchArgs = { q: QUERY, limit: 10 };
    const nodeArgs = { path: samplePath };
    const targets: Target[] = [
      { name: `HTTP GET /api/knowledge/search?q=${QUERY}`, url: `${base}/api/knowledge/search?q=${QUERY}&limit=10` },
      { name: 'MCP tools/call search (2025 JSON-RPC)', url: `${base}/api/mcp`, method: 'POST', headers: MCP_HEADERS, body: legacy('search', searchArgs) },
      {
        name: 'MCP tools/call search (2026-07-28 envelope)',
        url: `${base}/api/mcp`,
        method: 'POST',
        headers: modernHeaders('search'),
        body: modern('search', searchArgs),
      },
      { name: `HTTP GET /api/knowledge/node${samplePath}`, url: `${base}/api/knowledge/node${samplePath}` },
      { name: 'MCP tools/call node (2025 JSON-RPC)', url: `${base}/api/mcp`, method: 'POST', headers: MCP_HEADERS, body: legacy('node', nodeArgs) },
      {
        name: 'diagnostic: MCP ping (the SDK alone, no tool)',
        url: `${base}/api/mcp`,
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      },
    ];
    // Every target answers what it should before it is timed: hits, and no tool error.
    for (const t of targets) {
      const res = await fetch(t.url, { method: t.method ?? 'GET', headers: t.headers, body: t.body });
      const text = await res.text();
      t.name += ` (${Buffer.byteLength(text)} B)`;
      const ping = t.body?.includes('"ping"');
      if (res.status !== 200 || text.includes('"isError":true') || !(ping || text.includes(`${QUERY}-pattern`) || text.includes(samplePath)))
        throw new Error(`${t.name} answered ${res.status}: ${text.slice(0, 300)}`);
    }
    const [search, mcpSearch, mcpSearchModern, nodeRead, mcpNode, ping] = await load(targets);
    const ratios = (r: TargetResult, base0: TargetResult) => r.perCycle.map((x, i) => x / base0.perCycle[i]);
    const searchRatio = med(ratios(mcpSearch, search));
    console.log(`  (ratio = median over ${CYCLES} cycles of calls/s divided by the plain read's req/s in the same cycle; ${NODES} published nodes)`);
    line(targets[0].name, rateOf(search), 1);
    line(targets[1].name, rateOf(mcpSearch), searchRatio, `>= ${TARGET}`, searchRatio >= TARGET);
    line(targets[2].name, rateOf(mcpSearchModern), med(ratios(mcpSearchModern, search)));
    line(targets[3].name, rateOf(nodeRead), 1);
    line(targets[4].name, rateOf(mcpNode), med(ratios(mcpNode, nodeRead)));
    line(targets[5].name, rateOf(ping), med(ratios(ping, search)));
    console.log('  (ping ratio is to the HTTP search: the most any tool can reach through the mounted SDK)');
  } finally {
    await app.close();
    await dispose();
  }
}
