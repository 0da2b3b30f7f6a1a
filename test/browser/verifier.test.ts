// The verifier's browser build (dist/akas-verify.browser.js) in real Chromium: Debian's
// `chromium`, driven by playwright-core (never a browser download), headless, with its network
// chatter switched off; the page and the fixtures are served by this test on 127.0.0.1. Every
// check it reports, on the same fixtures as the single-file test, must be what the Node
// verifier reports: the same ids, verdicts and reasons, on WebCrypto's Ed25519. DSSE envelopes
// and Sigstore bundles too (issue 47), Ed25519 and ECDSA P-256 (DER, raw, either S), under a key
// or a trust file's windows: the browser build's verifyDsse/verifySigstore answer what Node's do.
import { createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle, verifyCredential, verifyLogProof, verifyNode, verifyPresentation, verifyProposalJudgments } from '../../verifier/index.js';
import { issuerTrustFromPins } from '../../verifier/issuer-keys.js';
import { dsseKey, verifyDsse } from '../../verifier/dsse.js';
import { NotCheckableError } from '../../verifier/judgment.js';
import { verdictOf } from '../../verifier/report.js';
import { verifySigstore } from '../../verifier/sigstore.js';
import { issuerTrustOf, parseTrust } from '../../verifier/trust.js';
import { bundleOf, ed25519Signer, envelope, p256Signer, rotatedTrust, statement } from '../helpers/dsse-fixtures.js';
import { vectorJson } from '../helpers/vectors.js';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

const BUILD = fileURLToPath(new URL('../../dist/akas-verify.browser.js', import.meta.url));
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const CI = process.env.CI === 'true';

let work: string;
let fx: VerifierFixtures;
let server: Server;
let base: string;
let browser: Browser | undefined;

/** One check to run in both builds: the function, the fixture file, the options. */
type Case = [name: string, fn: 'credential' | 'presentation' | 'bundle' | 'judgments' | 'node' | 'logProof', file: string, options: Record<string, unknown>];
let cases: Case[];

