// The load generator of bench/usetool.ts, run as a child process (like bench/http-load.ts) so
// that the client does not compete with the server for the event loop.
//
// Reads one JSON object on stdin (the agent list is too long for argv):
//   {"origin":"http://127.0.0.1:PORT","mode":"me"|"word-count"|"regex-test","agents":[{"apiKey":"..","challenge":null}],
//    "decoyAnswers":{"<userPrompt>":"<accepted answer>"},"connections":16,"seconds":2,"warmupSeconds":0.5}
// Prints one JSON line: {"ok":n,"bad":n,"ms":n,"latencyMs":mean,"statuses":{"200":n},"codes":{"regex_timeout":n},
//   "exhausted":bool,"unused":[agents]}
// counted after the warm-up.
//
// A use-tool call must answer a fresh challenge, and each of the ~67 bank entries is served to
// an agent at most once, so every worker chains calls on one agent through the piggybacked
// nextChallenge and moves to the next agent of the queue when it comes back null. Decoys are
// answered with an accepted phrase so that no agent gets banned halfway through its bank.
import { Pool } from 'undici';

interface WireChallenge {
  challengeId: string;
  challenge: { schemaName: string; userPrompt: string };
}

interface BenchAgent {
  apiKey: string;
  challenge: WireChallenge | null;
}

interface LoadInput {
  origin: string;
  mode: 'me' | 'word-count' | 'regex-test';
  agents: BenchAgent[];
  decoyAnswers: Record<string, string>;
  connections?: number;
  seconds?: number;
  warmupSeconds?: number;
}

const TOOL_INPUTS = {
  'word-count': { text: 'The quick brown fox. Jumps over.' },
  'regex-test': { pattern: '(\\w+)@(\\w+)', text: 'a@b c@d' },
} as const;

const TOOL_DESCRIPTION = 'A bench answer long enough for the tool-description schema: fifty to six hundred characters are required here.';

let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const opts = JSON.parse(raw) as LoadInput;
const connections = opts.connections ?? 16;
const pool = new Pool(opts.origin, { connections, pipelining: 1 });
const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

let counting = false;
let ok = 0;
let bad = 0;
let latencySum = 0;
let exhausted = false;
const statuses: Record<string, number> = {};
/** Error codes of the non-200 answers (regex_timeout is tolerated and reported by the parent). */
const codes: Record<string, number> = {};

function count(status: number, started: number) {
  if (!counting) return;
  statuses[status] = (statuses[status] ?? 0) + 1;
  if (status === 200) {
    ok++;
    latencySum += performance.now() - started;
  } else bad++;
}

function answerFor(c: WireChallenge) {
  if (c.challenge.schemaName === 'tool-description') {
    return { answer: TOOL_DESCRIPTION, confidence: 'high', model: { family: 'other', version: 'b' }, via: 'local', elapsed_ms: 1 };
  }
  return { answer: opts.decoyAnswers[c.challenge.userPrompt] ?? 'x' };
}

async function getChallenge(apiKey: string): Promise<WireChallenge> {
  const res = await pool.request({ method: 'GET', path: '/api/agent/v1/challenge', headers: bearer(apiKey) });
  const body = (await res.body.json()) as WireChallenge;
  if (res.statusCode !== 200) throw new Error(`GET /challenge answered ${res.statusCode}: ${JSON.stringify(body)}`);
  return body;
}

// Agents not yet taken by a worker; the ones left at the end go back to the parent for reuse.
const queue: BenchAgent[] = [...opts.agents];

async function meWorker(until: number) {
  const headers = bearer(opts.agents[0].apiKey);
  while (performance.now() < until) {
    const started = performance.now();
    const res = await pool.request({ method: 'GET', path: '/api/agent/v1/me', headers });
    // Parsed like the use-tool answers below, so that both sides pay the same client cost.
    await res.body.json();
    count(res.statusCode, started);
  }
}

async function toolWorker(tool: 'word-count' | 'regex-test', until: number) {
  let agent: BenchAgent | undefined;
  while (performance.now() < until) {
    if (!agent?.challenge) {
      agent = queue.shift();
      if (!agent) {
        exhausted = true;
        return;
      }
      // Normally fetched before the clock starts (prefetch below); this is only a fallback.
      agent.challenge ??= await getChallenge(agent.apiKey);
    }
    const challenge: WireChallenge = agent.challenge!;
    const started = performance.now();
    const res = await pool.request({
      method: 'POST',
      path: '/api/agent/v1/use-tool',
      headers: { ...bearer(agent.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ challengeId: challenge.challengeId, answer: answerFor(challenge), tool, toolInput: TOOL_INPUTS[tool] }),
    });
    const body = (await res.body.json()) as { nextChallenge?: WireChallenge | null; code?: string };
    count(res.statusCode, started);
    if (res.statusCode !== 200) {
      if (counting) codes[body.code ?? '?'] = (codes[body.code ?? '?'] ?? 0) + 1;
      // A refused tool run charges nothing and leaves the challenge open: answer it again.
      if (body.code === 'regex_timeout' || body.code === 'tool_busy') continue;
      process.stderr.write(`use-tool answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 300)}\n`);
      agent.challenge = null;
      agent = undefined; // this agent's state is unknown now: drop it
      continue;
    }
    agent.challenge = body.nextChallenge ?? null;
  }
  // Hand back the agent held at the end of the warm-up (or the run) with its open challenge.
  if (agent?.challenge) queue.unshift(agent);
}

const worker = (until: number) => (opts.mode === 'me' ? meWorker(until) : toolWorker(opts.mode, until));

if (opts.mode !== 'me') {
  // Fetch each agent's first challenge before the clock starts, `connections` at a time.
  const missing = opts.agents.filter((a) => !a.challenge);
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < missing.length) {
        const a = missing[next++];
        a.challenge = await getChallenge(a.apiKey);
      }
    }),
  );
}

const warmEnd = performance.now() + (opts.warmupSeconds ?? 0.5) * 1000;
await Promise.all(Array.from({ length: connections }, () => worker(warmEnd)));
counting = true;
const start = performance.now();
await Promise.all(Array.from({ length: connections }, () => worker(start + (opts.seconds ?? 2) * 1000)));
const ms = performance.now() - start;
await pool.close();
process.stdout.write(JSON.stringify({ ok, bad, ms, latencyMs: ok ? latencySum / ok : 0, statuses, codes, exhausted, unused: queue }) + '\n');
