// akas verify dsse|sigstore in-process, offline (PROTOCOL 16.4; issue 54): the file read as
// strict JSON (a duplicated payload exits 2, invalid_json), a bundle in its specified shape (exit
// 1, bundle.shape), and under --trust the signing key held to its window: a rotated-out key that
// signed after its rotation fails (exit 1), and one whose signing time nothing tells exits 3 with
// the verdict naming issuer.window, never 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import { IN_TOTO_PAYLOAD_TYPE } from '../../src/core/dsse.js';
import { Capture } from '../helpers/cli.js';
import { bundleOf, ed25519Signer, envelope, rotatedTrust, statement } from '../helpers/dsse-fixtures.js';

let dir: string;
let files = 0;
const old = ed25519Signer();
const current = ed25519Signer();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-verify-dsse-'));
  process.env.AKAS_CONFIG_DIR = dir;
  writeFileSync(join(dir, 'trust.json'), JSON.stringify(rotatedTrust(old, current)));
  writeFileSync(join(dir, 'current.pem'), current.publicKey.export({ type: 'spki', format: 'pem' }));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  delete process.env.AKAS_CONFIG_DIR;
  process.exitCode = 0;
});

/** Writes `doc` (text as it is, else its JSON) and runs `akas --json verify KIND FILE ...args` with no node to reach. */
async function verify(kind: 'dsse' | 'sigstore', doc: unknown, args: string[]) {
  const path = join(dir, `doc-${++files}.json`);
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  const stdout = new Capture();
  const code = await run(['--json', 'verify', kind, path, ...args], { stdout, stderr: new Capture() }, commandGroups, { AKAS_BASE_URL: 'http://127.0.0.1:9' });
  process.exitCode = 0;
  const out = JSON.parse(stdout.text);
  return { code, out, failed: ((out.checks ?? []) as Array<{ id: string; result: string }>).filter((c) => c.result === 'failed').map((c) => c.id) };
}
const trust = () => ['--trust', join(dir, 'trust.json')];
const key = () => ['--key', join(dir, 'current.pem')];

describe('akas verify dsse|sigstore read strictly', () => {
  it('refuses an envelope with its payload key twice (JSON.parse would keep the last): exit 2, invalid_json', async () => {
    const signed = envelope(current);
    const other = Buffer.from(JSON.stringify(statement('2024-01-01T00:00:00.000Z'))).toString('base64');
    const sigs = JSON.stringify(signed.signatures);
    const text = `{"payload":"${other}","payloadType":"${IN_TOTO_PAYLOAD_TYPE}","signatures":${sigs},"payload":"${signed.payload}"}`;
    const r = await verify('dsse', text, key());
    expect([r.code, r.out.code]).toEqual([2, 'invalid_json']);
    const inBundle = JSON.stringify(bundleOf(signed)).replace('"dsseEnvelope":{', `"dsseEnvelope":{"payload":"${other}",`);
    const b = await verify('sigstore', inBundle, key());
    expect([b.code, b.out.code]).toEqual([2, 'invalid_json']);
    expect((await verify('dsse', signed, key())).code).toBe(0);
  });

  it('refuses a bundle whose tlogEntries is an object, or with a messageSignature beside its envelope: exit 1, bundle.shape', async () => {
    const tlog = bundleOf(envelope(current));
    tlog.verificationMaterial.tlogEntries = { 0: { logIndex: '1' } };
    const both = bundleOf(envelope(current));
    both.messageSignature = { messageDigest: { algorithm: 'SHA2_256', digest: 'AA==' }, signature: 'AA==' };
    for (const doc of [tlog, both]) {
      const r = await verify('sigstore', doc, key());
      expect([r.code, r.failed]).toEqual([1, ['bundle.shape']]);
    }
  });
});

describe('akas verify dsse|sigstore --trust: the signing key in its window', () => {
  it('fails an envelope or bundle a rotated-out key signed after its rotation: exit 1, issuer.window', async () => {
    for (const [kind, doc] of [
      ['dsse', envelope(old)],
      ['sigstore', bundleOf(envelope(old))],
    ] as const) {
      const r = await verify(kind, doc, trust());
      expect([r.code, r.failed]).toEqual([1, ['issuer.window']]);
      expect(r.out.verdict).toBe('not verified');
    }
  });

  it('exits 3 when nothing tells when a rotated-out key signed: the verdict names issuer.window as not checked', async () => {
    const r = await verify('dsse', envelope(old, statement()), trust());
    expect(r.code).toBe(3);
    expect(r.out).toMatchObject({ verdict: 'unanchored', verified: false, anchored: false, unanchored: ['issuer.window'] });
  });

  it("verifies what the issuer's current key signed: exit 0", async () => {
    const r = await verify('sigstore', bundleOf(envelope(current, statement('2019-06-01T00:00:00.000Z'))), trust());
    expect(r.code).toBe(0);
    expect(r.out).toMatchObject({ verdict: 'verified', verified: true });
  });
});