beforeAll(async () => {
  if (!CHROMIUM) {
    if (CI) throw new Error("chromium is not installed (.ci/run installs Debian's chromium)");
    return;
  }
  if (!existsSync(BUILD)) throw new Error(`${BUILD} is missing: run npm run build`);
  work = mkdtempSync(join(tmpdir(), 'akas-browser-'));
  fx = await writeVerifierFixtures(work);
  const at = Date.parse(fx.at);
  cases = [
    ['the W3C worked example', 'credential', 'w3c-signed.json', { at }],
    ['a judgment credential, issuer pinned, judge signature', 'credential', 'credential-0.json', { at, issuer: fx.issuer, checkJudgeSignature: true }],
    ['a changed judgment credential', 'credential', 'credential-tampered.json', { at }],
    ['a proof set', 'credential', 'proof-set.json', { at }],
    ['several subjects', 'credential', 'subjects.json', { at }],
    ['text that is not JSON', 'credential', 'garbage.json', { at }],
    [
      'a presentation with its challenge and domain',
      'presentation',
      'presentation.json',
      { at, challenge: 'audit-2026', domain: 'auditor.example', issuer: fx.issuer },
    ],
    ['a presentation with another challenge', 'presentation', 'presentation.json', { at, challenge: 'another' }],
    ['a bundle', 'bundle', 'bundle.json', { at, issuer: fx.issuer }],
    ['a changed bundle', 'bundle', 'bundle-tampered.json', { at, issuer: fx.issuer }],
    // Issue 32: nothing pinned is unanchored; a trust file anchors; its expired issuer window fails.
    ['an unanchored bundle', 'bundle', 'bundle.json', { at }],
    ['a bundle anchored by a trust file', 'bundle', 'bundle.json', { at, trustFile: 'trust.json' }],
    ['a bundle under an expired issuer window', 'bundle', 'bundle.json', { at, trustFile: 'trust-expired.json' }],
    ["a proposal's judgments", 'judgments', 'proposal.json', {}],
    ['changed judgments', 'judgments', 'proposal-tampered.json', {}],
    ['a published node with its evidence', 'node', 'node.json', { issuer: fx.issuer }],
    ['a changed published node', 'node', 'node-tampered.json', { issuer: fx.issuer }],
    ['a log proof', 'logProof', 'attestation.json', { logKey: fx.logKey }],
    ['a changed log entry', 'logProof', 'attestation-tampered.json', { logKey: fx.logKey }],
    ['a checkpoint cosigned by its witness', 'logProof', 'attestation-witnessed.json', { logKey: fx.logKey, witnesses: { keys: [fx.witnessKey] } }],
    [
      "a checkpoint cosigned by another's key under the witness's name",
      'logProof',
      'attestation-unwitnessed.json',
      { logKey: fx.logKey, witnesses: { keys: [fx.witnessKey] } },
    ],
  ];

  // The page loads the build as a module, as the explorer will, and hands it to the test as window.akas.
  const page = `<!doctype html><meta charset="utf-8"><title>akas verifier</title><p>akas verifier browser test</p>
<script type="module">import * as akas from '/akas-verify.browser.js'; window.akas = akas;</script>`;
  server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    const file =
      path === '/akas-verify.browser.js' ? BUILD : path.startsWith('/fixtures/') ? join(work, path.slice('/fixtures/'.length).replace(/[/\\]/g, '')) : null;
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    if (!file || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  if (work) rmSync(work, { recursive: true, force: true });
});

/** What the Node verifier reports for a case, settled as the browser build settles it: verified only when anchored; unreadable input, NotCheckableError. */
async function nodeVerdict(c: Case) {
  try {
    return await nodeReport(c);
  } catch (e) {
    return { error: e instanceof NotCheckableError ? 'NotCheckableError' : (e as Error).name, code: (e as NotCheckableError).code };
  }
}

async function nodeReport([, fn, file, o]: Case) {
  const text = readFileSync(join(work, file), 'utf8');
  const { trustFile, ...rest } = o;
  const pins = trustFile ? parseTrust(readFileSync(join(work, trustFile as string), 'utf8')) : undefined;
  const options = pins ? { ...rest, trust: issuerTrustFromPins(pins.issuers), logKeys: pins.policy.logs } : rest;
  const settled = <R extends { verified: boolean; anchored: boolean }>(r: R) => ({ ...r, verified: verdictOf(r) === 'verified', verdict: verdictOf(r) });
  if (fn === 'credential') return settled(verifyCredential(text, options));
  if (fn === 'presentation') return settled(verifyPresentation(text, options));
  if (fn === 'bundle') return settled(await verifyBundle(text, options));
  if (fn === 'judgments') return verifyProposalJudgments(JSON.parse(text));
  if (fn === 'node') return settled(verifyNode(text, options));
  return settled(verifyLogProof(JSON.parse(text), options.logKey as string, options.witnesses as never));
}

describe('dist/akas-verify.browser.js in Chromium', () => {
  it('runs on WebCrypto, with no Node built-in, and answers every check as the Node verifier does', async (ctx) => {
    if (!browser) return ctx.skip();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base + '/');
    await page.waitForFunction(() => 'akas' in globalThis);
    const results = await page.evaluate(async (list) => {
      const v = (globalThis as unknown as { akas: any }).akas;
      const out: { platform: string; reports: unknown[] } = { platform: v.CRYPTO_PLATFORM, reports: [] };
      for (const [, fn, file, options] of list) {
        const text = await (await fetch(`/fixtures/${file}`)).text();
        const { trustFile, ...rest } = options as Record<string, unknown>;
        const pins = trustFile ? v.parseTrust(await (await fetch(`/fixtures/${trustFile}`)).text()) : undefined;
        const o: Record<string, unknown> = pins ? { ...rest, trust: pins.trust, logKeys: pins.logKeys } : rest;
        // Status is read on purpose elsewhere (test/browser/status.test.ts): here it is skipped, the reader's explicit choice.
        const skipped = (r: { status?: unknown }) => {
          delete r.status;
          return r;
        };
        // Input the verifier cannot read rejects with NotCheckableError, as Node's throws it (PROTOCOL 8.8).
        const settle = (p: Promise<unknown>) =>
          p.catch((e: { code?: string; name: string }) => ({ error: e instanceof v.NotCheckableError ? 'NotCheckableError' : e.name, code: e.code }));
        if (fn === 'credential') out.reports.push(await settle(v.verifyCredential(text, { ...o, status: 'skip' }).then(skipped)));
        else if (fn === 'presentation') out.reports.push(await settle(v.verifyPresentation(text, { ...o, status: 'skip' }).then(skipped)));
        else if (fn === 'bundle') out.reports.push(await settle(v.verifyBundle(text, o)));
        else if (fn === 'judgments') out.reports.push(await v.verifyProposalJudgments(JSON.parse(text)));
        else if (fn === 'node') out.reports.push(await settle(v.verifyNode(text, o)));
        else out.reports.push(await v.verifyLogProof(JSON.parse(text), o.logKey as string, o.witnesses));
      }
      return out;
    }, cases);
    expect(errors).toEqual([]);
    expect(results.platform).toBe('webcrypto');
    const verdicts: boolean[] = [];
    const named: Record<string, unknown> = {};
    for (const [i, c] of cases.entries()) {
      const mine = results.reports[i] as { verified?: boolean; ok?: boolean; verdict?: string; error?: string };
      expect(mine, c[0]).toEqual(JSON.parse(JSON.stringify(await nodeVerdict(c))));
      verdicts.push(Boolean(mine.verified ?? mine.ok));
      named[c[0]] = mine.verdict ?? mine.error;
    }
    // Both outcomes are among the fixtures: a build that answered one verdict to all would fail.
    expect(new Set(verdicts)).toEqual(new Set([true, false]));
    expect(named).toMatchObject({
      'an unanchored bundle': 'unanchored',
      'a bundle anchored by a trust file': 'verified',
      'a bundle under an expired issuer window': 'not verified',
      'text that is not JSON': 'NotCheckableError',
    });
    await page.close();
  }, 120_000);

  it('checks a bundle with the bytes of its blobs given in memory', async (ctx) => {
    if (!browser) return ctx.skip();
    const page = await browser.newPage();
    await page.goto(base + '/');
    await page.waitForFunction(() => 'akas' in globalThis);
    const r = await page.evaluate(async () => {
      const v = (globalThis as unknown as { akas: any }).akas;
      const bytes = new TextEncoder().encode('the bytes of an artifact\n'.repeat(100));
      const sha = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
      const bundle = JSON.parse(await (await fetch('/fixtures/bundle.json')).text());
      bundle.cas = [{ sha256: sha, role: 'artifact', bytes: bytes.length }];
      const good = await v.verifyBundle(bundle, { blobs: { [sha]: bytes } });
      const bad = await v.verifyBundle(bundle, { blobs: { [sha]: bytes.slice(1) } });
      const none = await v.verifyBundle(bundle, {});
      const pick = (x: { checks: Array<{ id: string; valid: boolean | null }> }) => x.checks.filter((c) => c.id === 'cas.hash').map((c) => c.valid);
      return { good: pick(good), bad: pick(bad), none: pick(none) };
    });
    expect(r).toEqual({ good: [true], bad: [false], none: [null] });
    await page.close();
  });
});

