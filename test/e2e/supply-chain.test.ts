// akas attestations in the supply chain (issue 33), through the built binary against a real
// `akas serve`: an attestation and a decided proposal exported as DSSE envelopes and Sigstore
// bundles, verified by `akas verify dsse|sigstore` and by @sigstore/verify with keyed trust
// material, each tampering refused by both and named; the log proofs beside them as C2SP
// tlog-proof files that `akas verify log-proof` checks; bad input exits 2 naming it.
import { createPublicKey, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { bundleFromJSON } from '@sigstore/bundle';
import { PublicKeyDetails } from '@sigstore/protobuf-specs';
import { Verifier, toSignedEntity, toTrustMaterial } from '@sigstore/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { didKeyFromPublicKey, generateKeyPair } from '../../src/core/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, runCli, setupCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

type Json = Record<string, any>;

let node: RunningNode;
let work: string;
let reviewId: string;
let noSubjectId: string;
let proposalId: string;
let pemFile: string;
let logKey: string;
const review = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')).examples[0] as Json;

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });
/** An offline run: the base URL points nowhere. */
const offline = (args: string[]) => runCli(args, { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
const file = (name: string) => join(work, name);
const readJson = (name: string) => JSON.parse(readFileSync(file(name), 'utf8')) as Json;
const statementOf = (env: Json) => JSON.parse(Buffer.from(env.payload, 'base64').toString('utf8')) as Json;

/** @sigstore/verify with keyed trust material only: an empty trusted root, the PEM's key under the bundle's hint, no tlog or timestamp required. */
function sigstoreVerify(bundle: Json) {
  const spki = createPublicKey(readFileSync(pemFile, 'utf8')).export({ type: 'spki', format: 'der' });
  const root = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [],
    certificateAuthorities: [],
    ctlogs: [],
    timestampAuthorities: [],
  };
  const trust = toTrustMaterial(root as never, { [bundle.verificationMaterial.publicKey.hint]: { rawBytes: spki, keyDetails: PublicKeyDetails.PKIX_ED25519 } });
  return new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(bundleFromJSON(bundle)));
}
const sigstoreError = (bundle: Json) => {
  try {
    sigstoreVerify(bundle);
    return 'verified';
  } catch (e) {
    return String((e as { code?: string }).code ?? (e as Error).message);
  }
};
/** The bundle with its Statement changed and re-encoded, the signature kept. */
const withStatement = (bundle: Json, change: (s: Json) => void) => {
  const copy = structuredClone(bundle);
  const s = statementOf(copy.dsseEnvelope);
  change(s);
  copy.dsseEnvelope.payload = Buffer.from(JSON.stringify(s)).toString('base64');
  return copy;
};
const verifyWith = async (kind: 'sigstore' | 'dsse', doc: Json) => {
  const path = file(`check-${kind}-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(doc));
  return offline(['--json', 'verify', kind, path, '--key', pemFile]);
};
const failedIds = (stdout: string) => (JSON.parse(stdout).checks as Json[]).filter((c) => c.result === 'failed').map((c) => c.id);

beforeAll(async () => {
  node = await startServe(['--allow-same-ip'], { timeoutMs: 60_000 });
  work = tempDir('akas-e2e-supply-chain-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
  const attested = await akas('p1', ['--json', 'attest', 'review.attestation.v1', '--body', JSON.stringify(review)]);
  expect(attested.code, attested.stderr).toBe(0);
  reviewId = JSON.parse(attested.stdout).id;
  // A robot action whose body names no telemetry digest: nothing to be its in-toto subject.
  const robot = JSON.parse(readFileSync(new URL('../../data/attestations/robot.action.attestation.v1.json', import.meta.url), 'utf8')).examples[0] as Json;
  delete robot.telemetrySha256;
  const noSubject = await akas('p1', ['--json', 'attest', 'robot.action.attestation.v1', '--body', JSON.stringify(robot)]);
  expect(noSubject.code, noSubject.stderr).toBe(0);
  noSubjectId = JSON.parse(noSubject.stdout).id;

  writeFileSync(file('cap.json'), JSON.stringify(samplePayload('capability', 3)));
  // The decision this file exports, made through the CLI in this process (test/helpers/e2e.ts setupCli).
  const setup = (profile: string, args: string[]) => setupCli(['--base-url', node.url, '--profile', profile, ...args]);
  const proposed = await setup('p1', ['--json', 'propose', 'capability', '--file', file('cap.json')]);
  expect(proposed.code, proposed.stderr).toBe(0);
  proposalId = JSON.parse(proposed.stdout).proposalId;
  for (const j of ['p2', 'p3', 'p4']) {
    const judged = await setup(j, [
      '--json',
      'judge',
      proposalId,
      ...['--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'Read it through; it holds.'],
    ]);
    expect(judged.code, judged.stderr).toBe(0);
  }

  const pem = await akas('p1', ['node-keys', '--pem']);
  expect(pem.code, pem.stderr).toBe(0);
  pemFile = file('issuer.pem');
  writeFileSync(pemFile, pem.stdout);
  logKey = ((await (await fetch(`${node.url}/api/node/keys`)).json()) as Json).log.verifierKey;
}, 120_000);

afterAll(async () => {
  await node?.stop();
});

describe('an attestation as a Sigstore bundle and a DSSE envelope', () => {
  it('exports a keyed Sigstore bundle v0.3 whose Statement names the reviewed bytes, verified by akas and by @sigstore/verify', async () => {
    const r = await akas('p1', ['export', reviewId, '--format', 'sigstore', '-o', file('review.sigstore.json')]);
    expect(r.code, r.stderr).toBe(0);
    const bundle = readJson('review.sigstore.json');
    expect(bundle.mediaType).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
    const issuer = ((await (await fetch(`${node.url}/api/node/keys`)).json()) as Json).issuer.current;
    expect(bundle.verificationMaterial.publicKey.hint).toBe(issuer);
    expect(bundle.dsseEnvelope.signatures).toEqual([{ keyid: issuer, sig: expect.any(String) }]);
    expect(bundle.dsseEnvelope.payloadType).toBe('application/vnd.in-toto+json');
    const s = statementOf(bundle.dsseEnvelope);
    expect(s._type).toBe('https://in-toto.io/Statement/v1');
    expect(s.subject).toEqual([{ name: 'subjectSha256', digest: { sha256: review.subjectSha256 } }]);
    expect(s.predicateType).toBe('https://akas.dev/attestation/review.attestation/v1');
    expect(s.predicate.body).toEqual(review);
    expect(s.predicate.log.id).toBe(reviewId);

    const checked = await offline(['verify', 'sigstore', file('review.sigstore.json'), '--key', pemFile]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toContain(`sha256:${review.subjectSha256}`);
    // The single file carries the same check.
    const single = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
    const alone = spawnSync(process.execPath, [single, 'verify', 'sigstore', file('review.sigstore.json'), '--key', pemFile], { encoding: 'utf8' });
    expect(alone.status, alone.stdout + alone.stderr).toBe(0);
    expect(sigstoreVerify(bundle).key.asymmetricKeyType).toBe('ed25519');

    // The sigstore-js snippet of docs/INTEROP.md, as a reader runs it (its packages from this repository's node_modules).
    const snippet = fileURLToPath(new URL('../../docs/interop/verify-sigstore.cjs', import.meta.url));
    const env = { ...process.env, NODE_PATH: fileURLToPath(new URL('../../node_modules', import.meta.url)) };
    const js = spawnSync(process.execPath, [snippet, file('review.sigstore.json'), pemFile], { encoding: 'utf8', env });
    expect(js.status, js.stderr).toBe(0);
    expect(js.stdout).toContain(`verified https://akas.dev/attestation/review.attestation/v1 subjectSha256 sha256:${review.subjectSha256}`);
    writeFileSync(file('tampered.json'), JSON.stringify(withStatement(bundle, (s) => (s.subject[0].digest.sha256 = 'f'.repeat(64)))));
    expect(spawnSync(process.execPath, [snippet, file('tampered.json'), pemFile], { encoding: 'utf8', env }).status).not.toBe(0);
  });

  it('refuses every tampered bundle, in akas and in @sigstore/verify, naming the check', async () => {
    const bundle = readJson('review.sigstore.json');
    const otherSubject = withStatement(bundle, (s) => (s.subject[0].digest.sha256 = 'f'.repeat(64)));
    const otherVerdict = withStatement(bundle, (s) => (s.predicate.body.verdict = 'reject'));
    const sig = Buffer.from(bundle.dsseEnvelope.signatures[0].sig, 'base64');
    sig[10] ^= 1;
    const badSig = structuredClone(bundle);
    badSig.dsseEnvelope.signatures[0].sig = sig.toString('base64');
    const otherType = structuredClone(bundle);
    otherType.dsseEnvelope.payloadType = 'application/json';
    for (const tampered of [otherSubject, otherVerdict, badSig, otherType]) {
      const r = await verifyWith('sigstore', tampered);
      expect(r.code, r.stdout).toBe(1);
      expect(failedIds(r.stdout)).toContain('dsse.signature');
      expect(sigstoreError(tampered)).toBe('SIGNATURE_ERROR');
    }
    const twoSigs = structuredClone(bundle);
    twoSigs.dsseEnvelope.signatures.push(twoSigs.dsseEnvelope.signatures[0]);
    expect(failedIds((await verifyWith('sigstore', twoSigs)).stdout)).toContain('bundle.dsse');
    const otherHint = structuredClone(bundle);
    otherHint.verificationMaterial.publicKey.hint = 'did:key:z6MkOther';
    expect(failedIds((await verifyWith('sigstore', otherHint)).stdout)).toContain('bundle.keyHint');
    const withRekor = structuredClone(bundle);
    withRekor.verificationMaterial.tlogEntries = [{ logIndex: '1' }];
    expect(failedIds((await verifyWith('sigstore', withRekor)).stdout)).toContain('bundle.unchecked');
  });

  it('exports the DSSE envelope alone, checked by akas verify dsse and refused changed', async () => {
    const r = await akas('p1', ['export', reviewId, '--format', 'dsse', '-o', file('review.dsse.json')]);
    expect(r.code, r.stderr).toBe(0);
    const env = readJson('review.dsse.json');
    expect(env).toEqual(readJson('review.sigstore.json').dsseEnvelope);
    expect((await offline(['verify', 'dsse', file('review.dsse.json'), '--key', pemFile])).code).toBe(0);
    const changed = { ...env, payload: Buffer.from(JSON.stringify({ ...statementOf(env), predicateType: 'x' })).toString('base64') };
    const bad = await verifyWith('dsse', changed);
    expect(bad.code).toBe(1);
    expect(failedIds(bad.stdout)).toEqual(['dsse.signature']);
  });

  it('checks an envelope and a bundle under the issuer keys a trust file pins, and refuses them under a file pinning another key', async () => {
    const made = await akas('p1', ['trust', 'pin']);
    expect(made.code, made.stderr).toBe(0);
    writeFileSync(file('trust.json'), made.stdout);
    for (const [cmd, name] of [
      ['dsse', 'review.dsse.json'],
      ['sigstore', 'review.sigstore.json'],
    ]) {
      const held = await offline(['verify', cmd, file(name), '--trust', file('trust.json')]);
      expect(held.code, held.stdout + held.stderr).toBe(0);
    }
    const other = { ...JSON.parse(made.stdout), issuers: [{ did: didKeyFromPublicKey(generateKeyPair().publicKey), validFrom: null, validUntil: null }] };
    writeFileSync(file('other-trust.json'), JSON.stringify(other));
    const refused = await offline(['--json', 'verify', 'sigstore', file('review.sigstore.json'), '--trust', file('other-trust.json')]);
    expect(refused.code).toBe(1);
    expect(failedIds(refused.stdout)).toEqual(['dsse.signature']);
    const both = await offline(['verify', 'dsse', file('review.dsse.json'), '--trust', file('trust.json'), '--key', pemFile]);
    expect(both.code).toBe(2);
  });

  it('writes the C2SP tlog-proof beside it, which akas verify log-proof checks, and refuses it changed', async () => {
    const r = await akas('p1', ['export', reviewId, '--format', 'sigstore', '-o', file('r2.json'), '--with-proof', file('proofs')]);
    expect(r.code, r.stderr).toBe(0);
    const proofFile = join(file('proofs'), `${reviewId}.tlog-proof`);
    const text = readFileSync(proofFile, 'utf8');
    expect(text.split('\n')[0]).toBe('c2sp.org/tlog-proof@v1');
    const ok = await offline(['verify', 'log-proof', proofFile, '--log-key', logKey]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);

    const same = await akas('p1', ['export', reviewId, '--format', 'tlog-proof']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout.split('\n\n')[0]).toBe(text.split('\n\n')[0]);

    // The entry it carries changed: its leaf is no longer the one the proof proves.
    const lines = text.split('\n');
    const entry = JSON.parse(Buffer.from(lines[1].slice(6), 'base64').toString('utf8'));
    entry.body.verdict = 'reject';
    lines[1] = `extra ${Buffer.from(JSON.stringify(entry)).toString('base64')}`;
    writeFileSync(file('changed.tlog-proof'), lines.join('\n'));
    const bad = await offline(['--json', 'verify', 'log-proof', file('changed.tlog-proof'), '--log-key', logKey]);
    expect(bad.code).toBe(1);
    expect(failedIds(bad.stdout)).toEqual(['log.inclusion']);
    writeFileSync(file('garbled.tlog-proof'), text.replace('index ', 'index 0'));
    // A file that does not parse as a tlog-proof is not read (PROTOCOL 8.8): exit 2, not_checkable.
    const garbled = await offline(['--json', 'verify', 'log-proof', file('garbled.tlog-proof'), '--log-key', logKey]);
    expect([garbled.code, JSON.parse(garbled.stdout).code]).toEqual([2, 'not_checkable']);
  });
});

