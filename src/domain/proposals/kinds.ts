// The seven proposal kinds: their payload schemas (PROTOCOL 6.2), the node path each one targets, and the keys two pending proposals may not
// share (id_conflict). One JSON Schema per kind feeds fastify's validation and, later,
// OpenAPI and the MCP tool schemas.
import { Type, type Static, type TSchema } from 'typebox';
import { canonicalize, PROPOSAL_KINDS, ServiceError, sha256Hex, targetPathOf, titleOfBody, type ProposalKind } from '../../core/index.js';
import { logicProblems } from '../knowledge/logic.js';

// Every field carries a description: the dry run (PROTOCOL 6.9) quotes it beside each error,
// and OpenAPI and `akas schemas` show it, so a payload can be written from the schema alone.
const PATH_RE = '^/[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)*$';
const Path = (description: string) =>
  Type.String({
    pattern: PATH_RE,
    maxLength: 200,
    description: `${description} A path: lowercase segments of a-z, 0-9 and -, each after a /, e.g. /tools/pdf-to-text.`,
  });
const Hex64 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description: `${description} 64 lowercase hex.` });
const Title = (description = "The node's title, shown in lists and search.") => Type.String({ minLength: 1, maxLength: 120, description });
const Spec = (description = 'What the node is for, in one or two sentences (at most 2,000 characters).') =>
  Type.String({ minLength: 1, maxLength: 2000, description });
const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });
const Strings = (maxItems: number, maxLength: number, description: string) => Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems, description });
const strict = { additionalProperties: false } as const;
const obj = (description: string) => ({ ...strict, description });

export const BriefSource = Type.Object(
  {
    citation: Text(400, 'The work cited, as a reader would look it up.'),
    url: Type.Optional(Type.String({ format: 'uri', maxLength: 2000, description: 'Where to read it (an absolute URL).' })),
    author: Type.Optional(Text(200, 'Who wrote it.')),
    year: Type.Optional(Type.Integer({ minimum: 0, maximum: 9999, description: 'The year it appeared.' })),
  },
  obj('One source of the brief.'),
);

export const Brief = Type.Object(
  {
    id: Type.String({
      pattern: '^kb:[a-z0-9-]+$',
      maxLength: 120,
      description: "The brief's id: kb: and lowercase a-z, 0-9 and -, e.g. kb:retries-with-backoff.",
    }),
    domain: Text(60, 'The field it belongs to, e.g. distributed-systems; with topic it makes the default node path /{domain}/{topic}.'),
    topic: Text(80, 'What it is about, in a few words.'),
    title: Title("The brief's title."),
    version: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'The month this version was written, YYYY-MM, e.g. 2026-11.' }),
    verifiedBy: Type.Optional(Strings(20, 200, 'Who checked it (agent tags or names).')),
    levels: Type.Object(
      {
        tldr: Text(600, 'The brief in a few sentences (the tldr level).'),
        core: Type.Optional(Strings(20, 400, 'The core level: an array of short statements, one idea each.')),
        deep: Type.Optional(
          Type.Object(
            {
              definitions: Type.Optional(
                Type.Record(Type.String({ maxLength: 120 }), Type.String({ maxLength: 2000 }), {
                  maxProperties: 100,
                  description: 'Terms and what they mean: {"term": "meaning"}.',
                }),
              ),
              examples: Type.Optional(
                Type.Array(
                  Type.Object(
                    {
                      violation: Text(2000, 'What goes wrong.'),
                      fix: Text(2000, 'What to do instead.'),
                      note: Type.Optional(Text(2000, 'Why, or when it matters.')),
                    },
                    obj('One example.'),
                  ),
                  { maxItems: 50, description: 'Worked examples: what goes wrong and its fix.' },
                ),
              ),
              edgeCases: Type.Optional(Strings(50, 2000, 'Cases where the advice bends or breaks.')),
              sources: Type.Optional(Type.Array(BriefSource, { maxItems: 50, description: 'Where the brief comes from.' })),
            },
            obj('The deep level: definitions, examples, edge cases and sources.'),
          ),
        ),
      },
      obj('The brief at its three levels: tldr (required), core and deep.'),
    ),
    pitfalls: Type.Optional(Strings(50, 1000, 'Common mistakes.')),
    heuristics: Type.Optional(Strings(50, 1000, 'Rules of thumb.')),
    disputes: Type.Optional(
      Type.Array(Type.Object({ claim: Text(1000, 'What is disputed.'), positions: Strings(20, 1000, 'The positions taken.') }, obj('One dispute.')), {
        maxItems: 20,
        description: 'Claims that experts disagree on, with the positions.',
      }),
    ),
    related: Type.Optional(Strings(50, 200, 'Ids of related briefs (kb:...).')),
  },
  obj('The brief itself (PROTOCOL 6.2).'),
);

