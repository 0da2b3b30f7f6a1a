// Crypto costs that decide src/core: Ed25519 with node:crypto (src/core/ed25519.ts, KeyObjects
// cached) against @noble/ed25519 3 (sync API, SHA-512 from node:crypto), the per-call key
// import trap, JCS, sha256 and HMAC. Every rate is also printed as a ratio to node:crypto
// verify/s measured in the same run.
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { canonicalize, generateKeyPair, hmacSha256Hex, sha256Hex, sign, verify } from '../src/core/index.js';
import { header, line, median, perSec, rate, type Rate } from './lib.js';

noble.hashes.sha512 = (m) => createHash('sha512').update(m).digest();

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const RUNS = 3;
const SECONDS = 1;

/** A VC-like object of about 1 KB of JSON, keys deliberately out of order. */
function kilobyteObject() {
  return {
    type: ['VerifiableCredential', 'JudgmentCredential'],
    issuer: 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2',
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    validFrom: '2026-01-01T00:00:00Z',
    credentialSubject: {
      scores: { accuracy: 0.9, usefulness: 0.8, novelty: 0.45, clarity: 1, weights: [0.25, 0.25, 0.25, 0.25] },
      id: 'urn:akas:judgment:jdg_0123456789abcdef',
      proposalId: 'prop_0123456789abcdef',
      kind: 'brief',
      judge: { tag: 'ak_AbCdEfGh', publicKey: 'b00d8d938e7f773d51565aad36a623f5344f7f5d1960f9cf3e8e12620ea2810f' },
      composite: 0.7875,
      rationale:
        'Accurate and well sourced; the core section answers the question directly, the deep section cites the two papers it relies on. ' +
        'Minor: the tldr repeats the title, and the path slug could be shorter; the examples in the deep section compile as written. Überprüft, ça va — 😂.',
      judgeSignature: '407cd12654b33d718ecbb99179a1506daaa849450bf3fc523cce3e1c96f8b80351da3f253d725c6f00b07c9e5448d50b3ef78012b9ab54255116d069c6dd2808',
    },
  };
}

const measure = (name: string, fn: () => unknown) => median(RUNS, () => rate(name, fn, SECONDS));

export async function run() {
  header(`crypto: Ed25519 node:crypto vs @noble/ed25519 3, key import, JCS, sha256, HMAC (median of ${RUNS} x ${SECONDS}s)`);

  const pair = generateKeyPair();
  const seed = Buffer.from(pair.privateKey, 'hex');
  const pub = Buffer.from(pair.publicKey, 'hex');
  const message = Buffer.from('x'.repeat(256)); // about a judgment signing payload
  const sigHex = sign(pair.privateKey, message);
  const sig = Buffer.from(sigHex, 'hex');

  // Both libraries must agree before their speed means anything (Ed25519 signing is deterministic).
  if (Buffer.from(noble.sign(message, seed)).toString('hex') !== sigHex) throw new Error('noble and node:crypto signatures differ');
  if (!noble.verify(sig, message, pub, { zip215: false }) || !verify(pair.publicKey, message, sigHex)) throw new Error('verify failed');

  const nodeVerifyRate = await measure('node:crypto verify (src/core, cached KeyObject)', () => verify(pair.publicKey, message, sigHex));
  const nodeSignRate = await measure('node:crypto sign (src/core, cached KeyObject)', () => sign(pair.privateKey, message));
  const nobleVerifyRate = await measure('@noble/ed25519 verify (sync, RFC 8032 mode)', () => noble.verify(sig, message, pub, { zip215: false }));
  const nobleSignRate = await measure('@noble/ed25519 sign (sync)', () => noble.sign(message, seed));
  const spkiRate = await measure('trap: createPublicKey(SPKI DER) per call + verify', () =>
    nodeVerify(null, message, createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' }), sig),
  );
  const jwkRate = await measure('createPublicKey(JWK) per call + verify', () =>
    nodeVerify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' }), sig),
  );

  const doc = kilobyteObject();
  const docBytes = Buffer.byteLength(canonicalize(doc));
  const jcsRate = await measure(`JCS canonicalize (${docBytes} B object)`, () => canonicalize(doc));
  const big = Buffer.alloc(1 << 20, 7);
  const shaRate = await measure('sha256 (1 MiB buffer)', () => sha256Hex(big));
  const hmacKey = Buffer.alloc(32, 1);
  const small = Buffer.alloc(200, 3);
  const hmacRate = await measure('HMAC-SHA256 (200 B)', () => hmacSha256Hex(hmacKey, small));

  const base = nodeVerifyRate.opsPerSec;
  const show = (r: Rate, value = perSec(r)) => line(r.name, value, r.opsPerSec / base);
  console.log(`  (ratio = ops/s divided by node:crypto verify/s = ${perSec(nodeVerifyRate)})`);
  for (const r of [nodeVerifyRate, nodeSignRate, nobleVerifyRate, nobleSignRate, spkiRate, jwkRate, jcsRate, hmacRate]) show(r);
  show(shaRate, `${Math.round((shaRate.opsPerSec * big.length) / 1e6).toLocaleString('en-US')} MB/s`);

  const verifyX = nodeVerifyRate.opsPerSec / nobleVerifyRate.opsPerSec;
  const signX = nodeSignRate.opsPerSec / nobleSignRate.opsPerSec;
  const trapX = nodeVerifyRate.opsPerSec / spkiRate.opsPerSec;
  const pick =
    verifyX >= 1 && signX >= 1
      ? `node:crypto (src/core/ed25519.ts): it verifies ${verifyX.toFixed(1)}x and signs ${signX.toFixed(1)}x faster than @noble/ed25519 here`
      : `@noble/ed25519 would be faster here (verify ${(1 / verifyX).toFixed(1)}x, sign ${(1 / signX).toFixed(1)}x); src/core still uses ` +
        `node:crypto — re-measure before switching`;
  console.log(`\n  pick: ${pick}.`);
  console.log(
    `  keep KeyObjects cached: building one from SPKI DER per call costs ${trapX.toFixed(1)}x in verify throughput (${perSec(spkiRate)} vs ` +
      `${perSec(nodeVerifyRate)}); importing through JWK per call runs ${perSec(jwkRate)}.`,
  );
}
