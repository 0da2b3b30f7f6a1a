// RFC 8785 JSON Canonicalization Scheme, through the `canonicalize` package (the one
// @digitalbazaar/eddsa-jcs-2022-cryptosuite uses). Everything that is hashed, MACed or
// signed goes through this one function; nothing is ever signed from JSON.stringify.
import canonicalizeImpl from 'canonicalize';

const impl = canonicalizeImpl as unknown as (value: unknown) => string | undefined;

/** The JCS (RFC 8785) serialization of a JSON value. Throws on values JSON cannot hold. */
export function canonicalize(value: unknown): string {
  const out = impl(value);
  if (out === undefined) throw new TypeError('value has no JSON representation');
  return out;
}

/** The UTF-8 bytes of canonicalize(value). */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}
