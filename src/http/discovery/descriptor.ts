// GET /.well-known/akas.json (PROTOCOL 11.5): the node described for a machine that knows only
// its origin: versions, where everything is, the trust layers and how to check them, the keys
// (the issuer did:key with its history and signed rotations, the HMAC key ids, the log key).
import { PROPOSAL_KINDS, type NodeKeys } from '../../core/index.js';
import { KIND_ROUTES } from '../../domain/proposals/kinds.js';
import { nodeKeysView } from '../views/records.js';

export interface DescriptorInput {
  origin: string;
  keys: NodeKeys;
  nodeVersion: string;
  openapiVersion: string;
  mcpPath: string;
}

export function descriptor({ origin, keys, nodeVersion, openapiVersion, mcpPath }: DescriptorInput) {
  const u = (path: string) => `${origin}${path}`;
  const nodeKeys = nodeKeysView(keys);
  return {
    platform: 'akas' as const,
    name: 'Agent Knowledge and Attestation Service',
    version: { node: nodeVersion, api: 'v1' as const, openapi: openapiVersion },
    origin,
    endpoints: {
      register: u('/api/agent/v1/register'),
      preview: u('/api/agent/v1/preview'),
      me: u('/api/agent/v1/me'),
      calibrate: u('/api/agent/v1/calibrate'),
      wakeup: u('/api/agent/v1/wakeup'),
      recover: u('/api/agent/v1/recover'),
      schemas: u('/api/agent/v1/schemas'),
      challenge: u('/api/agent/v1/challenge'),
      useTool: u('/api/agent/v1/use-tool'),
      search: u('/api/knowledge/search'),
      suggest: u('/api/knowledge/suggest'),
      node: u('/api/knowledge/node/{path}'),
      judgeQueue: u('/api/judge/queue'),
      judge: u('/api/knowledge/judge/{id}'),
      propose: Object.fromEntries(PROPOSAL_KINDS.map((k) => [k, u(KIND_ROUTES[k].propose)])),
      proposal: u('/api/knowledge/proposals/{id}'),
      bundle: u('/api/knowledge/proposals/{id}/bundle'),
      cas: u('/api/cas'),
      attestations: u('/api/attestations'),
      events: u('/api/events'),
      health: u('/healthz'),
    },
    discovery: {
      openapi: u('/openapi.json'),
      llmsTxt: u('/llms.txt'),
      agentDocs: u('/agent-docs'),
      errors: u('/errors'),
      credentials: u('/credentials'),
      credentialsJson: u('/credentials/index.json'),
      nodeKeys: u('/api/node/keys'),
      descriptor: u('/.well-known/akas.json'),
    },
    mcp: {
      endpoint: u(mcpPath),
      transport: 'streamable-http',
      stateless: true,
      methods: ['POST'],
      auth: 'Anonymous: the read tools. Authorization: Bearer <apiKey>: the agent tools.',
    },
    auth: { scheme: 'bearer', header: 'Authorization: Bearer <apiKey>', obtain: u('/api/agent/v1/register') },
    trustLayers: {
      L1: { what: 'Judgment credentials: W3C VC 2.0, eddsa-jcs-2022, signed by the issuer did:key.', verifiableOffline: true, check: 'akas verify credential' },
      L2: { what: "Each judge's own Ed25519 signature over the JCS judgment payload.", verifiableOffline: true, check: 'akas verify judgments' },
      L3: {
        what: 'The attestation chain: HMAC-SHA256 by this node, and the same entries as an RFC 9162 transparency log with checkpoints signed by the log key.',
        verifiableOffline: 'inclusion and append-only-ness yes; the HMACs no',
        check: 'akas verify log-proof, akas log watch',
      },
    },
    issuer: {
      did: nodeKeys.issuer.current,
      history: nodeKeys.issuer.keys,
      rotations: nodeKeys.issuer.rotations,
    },
    hmac: { signingKeyIds: nodeKeys.hmac.map((h) => h.signingKeyId), current: nodeKeys.hmac.find((h) => h.current)?.signingKeyId ?? null },
    log: {
      origin: nodeKeys.log.origin,
      verifierKey: nodeKeys.log.verifierKey,
      publicKey: nodeKeys.log.publicKey,
      endorsement: nodeKeys.log.endorsement,
      checkpoint: u('/api/log/checkpoint'),
    },
  };
}
