// A lookup in the verifiable index (PROTOCOL 9.10) checked by the verifier's other two builds: the
// single file (dist/akas-verify.mjs verify lookup, run by node with the saved answer and a trust
// file) and the browser build in Chromium (Debian's, driven by playwright-core), each giving the
// verdict the Node verifier gives, and refusing the answer with its proof tampered with.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLookup } from '../../verifier/lookup.js';
import { verdictOf } from '../../verifier/report.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { launchChromium, serveVerifierPage } from '../helpers/browser.js';
import { agent } from '../helpers/flows.js';

const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
const BROWSER = fileURLToPath(new URL('../../dist/akas-verify.browser.js', import.meta.url));
const REVIEW = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')).examples[0];

let node: TestNode;
let work: string;
let logKey: string;
let served: { url: string; close: () => Promise<void> } | undefined;
let browser: BrowserContext | undefined;
let closeBrowser: (() => Promise<void>) | undefined;
const path = (name: string) => join(work, name);
/** The saved answers: as served, and with one bit of the map proof changed, an index left out. */
const FILES = ['lookup.json', 'proof-tampered.json', 'index-dropped.json'] as const;

beforeAll(async () => {
  for (const f of [SINGLE, BROWSER]) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build`);
  work = mkdtempSync(join(tmpdir(), 'akas-lookup-'));
  node = await testNode();
  const a = await agent(node);
  for (let i = 0; i < 2; i++)
    await node.app.inject({
      method: 'POST',
      url: '/api/attestations',
      payload: { kind: 'review.attestation.v1', body: REVIEW },
      headers: bearer(a.apiKey),
      remoteAddress: a.ip,
    });
  const answer = (await node.app.inject({ url: `/api/index/${encodeURIComponent(`agent:${a.tag}`)}?entries=true` })).json();
  writeFileSync(path('lookup.json'), JSON.stringify(answer));
  const proof = Buffer.from(answer.map.proof, 'base64');
  proof[proof.length - 1] ^= 1;
  writeFileSync(path('proof-tampered.json'), JSON.stringify({ ...answer, map: { ...answer.map, proof: proof.toString('base64') } }));
  writeFileSync(path('index-dropped.json'), JSON.stringify({ ...answer, indices: answer.indices.slice(1), entries: answer.entries.slice(1) }));
  logKey = node.keys.log.verifierKey;
  writeFileSync(
    path('trust.json'),
    JSON.stringify({ type: 'akas.trust.v1', issuers: [{ did: node.keys.issuer.did }], policy: `log ${logKey}\nquorum none\n` }),
  );
  const chrome = await launchChromium();
  if (!chrome) return;
  ({ context: browser, close: closeBrowser } = chrome);
  served = await serveVerifierPage('akas lookup', BROWSER, work);
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  await served?.close();
  await node?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** What the Node verifier says of a saved answer: its verdict and the checks that failed. */
function nodeSays(file: string) {
  const r = verifyLookup(JSON.parse(readFileSync(path(file), 'utf8')), logKey);
  return { verdict: verdictOf(r), failed: r.checks.filter((c) => c.valid === false).map((c) => c.id) };
}

describe('a lookup checked by the three verifiers', () => {
  it('is verified by the single file and refused there once its proof is tampered with', () => {
    expect(nodeSays('lookup.json')).toEqual({ verdict: 'verified', failed: [] });
    for (const file of FILES) {
      const r = spawnSync(process.execPath, [SINGLE, '--json', 'verify', 'lookup', path(file), '--trust', path('trust.json')], { encoding: 'utf8' });
      const out = JSON.parse(r.stdout);
      const want = nodeSays(file);
      expect(r.status, file).toBe(want.verdict === 'verified' ? 0 : 1);
      expect({ verdict: out.verdict, failed: out.checks.filter((c: { result: string }) => c.result === 'failed').map((c: { id: string }) => c.id) }).toEqual(
        want,
      );
    }
    expect(nodeSays('proof-tampered.json').failed).toEqual(['index.proof']);
    expect(nodeSays('index-dropped.json').failed).toEqual(['index.proof']);
  });

  it('is verified by the browser build on WebCrypto and refused there once its proof is tampered with', async (ctx) => {
    if (!browser) return ctx.skip();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${served!.url}/`);
    await page.waitForFunction(() => 'akas' in globalThis);
    const said = await page.evaluate(
      async ({ files, key }) => {
        const v = (globalThis as unknown as { akas: any }).akas;
        const out = [];
        for (const f of files) {
          const r = await v.verifyLookup(await (await fetch(`/fixtures/${f}`)).json(), key);
          out.push({
            platform: v.CRYPTO_PLATFORM,
            verdict: r.verdict,
            failed: r.checks.filter((c: { valid: unknown }) => c.valid === false).map((c: { id: string }) => c.id),
          });
        }
        return out;
      },
      { files: [...FILES], key: logKey },
    );
    expect(errors).toEqual([]);
    for (const [i, file] of FILES.entries()) expect(said[i], file).toEqual({ platform: 'webcrypto', ...nodeSays(file) });
    await page.close();
  }, 120_000);
});
