// A2A Agent Cards (A2A v1.0, the AgentCard and AgentCardSignature objects): the card of an akas
// agent, signed as A2A says: a JWS (RFC 7515, flattened JSON, detached payload) whose payload is
// the RFC 8785 JCS form of the card without its `signatures` member, by the agent's own Ed25519
// key (`alg` EdDSA, `kid` its did:key verification method). Its standing credential rides as the
// params of an A2A extension (capabilities.extensions[]), so any A2A reader carries it along.
// `jose` is loaded only here, by the commands that sign or check a card (PROTOCOL 8.9).
import { createPublicKey } from 'node:crypto';
import { cardPayload, STANDING_EXTENSION } from '../../../src/core/agent-card.js';
import { didKeyFromPublicKey, ed25519Multibase } from '../../../src/core/didkey.js';
import { privateKeyObject } from '../../../src/core/ed25519.js';
import type { Json } from '../../kit/index.js';

export { agentCard, cardPayload, STANDING_EXTENSION } from '../../../src/core/agent-card.js';

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