/** One DSSE case for both builds: the function, the file, who signed (a PEM file, or a trust file's issuers). */
type DsseCase = [name: string, fn: 'dsse' | 'sigstore', file: string, signer: { pem: string } | { trustFile: string }];
const DSSE_NOW = Date.parse('2026-06-01T00:00:00Z');

/** Envelopes and bundles as akas exports them and as others sign them, good and changed, written into the served folder. */
function writeDsseFixtures(): DsseCase[] {
  const old = ed25519Signer();
  const current = ed25519Signer();
  const der = p256Signer('der');
  const raw = p256Signer('ieee-p1363');
  const write = (name: string, v: unknown) => writeFileSync(join(work, name), typeof v === 'string' ? v : JSON.stringify(v));
  const pem = (k: { export: (o: { type: 'spki'; format: 'pem' }) => string | Buffer }) => String(k.export({ type: 'spki', format: 'pem' }));
  write('current.pem', pem(current.publicKey));
  write('p256.pem', pem(der.publicKey));
  write('p256-raw.pem', pem(raw.publicKey));
  write('dsse-trust.json', rotatedTrust(old, current));
  const good = envelope(current);
  write('env.json', good);
  write('env-changed.json', { ...good, payload: Buffer.from(JSON.stringify(statement('2022-01-01T00:00:00.000Z'))).toString('base64') });
  write('env-old-after-rotation.json', envelope(old, statement('2021-06-01T00:00:00.000Z')));
  write('env-old-no-log-time.json', envelope(old, statement()));
  write(
    'env-duplicate-payload.json',
    `{"payload":"${good.payload}","payloadType":"${good.payloadType}","signatures":${JSON.stringify(good.signatures)},"payload":"e30="}`,
  );
  write('bundle.json', bundleOf(good));
  const otherSig = bundleOf(envelope(current));
  otherSig.dsseEnvelope.signatures[0].sig = envelope(old).signatures[0].sig;
  write('bundle-changed-signature.json', otherSig);
  const both = bundleOf(good);
  both.messageSignature = { messageDigest: { algorithm: 'SHA2_256', digest: 'AA==' }, signature: 'AA==' };
  write('bundle-message-signature.json', both);
  const p256 = envelope(der, statement());
  write('p256-der.json', p256);
  write('p256-der-changed.json', { ...p256, payload: Buffer.from(JSON.stringify(statement('2022-01-01T00:00:00.000Z'))).toString('base64url') });
  const rawEnv = envelope(raw, statement());
  write('p256-raw.json', rawEnv);
  // The same signature with s replaced by n - s: it holds too (P-256 signers do not normalize S).
  const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const sig = Buffer.from(rawEnv.signatures[0].sig, 'base64');
  const twinS = (n - BigInt(`0x${sig.subarray(32).toString('hex')}`)).toString(16).padStart(64, '0');
  write('p256-raw-twin.json', {
    ...rawEnv,
    signatures: [{ ...rawEnv.signatures[0], sig: Buffer.concat([sig.subarray(0, 32), Buffer.from(twinS, 'hex')]).toString('base64') }],
  });
  write('p256-bundle.json', bundleOf(p256));
  // The DSSE specification's own P-256 envelope (secure-systems-lab/dsse), under its key.
  const v = vectorJson('dsse', 'pae.json');
  const coord = (d: string) => Buffer.from(BigInt(d).toString(16).padStart(64, '0'), 'hex').toString('base64url');
  write('vector.pem', pem(createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: coord(v.key.X), y: coord(v.key.Y) }, format: 'jwk' })));
  write('vector.json', v.envelope);
  return [
    ['an akas envelope under its key', 'dsse', 'env.json', { pem: 'current.pem' }],
    ['an envelope whose payload was changed', 'dsse', 'env-changed.json', { pem: 'current.pem' }],
    ['an envelope under a trust file, signed by the current key', 'dsse', 'env.json', { trustFile: 'dsse-trust.json' }],
    ['an envelope by a key rotated out before its log time', 'dsse', 'env-old-after-rotation.json', { trustFile: 'dsse-trust.json' }],
    ['an envelope by a rotated-out key, with no log time', 'dsse', 'env-old-no-log-time.json', { trustFile: 'dsse-trust.json' }],
    ['an envelope with its payload key twice', 'dsse', 'env-duplicate-payload.json', { pem: 'current.pem' }],
    ['an envelope under another key', 'dsse', 'env.json', { pem: 'p256.pem' }],
    ['an akas Sigstore bundle', 'sigstore', 'bundle.json', { pem: 'current.pem' }],
    ['a Sigstore bundle under a trust file', 'sigstore', 'bundle.json', { trustFile: 'dsse-trust.json' }],
    ["a Sigstore bundle with another key's signature", 'sigstore', 'bundle-changed-signature.json', { pem: 'current.pem' }],
    ['a Sigstore bundle with a messageSignature beside its envelope', 'sigstore', 'bundle-message-signature.json', { pem: 'current.pem' }],
    ['a P-256 envelope, DER signature', 'dsse', 'p256-der.json', { pem: 'p256.pem' }],
    ['a P-256 envelope changed', 'dsse', 'p256-der-changed.json', { pem: 'p256.pem' }],
    ['a P-256 envelope, raw r||s', 'dsse', 'p256-raw.json', { pem: 'p256-raw.pem' }],
    ['a P-256 envelope, its twin S', 'dsse', 'p256-raw-twin.json', { pem: 'p256-raw.pem' }],
    ['a P-256 envelope under the wrong P-256 key', 'dsse', 'p256-raw.json', { pem: 'p256.pem' }],
    ['a P-256 Sigstore bundle', 'sigstore', 'p256-bundle.json', { pem: 'p256.pem' }],
    ["the DSSE specification's P-256 envelope", 'dsse', 'vector.json', { pem: 'vector.pem' }],
  ];
}