describe('a decided proposal as a Sigstore bundle', () => {
  it('states the decision, the composite, each judge and judgment credential, about the content named by its path', async () => {
    const r = await akas('p1', ['export', proposalId, '--format', 'sigstore', '-o', file('decision.json'), '--with-proof', file('decision-proofs')]);
    expect(r.code, r.stderr).toBe(0);
    const bundle = readJson('decision.json');
    const detail = (await (await fetch(`${node.url}/api/knowledge/proposals/${proposalId}`)).json()) as Json;
    const s = statementOf(bundle.dsseEnvelope);
    expect(s.subject).toEqual([{ name: detail.path, digest: { sha256: detail.contentSha256 } }]);
    expect(s.predicateType).toBe('https://akas.dev/attestation/decision/v1');
    expect(s.predicate.decision).toBe(detail.status);
    expect(s.predicate.composite).toBe(detail.outcome.weightedComposite);
    expect(s.predicate.judgments).toHaveLength(3);
    for (const j of s.predicate.judgments as Json[]) {
      expect(j.credential.url).toContain(`/api/credentials/judgment/capability/${proposalId}/${j.judgmentId}`);
      expect(j.credential.digest.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect((await offline(['verify', 'sigstore', file('decision.json'), '--key', pemFile])).code).toBe(0);
    expect(sigstoreVerify(bundle).key.asymmetricKeyType).toBe('ed25519');
    expect(sigstoreError(withStatement(bundle, (x) => (x.predicate.decision = 'rejected')))).toBe('SIGNATURE_ERROR');
    // One tlog-proof per log event of the proposal, the decision's among them, each verifying.
    const proofs = readdirSync(file('decision-proofs'));
    expect(proofs).toContain(`${s.predicate.log.id}.tlog-proof`);
    expect(proofs).toHaveLength(5);
    for (const p of proofs) expect((await offline(['verify', 'log-proof', join(file('decision-proofs'), p), '--log-key', logKey])).code).toBe(0);
  });
});

describe('envelopes others made', () => {
  it('checks an ECDSA P-256 envelope (DER or raw r||s) and refuses an RSA key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(file('p256.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    const statement = {
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ name: 'a.txt', digest: { sha256: 'a'.repeat(64) } }],
      predicateType: 'https://example.com/p/v1',
    };
    const payload = Buffer.from(JSON.stringify(statement));
    const type = 'application/vnd.in-toto+json';
    const paeBytes = Buffer.concat([Buffer.from(`DSSEv1 ${type.length} ${type} ${payload.length} `), payload]);
    for (const dsaEncoding of ['der', 'ieee-p1363'] as const) {
      const sig = cryptoSign('sha256', paeBytes, { key: privateKey, dsaEncoding });
      // URL-safe base64 without padding: DSSE verifiers must take it.
      writeFileSync(
        file(`p256-${dsaEncoding}.json`),
        JSON.stringify({ payload: payload.toString('base64url'), payloadType: type, signatures: [{ sig: sig.toString('base64url') }] }),
      );
      const r = await offline(['verify', 'dsse', file(`p256-${dsaEncoding}.json`), '--key', file('p256.pem')]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect((await offline(['verify', 'dsse', file(`p256-${dsaEncoding}.json`), '--key', pemFile])).code).toBe(1);
    }
    writeFileSync(file('rsa.pem'), generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }));
    const rsa = await offline(['verify', 'dsse', file('p256-der.json'), '--key', file('rsa.pem')]);
    expect(rsa.code).toBe(2);
    expect(rsa.stderr).toContain('Ed25519 or ECDSA P-256');
  });
});

