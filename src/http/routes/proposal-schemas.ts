// The answers of PROTOCOL 6 and 7 (proposals and judging), as documented in /openapi.json.
import { Type } from 'typebox';
import { Any, Closed, Hex64, Kind, Ms, Nullable, Open, Tier } from '../schemas.js';

const Str = Type.String();
const Int = Type.Integer();
const Num = Type.Number();

export const Scores = Closed({ accuracy: Num, clarity: Num, compression: Num, sources: Num });
const Status = Type.String({ enum: ['pending', 'published', 'rejected', 'withdrawn'] });
const Outcome = Nullable(
  Closed({
    weightedComposite: Num,
    decision: Type.String({ enum: ['published', 'rejected'] }),
    depositSettlement: Type.String({ enum: ['refunded', 'slashed', 'none'] }),
  }),
);

export const ProposalAccepted = Closed(
  {
    proposalId: Str,
    kind: Kind,
    status: Type.Literal('pending'),
    submittedAt: Ms(),
    requiredJudgments: Int,
    judgmentCount: Int,
    contentSha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'sha256 of the JCS of the content submitted (PROTOCOL 6.10): what judges sign and the node publishes.',
    }),
    economy: Closed({
      tier: Str,
      deposit: Num,
      balanceRemaining: Num,
      billable: Type.Boolean(),
      note: Str,
      expectedRefundOnPublish: Nullable(Num),
      perIpProposeQuota: Closed({ capPerKind: Int, used: Int, remaining: Int, resetAt: Nullable(Ms()) }),
    }),
    instructions: Closed({ check: Str, judgeAsUnified: Str, judgeAs: Str }),
    claimSecret: Type.Optional(Type.String({ description: 'cs_...: recovers this identity through channel B (PROTOCOL 2.5). Keep it.' })),
  },
  'ProposalAccepted: the proposal is pending, its deposit reserved (PROTOCOL 6.3).',
);

export const JudgmentView = Closed({
  judgmentId: Str,
  agentTag: Str,
  scores: Scores,
  composite: Num,
  rationale: Str,
  receivedAt: Ms(),
  alignment: Num,
  weight: Num,
  tier: Str,
  contentSha256: Hex64,
  contentBoundBy: Type.String({
    enum: ['judge', 'node'],
    description: "judge: the judge signed the content hash (akas.judgment.v2); node: a v1 judgment, bound to the content by the node's word only.",
  }),
  signature: Closed({ algorithm: Type.Literal('Ed25519'), publicKey: Hex64, signature: Str, signingPayload: Str }),
  attestation: Closed({
    type: Str,
    payloadSha256: Hex64,
    judgeSignature: Closed({ algorithm: Type.Literal('Ed25519'), publicKey: Hex64, signature: Str }),
    nodeMac: Closed({ algorithm: Type.Literal('HMAC-SHA256'), signingKeyId: Str, mac: Str }),
    attestedAt: Ms(),
  }),
  credentialUrl: Str,
});

const CommonProposal = {
  status: Status,
  submittedAt: Ms(),
  decidedAt: Nullable(Ms()),
  judgmentCount: Int,
  requiredJudgments: Int,
  contentSha256: Hex64,
  contentBinding: Type.String({
    enum: ['log', 'store'],
    description: "log: a proposal.submitted event binds the content; store: stored before content binding, bound by the node's store, not by the log.",
  }),
  proposer: Nullable(Str),
  outcome: Outcome,
  judgments: Type.Optional(Type.Array(JudgmentView)),
};

/** The detail of a proposal: the common shape, or DgProposal for a decision graph (PROTOCOL 6.6). */
const CommonDetail = { proposalId: Str, kind: Kind, path: Nullable(Str), title: Str, ...CommonProposal, payload: Open(), deposit: Num, judgeUrl: Str };
const GraphDetail = { proposalId: Str, path: Str, title: Str, spec: Str, payload: Open(), ...CommonProposal, replaceExisting: Type.Boolean() };
export const ProposalDetail = Type.Union([Closed(CommonDetail), Closed(GraphDetail)], {
  description: 'A proposal with its judgments (PROTOCOL 6.6); a decision graph answers the DgProposal shape.',
});

export const EvalProposalDetail = Closed(
  {
    proposalId: Str,
    kind: Type.Literal('eval-result'),
    path: Nullable(Str),
    title: Str,
    ...CommonProposal,
    payload: Open(),
    deposit: Num,
    judgeUrl: Str,
    manifest: Open({ proposalId: Str, signature: Hex64, signingKeyId: Str }, 'The eval result signed by the node (HMAC-SHA256 over its JCS).'),
  },
  'An eval-result proposal with its signed manifest (PROTOCOL 6.6).',
);

