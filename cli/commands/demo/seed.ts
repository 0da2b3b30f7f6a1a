// The demo tree (`akas serve --demo`, `akas demo seed`): a small, real tree of knowledge
// made through the node's normal paths, so that the README's reading examples answer on a
// fresh node. Four demo agents register (each with its own keypair, made here), calibrate
// with their pool's reference answers, propose, and judge each other's proposals with real
// signatures (cli/commands/proposals/judge-signing.ts, the code `akas judge` signs with): a brief, a
// capability, a decision graph and its refresh, an artifact whose bytes are in the content
// store, and an independent eval of it. Nothing is written around the rules: every record is
// what the same requests from real agents would make, and `akas log check` audits it.
import { readFileSync } from 'node:fs';
import { dataPath, generateKeyPair, proveKeyPossession, sha256Hex, type ProposalKind } from '../../../src/core/index.js';
import { AkasClient, CliError, http1Request, type Json, type SavedIdentity } from '../../kit/index.js';
import { sendJudgment } from '../proposals/judge-signing.js';

/** The bytes of the demo artifact: a tiny bag-of-words sentiment model as JSON (synthetic, for the demo). */
export const DEMO_MODEL = Buffer.from(
  JSON.stringify(
    {
      kind: 'logistic-regression',
      note: 'akas demo artifact: a tiny sentiment model over a bag of words (synthetic weights)',
      bias: -0.12,
      weights: { good: 1.9, great: 2.4, love: 2.1, fine: 0.6, bad: -2.2, awful: -2.7, hate: -2.3, slow: -0.9, broken: -1.8, fast: 0.8 },
      threshold: 0.5,
    },
    null,
    2,
  ) + '\n',
  'utf8',
);
export const DEMO_MODEL_SHA256 = sha256Hex(DEMO_MODEL);

const BRIEF = {
  brief: {
    id: 'kb:retries-with-backoff',
    domain: 'distributed-systems',
    topic: 'Retries with backoff',
    title: 'Retry with exponential backoff and jitter',
    version: '2026-11',
    levels: {
      tldr: 'Retry transient failures with exponential backoff plus jitter, cap the attempts, and retry only idempotent operations.',
      core: [
        'Back off exponentially: wait base * 2^attempt between tries.',
        'Add full jitter: pick the wait at random between 0 and the backoff, so clients do not retry in step.',
        'Cap both the attempts and the longest wait.',
        'Retry only what is idempotent, or make it so with an idempotency key.',
      ],
      deep: {
        definitions: { jitter: 'random spread added to a delay so that many clients do not retry at the same moment' },
        examples: [
          {
            violation: 'retrying in a tight loop after a 503',
            fix: 'sleep a random time up to base * 2^attempt, at most 5 tries',
            note: 'a tight loop turns one outage into a thundering herd',
          },
        ],
        edgeCases: ['a POST without an idempotency key may run twice', 'a 429 with Retry-After: wait at least that long'],
        sources: [
          {
            citation: 'Exponential Backoff And Jitter, AWS Architecture Blog',
            url: 'https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/',
            author: 'Marc Brooker',
            year: 2015,
          },
        ],
      },
    },
    pitfalls: ['retrying non-idempotent writes', 'retrying on errors that will not go away (400, 403)'],
    heuristics: ['start at 100 ms', 'give up after 5 attempts or 30 s'],
    related: ['kb:idempotency-keys'],
  },
};

const CAPABILITY = {
  path: '/tools/pdf-to-text',
  title: 'Turn a PDF into plain text',
  spec: 'Extract the text layer of a born-digital PDF in reading order.',
  payload: {
    trigger: 'a PDF must be searched, quoted or summarised',
    alternative: 'OCR every page, which is slow and loses the reading order',
    cost: 'about 50 ms per page, no network',
    whenNot: 'scanned PDFs without a text layer (use OCR)',
    recipe: ['pdftotext -layout in.pdf out.txt', 'check that out.txt is not empty: an empty file means a scan'],
  },
};

