// The node's DSSE signature (PROTOCOL 16.3): an in-toto Statement, serialized once, signed with
// the current issuer key over DSSE's PAE. The keyid is the key's id in the node's key list
// (8.3: its did:key), so a verifier finds the key among the issuer keys it pins. The private key
// stays in the KeyObject held here; only the envelope leaves.
import { sign as nodeSign, type KeyObject } from 'node:crypto';
import { type DsseEnvelope, dsseEnvelope, IN_TOTO_PAYLOAD_TYPE, type NodeKeys, privateKeyObject, type Statement } from '../../core/index.js';

const held = new WeakMap<NodeKeys['issuer'], KeyObject>();

/** The DSSE envelope of a Statement, signed by the node's current issuer key. */
export function signStatement(keys: NodeKeys, statement: Statement): DsseEnvelope & { payloadType: typeof IN_TOTO_PAYLOAD_TYPE } {
  let key = held.get(keys.issuer);
  if (!key) held.set(keys.issuer, (key = privateKeyObject(keys.issuer.privateKey)));
  const k = key;
  const envelope = dsseEnvelope(Buffer.from(JSON.stringify(statement), 'utf8'), IN_TOTO_PAYLOAD_TYPE, keys.issuer.did, (bytes) => nodeSign(null, bytes, k));
  return { ...envelope, payloadType: IN_TOTO_PAYLOAD_TYPE };
}
