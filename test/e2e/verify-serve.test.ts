// `akas verify serve` (the built binary): the VC-API adapter the W3C test suites' verifier
// tests are pointed at (docs/W3C-SUITES.md). Loopback only; 200 with verified true when every
// check holds, 400 with ProblemDetails naming the failed checks, and the usual refusals.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signer, signJcs } from '../helpers/jcs-sign.js';
import { CLI } from '../helpers/e2e.js';

let child: ChildProcess;
let url: string;

beforeAll(async () => {
  child = spawn(process.execPath, [CLI, 'verify', 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`akas verify serve exited ${code}: ${out}`)));
  });
});
afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { verified?: boolean; checks: string[]; errors: Array<{ type: string; title: string }>; warnings: unknown[] } };
};

const by = signer();
const credential = signJcs(
  { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiableCredential'], issuer: by.did, validFrom: '2026-01-01T00:00:00Z', credentialSubject: { id: 'did:example:s', name: 'Ada' } },
  by,
);

describe('akas verify serve (VC-API)', () => {
  it('listens on the loopback address only', () => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
  });

  it('POST /credentials/verify: 200 verified for a good credential, 400 naming the check for a changed one', async () => {
    const ok = await post('/credentials/verify', { verifiableCredential: credential, options: { checks: ['proof'] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ verified: true, errors: [] });
    expect(ok.body.checks).toContain('proof.signature');
    const bad = await post('/credentials/verify', { verifiableCredential: { ...credential, credentialSubject: { id: 'did:example:s', name: 'Eve' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.verified).toBe(false);
    expect(bad.body.errors.map((e) => e.title)).toEqual(['proof.signature']);
    expect(bad.body.errors[0].type).toMatch(/PROOF_VERIFICATION_ERROR/);
  });

  it('POST /presentations/verify checks the challenge and domain given in options', async () => {
    const holder = signer();
    const vp = signJcs({ '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiablePresentation'], holder: holder.did, verifiableCredential: [credential] }, holder, {
      proofPurpose: 'authentication',
      challenge: 'abc',
      domain: 'suite.example',
    });
    expect((await post('/presentations/verify', { verifiablePresentation: vp, options: { challenge: 'abc', domain: 'suite.example' } })).status).toBe(200);
    const wrong = await post('/presentations/verify', { verifiablePresentation: vp, options: { challenge: 'xyz', domain: 'suite.example' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.map((e) => e.title)).toEqual(['proof.challenge']);
  });

  it('refuses what is not a request: duplicate keys, no credential, another method, another path, an oversized body', async () => {
    const dup = await post('/credentials/verify', '{"verifiableCredential": {}, "verifiableCredential": {}}');
    expect(dup.status).toBe(400);
    expect(dup.body.errors[0].type).toMatch(/PARSING_ERROR/);
    expect((await post('/credentials/verify', { credential })).status).toBe(400);
    expect((await fetch(`${url}/credentials/verify`)).status).toBe(405);
    expect((await post('/credentials/issue', { credential })).status).toBe(404);
    expect((await post('/credentials/verify', { verifiableCredential: 'x'.repeat(1_100_000) })).status).toBe(413);
  });
});
