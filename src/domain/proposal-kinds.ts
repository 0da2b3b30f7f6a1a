// The seven proposal kinds: their payload schemas (PROTOCOL 6.2), the node path each one targets, and the keys two pending proposals may not
// share (id_conflict). One JSON Schema per kind feeds fastify's validation and, later,
// OpenAPI and the MCP tool schemas.
import { Type, type Static, type TSchema } from 'typebox';
import { canonicalize, sha256Hex, type ProposalKind } from '../core/index.js';
import { logicProblems } from './logic.js';

const Path = Type.String({ pattern: '^/[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)*$', maxLength: 200 });
const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Title = Type.String({ minLength: 1, maxLength: 120 });
const Spec = Type.String({ minLength: 1, maxLength: 2000 });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Strings = (maxItems: number, maxLength: number) => Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems });
const strict = { additionalProperties: false } as const;

export const BriefSource = Type.Object(
  {
    citation: Text(400),
    url: Type.Optional(Type.String({ format: 'uri', maxLength: 2000 })),
    author: Type.Optional(Text(200)),
    year: Type.Optional(Type.Integer({ minimum: 0, maximum: 9999 })),
  },
  strict,
);

export const Brief = Type.Object(
  {
    id: Type.String({ pattern: '^kb:[a-z0-9-]+$', maxLength: 120 }),
    domain: Text(60),
    topic: Text(80),
    title: Title,
    version: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' }),
    verifiedBy: Type.Optional(Strings(20, 200)),
    levels: Type.Object(
      {
        tldr: Text(600),
        core: Type.Optional(Strings(20, 400)),
        deep: Type.Optional(
          Type.Object(
            {
              definitions: Type.Optional(Type.Record(Type.String({ maxLength: 120 }), Type.String({ maxLength: 2000 }), { maxProperties: 100 })),
              examples: Type.Optional(
                Type.Array(Type.Object({ violation: Text(2000), fix: Text(2000), note: Type.Optional(Text(2000)) }, strict), { maxItems: 50 }),
              ),
              edgeCases: Type.Optional(Strings(50, 2000)),
              sources: Type.Optional(Type.Array(BriefSource, { maxItems: 50 })),
            },
            strict,
          ),
        ),
      },
      strict,
    ),
    pitfalls: Type.Optional(Strings(50, 1000)),
    heuristics: Type.Optional(Strings(50, 1000)),
    disputes: Type.Optional(Type.Array(Type.Object({ claim: Text(1000), positions: Strings(20, 1000) }, strict), { maxItems: 20 })),
    related: Type.Optional(Strings(50, 200)),
  },
  strict,
);

const NodeFields = { path: Path, title: Title, spec: Spec };

export const PAYLOAD_SCHEMAS = {
  brief: Type.Object({ brief: Brief, path: Type.Optional(Path) }, strict),
  capability: Type.Object(
    {
      ...NodeFields,
      payload: Type.Object(
        {
          trigger: Text(1000),
          alternative: Text(1000),
          cost: Text(400),
          whenNot: Text(1000),
          recipe: Type.Union([Text(4000), Strings(50, 1000)]),
        },
        strict,
      ),
    },
    strict,
  ),
  graph: Type.Object(
    {
      ...NodeFields,
      replaceExisting: Type.Optional(Type.Boolean()),
      payload: Type.Object(
        {
          question: Text(1000),
          inputsRequired: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.]*$', maxLength: 64 }), { maxItems: 32, uniqueItems: true }),
          branches: Type.Array(
            Type.Object(
              {
                id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 }),
                condition: Type.Union([Type.Boolean(), Type.Object({}, { additionalProperties: true, minProperties: 1, maxProperties: 1 })]),
                to: Type.String({ minLength: 1, maxLength: 200 }),
                priors: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
              },
              strict,
            ),
            { minItems: 1, maxItems: 32 },
          ),
        },
        strict,
      ),
    },
    strict,
  ),
  artifact: Type.Object(
    {
      ...NodeFields,
      payload: Type.Object(
        {
          uri: Type.String({ minLength: 1, maxLength: 2000 }),
          mediaType: Type.String({ pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+', maxLength: 200 }),
          sha256: Hex64,
          artifactKind: Text(60),
          provenance: Type.Object(
            {
              trainedBy: Text(200),
              on: Text(400),
              framework: Text(200),
              metrics: Type.Record(Type.String({ maxLength: 64 }), Type.Number(), { maxProperties: 50 }),
              license: Text(120),
              createdAt: Type.Integer({ minimum: 0 }),
            },
            strict,
          ),
          bytes: Type.Integer({ minimum: 0 }),
        },
        strict,
      ),
    },
    strict,
  ),
  'eval-result': Type.Object(
    {
      artifactPath: Path,
      metric: Type.String({ pattern: '^[A-Za-z0-9_.@/-]+$', maxLength: 64 }),
      score: Type.Number(),
      datasetSha256: Hex64,
      harnessVersionSha: Type.String({ pattern: '^[0-9a-f]{7,64}$' }),
      runner: Text(200),
      samplesSha256: Type.Optional(Hex64),
    },
    strict,
  ),
  'tree-expansion': Type.Object(
    {
      parentPath: Type.Union([Path, Type.Literal('/')]),
      children: Type.Array(
        Type.Object({ slug: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 60 }), title: Title, spec: Spec }, strict),
        { minItems: 1, maxItems: 20 },
      ),
    },
    strict,
  ),
  'spec-sharpening': Type.Object({ path: Path, spec: Spec, rationale: Text(1000) }, strict),
} satisfies Record<ProposalKind, TSchema>;

export type PayloadOf<K extends ProposalKind> = Static<(typeof PAYLOAD_SCHEMAS)[K]>;
export type AnyPayload = { [K in ProposalKind]: PayloadOf<K> }[ProposalKind];

export { KIND_ROUTES, judgeUrl, detailUrl } from '../core/index.js';

const slug = (s: string) =>
  s
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'topic';

/** The knowledge-tree path a proposal targets (null for eval results, which attach to an artifact). */
export function targetPath(kind: ProposalKind, payload: AnyPayload): string | null {
  switch (kind) {
    case 'brief': {
      const p = payload as PayloadOf<'brief'>;
      return p.path ?? `/${slug(p.brief.domain)}/${slug(p.brief.topic)}`;
    }
    case 'tree-expansion':
      return (payload as PayloadOf<'tree-expansion'>).parentPath;
    case 'eval-result':
      return null;
    default:
      return (payload as { path: string }).path;
  }
}

/** The title shown in queues and detail views. */
export function titleOf(kind: ProposalKind, payload: AnyPayload): string {
  switch (kind) {
    case 'brief':
      return (payload as PayloadOf<'brief'>).brief.title;
    case 'eval-result': {
      const p = payload as PayloadOf<'eval-result'>;
      return `${p.metric} = ${p.score} on ${p.artifactPath}`;
    }
    case 'tree-expansion': {
      const p = payload as PayloadOf<'tree-expansion'>;
      return `expand ${p.parentPath} with ${p.children.map((c) => c.slug).join(', ')}`;
    }
    case 'spec-sharpening':
      return `sharpen the spec of ${(payload as PayloadOf<'spec-sharpening'>).path}`;
    default:
      return (payload as { title: string }).title;
  }
}

/**
 * Keys no two pending proposals may share: the node path a kind writes (briefs, capabilities,
 * graphs and artifacts share the node namespace), the brief id, each child a tree expansion
 * adds, the spec a sharpening rewrites, and the content hash of the payload itself.
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