const NodeFields = (what: string) => ({ path: Path(`Where the ${what} goes in the knowledge tree.`), title: Title(), spec: Spec() });

export const PAYLOAD_SCHEMAS = {
  brief: Type.Object(
    { brief: Brief, path: Type.Optional(Path('The node path of the brief; by default /{domain}/{topic} as slugs.')) },
    obj('A brief proposal: {brief, path?}.'),
  ),
  capability: Type.Object(
    {
      ...NodeFields('capability'),
      payload: Type.Object(
        {
          trigger: Text(1000, 'When to reach for it: the situation that calls for it.'),
          alternative: Text(1000, 'What one would do without it.'),
          cost: Text(400, 'What it costs to use (time, money, setup), as text.'),
          whenNot: Text(1000, 'When not to use it.'),
          recipe: Type.Union([Text(4000, 'The steps as one text.'), Strings(50, 1000, 'The steps, one per item.')], {
            description: 'How to do it: one text, or an array of steps.',
          }),
        },
        obj('What the capability is: trigger, alternative, cost, whenNot and recipe, all required.'),
      ),
    },
    obj('A capability proposal: {path, title, spec, payload}.'),
  ),
  graph: Type.Object(
    {
      ...NodeFields('decision graph'),
      replaceExisting: Type.Optional(Type.Boolean({ description: 'true to propose a new version of a graph already published at path.' })),
      payload: Type.Object(
        {
          question: Text(1000, 'The question the graph answers.'),
          inputsRequired: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.]*$', maxLength: 64 }), {
            maxItems: 32,
            uniqueItems: true,
            description: 'The names of the inputs a traversal must give; every var a condition reads is one of them.',
          }),
          branches: Type.Array(
            Type.Object(
              {
                id: Type.String({
                  pattern: '^[a-z0-9][a-z0-9-]*$',
                  maxLength: 64,
                  description: "The branch's id, unique in the graph: lowercase a-z, 0-9 and -.",
                }),
                condition: Type.Union([Type.Boolean(), Type.Object({}, { additionalProperties: true, minProperties: 1, maxProperties: 1 })], {
                  description: 'When the branch is taken: true, or a JSON Logic rule such as {">": [{"var": "throughput"}, 10000]}.',
                }),
                to: Type.String({ minLength: 1, maxLength: 200, description: 'Where the branch leads: a node path or a short answer.' }),
                priors: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'How likely the branch is before any input, from 0 to 1.' })),
              },
              obj('One branch.'),
            ),
            { minItems: 1, maxItems: 32, description: 'The branches, in order; every one whose condition holds is followed.' },
          ),
        },
        obj('The graph: question, inputsRequired and branches.'),
      ),
    },
    obj('A decision-graph proposal: {path, title, spec, payload, replaceExisting?}.'),
  ),
  artifact: Type.Object(
    {
      ...NodeFields('artifact'),
      payload: Type.Object(
        {
          uri: Type.String({
            minLength: 1,
            maxLength: 2000,
            description: 'Where the bytes are: a URL, or /api/cas/{sha256} for a blob stored on this node (akas cas put).',
          }),
          mediaType: Type.String({
            pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+',
            maxLength: 200,
            description: 'The media type of the bytes, e.g. application/octet-stream.',
          }),
          sha256: Hex64('The sha256 of the bytes.'),
          artifactKind: Text(60, 'What kind of artifact: model, dataset, binary ...'),
          provenance: Type.Object(
            {
              trainedBy: Text(200, 'Who made it.'),
              on: Text(400, 'What it was made from (a dataset, a corpus).'),
              framework: Text(200, 'What it was made with, e.g. onnx.'),
              metrics: Type.Record(Type.String({ maxLength: 64 }), Type.Number(), {
                maxProperties: 50,
                description: 'Figures the maker measured: {"accuracy": 0.81}.',
              }),
              license: Text(120, 'Its licence, e.g. MIT.'),
              createdAt: Type.Integer({ minimum: 0, description: 'When it was made: Unix time in milliseconds (e.g. 1767225600000), not seconds.' }),
            },
            obj('Where it comes from: trainedBy, on, framework, metrics, license, createdAt, all required.'),
          ),
          bytes: Type.Integer({ minimum: 0, description: 'Its size in bytes.' }),
        },
        obj('The artifact: uri, mediaType, sha256, artifactKind, provenance and bytes, all required.'),
      ),
    },
    obj('An artifact proposal: {path, title, spec, payload}.'),
  ),
  'eval-result': Type.Object(
    {
      artifactPath: Path('The artifact evaluated (published, or pending).'),
      metric: Type.String({ pattern: '^[A-Za-z0-9_.@/-]+$', maxLength: 64, description: "The metric's name, e.g. accuracy." }),
      score: Type.Number({ description: 'The score measured.' }),
      datasetSha256: Hex64('The sha256 of the evaluation dataset.'),
      harnessVersionSha: Type.String({
        pattern: '^[0-9a-f]{7,64}$',
        description: 'The version of the harness that ran it: a commit hash, 7 to 64 lowercase hex.',
      }),
      runner: Text(200, 'Who ran it.'),
      samplesSha256: Type.Optional(Hex64('The sha256 of the per-sample results, if kept.')),
    },
    obj('An eval-result proposal: an independent evaluation of an artifact.'),
  ),
  'tree-expansion': Type.Object(
    {
      parentPath: Type.Union([Path('The branch to add children under.'), Type.Literal('/')], {
        description: 'The branch to add children under, or / for the root.',
      }),
      children: Type.Array(
        Type.Object(
          {
            slug: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 60, description: "The child's last path segment: lowercase a-z, 0-9 and -." }),
            title: Title("The child branch's title."),
            spec: Spec('What belongs under the child branch.'),
          },
          obj('One child branch.'),
        ),
        { minItems: 1, maxItems: 20, description: 'The branches to add (1 to 20), each with a unique slug.' },
      ),
    },
    obj('A tree-expansion proposal: new branches under a path.'),
  ),
  'spec-sharpening': Type.Object(
    { path: Path('The node whose spec to rewrite.'), spec: Spec('The new spec.'), rationale: Text(1000, 'Why the new spec is better.') },
    obj('A spec-sharpening proposal: a better spec for a node.'),
  ),
} satisfies Record<ProposalKind, TSchema>;

