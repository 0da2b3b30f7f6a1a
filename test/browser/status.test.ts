// The status of every credential in the explorer (issues 32, 4 and 47, 4), in Debian's chromium
// driven by playwright-core: every page that shows a judgment credential (a proposal's judgments,
// the judgments among the log entries of the home, log and agent pages, a judgment's entry page)
// reads its status lists from the node in the browser, checks them under the pinned issuer with
// the verifier's browser build, and says "active" (never changed, or a suspension lifted),
// "revoked" or "suspended", each with the reason, the time and the list version; read without
// JavaScript the page says what the node recorded and that it is not checked. Once the operator
// revokes one with `akas admin revoke` (the built CLI, through the node's admin channel), the
// proposal says that the decision would not hold without it (recomputed by the verifier), and the
// Verify page says so of the credential dropped on it; a list served with a bad proof, or not
// served, is "status unknown", never good. The verifier's browser build answers the same:
// revoked and suspended not verified, active verified, status not given or unreachable "status
// unknown", skipped on purpose said as such. The Verify page checks a DSSE envelope and a Sigstore
// bundle exported by `akas export` and refuses them changed. The page's check count is the count
// `akas verify bundle` gives, status checks included.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAdminChannel } from '../../src/ops/index.js';
import { verifyBundle } from '../../verifier/index.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/e2e.js';
import { envelope, p256Signer, statement } from '../helpers/dsse-fixtures.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
let base: string;
let chrome: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;
let channel: { close: () => Promise<void> } | undefined;
let proposalId: string;
let judgmentIds: string[];
const api = async (url: string) => (await node.app.inject({ url })).json();

beforeAll(async () => {
  chrome = await launchChromium();
  if (!chrome) return;
  context = chrome.context;
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  proposalId = (await decide(node, 'capability', { n: 11 })).proposalId;
  judgmentIds = ((await api(`/api/knowledge/proposals/${proposalId}`)).judgments as Array<{ judgmentId: string }>).map((j) => j.judgmentId);
  await node.app.inject({ url: '/api/log/checkpoint' });
  // The admin channel `akas serve` opens in its data folder, opened here on the test's node.
  channel = await openAdminChannel(join(node.dir, 'admin.sock'), node.app.akas);
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await channel?.close();
  await chrome?.close();
  await node?.close();
});

/** The page's document, typed for what the tests ask of it (functions run in the page, so no closure). */
interface Dom {
  querySelectorAll(selector: string): { length: number };
}

/** Opens the proposal's page in a fresh tab and waits until every check on it has an answer. */
async function openProposal(): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
  await page.goto(`${base}/explore/proposals/${proposalId}`, { waitUntil: 'load' });
  await page.waitForFunction(
    () => (globalThis as unknown as { document: Dom }).document.querySelectorAll('.v[data-state="off"], .v[data-state="pending"]').length === 0,
    undefined,
    { timeout: 60_000 },
  );
  return { page, errors };
}

const stateOf = async (page: Page, selector: string) =>
  [await page.getAttribute(selector, 'data-state'), (await page.textContent(`${selector} .v-text`)) ?? ''] as const;

