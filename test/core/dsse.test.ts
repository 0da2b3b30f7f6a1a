// DSSE v1's pre-authentication encoding against the spec's own test vector (test/vectors/dsse),
// and the spec's ECDSA P-256 envelope accepted under its key by akas's DSSE check, refused with
// its payload changed.
import { createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dsseBase64, pae } from '../../src/core/dsse.js';
import { verifyDsse } from '../../verifier/dsse.js';
import { vectorJson } from '../helpers/vectors.js';

const v = vectorJson('dsse', 'pae.json');
const b64url = (decimal: string) => Buffer.from(BigInt(decimal).toString(16).padStart(64, '0'), 'hex').toString('base64url');
const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(v.key.X), y: b64url(v.key.Y) }, format: 'jwk' });

describe('DSSE PAE (secure-systems-lab/dsse protocol.md test vector)', () => {
  it('encodes the vector byte for byte', () => {
    expect(pae(v.payloadType, Buffer.from(v.serializedBody)).toString('utf8')).toBe(v.pae);
  });

  it('counts bytes, not characters', () => {
    expect(pae('t', Buffer.from('é')).toString('utf8')).toBe('DSSEv1 1 t 2 é');
  });

  it("accepts the spec's envelope under its P-256 key, and refuses it changed", () => {
    const r = verifyDsse(v.envelope, key);
    // The vector's payloadType is not an in-toto Statement: only the signature check is the vector's.
    expect(r.checks.find((c) => c.id === 'dsse.signature')?.valid).toBe(true);
    const changed = { ...v.envelope, payload: Buffer.from('hello worle').toString('base64') };
    expect(verifyDsse(changed, key).checks.find((c) => c.id === 'dsse.signature')?.valid).toBe(false);
  });

  it('reads standard and URL-safe base64, padded or not, and nothing else', () => {
    expect(dsseBase64('-_8')?.toString('hex')).toBe('fbff');
    expect(dsseBase64('+/8=')?.toString('hex')).toBe('fbff');
    expect(dsseBase64('+_8=')).toBeNull();
    expect(dsseBase64('a')).toBeNull();
    expect(dsseBase64('!!')).toBeNull();
  });
});
