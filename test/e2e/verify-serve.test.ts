// `akas verify serve` (the built binary): the VC-API adapter the W3C test suites' verifier
// tests are pointed at (docs/W3C-SUITES.md). Loopback only; 200 with verified true when every
// check holds on an issuer it was started pinning (--trust), 400 with ProblemDetails naming the
// failed checks, 400 unanchored when nothing pins the issuer (issue 32), and the usual refusals.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signer, signJcs } from '../helpers/jcs-sign.js';
import { CLI, tempDir } from '../helpers/e2e.js';

let child: ChildProcess;
let url: string;
let unpinned: ChildProcess | undefined;

/** Starts `akas verify serve` with these arguments; answers the process and its URL. */
async function serve(args: string[]): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [CLI, 'verify', 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const at = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`akas verify serve exited ${code}: ${out}`)));
  });
  return { proc, url: at };
}

async function stop(proc: ChildProcess | undefined) {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
}

beforeAll(async () => {
  // The adapter pins the issuer of the test's credentials in a trust file (PROTOCOL 8.6).
  const trust = join(tempDir('akas-verify-serve-'), 'trust.json');
  writeFileSync(trust, JSON.stringify({ type: 'akas.trust.v1', issuers: [{ did: by.did, validFrom: null, validUntil: null }], policy: 'quorum none\n' }));
  ({ proc: child, url } = await serve(['--trust', trust]));
});
afterAll(async () => {
  await stop(child);
  await stop(unpinned);
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { verified?: boolean; checks: string[]; errors: Array<{ type: string; title: string; detail: string }>; warnings: unknown[] },
  };
};

/** A POST to /credentials/verify with exactly these headers (fetch sets Host and may not send Origin). */
function raw(headers: Record<string, string>, body: string): Promise<{ status: number; body: { errors: Array<{ detail: string }> } }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname,
        port,
        method: 'POST',
        path: '/credentials/verify',
        headers: { 'content-length': String(Buffer.byteLength(body)), ...headers },
        setHost: !('host' in headers),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const by = signer();
const credential = signJcs(
  {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    type: ['VerifiableCredential'],
    issuer: by.did,
    validFrom: '2026-01-01T00:00:00Z',
    credentialSubject: { id: 'did:example:s', name: 'Ada' },
  },
  by,
);