/** Opens a page of the node in a fresh tab and waits until every check on it has an answer. */
async function openPage(path: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${base}${path}`, { waitUntil: 'load' });
  await page.waitForFunction(
    () => (globalThis as unknown as { document: Dom }).document.querySelectorAll('.v[data-state="off"], .v[data-state="pending"]').length === 0,
    undefined,
    { timeout: 60_000 },
  );
  return page;
}

const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC';
const ACTIVE = (revocation: number, suspension: number) =>
  `active: not revoked · not suspended (revocation list version ${revocation}, suspension list version ${suspension}, checked in your browser)`;

/** What a page says of a credential's status when read without JavaScript: the HTML as the node renders it. */
async function withoutScript(path: string, judgmentId: string): Promise<string> {
  const html = (await node.app.inject({ url: path })).body;
  const m = new RegExp(`data-verify-status="${judgmentId}"[^>]*>.*?<span class="v-text">([^<]*)</span>`, 's').exec(html);
  return (m?.[1] ?? '').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

/** The judge's tag and the log entry of a judgment (its judgment.recorded event). */
async function judgmentEntry(judgmentId: string): Promise<{ agent: string; entryId: string }> {
  for (let start = 0; ; start += 100) {
    const page = await api(`/api/log/entries?start=${start}`);
    const e = page.entries.find(
      (x: { body: { event?: string; judgmentId?: string } }) => x.body.event === 'judgment.recorded' && x.body.judgmentId === judgmentId,
    );
    if (e) return { agent: e.agent, entryId: e.id };
    if (page.end >= page.size) throw new Error(`no judgment.recorded entry of ${judgmentId}`);
  }
}

/**
 * The verifier's browser build (as the node serves it) on each credential, with its status lists
 * given as fetched from the node with the status head, not given, skipped, and unreachable.
 */
async function browserBuildVerdicts(ids: string[]): Promise<Record<string, Record<string, string>>> {
  const page = await context.newPage();
  try {
    await page.goto(`${base}/explore/verify`, { waitUntil: 'load' });
    // The build the node serves, loaded as its pages load it (a string: the test's own transform must not rewrite import()).
    await page.evaluate('import(document.body.dataset.verifier).then((m) => { globalThis.akasVerifier = m; })');
    return await page.evaluate(
      async ({ ids, issuer }) => {
        const V = (globalThis as unknown as { akasVerifier: any }).akasVerifier;
        // The page's fetch, revalidating (the test's own types carry no DOM).
        type Answer = { json(): Promise<any>; headers: { get(name: string): string | null } };
        const fetchNow = (path: string) => (globalThis as unknown as { fetch: (p: string, o: object) => Promise<Answer> }).fetch(path, { cache: 'no-cache' });
        const get = async (path: string) => (await fetchNow(path)).json();
        const trust = await V.trustIssuerKeys(issuer, (await get('/api/node/keys')).issuer);
        const served = (await get(`/explore/credentials?ids=${ids.join(',')}`)).items as Array<{ judgmentId: string; credential: any }>;
        const urls = [...new Set(served.flatMap((s) => s.credential.credentialStatus.map((e: any) => e.statusListCredential as string)))];
        const lists = await Promise.all(
          urls.map(async (url) => {
            const res = await fetchNow(new URL(url).pathname);
            return { url, doc: await res.json(), version: Number(res.headers.get('x-status-list-version')) };
          }),
        );
        const head = await get('/credentials/status/head');
        const out: Record<string, Record<string, string>> = {};
        for (const { judgmentId, credential } of served) {
          const verdict = async (status: unknown) => (await V.verifyCredential(credential, { trust, ...(status === undefined ? {} : { status }) })).verdict;
          out[judgmentId] = {
            given: await verdict({ lists, head }),
            'not given': await verdict(undefined),
            skipped: await verdict('skip'),
            unreachable: await verdict({ lists: urls.map((url) => ({ url, error: 'the node answered 503' })), head }),
          };
        }
        return out;
      },
      { ids, issuer: node.keys.issuer.did },
    );
  } finally {
    await page.close();
  }
}

describe('credential status in the explorer (issues 32, 4 and 47, 4)', () => {
  it("shows each credential's status, checked in the browser, and counts the status checks as akas verify bundle does", async (ctx) => {
    if (!chrome) return ctx.skip();
    const { page, errors } = await openProposal();
    try {
      for (const id of judgmentIds) expect(await stateOf(page, `[data-verify-status="${id}"]`), id).toEqual(['ok', ACTIVE(0, 0)]);
      expect(await stateOf(page, '[data-verify-standing]')).toEqual(['ok', expect.stringContaining('no judgment of it is revoked or suspended')]);
      // The count the page gives is the count of the same bundle checked by the Node verifier, status checks included.
      const report = await verifyBundle(await api(`/api/knowledge/proposals/${proposalId}/bundle`), {
        issuer: node.keys.issuer.did,
        logKey: node.keys.log.verifierKey,
      });
      const held = report.checks.filter((c) => c.valid === true);
      expect(held.filter((c) => c.id.startsWith('status.')).length).toBeGreaterThan(judgmentIds.length);
      const [state, text] = await stateOf(page, `[data-verify-bundle="${proposalId}"]`);
      expect(state, text).toBe('ok');
      expect(text).toContain(`verified (${held.length} checks held`);
      expect(text).toContain(`${judgmentIds.length * 2} status checks of the lists served now`);
      expect(await page.getAttribute(`[data-verify-bundle="${proposalId}"]`, 'title')).toContain('✓ [L1] not revoked');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
    // Without JavaScript: what the node recorded, said to be unchecked.
    expect(await withoutScript(`/explore/proposals/${proposalId}`, judgmentIds[0])).toBe(
      "active: never revoked or suspended: the node's word, not checked here " +
        '(your browser checks it with JavaScript; offline: akas verify credential --status)',
    );
    const verdicts = await browserBuildVerdicts(judgmentIds.slice(0, 1));
    expect(verdicts[judgmentIds[0]]).toEqual({ given: 'verified', 'not given': 'status unknown', skipped: 'verified', unreachable: 'status unknown' });
  });

  it('says "revoked" with the reason, time and list version once the operator revokes a judgment, and whether the decision would still hold', async (ctx) => {
    if (!chrome) return ctx.skip();
    const [revoked, ...kept] = judgmentIds;
    const r = await runCli(['admin', 'revoke', revoked, '--reason', 'found colluding', '--data', node.dir]);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openProposal();
    const REVOKED = new RegExp(`^revoked: found colluding, ${TIME} \\(revocation list version 1, checked in your browser\\)$`);
    try {
      expect(await stateOf(page, `[data-verify-status="${revoked}"]`)).toEqual(['bad', expect.stringMatching(REVOKED)]);
      for (const id of kept) expect(await stateOf(page, `[data-verify-status="${id}"]`), id).toEqual(['ok', ACTIVE(1, 0)]);
      // Three judgments decided it; without the revoked one, two of the three required remain.
      const [state, text] = await stateOf(page, '[data-verify-standing]');
      expect(state, text).toBe('bad');
      expect(text).toContain(`${revoked} revoked (found colluding); the decision would not hold`);
      expect(text).toContain('2 of the 3 judgments required remain');
      // The credential's own signature still holds: its layer badge says so, the status badge says revoked.
      expect(await page.getAttribute(`[data-check="L1"][data-subject="${revoked}"]`, 'data-state')).toBe('ok');
      expect((await stateOf(page, `[data-verify-bundle="${proposalId}"]`))[0]).toBe('bad');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
    // Every other page that shows the credential: the judge's page, the log, the judgment's entry page, the home page.
    const { agent, entryId } = await judgmentEntry(revoked);
    const pages = [`/explore/agents/${agent}`, '/explore/log?kind=attestation.event.v1', `/explore/log/${entryId}`];
    // The home page shows the 15 newest entries: the judgment's among them here (a small log).
    expect((await node.app.inject({ url: '/' })).body).toContain(`data-verify-status="${revoked}"`);
    for (const path of [...pages, '/']) {
      const other = await openPage(path);
      try {
        expect(await stateOf(other, `[data-verify-status="${revoked}"]`), path).toEqual(['bad', expect.stringMatching(REVOKED)]);
      } finally {
        await other.close();
      }
      // Read without JavaScript: the node's record, said to be unchecked.
      expect(await withoutScript(path, revoked), path).toMatch(
        new RegExp(`^revoked: found colluding, ${TIME} \\(revocation list version 1\\): the node's word, not checked here`),
      );
    }
    const verdicts = await browserBuildVerdicts([revoked]);
    expect(verdicts[revoked]).toEqual({ given: 'not verified', 'not given': 'status unknown', skipped: 'verified', unreachable: 'status unknown' });
  });

  it('checks the status of a credential dropped on the Verify page: not verified once revoked, verified while clear, status unknown unread', async (ctx) => {
    if (!chrome) return ctx.skip();
    const bundle = await api(`/api/knowledge/proposals/${proposalId}/bundle`);
    const credentialOf = (id: string) => bundle.credentials.find((c: { credentialSubject: { id: string } }) => c.credentialSubject.id.endsWith(id));
    const dir = mkdtempSync(join(tmpdir(), 'akas-status-drop-'));
    const page = await context.newPage();
    try {
      await page.goto(`${base}/explore/verify`, { waitUntil: 'load' });
      const check = async (id: string) => {
        const file = join(dir, `${id}.json`);
        writeFileSync(file, JSON.stringify(credentialOf(id)));
        await page.setInputFiles('#v-files', file);
        await page.click('form[data-verify-form] button[type=submit]');
        const card = page.locator('[data-result="credential"]');
        await card.waitFor();
        return card;
      };
      let card = await check(judgmentIds[0]);
      expect(await card.locator('h3 .v-text').textContent()).toBe('not verified');
      expect(await card.locator('tr[data-check-id="status.revocation"]').textContent()).toContain('REVOKED');
      expect(await card.locator('tr[data-check-id="status.revocation"]').textContent()).toContain('found colluding');
      expect(await card.locator('[data-verdict-line]').textContent()).toMatch(/^NOT VERIFIED — failed: status\.revocation; anchored on issuer did:key:/);
      card = await check(judgmentIds[1]);
      expect(await card.locator('h3 .v-text').textContent()).toBe('verified');
      expect(await card.locator('tr[data-check-id="status.revocation"]').getAttribute('data-layer')).toBe('L1');
      // The line every verify command ends with: what it is anchored on, the status it speaks for (each list's version and time).
      expect(await card.locator('[data-verdict-line]').textContent()).toMatch(
        /^VERIFIED — anchored on issuer did:key:\S+; status revocation v1 as of \S+, suspension v0 as of \S+, read from the node$/,
      );
      // The lists unreachable: status unknown, never verified.
      await page.route(`${base}/credentials/status/**`, (route) => route.fulfill({ status: 503, body: 'down' }));
      card = await check(judgmentIds[1]);
      expect(await card.locator('h3 .v-text').textContent()).toBe('status unknown');
      expect(await card.locator('h3 .v').getAttribute('data-state')).toBe('unchecked');
      expect(await card.locator('[data-verdict-line]').textContent()).toMatch(/^STATUS UNKNOWN — anchored on issuer did:key:\S+; status unknown/);
    } finally {
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says "suspended" with the reason while a judgment is suspended, and "active" with the lifting once the operator lifts it', async (ctx) => {
    if (!chrome) return ctx.skip();
    const id = judgmentIds[2];
    const suspend = await runCli(['admin', 'revoke', id, '--suspend', '--reason', 'under review', '--data', node.dir]);
    expect(suspend.code, suspend.stderr).toBe(0);
    let { page, errors } = await openProposal();
    expect(await stateOf(page, `[data-verify-status="${id}"]`)).toEqual([
      'bad',
      expect.stringMatching(new RegExp(`^suspended: under review, ${TIME} \\(suspension list version 1, checked in your browser\\)$`)),
    ]);
    expect(errors).toEqual([]);
    await page.close();
    expect((await browserBuildVerdicts([id]))[id]).toEqual({
      given: 'not verified',
      'not given': 'status unknown',
      skipped: 'verified',
      unreachable: 'status unknown',
    });
    const lift = await runCli(['admin', 'revoke', id, '--unsuspend', '--reason', 'cleared', '--data', node.dir]);
    expect(lift.code, lift.stderr).toBe(0);
    ({ page, errors } = await openProposal());
    expect(await stateOf(page, `[data-verify-status="${id}"]`)).toEqual([
      'ok',
      expect.stringMatching(
        new RegExp(
          `^active: not revoked · suspension lifted: cleared, ${TIME} \\(revocation list version 1, suspension list version 2, checked in your browser\\)$`,
        ),
      ),
    ]);
    expect(errors).toEqual([]);
    await page.close();
    expect(await withoutScript(`/explore/proposals/${proposalId}`, id)).toMatch(
      new RegExp(`^active: suspension lifted: cleared, ${TIME} \\(suspension list version 2\\): the node's word, not checked here`),
    );
    expect((await browserBuildVerdicts([id]))[id]).toEqual({
      given: 'verified',
      'not given': 'status unknown',
      skipped: 'verified',
      unreachable: 'status unknown',
    });
  });

  it('says "status unknown", never good, when the list the node serves does not verify or cannot be read', async (ctx) => {
    if (!chrome) return ctx.skip();
    const page = await context.newPage();
    try {
      // The revocation list served with one bit of its signature changed; the suspension list unreachable.
      await page.route(`${base}/credentials/status/revocation`, async (route) => {
        const list = (await (await route.fetch()).json()) as { proof: { proofValue: string } };
        const v = list.proof.proofValue;
        list.proof.proofValue = v.slice(0, 10) + (v[10] === 'A' ? 'B' : 'A') + v.slice(11);
        await route.fulfill({ json: list });
      });
      await page.route(`${base}/credentials/status/suspension`, (route) => route.fulfill({ status: 503, body: 'down' }));
      await page.goto(`${base}/explore/proposals/${proposalId}`, { waitUntil: 'load' });
      await page.waitForFunction(
        () => (globalThis as unknown as { document: Dom }).document.querySelectorAll('.v[data-state="off"], .v[data-state="pending"]').length === 0,
        undefined,
        { timeout: 60_000 },
      );
      for (const id of judgmentIds) {
        const [state, text] = await stateOf(page, `[data-verify-status="${id}"]`);
        expect(state, `${id}: ${text}`).toBe('unchecked');
        expect(text).toMatch(/^status unknown: /);
        expect(text).toContain('does not verify');
        expect(await page.getAttribute(`[data-verify-status="${id}"]`, 'title')).toContain('the node answered 503');
      }
    } finally {
      await page.close();
    }
  });
});