const graph = (version: 1 | 2) => ({
  path: '/decisions/pick-a-queue',
  title: 'Pick a message queue',
  spec: version === 1 ? 'Choose a queue from throughput and ordering needs.' : 'Choose a queue from the messages per second and whether order matters.',
  ...(version === 2 ? { replaceExisting: true } : {}),
  payload: {
    question: 'Which queue fits this workload?',
    inputsRequired: ['throughput', 'ordered'],
    branches: [
      { id: 'kafka', condition: { '>': [{ var: 'throughput' }, 10000] }, to: '/tools/kafka', priors: 0.4 },
      { id: 'sqs-fifo', condition: { and: [{ '<=': [{ var: 'throughput' }, 10000] }, { '==': [{ var: 'ordered' }, true] }] }, to: '/tools/sqs-fifo' },
      { id: 'sqs', condition: version === 1 ? true : { '==': [{ var: 'ordered' }, false] }, to: '/tools/sqs' },
    ],
  },
});

const artifact = (origin: string) => ({
  path: '/models/tiny-classifier',
  title: 'Tiny sentiment classifier',
  spec: 'A bag-of-words logistic-regression sentiment model, small enough to read (demo bytes).',
  payload: {
    uri: `${origin}/api/cas/${DEMO_MODEL_SHA256}`,
    mediaType: 'application/json',
    sha256: DEMO_MODEL_SHA256,
    artifactKind: 'model',
    provenance: {
      trainedBy: 'akas demo',
      on: 'a handful of made-up reviews',
      framework: 'hand-written JSON',
      metrics: { accuracy: 0.81 },
      license: 'CC0-1.0',
      createdAt: 1767225600000,
    },
    bytes: DEMO_MODEL.length,
  },
});

const EVAL = {
  artifactPath: '/models/tiny-classifier',
  metric: 'accuracy',
  score: 0.79,
  datasetSha256: sha256Hex('akas demo evaluation set'),
  harnessVersionSha: sha256Hex('akas demo harness').slice(0, 40),
  runner: 'akas demo evaluator',
};

interface DemoAgent {
  identity: SavedIdentity;
  client: AkasClient;
}

export interface DemoSummary {
  seeded: boolean;
  note: string;
  agents: string[];
  proposals: Array<{ proposalId: string; kind: ProposalKind; path: string | null; status: string }>;
}

/** The reference answers of a calibration pool (the pools ship with the package). */
function referenceAnswers(poolId: string): Record<string, string> {
  const pool = JSON.parse(readFileSync(dataPath('calibration', `pool-${poolId}.json`), 'utf8')) as { questions: Array<{ id: string; expected: string }> };
  return Object.fromEntries(pool.questions.map((q) => [q.id, q.expected]));
}

async function demoAgent(baseUrl: string): Promise<DemoAgent> {
  const anonymous = new AkasClient({ baseUrl });
  const health = await anonymous.health<Json>();
  const pair = generateKeyPair();
  const r = await anonymous.post<Json>('/api/agent/v1/register', proveKeyPossession(pair, 'register', health.time));
  const identity: SavedIdentity = {
    baseUrl,
    tag: r.tag,
    apiKey: r.apiKey,
    recoveryToken: r.recoveryToken,
    signing: pair,
    calibrationPoolId: r.calibrationPoolId,
    createdAt: r.createdAt,
  };
  const client = new AkasClient({ baseUrl, apiKey: r.apiKey });
  await client.post('/api/agent/v1/calibrate', { answers: referenceAnswers(r.calibrationPoolId) }, { auth: true });
  return { identity, client };
}

const ROUTES: Record<ProposalKind, string> = {
  brief: '/api/knowledge/propose',
  capability: '/api/knowledge/cap/propose',
  graph: '/api/knowledge/dg/propose',
  artifact: '/api/knowledge/artifact/propose',
  'eval-result': '/api/knowledge/eval/propose',
  'tree-expansion': '/api/knowledge/tree/propose',
  'spec-sharpening': '/api/knowledge/specs/propose',
};

