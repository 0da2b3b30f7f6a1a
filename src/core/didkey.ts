// did:key and Multikey for Ed25519 (W3C did:key method, Multikey of VC Data Integrity):
// publicKeyMultibase = 'z' + base58btc(0xed 0x01 || 32-byte public key).
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ED25519_PUB_HEADER = Uint8Array.from([0xed, 0x01]);

/** base58btc (Bitcoin alphabet) encoding. */
export function base58btcEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i];
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j] << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]];
  return out;
}

const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** 58 to the power of 1 to 4 digits: the factor a step of four digits (or the last, fewer) multiplies by. */
const POWERS_OF_58 = [1, 58, 3364, 195112, 11316496];
/** 2^-24: dividing by 2^24 by multiplying, exact for a double. */
const LIMB_SCALE = 1 / 16777216;
/** The limbs of a decoding, kept between calls (a proofValue per credential), grown for longer text. */
let limbs = new Float64Array(64);

/**
 * base58btc decoding; null on a character outside the alphabet. Four digits at a time (58^4 <
 * 2^24) are folded into 24-bit little-endian limbs held in doubles, where limb * 58^4 + carry
 * stays under 2^48 and so exact: a quarter of the steps of one digit a time, for the offline
 * verifier's proofValue per credential.
 */
export function base58btcDecode(text: string): Uint8Array | null {
  const n = text.length;
  let zeros = 0;
  while (zeros < n && text.charCodeAt(zeros) === 0x31 /* '1' */) zeros++;
  // log(58) / log(256) < 0.7322 bytes a digit, three bytes a limb.
  const most = Math.ceil(((n - zeros) * 0.7322) / 3) + 1;
  if (most > limbs.length) limbs = new Float64Array(most);
  let used = 0;
  for (let i = zeros; i < n; ) {
    const end = Math.min(i + 4, n);
    const mul = POWERS_OF_58[end - i];
    let carry = 0;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      const d = c < 128 ? DIGIT[c] : -1;
      if (d < 0) return null;
      carry = carry * 58 + d;
    }
    for (let j = 0; j < used; j++) {
      const x = limbs[j] * mul + carry;
      carry = (x * LIMB_SCALE) | 0; // under 2^24: x < 2^48
      limbs[j] = x - carry * 16777216;
    }
    // A step adds at most one limb (carry < 2^24 past the loop, as the first chunk is).
    if (carry > 0) limbs[used++] = carry;
  }
  // Big-endian bytes after the zeros, without the leading zero bytes the top limb holds.
  const top = used > 0 ? limbs[used - 1] : 0;
  const topBytes = top >= 65536 ? 3 : top >= 256 ? 2 : top > 0 ? 1 : 0;
  const out = new Uint8Array(zeros + (used > 0 ? (used - 1) * 3 + topBytes : 0));
  let k = out.length;
  for (let j = 0; j < used - 1; j++) {
    const v = limbs[j];
    out[--k] = v & 0xff;
    out[--k] = (v >>> 8) & 0xff;
    out[--k] = v >>> 16;
  }
  for (let v = top; k > zeros; v >>>= 8) out[--k] = v & 0xff;
  return out;
}

/** The Multikey publicKeyMultibase ('z6Mk...') of a raw hex Ed25519 public key. */
export function ed25519Multibase(publicKeyHex: string): string {
  const raw = Buffer.from(publicKeyHex, 'hex');
  return 'z' + base58btcEncode(Buffer.concat([ED25519_PUB_HEADER, raw]));
}

/** The did:key of a raw hex Ed25519 public key. */
export function didKeyFromPublicKey(publicKeyHex: string): string {
  return `did:key:${ed25519Multibase(publicKeyHex)}`;
}

/** The verification method id (did:key:z..#z...) of a raw hex public key. */
export function didKeyVerificationMethod(publicKeyHex: string): string {
  const mb = ed25519Multibase(publicKeyHex);
  return `did:key:${mb}#${mb}`;
}

const decoded = new Map<string, string | null>();

/** The raw hex public key inside an Ed25519 publicKeyMultibase or did:key; null if it is not one. */
export function publicKeyFromMultibase(value: string): string | null {
  // Keys repeat (one issuer signs thousands of credentials): remember the last few hundred.
  const hit = decoded.get(value);
  if (hit !== undefined) return hit;
  const key = decodeMultibaseKey(value);
  if (decoded.size >= 512) decoded.clear();
  decoded.set(value, key);
  return key;
}

function decodeMultibaseKey(value: string): string | null {
  const mb = value.startsWith('did:key:') ? value.slice('did:key:'.length).split('#')[0] : value;
  if (!mb.startsWith('z')) return null;
  const bytes = base58btcDecode(mb.slice(1));
  if (bytes?.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) return null;
  return Buffer.from(bytes.subarray(2)).toString('hex');
}

/**
 * The Ed25519 key of a did:key verification method URL (`did:key:<mb>#<mb>`, the fragment
 * repeating the method-specific id, as the did:key method defines), with the DID it belongs
 * to; null for anything else (another fragment, another key type, a malformed multibase).
 */
export function parseDidKeyUrl(url: unknown): DidKeyMethod | null {
  if (typeof url !== 'string') return null;
  if (url === lastMethodUrl) return lastMethod;
  const method = readDidKeyUrl(url);
  lastMethodUrl = url;
  lastMethod = method;
  return method;
}

/** An Ed25519 did:key verification method as parseDidKeyUrl reads it (frozen: the answer may be shared). */
export type DidKeyMethod = Readonly<{ did: string; publicKey: string; multibase: string }>;

// The last method URL read and its answer: a batch's credentials name one method, each in a
// string of its own, which one comparison tells (three slices and a lookup otherwise).
let lastMethodUrl: string | undefined;
let lastMethod: DidKeyMethod | null = null;

function readDidKeyUrl(url: string): DidKeyMethod | null {
  if (!url.startsWith('did:key:')) return null;
  const hash = url.indexOf('#');
  if (hash < 0) return null;
  const did = url.slice(0, hash);
  const multibase = did.slice('did:key:'.length);
  if (url.slice(hash + 1) !== multibase) return null;
  const publicKey = publicKeyFromMultibase(multibase);
  return publicKey ? Object.freeze({ did, publicKey, multibase }) : null;
}

/** The DID document of an Ed25519 did:key: one Multikey verification method, usable for every relationship. */
export function didKeyDocument(did: string): Record<string, unknown> | null {
  const publicKey = publicKeyFromMultibase(did);
  if (!publicKey || did.includes('#')) return null;
  const multibase = did.slice('did:key:'.length);
  const vm = `${did}#${multibase}`;
  return {
    '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
    id: did,
    verificationMethod: [{ id: vm, type: 'Multikey', controller: did, publicKeyMultibase: multibase }],
    authentication: [vm],
    assertionMethod: [vm],
    capabilityDelegation: [vm],
    capabilityInvocation: [vm],
  };
}
