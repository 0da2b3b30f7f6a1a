// A2A Agent Cards (A2A v1.0, the AgentCard and AgentCardSignature objects): the card of an akas
// agent, signed as A2A says: a JWS (RFC 7515, flattened JSON, detached payload) whose payload is
// the RFC 8785 JCS form of the card without its `signatures` member, by the agent's own Ed25519
// key (`alg` EdDSA, `kid` its did:key verification method). Its standing credential rides as the
// params of an A2A extension (capabilities.extensions[]), so any A2A reader carries it along.
// `jose` is loaded only here, by the commands that sign or check a card (PROTOCOL 8.9).
import { createPublicKey } from 'node:crypto';
import { canonicalize } from '../../../src/core/jcs.js';
import { didKeyFromPublicKey, ed25519Multibase } from '../../../src/core/didkey.js';
import { privateKeyObject } from '../../../src/core/ed25519.js';
import type { Json } from '../../kit/index.js';

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

/** The kid of an agent's key: its did:key verification method. */
export const cardKid = (publicKeyHex: string) => `${didKeyFromPublicKey(publicKeyHex)}#${ed25519Multibase(publicKeyHex)}`;

const spkiEd25519 = (publicHex: string) => Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicHex, 'hex')]);

/** The node KeyObject of a raw Ed25519 public key (64 hex). */
export const publicKeyObject = (publicHex: string) => createPublicKey({ key: spkiEd25519(publicHex), format: 'der', type: 'spki' });

/** Signs the card with the agent's key: answers the card with one AgentCardSignature {protected, signature} added. */
export async function signCard(card: Json, key: { publicKey: string; privateKey: string }): Promise<Json> {
  const { FlattenedSign } = await import('jose');
  const privateKey = privateKeyObject(key.privateKey);
  const jws = await new FlattenedSign(cardPayload(card)).setProtectedHeader({ alg: 'EdDSA', kid: cardKid(key.publicKey), typ: 'JOSE' }).sign(privateKey);
  const { signatures: _s, ...rest } = card;
  // Detached payload (RFC 7515 Appendix F): the reader makes it again from the card.
  return { ...rest, signatures: [{ protected: jws.protected, signature: jws.signature }] };
}

export interface CardSignatureCheck {
  index: number;
  kid?: string;
  alg?: string;
  /** The raw key the kid names (64 hex), when it is a did:key. */
  publicKey?: string;
  valid: boolean;
  why?: string;
}

/** Checks every signature of a card with jose, each under the key its kid names (a did:key), as an A2A SDK given that key would. */
export async function checkCardSignatures(card: Json): Promise<CardSignatureCheck[]> {
  const { flattenedVerify, decodeProtectedHeader } = await import('jose');
  const { publicKeyFromMultibase } = await import('../../../src/core/didkey.js');
  const sigs = Array.isArray(card.signatures) ? card.signatures : [];
  const payload = cardPayload(card);
  const out: CardSignatureCheck[] = [];
  for (const [index, s] of sigs.entries()) {
    const sig = (s ?? {}) as Json;
    try {
      const header = decodeProtectedHeader({ protected: String(sig.protected), signature: String(sig.signature), payload: '' });
      const kid = typeof header.kid === 'string' ? header.kid : undefined;
      const publicKey = kid?.startsWith('did:key:') ? (publicKeyFromMultibase(kid.split('#')[0]) ?? undefined) : undefined;
      if (header.alg !== 'EdDSA' || !publicKey) {
        out.push({ index, kid, alg: header.alg, valid: false, why: `alg ${header.alg}, kid ${kid}: akas cards are EdDSA under a did:key kid` });
        continue;
      }
      // Detached (RFC 7515 Appendix F): the payload put back, base64url, as the signing input has it.
      const attached = { protected: String(sig.protected), signature: String(sig.signature), payload: Buffer.from(payload).toString('base64url') };
      await flattenedVerify(attached, publicKeyObject(publicKey), { algorithms: ['EdDSA'] });
      out.push({ index, kid, alg: header.alg, publicKey, valid: true });
    } catch (e) {
      out.push({ index, valid: false, why: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/** The standing credential a card carries (its akas extension's params), if any. */
export function standingOfCard(card: Json): Json | undefined {
  const caps = (card.capabilities ?? {}) as Json;
  const ext = Array.isArray(caps.extensions) ? (caps.extensions as Json[]).find((e) => e?.uri === STANDING_EXTENSION) : undefined;
  const params = (ext?.params ?? {}) as Json;
  return typeof params.standing === 'object' && params.standing !== null ? (params.standing as Json) : undefined;
}