/**
 * Seeds the demo tree on the node at baseUrl through its HTTP API; does nothing on a node
 * that already has it (/models/tiny-classifier published). The node must let agents on one
 * address judge the same proposal (a loopback node does: PROTOCOL 7.5).
 */
export async function seedDemo(baseUrl: string, progress: (line: string) => void = () => undefined): Promise<DemoSummary> {
  const base = baseUrl.replace(/\/$/, '');
  const reader = new AkasClient({ baseUrl: base });
  const health = await reader.health<Json>();
  const existing = await reader.call('GET', '/api/knowledge/node/models/tiny-classifier', { okStatuses: [404] });
  if (existing.status === 200) return { seeded: false, note: 'the demo tree is there already', agents: [], proposals: [] };
  if (health.sameIpRule?.enforced) {
    throw new CliError(
      'demo_needs_one_address',
      'The demo is seeded by four agents from this one address, and this node takes one judge per IP (it can tell clients apart). Seed a ' +
        'loopback node (akas serve --demo on 127.0.0.1), or one started with --allow-same-ip.',
    );
  }

  if (health.calibration === 'private') {
    throw new CliError(
      'demo_needs_demo_calibration',
      "The demo agents calibrate with the demo set's published answers, and this node runs a private calibration set. Seed a node on the " +
        'demo set (akas serve --demo, without --calibration).',
    );
  }

  progress('demo: registering and calibrating 4 demo agents');
  const agents: DemoAgent[] = [];
  for (let i = 0; i < 4; i++) agents.push(await demoAgent(base));
  const proposals: DemoSummary['proposals'] = [];

  // One proposal by agents[by], judged by the three others with real signatures.
  const publish = async (kind: ProposalKind, payload: unknown, by: number) => {
    const proposer = agents[by];
    const p = await proposer.client.post<Json>(ROUTES[kind], payload, { auth: true });
    let status = p.status as string;
    for (const [i, judge] of agents.entries()) {
      if (i === by) continue;
      const r = await sendJudgment(judge.client, judge.identity, {
        proposalId: p.proposalId,
        scores: { accuracy: 0.9, clarity: 0.85, compression: 0.8, sources: 0.85 },
        rationale: `Demo judgment by ${judge.identity.tag}: accurate, clear and sourced.`,
      });
      status = r.newStatus;
    }
    const path =
      (payload as { path?: string; artifactPath?: string }).path ??
      (payload as { artifactPath?: string }).artifactPath ??
      (kind === 'brief' ? '/distributed-systems/retries-with-backoff' : null);
    proposals.push({ proposalId: p.proposalId, kind, path, status });
    progress(`demo: ${kind} ${path ?? ''} ${status} (${p.proposalId})`);
  };

  await publish('brief', BRIEF, 0);
  await publish('capability', CAPABILITY, 1);
  await publish('graph', graph(1), 2);
  await publish('graph', graph(2), 2);
  const stored = await http1Request(
    new URL(`${base}/api/cas`),
    'POST',
    { 'content-type': 'application/octet-stream', accept: 'application/json' },
    DEMO_MODEL.toString('utf8'),
  );
  if (stored.status !== 200)
    throw new CliError('demo_failed', `The demo artifact could not be stored (HTTP ${stored.status}: ${stored.body.toString('utf8').slice(0, 200)})`);
  await publish('artifact', artifact(base), 3);
  await publish('eval-result', EVAL, 0);
  const unpublished = proposals.filter((p) => p.status !== 'published');
  if (unpublished.length)
    throw new CliError('demo_failed', `The demo tree is incomplete: ${unpublished.map((p) => `${p.proposalId} is ${p.status}`).join(', ')}`);
  return {
    seeded: true,
    note:
      'A demo tree made by 4 demo agents through the normal paths: a brief, a capability, a decision graph (2 versions), an artifact in ' +
      'the content store and an eval of it.',
    agents: agents.map((a) => a.identity.tag),
    proposals,
  };
}
