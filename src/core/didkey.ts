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

/** base58btc decoding; null on a character outside the alphabet. */
export function base58btcDecode(text: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < text.length; i++) {
    let carry = ALPHABET.indexOf(text[i]);
    if (carry < 0) return null;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j] * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[zeros + i] = bytes[bytes.length - 1 - i];
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

/** The raw hex public key inside an Ed25519 publicKeyMultibase or did:key; null if it is not one. */
export function publicKeyFromMultibase(value: string): string | null {
  const mb = value.startsWith('did:key:') ? value.slice('did:key:'.length).split('#')[0] : value;
  if (!mb.startsWith('z')) return null;
  const bytes = base58btcDecode(mb.slice(1));
  if (!bytes || bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) return null;
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
