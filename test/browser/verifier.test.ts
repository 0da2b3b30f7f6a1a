// The verifier's browser build (dist/akas-verify.browser.js) in real Chromium: Debian's
// `chromium`, driven by playwright-core (never a browser download), headless, with its network
// chatter switched off; the page and the fixtures are served by this test on 127.0.0.1. Every
// check it reports, on the same fixtures as the single-file test, must be what the Node
// verifier reports: the same ids, verdicts and reasons, on WebCrypto's Ed25519.
import { existsSync, readFileSync, rmSync } from 'node:fs';
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
import { verdictOf } from '../../verifier/report.js';
import { parseTrust } from '../../verifier/trust.js';
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

/** What the Node verifier reports for a case, settled as the browser build settles it: verified only when anchored. */
async function nodeVerdict([, fn, file, o]: Case) {
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
        if (fn === 'credential') out.reports.push(await v.verifyCredential(text, o));
        else if (fn === 'presentation') out.reports.push(await v.verifyPresentation(text, o));
        else if (fn === 'bundle') out.reports.push(await v.verifyBundle(text, o));
        else if (fn === 'judgments') out.reports.push(await v.verifyProposalJudgments(JSON.parse(text)));
        else if (fn === 'node') out.reports.push(await v.verifyNode(text, o));
        else out.reports.push(await v.verifyLogProof(JSON.parse(text), o.logKey as string, o.witnesses));
      }
      return out;
    }, cases);
    expect(errors).toEqual([]);
    expect(results.platform).toBe('webcrypto');
    const verdicts: boolean[] = [];
    const named: Record<string, unknown> = {};
    for (const [i, c] of cases.entries()) {
      const mine = results.reports[i] as { verified?: boolean; ok?: boolean; verdict?: string };
      expect(mine, c[0]).toEqual(JSON.parse(JSON.stringify(await nodeVerdict(c))));
      verdicts.push(Boolean(mine.verified ?? mine.ok));
      named[c[0]] = mine.verdict;
    }
    // Both outcomes are among the fixtures: a build that answered one verdict to all would fail.
    expect(new Set(verdicts)).toEqual(new Set([true, false]));
    expect(named).toMatchObject({
      'an unanchored bundle': 'unanchored',
      'a bundle anchored by a trust file': 'verified',
      'a bundle under an expired issuer window': 'failed',
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
