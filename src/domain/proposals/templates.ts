// One complete, valid payload per proposal kind (PROTOCOL 6.2): what `akas propose KIND
// --template` prints and `GET /api/agent/v1/schemas` serves, to edit rather than write from
// the schema. test/http/proposal-templates.test.ts proposes each one to a fresh node. The
// eval result evaluates the artifact template's path, so the two propose in that order.
import type { ProposalKind } from '../../core/index.js';
import type { PayloadOf } from './kinds.js';

export const PROPOSAL_TEMPLATES: { [K in ProposalKind]: PayloadOf<K> } = {
  brief: {
    brief: {
      id: 'kb:my-first-brief',
      domain: 'software-engineering',
      topic: 'My first brief',
      title: 'One idea, stated so an agent can use it',
      version: '2026-11',
      levels: {
        tldr: 'State the idea in two or three sentences: what to do, when, and why.',
        core: ['One short statement per item.', 'Each item stands on its own.'],
        deep: {
          definitions: { term: 'what the term means here' },
          examples: [{ violation: 'what goes wrong', fix: 'what to do instead', note: 'why it matters' }],
          edgeCases: ['a case where the advice bends'],
          sources: [{ citation: 'Author, Title (Publisher, 2024)', url: 'https://example.org/source', author: 'Author', year: 2024 }],
        },
      },
      pitfalls: ['a common mistake'],
      heuristics: ['a rule of thumb'],
      related: [],
    },
  },
  capability: {
    path: '/tools/my-capability',
    title: 'What the capability does, in a few words',
    spec: 'What it is for, in one or two sentences.',
    payload: {
      trigger: 'The situation that calls for it.',
      alternative: 'What one would do without it.',
      cost: 'What using it costs: time, money, setup.',
      whenNot: 'When not to use it.',
      recipe: ['First step.', 'Second step.'],
    },
  },
  graph: {
    path: '/decisions/my-decision',
    title: 'The decision, in a few words',
    spec: 'Which choice to make, from the inputs below.',
    payload: {
      question: 'Which option fits?',
      inputsRequired: ['size', 'urgent'],
      branches: [
        { id: 'big', condition: { '>': [{ var: 'size' }, 1000] }, to: '/tools/big-option', priors: 0.3 },
        { id: 'urgent', condition: { '==': [{ var: 'urgent' }, true] }, to: '/tools/fast-option' },
        { id: 'otherwise', condition: true, to: '/tools/default-option' },
      ],
    },
  },
  artifact: {
    path: '/models/my-model',
    title: 'What the artifact is, in a few words',
    spec: 'What it does and how big it is.',
    payload: {
      uri: 'https://example.org/my-model.onnx',
      mediaType: 'application/octet-stream',
      sha256: '0000000000000000000000000000000000000000000000000000000000000000',
      artifactKind: 'model',
      provenance: {
        trainedBy: 'you',
        on: 'the dataset it was trained on',
        framework: 'onnx',
        metrics: { accuracy: 0.8 },
        license: 'MIT',
        createdAt: 1767225600000,
      },
      bytes: 1024,
    },
  },
  'eval-result': {
    artifactPath: '/models/my-model',
    metric: 'accuracy',
    score: 0.8,
    datasetSha256: '1111111111111111111111111111111111111111111111111111111111111111',
    harnessVersionSha: '0123456789abcdef0123456789abcdef01234567',
    runner: 'you',
  },
  'tree-expansion': {
    parentPath: '/',
    children: [{ slug: 'my-branch', title: 'A new branch of the tree', spec: 'What belongs under it.' }],
  },
  'spec-sharpening': {
    path: '/tools/my-capability',
    spec: 'The sharper spec: what it does, for whom, and where it stops.',
    rationale: 'Why the new spec is better than the current one.',
  },
};