describe('akas verify serve (VC-API)', () => {
  it('listens on the loopback address only', () => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
  });

  it('POST /credentials/verify: 200 verified for a good credential, 400 naming the check for a changed one', async () => {
    const ok = await post('/credentials/verify', { verifiableCredential: credential, options: { checks: ['proof'] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ verified: true, anchored: true, unanchored: [], errors: [] });
    expect(ok.body.checks).toContain('proof.signature');
    const bad = await post('/credentials/verify', { verifiableCredential: { ...credential, credentialSubject: { id: 'did:example:s', name: 'Eve' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.verified).toBe(false);
    expect(bad.body.errors.map((e) => e.title)).toEqual(['proof.signature']);
    expect(bad.body.errors[0].type).toMatch(/PROOF_VERIFICATION_ERROR/);
  });

  it('never answers verified for an issuer nobody pinned: 400, anchored false, an unanchored problem naming what to pin', async () => {
    const open = await serve([]);
    unpinned = open.proc;
    const res = await fetch(`${open.url}/credentials/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ verifiableCredential: credential }),
    });
    const body = (await res.json()) as {
      verified: boolean;
      anchored: boolean;
      unanchored: string[];
      checks: string[];
      errors: Array<{ title: string; detail: string }>;
    };
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ verified: false, anchored: false, unanchored: ['issuer.pinned'] });
    expect(body.checks).toContain('proof.signature'); // the checks held: only the anchor is missing
    expect(body.errors).toEqual([expect.objectContaining({ title: 'unanchored', detail: expect.stringContaining('--trust FILE or --issuer DID') })]);
    await stop(open.proc);
  });

  it('POST /presentations/verify checks the challenge and domain given in options', async () => {
    const holder = signer();
    const vp = signJcs(
      { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiablePresentation'], holder: holder.did, verifiableCredential: [credential] },
      holder,
      {
        proofPurpose: 'authentication',
        challenge: 'abc',
        domain: 'suite.example',
      },
    );
    expect((await post('/presentations/verify', { verifiablePresentation: vp, options: { challenge: 'abc', domain: 'suite.example' } })).status).toBe(200);
    const wrong = await post('/presentations/verify', { verifiablePresentation: vp, options: { challenge: 'xyz', domain: 'suite.example' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.map((e) => e.title)).toEqual(['proof.challenge']);
  });

  it('refuses a credential or presentation that is not a JSON object (a JSON string of one verified true)', async () => {
    const asString = await post('/credentials/verify', { verifiableCredential: JSON.stringify(credential) });
    expect(asString.status).toBe(400);
    expect(asString.body.verified).toBe(false);
    expect(asString.body.errors[0]).toMatchObject({
      type: expect.stringMatching(/PARSING_ERROR/),
      detail: 'verifiableCredential is a JSON string, not a JSON object',
    });
    for (const value of [[credential], 7, true, null]) expect((await post('/credentials/verify', { verifiableCredential: value })).status).toBe(400);
    const vp = { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiablePresentation'], verifiableCredential: [credential] };
    expect((await post('/presentations/verify', { verifiablePresentation: vp })).status).toBe(200);
    const vpString = await post('/presentations/verify', { verifiablePresentation: JSON.stringify(vp) });
    expect([vpString.status, vpString.body.errors[0].detail]).toEqual([400, 'verifiablePresentation is a JSON string, not a JSON object']);
  });

  it('answers local clients only: a Host that is not loopback (DNS rebinding) or a foreign Origin (a web page) gets 403, before the body is read', async () => {
    const port = new URL(url).port;
    const body = JSON.stringify({ verifiableCredential: credential });
    const json = { 'content-type': 'application/json' };
    expect((await raw({ ...json, host: 'evil.example' }, body)).status).toBe(403);
    expect((await raw({ ...json, host: `rebound.example:${port}` }, body)).status).toBe(403);
    const refused = await raw({ ...json, origin: 'https://evil.example' }, body);
    expect(refused.status).toBe(403);
    expect(refused.body.errors[0].detail).toMatch(/Origin "https:\/\/evil\.example" is not this adapter's own/);
    for (const origin of ['null', `http://127.0.0.1:${Number(port) + 1}`, `http://localhost.evil.example:${port}`])
      expect((await raw({ ...json, origin }, body)).status, origin).toBe(403);
    // The adapter's own origin, under each loopback name, and no Origin at all (the suites' clients send none).
    const local: Array<Record<string, string>> = [
      { origin: `http://127.0.0.1:${port}` },
      { origin: `http://localhost:${port}`, host: `localhost:${port}` },
      { host: `[::1]:${port}` },
      {},
    ];
    for (const headers of local) {
      expect((await raw({ ...json, ...headers }, body)).status, JSON.stringify(headers)).toBe(200);
    }
  });

  it('reads application/json only: a form post (text/plain, no preflight) gets 415', async () => {
    const body = JSON.stringify({ verifiableCredential: credential });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const r = await raw(type ? { 'content-type': type } : {}, body);
      expect(r.status, type).toBe(415);
    }
    expect((await raw({ 'content-type': 'application/json; charset=utf-8' }, body)).status).toBe(200);
  });

  it('refuses a document of more than 8 proofs with a 400 naming the bound (1,000 proofs over 500 KB held it for 44 s)', async () => {
    const { proof: _proof, ...unsigned } = credential as Record<string, unknown>;
    const big: Record<string, unknown> = { ...unsigned, credentialSubject: { id: 'did:example:s', name: 'Ada', notes: 'n'.repeat(500_000) } };
    const one = signJcs(big, by).proof;
    const r = await post('/credentials/verify', { verifiableCredential: { ...big, proof: Array.from({ length: 1000 }, () => one) } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatchObject({ title: 'proof.shape', detail: expect.stringContaining('a set of 1000 proofs: a document carries at most 8') });
    // Eight proofs (the issuer's and seven others') verify, each against the one canonical form of the document.
    let eight = big;
    for (let i = 1; i <= 8; i++) eight = signJcs(eight, i === 1 ? by : signer(), { created: `2026-01-0${i}T00:00:00Z` });
    const ok = await post('/credentials/verify', { verifiableCredential: eight });
    expect(ok.status, JSON.stringify(ok.body.errors)).toBe(200);
    expect(ok.body.checks.filter((c) => c.startsWith('proof.signature'))).toHaveLength(8);
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