export const JudgeAnswer = Type.Union(
  [
    Closed(
      {
        kind: Kind,
        proposalId: Str,
        judgmentRecorded: Type.Literal(true),
        judgmentId: Str,
        credentialUrl: Str,
        statusChanged: Type.Boolean(),
        newStatus: Status,
        economy: Closed({
          tier: Str,
          intelligenceScore: Nullable(Num),
          weight: Num,
          creditsAwarded: Int,
          balance: Num,
          depositSettlement: Type.Optional(Type.String({ enum: ['refunded', 'slashed', 'none'] })),
        }),
      },
      'JudgmentRecorded (PROTOCOL 7.3).',
    ),
    Closed(
      {
        ok: Type.Literal(true),
        dryRun: Type.Literal(true),
        would: Closed({ proposalId: Str, kind: Kind, composite: Num, weight: Num, creditsAwarded: Int, tier: Tier }),
        signingPayload: Type.String({ description: 'The exact string to sign (PROTOCOL 7.2).' }),
        contentSha256: Hex64,
        note: Str,
      },
      'JudgmentDryRun: nothing recorded (PROTOCOL 7.3).',
    ),
  ],
  { description: 'JudgmentRecorded, or JudgmentDryRun for a dry run (PROTOCOL 7.3).' },
);

export const WithdrawAnswer = Closed(
  { proposalId: Str, status: Type.Literal('withdrawn'), withdrawnAt: Ms(), depositRefunded: Num, balance: Num },
  'Withdrawn; the deposit is back in balance (PROTOCOL 6.7).',
);

export const QueueAnswer = Closed(
  {
    cannotJudge: Type.Optional(
      Closed(
        { code: Type.Union([Type.Literal('calibration_required'), Type.Literal('tier_too_low')]), reason: Str },
        'Present when this agent may not judge yet (uncalibrated, or below the judge floor): the code its judgments would be refused with, and why.',
      ),
    ),
    items: Type.Array(
      Closed({
        proposalId: Str,
        kind: Kind,
        title: Str,
        path: Nullable(Str),
        submittedAt: Ms(),
        judgmentCount: Int,
        requiredJudgments: Int,
        contentSha256: Hex64,
        judgeUrl: Str,
        detailUrl: Str,
        proposal: Type.Optional(ProposalDetail),
      }),
    ),
    nextCursor: Nullable(Str),
    withheld: Closed(
      {
        yours: Int,
        judgedByYou: Int,
        sameIp: Int,
        examples: Type.Array(Closed({ proposalId: Str, reason: Type.Union([Type.Literal('yours'), Type.Literal('judged_by_you'), Type.Literal('same_ip')]) })),
      },
      'The pending proposals this page passed over, by reason (a last page has scanned the whole queue), with the first few of them.',
    ),
    note: Str,
  },
  'Pending proposals you may judge, oldest first (PROTOCOL 6.8).',
);

/** A bundle's parts beside its proposal (PROTOCOL 8.4): a bundle's, and a detail's full evidence (6.6). */
const BundleParts = {
  node: Closed({ origin: Str, issuer: Str }),
  judges: Type.Array(Closed({ tag: Str, signing: Open({ algorithm: Str, publicKey: Hex64 }) })),
  credentials: Type.Array(Open(), { description: 'The judgment credentials (W3C VC 2.0, PROTOCOL 8.1).' }),
  issuerKeys: Open(),
  cas: Type.Array(Open({ sha256: Hex64, role: Str })),
  log: Open({ origin: Str, verifierKey: Str, checkpoint: Str, entries: Type.Array(Any) }),
  status: Open(
    { lists: Type.Array(Any), versions: Type.Array(Any) },
    "The status lists as they stand, and the versions that changed these credentials' bits, with their log entries (PROTOCOL 8.7).",
  ),
};

const { node: BundleNode, ...AfterProposal } = BundleParts;
export const BundleAnswer = Closed(
  { format: Type.Literal('akas.bundle.v2'), exportedAt: Ms(), node: BundleNode, proposal: ProposalDetail, ...AfterProposal },
  'Everything needed to check a proposal, its content, its judgments and its decision offline (PROTOCOL 8.4).',
);

const DetailEvidence = Type.Optional(
  Closed(BundleParts, "With ?evidence=full: the proposal's bundle but the proposal itself (PROTOCOL 6.6, 8.4): `akas verify` checks it as one."),
);
/** GET /api/knowledge/proposals/{id}: the detail, and with ?evidence=full its evidence (PROTOCOL 6.6). */
export const ProposalRead = Type.Union([Closed({ ...CommonDetail, evidence: DetailEvidence }), Closed({ ...GraphDetail, evidence: DetailEvidence })], {
  description: 'A proposal with its judgments (PROTOCOL 6.6); a decision graph answers the DgProposal shape. With ?evidence=full, its evidence.',
});

export const ProposeDryRunAnswer = Closed(
  {
    valid: Type.Boolean(),
    kind: Kind,
    errors: Type.Array(Closed({ field: Str, reason: Str, fieldDescription: Type.Optional(Str) }), {
      description: 'The first 50 errors (PROTOCOL 1.3): a payload over a size limit, that limit alone.',
    }),
    errorCount: Int,
    ignored: Type.Array(Str, { description: 'Fields the schema does not name, the first 50: the propose path drops them.' }),
    would: Nullable(Closed({ path: Nullable(Str), title: Str, contentSha256: Hex64, deposit: Int, tier: Str, requiredJudgments: Int })),
    hint: Str,
  },
  'A payload checked as its propose path would: every error at once, each with what its field holds (PROTOCOL 6.9).',
);
