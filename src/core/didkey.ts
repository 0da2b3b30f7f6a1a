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

/**
 * base58btc decoding; null on a character outside the alphabet. Two digits at a time
 * (58^2 = 3364) are folded into 16-bit little-endian limbs, so every step stays within
 * 32-bit integer arithmetic: the offline verifier decodes a proofValue per credential.
 */
export function base58btcDecode(text: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 0x31 /* '1' */) zeros++;
  const limbs: number[] = [];
  for (let i = zeros; i < text.length; ) {
    const a = text.charCodeAt(i++);
    const da = a < 128 ? DIGIT[a] : -1;
    if (da < 0) return null;
    let chunk = da;
    let mul = 58;
    if (i < text.length) {
      const b = text.charCodeAt(i++);
      const db = b < 128 ? DIGIT[b] : -1;
      if (db < 0) return null;
      chunk = chunk * 58 + db;
      mul = 3364;
    }
    let carry = chunk;
    for (let j = 0; j < limbs.length; j++) {
      carry += limbs[j] * mul;
      limbs[j] = carry & 0xffff;
      carry >>>= 16;
    }
    while (carry > 0) {
      limbs.push(carry & 0xffff);
      carry >>>= 16;
    }
  }
  // Limbs to big-endian bytes, without the leading zero byte a last half-filled limb leaves.
  const bytes: number[] = [];
  for (let i = limbs.length - 1; i >= 0; i--) bytes.push(limbs[i] >>> 8, limbs[i] & 0xff);
  let lead = 0;
  while (lead < bytes.length && bytes[lead] === 0) lead++;
  const out = new Uint8Array(zeros + bytes.length - lead);
  out.set(bytes.slice(lead), zeros);
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
export function parseDidKeyUrl(url: unknown): { did: string; publicKey: string; multibase: string } | null {
  if (typeof url !== 'string' || !url.startsWith('did:key:')) return null;
  const hash = url.indexOf('#');
  if (hash < 0) return null;
  const did = url.slice(0, hash);
  const multibase = did.slice('did:key:'.length);
  if (url.slice(hash + 1) !== multibase) return null;
  const publicKey = publicKeyFromMultibase(multibase);
  return publicKey ? { did, publicKey, multibase } : null;
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
