// The keys and signatures DSSE checks take (PROTOCOL 16.4), read the same way in Node and in the
// browser build (no node:crypto here): an SPKI PEM public key is read by its ASN.1 into an
// Ed25519 key or an ECDSA P-256 point (anything else is refused, naming what it is), and an
// ECDSA signature given as DER is read into raw r || s, the one form both platforms verify
// (src/core/checking.ts). DER is read strictly (minimal lengths and integers, nothing after),
// as OpenSSL reads it: a signature re-encoded loosely is not the signer's.

/** A public key a DSSE check takes: its algorithm and its bytes in hex (Ed25519: 32 bytes; ECDSA P-256: 04 || x || y). */
export interface DsseKey {
  algorithm: 'Ed25519' | 'ECDSA-P256';
  publicKey: string;
}

/** What Node's KeyObject offers that a check reads (a KeyObject the caller made is taken as it is). */
export interface KeyObjectLike {
  asymmetricKeyType?: string;
  asymmetricKeyDetails?: { namedCurve?: string };
  export(options: { format: 'jwk' }): { kty?: string; crv?: string; x?: string; y?: string };
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const hexBig = (b: Uint8Array) => BigInt(`0x${hex(b) || '0'}`);
const bigHex = (n: bigint) => n.toString(16).padStart(64, '0');

function base64Bytes(s: string): Uint8Array {
  const bin = atob(
    s
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(s.length / 4) * 4, '='),
  );
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

// P-256 (SEC 2 2.4.2): y^2 = x^3 - 3x + b over p.
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
const mod = (a: bigint) => ((a % P) + P) % P;
function pow(base: bigint, e: bigint): bigint {
  let r = 1n;
  let x = mod(base);
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % P;
    x = (x * x) % P;
  }
  return r;
}
const rhs = (x: bigint) => mod(x * x * x - 3n * x + B);

/** A P-256 point (SEC 1 2.3.4: uncompressed or compressed) as 04 || x || y in hex; throws when it is not on the curve. */
function p256Point(bytes: Uint8Array): string {
  if (bytes.length === 65 && bytes[0] === 4) {
    const x = hexBig(bytes.subarray(1, 33));
    const y = hexBig(bytes.subarray(33));
    if (x < P && y < P && mod(y * y) === rhs(x)) return hex(bytes);
  } else if (bytes.length === 33 && (bytes[0] === 2 || bytes[0] === 3)) {
    const x = hexBig(bytes.subarray(1));
    // p = 3 mod 4: the square root is rhs^((p+1)/4), when there is one.
    let y = pow(rhs(x), (P + 1n) / 4n);
    if (x < P && mod(y * y) === rhs(x)) {
      if (Number(y & 1n) !== (bytes[0] & 1)) y = P - y;
      return `04${bigHex(x)}${bigHex(y)}`;
    }
  }
  throw new Error('not a PEM public key (its EC point is not on P-256)');
}

/** One DER element at `at`: its tag, where its content starts and ends; null when malformed or not minimal. */
function derAt(b: Uint8Array, at: number): { tag: number; start: number; end: number } | null {
  if (at + 2 > b.length) return null;
  const tag = b[at];
  let len = b[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || start + n > b.length || b[start] === 0) return null;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i];
    if (len < 0x80) return null; // the long form where the short one would do is not DER
    start += n;
  }
  return start + len > b.length ? null : { tag, start, end: start + len };
}

const OIDS: Record<string, string> = {
  '2b6570': 'ed25519',
  '2b6571': 'ed448',
  '2b656e': 'x25519',
  '2b656f': 'x448',
  '2a8648ce3d0201': 'ec',
  '2a864886f70d010101': 'rsa',
  '2a864886f70d01010a': 'rsa-pss',
  '2a8648ce380401': 'dsa',
};
const CURVES: Record<string, string> = {
  '2a8648ce3d030107': 'prime256v1',
  '2b81040022': 'secp384r1',
  '2b81040023': 'secp521r1',
  '2b8104000a': 'secp256k1',
};