describe('bad input', () => {
  it('an unknown id exits 2 naming it', async () => {
    for (const id of ['att_00000000000fffff', 'cprop_00000000000fffff']) {
      const r = await akas('p1', ['export', id, '--format', 'sigstore']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(id);
    }
    const notAnId = await akas('p1', ['export', 'nonsense', '--format', 'dsse']);
    expect(notAnId.code).toBe(2);
    expect(notAnId.stderr).toContain('nonsense');
  });

  it('an attestation whose body names no subject exits 2 saying why', async () => {
    const r = await akas('p1', ['export', noSubjectId, '--format', 'dsse']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('names no digest to be its in-toto subject');
    expect(r.stderr).toContain('telemetrySha256');
  });

  it('a proposal not decided exits 2 saying so', async () => {
    writeFileSync(file('pending.json'), JSON.stringify(samplePayload('capability', 4)));
    const proposed = await akas('p1', ['--json', 'propose', 'capability', '--file', file('pending.json')]);
    expect(proposed.code, proposed.stderr).toBe(0);
    const pending = JSON.parse(proposed.stdout).proposalId;
    const r = await akas('p1', ['export', pending, '--format', 'sigstore']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${pending} is pending: only a decided proposal`);
    expect(r.stderr).toContain('not_exportable');
  });

  it('verify dsse|sigstore without a usable key or readable file exits 2', async () => {
    expect((await offline(['verify', 'sigstore', file('review.sigstore.json')])).code).toBe(2);
    writeFileSync(file('not.pem'), 'not a key');
    expect((await offline(['verify', 'sigstore', file('review.sigstore.json'), '--key', file('not.pem')])).code).toBe(2);
    writeFileSync(file('not.json'), '{');
    expect((await offline(['verify', 'dsse', file('not.json'), '--key', pemFile])).code).toBe(2);
    expect((await offline(['verify', 'log-proof', file('not.json'), '--log-key', logKey])).code).toBe(2);
  });

  it('an envelope with its payload key twice exits 2 (invalid_json) in the CLI and the single file alike (PROTOCOL 16.4)', async () => {
    const env = readJson('review.dsse.json');
    const other = Buffer.from(JSON.stringify({ ...statementOf(env), predicateType: 'x' })).toString('base64');
    writeFileSync(file('twice.json'), JSON.stringify(env).replace('{', `{"payload":"${other}",`));
    const r = await offline(['--json', 'verify', 'dsse', file('twice.json'), '--key', pemFile]);
    expect([r.code, JSON.parse(r.stdout).code]).toEqual([2, 'invalid_json']);
    const single = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
    const alone = spawnSync(process.execPath, [single, '--json', 'verify', 'dsse', file('twice.json'), '--key', pemFile], { encoding: 'utf8' });
    expect([alone.status, JSON.parse(alone.stdout).code]).toEqual([2, 'invalid_json']);
  });
});

// Python's securesystemslib, where it is installed (Debian's python3-securesystemslib; CI does not
// install it): an independent Ed25519 check of the envelope over a hand-built PAE (docs/INTEROP.md).
const PYTHON = '/usr/bin/python3';
const hasSslib = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import securesystemslib.signer'], { stdio: 'ignore' }).status === 0;
if (!hasSslib) process.stderr.write('supply-chain.test: /usr/bin/python3 with securesystemslib is absent; the Python DSSE check is skipped\n');
describe.skipIf(!hasSslib)('securesystemslib (Python), where installed', () => {
  it('verifies the exported bundle and refuses it changed', () => {
    const script = readFileSync(new URL('../../docs/interop/verify_dsse.py', import.meta.url), 'utf8');
    writeFileSync(file('verify_dsse.py'), script);
    const raw = createPublicKey(readFileSync(pemFile, 'utf8')).export({ format: 'jwk' }).x as string;
    const hex = Buffer.from(raw, 'base64url').toString('hex');
    const ok = spawnSync(PYTHON, [file('verify_dsse.py'), file('review.sigstore.json'), hex], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('OK https://in-toto.io/Statement/v1');
    const bad = withStatement(readJson('review.sigstore.json'), (s) => (s.subject[0].digest.sha256 = 'f'.repeat(64)));
    writeFileSync(file('bad.json'), JSON.stringify(bad));
    expect(spawnSync(PYTHON, [file('verify_dsse.py'), file('bad.json'), hex], { encoding: 'utf8' }).status).not.toBe(0);
  });
});
