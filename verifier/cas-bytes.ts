// A content-store hash checked on bytes in memory (the browser build's counterpart of cas.ts,
// which streams files from disk): do these bytes hash to the sha256 a node, a bundle or a
// person recorded? The same verdict as `akas verify cas FILE --sha256 HASH`.
import { sha256 } from '../src/core/crypto.js';
import { Checks, type Report } from './report.js';

const SHA256_ANY_CASE = /^[0-9a-fA-F]{64}$/;
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** sha256 (lowercase hex) and size of bytes. */
export function hashBytes(bytes: Uint8Array): { sha256: string; bytes: number } {
  return { sha256: hex(sha256(bytes)), bytes: bytes.length };
}

/** Checks bytes against an expected sha256; without one, reports the hash as not checked. */
export function verifyCasBytes(bytes: Uint8Array, expected?: string, name = 'the file'): Report & { sha256: string; bytes: number } {
  const c = new Checks();
  const got = hashBytes(bytes);
  const want = typeof expected === 'string' && SHA256_ANY_CASE.test(expected.trim()) ? expected.trim().toLowerCase() : undefined;
  if (expected !== undefined && expected !== '' && !want)
    c.add({ id: 'cas.expected', what: 'the expected hash is a sha256', valid: false, why: `not 64 hex characters: ${expected}`, subject: name });
  else if (!want)
    c.add({
      id: 'cas.hash',
      what: `${name} hashes to ${got.sha256}`,
      valid: null,
      why: 'not checked: no expected sha256 given to compare with',
      subject: name,
    });
  else
    c.add({
      id: 'cas.hash',
      what: `${name} hashes to ${want}`,
      valid: got.sha256 === want,
      why: got.sha256 === want ? `${got.bytes} bytes` : `it hashes to ${got.sha256}`,
      subject: name,
    });
  return { ...c.report(), ...got };
}
