// The seven proposal kinds and their id prefixes (PROTOCOL 6.1). No imports: the CLI reads
// these at start-up.

export const PROPOSAL_PREFIX = {
  brief: 'prop_',
  capability: 'cprop_',
  graph: 'gprop_',
  artifact: 'aprop_',
  'eval-result': 'eprop_',
  'spec-sharpening': 'sprop_',
  'tree-expansion': 'tprop_',
} as const;
export type ProposalKind = keyof typeof PROPOSAL_PREFIX;
export const PROPOSAL_KINDS = Object.keys(PROPOSAL_PREFIX) as ProposalKind[];

export const PROPOSAL_ID_RE = /^(prop|cprop|gprop|aprop|eprop|sprop|tprop)_[0-9a-f]{16}$/;

/** The kind a proposal id belongs to, from its prefix; null if it is not a proposal id. */
export function kindOfProposalId(id: string): ProposalKind | null {
  if (!PROPOSAL_ID_RE.test(id)) return null;
  const prefix = id.slice(0, id.indexOf('_') + 1);
  for (const kind of PROPOSAL_KINDS) if (PROPOSAL_PREFIX[kind] === prefix) return kind;
  return null;
}
