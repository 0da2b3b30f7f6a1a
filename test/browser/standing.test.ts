// An agent's standing (PROTOCOL 8.9) checked by the verifier's other two builds: the single file
// (dist/akas-verify.mjs, run by node with the saved standing, trust file and log range) and the
// browser build in Chromium (Debian's, driven by playwright-core), each giving the verdict and the
// figures the Node verifier gives, and refusing an edited figure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPools } from '../../src/domain/calibration/scoring.js';
import { verifyStanding } from '../../verifier/standing.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { launchChromium, serveVerifierPage } from '../helpers/browser.js';
import { decide } from '../helpers/flows.js';

const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
const BROWSER = fileURLToPath(new URL('../../dist/akas-verify.browser.js', import.meta.url));

let node: TestNode;
let tag: string;
let work: string;
let at: number;
let logKey: string;
let served: { url: string; close: () => Promise<void> } | undefined;
let browser: BrowserContext | undefined;
let closeBrowser: (() => Promise<void>) | undefined;
const path = (name: string) => join(work, name);

beforeAll(async () => {
  for (const f of [SINGLE, BROWSER]) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build`);
  work = mkdtempSync(join(tmpdir(), 'akas-standing-'));
  node = await testNode();
  // The explorer checks validity at the browser's time: the node's clock is brought to it.
  node.clock.advance(Date.now() - node.clock.now());
  const a = await registerAgent(node, '10.7.0.1');
  tag = a.tag;
  const pool = loadPools()[a.calibrationPoolId as 'A' | 'B'];
  const answers = Object.fromEntries(pool.map((q) => [q.id, q.expected]));
  await node.app.inject({ method: 'POST', url: '/api/agent/v1/calibrate', headers: bearer(a.apiKey), payload: { answers } });
  await decide(node, 'brief');
  const standing = (await node.app.inject({ url: `/api/agents/${a.tag}/standing` })).json();
  const size = standing.credentialSubject.checkpoint.size;
  writeFileSync(path('standing.json'), JSON.stringify(standing));
  writeFileSync(path('edited.json'), JSON.stringify({ ...standing, credentialSubject: { ...standing.credentialSubject, tier: 'weak' } }));
  writeFileSync(path('range.json'), (await node.app.inject({ url: `/api/log/entries?start=0&end=${size}` })).body);
  const keys = (await node.app.inject({ url: '/api/node/keys' })).json();
  logKey = keys.log.verifierKey;
  const trust = { type: 'akas.trust.v1', issuers: [{ did: node.keys.issuer.did }], policy: `log ${logKey}\nquorum none\n` };
  writeFileSync(path('trust.json'), JSON.stringify(trust));
  at = node.clock.now();
  const chrome = await launchChromium();
  if (!chrome) return;
  ({ context: browser, close: closeBrowser } = chrome);
  served = await serveVerifierPage('akas standing', BROWSER, work);
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  await served?.close();
  await node?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const single = (file: string) =>
  spawnSync(
    process.execPath,
    [SINGLE, '--json', 'verify', 'standing', path(file), '--trust', path('trust.json'), '--log-range', path('range.json'), '--no-status', '--at', String(at)],
    { encoding: 'utf8' },
  );

describe('the single-file verifier (dist/akas-verify.mjs)', () => {
  it('verifies the standing with every figure recomputed from the saved range, and refuses an edited figure', () => {
    const ok = single('standing.json');
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ verdict: 'verified', figures: { tier: true, judgments: true, reputation: true } });
    const edited = single('edited.json');
    expect(edited.status).toBe(1);
    expect(JSON.parse(edited.stdout).figures).toMatchObject({ tier: false, calibration: true });
  });
});

describe('the browser build (dist/akas-verify.browser.js) in Chromium', () => {
  it('answers the verdict and the figures the Node verifier answers, on WebCrypto', async (ctx) => {
    if (!browser || !served) return ctx.skip();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${served.url}/`);
    await page.waitForFunction(() => 'akas' in globalThis);
    const got = await page.evaluate(
      async ({ at, logKey, issuer }) => {
        const v = (globalThis as unknown as { akas: any }).akas;
        const entries = ((await (await fetch('/fixtures/range.json')).json()) as { entries: unknown[] }).entries;
        const out: Record<string, unknown> = { platform: v.CRYPTO_PLATFORM };
        for (const f of ['standing', 'edited']) {
          const r = await v.verifyStanding(await (await fetch(`/fixtures/${f}.json`)).text(), { at, issuer, logKeys: [logKey], entries, status: 'skip' });
          out[f] = {
            verdict: r.verdict,
            figures: r.figures,
            failed: r.checks.filter((c: { valid: unknown }) => c.valid === false).map((c: { id: string }) => c.id),
          };
        }
        return out;
      },
      { at, logKey, issuer: node.keys.issuer.did },
    );
    expect(errors).toEqual([]);
    expect(got.platform).toBe('webcrypto');
    const entries = JSON.parse(readFileSync(path('range.json'), 'utf8')).entries;
    for (const f of ['standing', 'edited']) {
      const mine = verifyStanding(readFileSync(path(`${f}.json`), 'utf8'), { at, issuer: node.keys.issuer.did, logKeys: [logKey], entries });
      expect(got[f]).toEqual({ verdict: f === 'standing' ? 'verified' : 'not verified', figures: mine.figures, failed: expect.any(Array) });
      expect((got[f] as { failed: string[] }).failed).toEqual(mine.checks.filter((c) => c.valid === false).map((c) => c.id));
    }
    await page.close();
  }, 120_000);
});

describe("the explorer's agent page", () => {
  it('shows the standing verified in the browser, every figure recomputed from the log', async (ctx) => {
    if (!browser) return ctx.skip();
    await node.app.listen({ port: 0, host: '127.0.0.1' });
    node.app.akas.config.listenOrigin = `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${node.app.akas.config.listenOrigin}/explore/agents/${tag}`);
    const box = `[data-verify-agent-standing="${tag}"]`;
    await page.waitForSelector(`${box}:not([data-state="off"]):not([data-state="pending"])`, { timeout: 60_000 });
    expect(errors).toEqual([]);
    expect(await page.getAttribute(box, 'data-state'), (await page.textContent(box)) ?? '').toBe('ok');
    expect(await page.textContent(`${box} .v-text`)).toMatch(
      /^frontier, 0 judgment\(s\), 0 of 0 proposal\(s\) published, reputation clear; every figure recomputed from log entries 0 to \d+$/,
    );
    await page.close();
  }, 120_000);
});