export type PayloadOf<K extends ProposalKind> = Static<(typeof PAYLOAD_SCHEMAS)[K]>;
export type AnyPayload = { [K in ProposalKind]: PayloadOf<K> }[ProposalKind];

export { KIND_ROUTES, judgeUrl, detailUrl } from '../../core/index.js';

/** The proposal kind a request names (a body, a query, a path), or 400 invalid_kind naming the kinds there are (PROTOCOL 6.8). */
export function proposalKindOf(kind: string): ProposalKind {
  if (isProposalKind(kind)) return kind;
  throw new ServiceError('invalid_kind', `No proposal kind ${kind}.`, { field: 'kind', hint: `One of: ${PROPOSAL_KINDS.join(', ')}.` });
}

const isProposalKind = (kind: string): kind is ProposalKind => (PROPOSAL_KINDS as readonly string[]).includes(kind);

/** The knowledge-tree path a proposal targets (null for eval results, which attach to an artifact): src/core/content.ts. */
export const targetPath = (kind: ProposalKind, payload: AnyPayload): string | null => targetPathOf(kind, payload);

/** The title shown in queues and detail views (src/core/content.ts). */
export const titleOf = (kind: ProposalKind, payload: AnyPayload): string => titleOfBody(kind, payload);

/**
 * Keys no two pending proposals may share: the node path a kind writes (briefs, capabilities,
 * graphs and artifacts share the node namespace), the brief id, each child a tree expansion
 * adds, the spec a sharpening rewrites, and the content hash of the payload itself. That last
 * key hashes the request body as sent (`content:${kind}:${sha256 of its JCS}`); it is not the
 * contentSha256 of PROTOCOL 6.10 (src/core/content.ts) and keeps its own meaning.
 */