describe('DSSE envelopes and Sigstore bundles on the Verify page (issue 47, 4)', () => {
  it('checks an envelope and a bundle exported by akas export under the pinned issuer, and refuses them changed; a P-256 one under a PEM key', async (ctx) => {
    if (!chrome) return ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), 'akas-dsse-drop-'));
    const page = await context.newPage();
    try {
      const files: Array<[string, 'dsse' | 'sigstore', string]> = [];
      for (const format of ['dsse', 'sigstore'] as const) {
        const file = join(dir, `decision.${format}.json`);
        const r = await runCli(['--base-url', base, 'export', proposalId, '--format', format, '-o', file]);
        expect(r.code, r.stderr).toBe(0);
        const doc = JSON.parse(readFileSync(file, 'utf8'));
        const env = format === 'dsse' ? doc : doc.dsseEnvelope;
        const statement = JSON.parse(Buffer.from(env.payload, 'base64').toString('utf8'));
        statement.predicate.decision = statement.predicate.decision === 'published' ? 'rejected' : 'published';
        env.payload = Buffer.from(JSON.stringify(statement)).toString('base64');
        const changed = join(dir, `decision.${format}.changed.json`);
        writeFileSync(changed, JSON.stringify(doc));
        files.push([file, format, 'verified'], [changed, format, 'not verified']);
      }
      await page.goto(`${base}/explore/verify`, { waitUntil: 'load' });
      for (const [file, kind, verdict] of files) {
        await page.setInputFiles('#v-files', file);
        await page.click('form[data-verify-form] button[type=submit]');
        const card = page.locator(`[data-result="${kind}"]`);
        await card.waitFor();
        expect(await card.locator('h3 .v-text').textContent(), file).toBe(verdict);
        const line = (await card.locator('[data-verdict-line]').textContent()) ?? '';
        if (verdict === 'verified') expect(line).toMatch(/^VERIFIED — anchored on issuer did:key:/);
        else expect(line).toMatch(/^NOT VERIFIED — failed: dsse\.signature; anchored on issuer did:key:/);
        expect(await card.locator('tr[data-check-id="dsse.signature"] .v-text').textContent()).toBe(verdict === 'verified' ? 'holds' : 'does not hold');
      }
      // An envelope someone else signed with ECDSA P-256 (DER), under the PEM key pasted: verified; under another key: not.
      const signer = p256Signer('der');
      const other = p256Signer('der');
      const file = join(dir, 'p256.dsse.json');
      writeFileSync(file, JSON.stringify(envelope(signer, statement())));
      for (const [key, verdict] of [
        [signer, 'verified'],
        [other, 'not verified'],
      ] as const) {
        await page.fill('#v-pem', String(key.publicKey.export({ type: 'spki', format: 'pem' })));
        await page.setInputFiles('#v-files', file);
        await page.click('form[data-verify-form] button[type=submit]');
        const card = page.locator('[data-result="dsse"]');
        await card.waitFor();
        expect(await card.locator('h3 .v-text').textContent()).toBe(verdict);
        expect(await card.locator('[data-verdict-line]').textContent()).toContain('anchored on the key given (PEM)');
      }
    } finally {
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
