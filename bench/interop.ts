// Supply-chain exports (PROTOCOL 16): 10,000 attestations, each stated as an in-toto Statement,
// signed as a DSSE envelope by the issuer key and framed as a Sigstore bundle (to JSON text), as
// bundles per second against raw Ed25519 signing per second (held KeyObject, 64-byte message)
// measured in the same run. The export does one signature over a PAE of a few hundred bytes
// plus the Statement (the entry's leaf hash included) and its JSON: the ratio says how much of
// the signing floor the rest takes. Target: >= 0.5. Interleaved rounds, medians.
import { sign as nodeSign } from 'node:crypto';
import { cryptoRandom, entryHash, freshNodeKeys, GENESIS_PREV_HASH, type LogEntry, privateKeyObject, sigstoreBundle } from '../src/core/index.js';
import { attestationStatement } from '../src/domain/log/index.js';
import { signStatement } from '../src/domain/common/dsse-sign.js';
import { header, line, perSec, rate, type Rate } from './lib.js';

const COUNT = 10_000;
const ROUNDS = 3;
const TARGET = 0.5;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run() {
  header(`interop: ${COUNT.toLocaleString('en-US')} attestations exported as Sigstore bundles vs raw Ed25519 signing/s (same run)`);
  const keys = freshNodeKeys(cryptoRandom, Date.UTC(2026, 0, 1));
  const entries: LogEntry[] = [];
  let prevHash = GENESIS_PREV_HASH;
  for (let seq = 0; seq < COUNT; seq++) {
    const body = {
      schemaVersion: '1.0.0',
      reviewerId: `reviewer-${seq % 50}`,
      subjectSha256: seq.toString(16).padStart(64, '0'),
      verdict: seq % 3 ? 'approve' : 'request_changes',
      summary: `Read change ${seq} line by line; the tests cover the new branch.`,
      reviewedAt: Date.UTC(2026, 0, 1) + seq,
    };
    const e = {
      id: `att_${seq.toString(16).padStart(16, '0')}`,
      seq,
      prevHash,
      kind: 'review.attestation.v1',
      tier: 'review' as const,
      body,
      agent: 'ak_bench',
    };
    const full = { ...e, attestedAt: Date.UTC(2026, 0, 1) + seq, hash: '', mac: '', signingKeyId: 'hk_bench' };
    full.hash = entryHash(full);
    prevHash = full.hash;
    entries.push(full);
  }
  const key = privateKeyObject(keys.issuer.privateKey);
  const message = Buffer.alloc(64, 7);
  const raw: number[] = [];
  const exported: number[] = [];
  let bytes = 0;
  const exportOne = (e: LogEntry) => JSON.stringify(sigstoreBundle(signStatement(keys, attestationStatement(e, keys.log.origin)))).length;
  // A warm-up, as rate() gives the baseline: the first round would otherwise measure the JIT.
  for (const e of entries.slice(0, 1000)) exportOne(e);
  for (let r = 0; r < ROUNDS; r++) {
    raw.push((await rate('raw sign', () => nodeSign(null, message, key), 1)).opsPerSec);
    const t0 = performance.now();
    bytes = 0;
    for (const e of entries) bytes += exportOne(e);
    exported.push((COUNT / (performance.now() - t0)) * 1000);
  }
  const base = med(raw);
  const v = med(exported);
  console.log(`  (${ROUNDS} interleaved rounds, medians; per-round export rates: ${exported.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}/s)`);
  line('raw Ed25519 sign (node:crypto, held KeyObject)', perSec({ opsPerSec: base } as Rate), 1);
  line('attestation -> Statement -> DSSE -> Sigstore bundle JSON', perSec({ opsPerSec: v } as Rate), v / base, `>= ${TARGET}`, v / base >= TARGET);
  line('  average bundle size', `${Math.round(bytes / COUNT).toLocaleString('en-US')} B`);
}