/** What `akas verify dsse|sigstore` computes for a case (dsseKey of the PEM, or the trust file's issuers), settled as the browser build settles it. */
function nodeDsse([, fn, file, signer]: DsseCase) {
  const bytes = readFileSync(join(work, file));
  const key =
    'pem' in signer ? dsseKey(readFileSync(join(work, signer.pem), 'utf8')) : issuerTrustOf(parseTrust(readFileSync(join(work, signer.trustFile), 'utf8')))!;
  try {
    const r = (fn === 'dsse' ? verifyDsse : verifySigstore)(bytes, key, { now: DSSE_NOW });
    return { ...r, verified: verdictOf(r) === 'verified', verdict: verdictOf(r) };
  } catch (e) {
    return { error: e instanceof NotCheckableError ? 'NotCheckableError' : (e as Error).name, message: (e as Error).message };
  }
}

describe('DSSE envelopes and Sigstore bundles in the browser build (issue 47)', () => {
  it("answers every envelope and bundle as Node's verifier does: Ed25519 and P-256, under a key or a trust file's windows", async (ctx) => {
    if (!browser) return ctx.skip();
    const dsseCases = writeDsseFixtures();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base + '/');
    await page.waitForFunction(() => 'akas' in globalThis);
    const reports = await page.evaluate(
      async ({ list, now }) => {
        const v = (globalThis as unknown as { akas: any }).akas;
        const out: unknown[] = [];
        const text = async (f: string) => (await fetch(`/fixtures/${f}`)).text();
        for (const [, fn, file, signer] of list) {
          const who = 'pem' in signer ? await text(signer.pem) : v.parseTrust(await text(signer.trustFile)).trust;
          const bytes = new Uint8Array(await (await fetch(`/fixtures/${file}`)).arrayBuffer());
          try {
            out.push(await (fn === 'dsse' ? v.verifyDsse : v.verifySigstore)(bytes, who, { now }));
          } catch (e) {
            out.push({ error: e instanceof v.NotCheckableError ? 'NotCheckableError' : (e as Error).name, message: (e as Error).message });
          }
        }
        return out;
      },
      { list: dsseCases, now: DSSE_NOW },
    );
    expect(errors).toEqual([]);
    const verdicts: Record<string, unknown> = {};
    for (const [i, c] of dsseCases.entries()) {
      expect(reports[i], c[0]).toEqual(JSON.parse(JSON.stringify(nodeDsse(c))));
      const r = reports[i] as { verdict?: string; error?: string };
      verdicts[c[0]] = r.verdict ?? r.error;
    }
    expect(verdicts).toEqual({
      'an akas envelope under its key': 'verified',
      'an envelope whose payload was changed': 'not verified',
      'an envelope under a trust file, signed by the current key': 'verified',
      'an envelope by a key rotated out before its log time': 'not verified',
      'an envelope by a rotated-out key, with no log time': 'unanchored',
      'an envelope with its payload key twice': 'NotCheckableError',
      'an envelope under another key': 'not verified',
      'an akas Sigstore bundle': 'verified',
      'a Sigstore bundle under a trust file': 'verified',
      "a Sigstore bundle with another key's signature": 'not verified',
      'a Sigstore bundle with a messageSignature beside its envelope': 'not verified',
      'a P-256 envelope, DER signature': 'verified',
      'a P-256 envelope changed': 'not verified',
      'a P-256 envelope, raw r||s': 'verified',
      'a P-256 envelope, its twin S': 'verified',
      'a P-256 envelope under the wrong P-256 key': 'not verified',
      'a P-256 Sigstore bundle': 'verified',
      // Its payloadType is not an in-toto Statement's: the signature holds, the content check does not.
      "the DSSE specification's P-256 envelope": 'not verified',
    });
    const vector = reports.at(-1) as { checks: Array<{ id: string; valid: boolean | null }> };
    expect(vector.checks.find((c) => c.id === 'dsse.signature')?.valid).toBe(true);
    await page.close();
  }, 120_000);

  it('refuses a PEM key it cannot take, naming it, as akas verify dsse --key does', async (ctx) => {
    if (!browser) return ctx.skip();
    const page = await browser.newPage();
    await page.goto(base + '/');
    await page.waitForFunction(() => 'akas' in globalThis);
    const rsa = String((await import('node:crypto')).generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }));
    const said = await page.evaluate(async (pem) => {
      const v = (globalThis as unknown as { akas: any }).akas;
      return v.verifyDsse('{}', pem).then(
        () => 'verified',
        (e: Error) => e.message,
      );
    }, rsa);
    expect(said).toBe('a rsa key: DSSE checks take Ed25519 or ECDSA P-256');
    expect(() => dsseKey(rsa)).toThrow(said);
    await page.close();
  });
});
