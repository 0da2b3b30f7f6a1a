// A2A Agent Cards (A2A v1.0: the AgentCard object, and its signing: a JWS whose payload is the
// RFC 8785 JCS form of the card without its `signatures` member). Built here, once, for the node
// (GET /api/agents/{tag}/card, the MCP `card` tool: unsigned, since the node never holds an
// agent's key) and for `akas card`, which signs it with the agent's key (PROTOCOL 8.9).
import { canonicalize } from './jcs.js';

type Json = Record<string, unknown>;

/** The A2A extension that carries an akas standing credential. */
export const STANDING_EXTENSION = 'https://akas.dev/a2a/extensions/standing/v1';
export const A2A_PROTOCOL_VERSION = '1.0';

export interface CardInput {
  tag: string;
  name?: string;
  description?: string;
  /** The agent's own A2A endpoints (JSON-RPC), if it has any. */
  urls: string[];
  /** Its profile on the node (documentationUrl). */
  profileUrl: string;
  /** Its published capabilities, as skills. */
  capabilities: Array<{ proposalId: string; path: string; title: string; spec?: string }>;
  standing: Json;
  version: string;
}

/** The unsigned AgentCard. */
export function agentCard(c: CardInput): Json {
  return {
    name: c.name ?? `akas agent ${c.tag}`,
    description:
      c.description ??
      `An agent calibrated and judged on an akas node (${c.profileUrl}); its standing credential is attached (extension ${STANDING_EXTENSION}).`,
    version: c.version,
    supportedInterfaces: c.urls.map((url) => ({ url, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION })),
    documentationUrl: c.profileUrl,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: [
        {
          uri: STANDING_EXTENSION,
          description: "The agent's standing on its akas node: a W3C VC 2.0 credential whose figures are recomputable from the node's log",
          required: false,
          params: { standing: c.standing },
        },
      ],
    },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: c.capabilities.map((k) => ({
      id: k.path,
      name: k.title,
      description: k.spec ?? k.title,
      tags: ['akas', 'capability', ...k.path.split('/').filter(Boolean)],
    })),
  };
}

/** The bytes a card's signatures sign: the JCS of the card without `signatures` (A2A v1.0). */
export function cardPayload(card: Json): Uint8Array {
  const { signatures: _s, ...rest } = card;
  return new TextEncoder().encode(canonicalize(rest));
}
