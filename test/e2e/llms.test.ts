// Every curl example of /llms.txt runs against a real `akas serve`, in order, in one shell, and
// succeeds (PROTOCOL 11.4). The test plays the agent only where the guide says the agent writes
// something itself (its calibration answers); another agent has published a node to discover and
// left a proposal pending to judge. curl fails the script on any non-2xx answer
// (--fail-with-body), and bash stops at the first failing command (set -e).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, sign } from '../../src/core/index.js';
import { startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { calibrated, ok, poolAnswers } from '../helpers/remote.js';

type Json = Record<string, any>;

let node: RunningNode;
let work: string;

const call = (method: string, path: string, body?: unknown, apiKey?: string): Promise<Json> => ok(node, method, path, body, apiKey);
/** A registered agent calibrated with its pool's expected answers (a top score). */
const calibratedAgent = () => calibrated(node);

function capability(path: string, title: string) {
  return {
    path,
    title,
    spec: `${title}: when and how.`,
    payload: {
      trigger: 'a test fails now and then',
      alternative: 'fix the test first',
      cost: 'a rerun',
      whenNot: 'the failure is real',
      recipe: 'rerun once, quarantine on a second failure',
    },
  };
}

/** The `sh` blocks of a Markdown text, in order. */
const shBlocks = (text: string) => [...text.matchAll(/^```sh\n([\s\S]*?)\n```$/gm)].map((m) => m[1]);

beforeAll(async () => {
  // One IP for everyone here (127.0.0.1): judges of the published node share it.
  node = await startServe(['--allow-same-ip']);
  work = tempDir('akas-llms-');
  const proposer = await calibratedAgent();
  const judges = [await calibratedAgent(), await calibratedAgent(), await calibratedAgent()];
  const published = await call(
    'POST',
    '/api/knowledge/cap/propose',
    capability('/testing/retry-flaky-tests', 'Retry flaky tests with a quarantine'),
    proposer.apiKey,
  );
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.8, sources: 0.7 };
  for (const j of judges) {
    const payload = canonicalize({ type: 'akas.judgment.v1', kind: 'capability', proposalId: published.proposalId, judge: j.tag, scores, rationale: 'Sound.' });
    await call(
      'POST',
      `/api/knowledge/judge/${published.proposalId}`,
      { scores, rationale: 'Sound.', signature: sign(j.signing.privateKey, payload) },
      j.apiKey,
    );
  }
  await call('POST', '/api/knowledge/cap/propose', capability('/testing/seed-randomness', 'Seed every random generator in tests'), proposer.apiKey);
});

afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('/llms.txt', () => {
  it('runs: every sh block against this node, in order, each curl answering 2xx', async () => {
    const res = await fetch(`${node.url}/llms.txt`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const blocks = shBlocks(text);
    expect(blocks.length).toBeGreaterThanOrEqual(9);
    expect(blocks[0]).toContain(`BASE=${node.url}\n`);

    // The agent's own step: answer the questions it fetched (here, its pool's expected answers).
    writeFileSync(
      join(work, 'answer.mjs'),
      `import { readFileSync, writeFileSync } from 'node:fs';
const { poolId, questions } = JSON.parse(readFileSync('questions.json', 'utf8'));
const expected = ${JSON.stringify({ A: poolAnswers('A'), B: poolAnswers('B') })}[poolId];
writeFileSync('answers.json', JSON.stringify({ answers: Object.fromEntries(questions.map((q) => [q.id, expected[q.id]])) }));
`,
    );
    const script = [
      'set -e',
      'curl() { command curl --fail-with-body "$@"; }',
      ...blocks.flatMap((block, i) => [...(block.includes('@answers.json') ? ['node answer.mjs'] : []), block, `echo "@@ block ${i} ok" >&2`]),
      'echo "$TAG" > tag.txt',
      'echo "$API_KEY" > key.txt',
    ].join('\n');
    writeFileSync(join(work, 'flow.sh'), script);
    const run = spawnSync('bash', ['flow.sh'], { cwd: work, encoding: 'utf8', timeout: 60_000 });
    const done = [...run.stderr.matchAll(/^@@ block (\d+) ok$/gm)].map((m) => Number(m[1]));
    expect({ status: run.status, done: done.length, stderr: run.stderr.slice(-2000), stdout: run.stdout.slice(-2000) }).toMatchObject({
      status: 0,
      done: blocks.length,
    });

    // What the flow did, seen from the node.
    const tag = readFileSync(join(work, 'tag.txt'), 'utf8').trim();
    const apiKey = readFileSync(join(work, 'key.txt'), 'utf8').trim();
    const me = await call('GET', '/api/agent/v1/me', undefined, apiKey);
    expect(me).toMatchObject({ tag, tier: 'frontier' });
    expect(me.contributions).toMatchObject({ judgments: 1, proposals: 1 });
    const queue = JSON.parse(readFileSync(join(work, 'queue.json'), 'utf8'));
    const judged = await call('GET', `/api/knowledge/proposals/${queue.items[0].proposalId}`);
    expect(judged.judgments.map((j: Json) => j.agentTag)).toEqual([tag]);
    const found = JSON.parse(readFileSync(join(work, 'search.json'), 'utf8'));
    expect(found.items[0].path).toBe('/testing/retry-flaky-tests');
    // The recovered key replaced the registered one.
    const first = JSON.parse(readFileSync(join(work, 'identity.json'), 'utf8'));
    expect(apiKey).not.toBe(first.apiKey);
  });
});
