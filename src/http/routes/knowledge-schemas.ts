// The schemas of the knowledge reads (PROTOCOL 10): the unified node response, briefs with their
// manifests, the manifest checks, traversals, and the queries that read them, as documented in
// /openapi.json.
import { Type } from 'typebox';
import { BRIEF_LEVELS } from '../../domain/knowledge/manifests.js';
import { Any, Closed, FreeObject, Hex64, Ms, Nullable, OneOf, Open } from '../schemas.js';

const Str = Type.String();
const NodeKindSchema = Type.String({ enum: ['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'] });
export const BriefManifestSchema = Closed({
  briefId: Str,
  level: Str,
  version: Str,
  tokenCount: Type.Integer(),
  fetchedAt: Ms(),
  contentSha256: Hex64,
  proposalId: Type.Optional(Str),
  proposalContentSha256: Type.Optional(Hex64),
  publicationEventId: Type.Optional(Nullable(Str)),
  signature: Hex64,
  signingKeyId: Str,
  nodeSignature: Type.Optional(Closed({ algorithm: Type.Literal('Ed25519'), issuer: Str, signature: Type.String({ pattern: '^[0-9a-f]{128}$' }) })),
});
/** What binds a read to the proposal that published it (PROTOCOL 10.7). */
export const EvidenceSchema = Open(
  {
    proposalId: Str,
    kind: Str,
    contentSha256: Hex64,
    contentBinding: Type.String({ enum: ['log', 'store'] }),
    content: Type.Optional(Open()),
    publication: Nullable(Open({ id: Str, entry: Open(), inclusion: Open(), checkpoint: Str })),
    log: Open({ verifierKey: Str, endorsement: Open() }),
    judgments: Type.Optional(Type.Array(Open(), { description: 'With ?evidence=full: the judgments the decision counted, as PROTOCOL 6.6 shows them.' })),
    judges: Type.Optional(Type.Array(Open(), { description: "With ?evidence=full: the judges' keys and windows (PROTOCOL 8.4)." })),
    credentials: Type.Optional(Type.Array(Open(), { description: 'With ?evidence=full: the judgment credentials (PROTOCOL 8.1).' })),
    issuerKeys: Type.Optional(Open({}, "With ?evidence=full: the issuer's keys and signed rotations (PROTOCOL 8.3).")),
    status: Type.Optional(
      Open(
        { head: Type.Optional(Open()), lists: Type.Array(Open()), versions: Type.Array(Open()) },
        "With ?evidence=full: the status head at the publication's checkpoint, the lists it names, " +
          'the versions that changed these credentials (PROTOCOL 8.4, 8.7).',
      ),
    ),
  },
  'The proposal that published what is served, its contentSha256, and its proposal.published event in the log with an inclusion proof and a ' +
    'signed checkpoint (PROTOCOL 10.7): `akas verify node` checks it offline. With ?evidence=full, the decision too: its judgments, their ' +
    "credentials and those credentials' status, proven against the checkpoint of the read.",
);

/** `?evidence=full` (PROTOCOL 10.7): the evidence with the decision's parts, for a reader that checks the read before it uses it. */
export const EvidenceQuery = Type.Optional(OneOf(['full'] as const));

/** The unified node response (PROTOCOL 10.2). */
export const NodeAnswer = Closed(
  {
    path: Str,
    title: Str,
    spec: Str,
    kind: NodeKindSchema,
    refinedAt: Type.Optional(Str),
    version: Type.Integer(),
    proposalId: Type.Optional(Str),
    publishedAt: Type.Optional(Nullable(Ms())),
    children: Type.Optional(Type.Array(Str)),
    childrenNextCursor: Type.Optional(Nullable(Str)),
    briefId: Type.Optional(Str),
    brief: Type.Optional(Open()),
    tldr: Type.Optional(Str),
    core: Type.Optional(Str),
    deep: Type.Optional(Str),
    manifest: Type.Optional(Open({ signature: Hex64, signingKeyId: Str }, 'A BriefManifest, or an artifact manifest (HMAC-SHA256 by the node).')),
    payload: Type.Optional(Open()),
    branches: Type.Optional(Type.Array(Any)),
    sha256Verification: Type.Optional(
      Closed({ status: Type.String({ enum: ['self-reported', 'platform-verified', 'integrity-failed'] }), method: Str, note: Str, casUploadHint: Str }),
    ),
    independentEvals: Type.Optional(Type.Array(Open())),
    evalSummary: Type.Optional(Open({ count: Type.Integer(), distinctRunners: Type.Integer(), byMetric: Open() })),
    note: Type.Optional(Str),
    evidence: Type.Optional(EvidenceSchema),
  },
  'A node of the published tree: branch, brief, capability, decision or artifact (PROTOCOL 10.2). ETag; 304 on If-None-Match.',
);
export const NotModified = { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' };
export const ManifestBody = Type.Object({ manifest: FreeObject({ maxProperties: 20 }) }, { additionalProperties: false });
export const Check = { valid: Type.Boolean(), reason: Type.Optional(Str) };
export const TraversalAnswer = Closed(
  {
    traversalId: Str,
    path: Str,
    inputs: Type.Optional(Open({}, 'The inputs: in the answer to POST /api/knowledge/dg/traverse only (the node keeps their hash alone).')),
    inputsSha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the JCS of the inputs.' }),
    complete: Type.Boolean(),
    stopped: Type.Optional(
      Closed({ reason: Type.String({ enum: ['depth-limit', 'step-limit', 'logic-budget'] }), at: Str, depth: Type.Integer(), limit: Type.Integer() }),
    ),
    steps: Type.Array(Closed({ path: Str, question: Str, depth: Type.Integer(), branches: Type.Array(Closed({ id: Str, holds: Type.Boolean(), to: Str })) })),
    leaves: Type.Array(
      Closed({
        to: Str,
        depth: Type.Integer(),
        via: Type.Array(Closed({ path: Str, branch: Str })),
        node: Type.Optional(Closed({ path: Str, kind: Str, title: Str })),
      }),
    ),
    forks: Type.Integer(),
    deadEnds: Type.Array(Str),
    at: Ms(),
  },
  'The walk of a decision graph: every step, the leaves it reached, its forks (PROTOCOL 10.5).',
);

export const Level = Type.Optional(OneOf(BRIEF_LEVELS));
export const NodeQuery = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    level: Level,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    evidence: EvidenceQuery,
  },
  { additionalProperties: false },
);
export const ByPathQuery = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    level: Level,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    evidence: EvidenceQuery,
  },
  { additionalProperties: false },
);