/** An SPKI PEM public key that DSSE checks take: Ed25519 or ECDSA P-256; throws saying why not (PROTOCOL 16.4). */
export function dsseKey(pem: string): DsseKey {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\s]*)-----END \1-----/.exec(String(pem));
  if (!m) throw new Error('not a PEM public key (no -----BEGIN PUBLIC KEY----- block)');
  if (m[1] !== 'PUBLIC KEY') throw new Error(`not a PEM public key (a ${m[1]}: give the SPKI public key, -----BEGIN PUBLIC KEY-----)`);
  let der: Uint8Array;
  try {
    der = base64Bytes(m[2].replace(/\s+/g, ''));
  } catch {
    throw new Error('not a PEM public key (its body is not base64)');
  }
  const bad = () => new Error('not a PEM public key (not a DER SubjectPublicKeyInfo)');
  const spki = derAt(der, 0);
  if (spki?.tag !== 0x30 || spki.end !== der.length) throw bad();
  const alg = derAt(der, spki.start);
  if (alg?.tag !== 0x30) throw bad();
  const oid = derAt(der, alg.start);
  if (oid?.tag !== 0x06) throw bad();
  const params = oid.end < alg.end ? derAt(der, oid.end) : null;
  const bits = derAt(der, alg.end);
  if (bits?.tag !== 0x03 || bits.end !== spki.end || der[bits.start] !== 0) throw bad();
  const key = der.subarray(bits.start + 1, bits.end);
  const type = OIDS[hex(der.subarray(oid.start, oid.end))] ?? 'unrecognised';
  if (type === 'ed25519') {
    if (key.length !== 32 || params) throw bad();
    return { algorithm: 'Ed25519', publicKey: hex(key) };
  }
  if (type === 'ec') {
    const curve = params?.tag === 0x06 ? (CURVES[hex(der.subarray(params.start, params.end))] ?? 'an unknown curve') : 'an unnamed curve';
    if (curve === 'prime256v1') return { algorithm: 'ECDSA-P256', publicKey: p256Point(key) };
    throw new Error(`a ${curve} EC key: DSSE checks take Ed25519 or ECDSA P-256`);
  }
  throw new Error(`a ${type} key: DSSE checks take Ed25519 or ECDSA P-256`);
}

/** A Node KeyObject (what tests and callers of the Node verifier hand in) as a DsseKey; throws for other key types. */
export function keyOfObject(k: KeyObjectLike): DsseKey {
  const jwk = k.export({ format: 'jwk' });
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && jwk.x) return { algorithm: 'Ed25519', publicKey: hex(base64Bytes(jwk.x)) };
  if (jwk.kty === 'EC' && jwk.crv === 'P-256' && jwk.x && jwk.y)
    return { algorithm: 'ECDSA-P256', publicKey: `04${hex(base64Bytes(jwk.x))}${hex(base64Bytes(jwk.y))}` };
  throw new Error(`a ${k.asymmetricKeyType ?? 'non-public'} key: DSSE checks take Ed25519 or ECDSA P-256`);
}

/** A strict DER INTEGER of at most 32 bytes (a leading 0 only before a high bit), left-padded to 32; null otherwise. */
function derScalar(b: Uint8Array, at: number): { bytes: Uint8Array; end: number } | null {
  const e = derAt(b, at);
  if (e?.tag !== 0x02 || e.end === e.start) return null;
  let v = b.subarray(e.start, e.end);
  if (v[0] & 0x80) return null; // negative
  if (v[0] === 0 && v.length > 1) {
    if (!(v[1] & 0x80)) return null; // not minimal
    v = v.subarray(1);
  }
  if (v.length > 32) return null;
  const out = new Uint8Array(32);
  out.set(v, 32 - v.length);
  return { bytes: out, end: e.end };
}

/**
 * An ECDSA signature as raw r || s: 64 bytes are taken as raw (IEEE P1363), anything else is read
 * as a DER ECDSA-Sig-Value (SEQUENCE of two INTEGERs, nothing after); null when it is neither.
 */
export function ecdsaRaw(sig: Uint8Array): Uint8Array | null {
  if (sig.length === 64) return sig;
  const seq = derAt(sig, 0);
  if (seq?.tag !== 0x30 || seq.end !== sig.length) return null;
  const r = derScalar(sig, seq.start);
  const s = r && derScalar(sig, r.end);
  if (!r || !s || s.end !== seq.end) return null;
  const out = new Uint8Array(64);
  out.set(r.bytes, 0);
  out.set(s.bytes, 32);
  return out;
}