export function conflictKeys(kind: ProposalKind, payload: AnyPayload): Array<{ key: string; field: string }> {
  const keys: Array<{ key: string; field: string }> = [{ key: `content:${kind}:${sha256Hex(canonicalize(payload))}`, field: 'payload' }];
  switch (kind) {
    case 'brief': {
      const p = payload as PayloadOf<'brief'>;
      keys.push({ key: `brief:${p.brief.id}`, field: 'brief.id' }, { key: `node:${targetPath(kind, payload)}`, field: 'path' });
      break;
    }
    case 'capability':
    case 'graph':
    case 'artifact':
      keys.push({ key: `node:${(payload as { path: string }).path}`, field: 'path' });
      break;
    case 'tree-expansion': {
      const p = payload as PayloadOf<'tree-expansion'>;
      const base = p.parentPath === '/' ? '' : p.parentPath;
      for (const c of p.children) keys.push({ key: `node:${base}/${c.slug}`, field: 'children.slug' });
      break;
    }
    case 'spec-sharpening':
      keys.push({ key: `spec:${(payload as PayloadOf<'spec-sharpening'>).path}`, field: 'path' });
      break;
    case 'eval-result':
      break;
  }
  return keys;
}

/** Checks that go beyond the JSON Schema: JSON Logic conditions and unique branch ids. */
export function semanticErrors(kind: ProposalKind, payload: AnyPayload): Array<{ field: string; reason: string }> {
  const errors: Array<{ field: string; reason: string }> = [];
  if (kind === 'graph') {
    const p = payload as PayloadOf<'graph'>;
    const inputs = new Set(p.payload.inputsRequired);
    const ids = new Set<string>();
    p.payload.branches.forEach((b, i) => {
      if (ids.has(b.id)) errors.push({ field: `payload.branches[${i}].id`, reason: 'branch ids are unique' });
      ids.add(b.id);
      if (typeof b.condition !== 'boolean') errors.push(...logicProblems(b.condition, inputs, `payload.branches[${i}].condition`));
    });
  }
  if (kind === 'tree-expansion') {
    const slugs = (payload as PayloadOf<'tree-expansion'>).children.map((c) => c.slug);
    if (new Set(slugs).size !== slugs.length) errors.push({ field: 'children', reason: 'child slugs are unique' });
  }
  return errors;
}

const CAS_PATH = /^\/api\/cas\/([0-9a-fA-F]{64})$/;

/**
 * The blob an artifact uri names when it points into this node's content store (PROTOCOL 6.2:
 * a path under /api/cas/<sha256>): the path itself, or the absolute fetchUrl this node
 * hands out (same origin). Lowercase; undefined for any other uri, whose bytes the node
 * does not check.
 */
export function casHashOfUri(uri: string, origin?: string): string | undefined {
  if (uri.startsWith('/')) return CAS_PATH.exec(uri)?.[1]?.toLowerCase();
  if (!origin) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.origin !== new URL(origin).origin || url.search || url.hash) return undefined;
  return CAS_PATH.exec(url.pathname)?.[1]?.toLowerCase();
}
