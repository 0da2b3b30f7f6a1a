// The status of every credential in the explorer (issue 32, 4), in Debian's chromium driven by
// playwright-core: a proposal's page reads each judgment credential's status lists from the node
// in the browser, checks them under the pinned issuer with the verifier's browser build, and says
// per credential "not revoked · not suspended (…, checked in your browser)"; once the operator
// revokes one with `akas admin revoke` (the built CLI, through the node's admin channel), the page
// says "revoked" with the reason, and that the decision would not hold without it (recomputed by
// the verifier), and so does the Verify page for the credential dropped on it; "suspended" while
// a judgment is suspended, and clear again once lifted; a list served with a bad proof is
// "status unknown", never good; and the page's check count is the count `akas verify bundle`
// gives, status checks included.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  channel = await openAdminChannel(node.dir, node.app.akas);
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

describe('credential status in the explorer (issue 32, 4)', () => {
  it("shows each credential's status, checked in the browser, and counts the status checks as akas verify bundle does", async (ctx) => {
    if (!chrome) return ctx.skip();
    const { page, errors } = await openProposal();
    try {
      for (const id of judgmentIds)
        expect(await stateOf(page, `[data-verify-status="${id}"]`), id).toEqual([
          'ok',
          'not revoked · not suspended (revocation list version 0, suspension list version 0, checked in your browser)',
        ]);
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
  });

  it('says "revoked" with the reason once the operator revokes a judgment, and whether the decision would still hold', async (ctx) => {
    if (!chrome) return ctx.skip();
    const [revoked, ...kept] = judgmentIds;
    const r = await runCli(['admin', 'revoke', revoked, '--reason', 'found colluding', '--data', node.dir]);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openProposal();
    try {
      expect(await stateOf(page, `[data-verify-status="${revoked}"]`)).toEqual([
        'bad',
        expect.stringMatching(/^revoked: found colluding, \d{4}-\d\d-\d\d \d\d:\d\d UTC$/),
      ]);
      for (const id of kept)
        expect(await stateOf(page, `[data-verify-status="${id}"]`), id).toEqual([
          'ok',
          'not revoked · not suspended (revocation list version 1, suspension list version 0, checked in your browser)',
        ]);
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
  });

  it('checks the status of a credential dropped on the Verify page: not verified once revoked, verified while clear', async (ctx) => {
    if (!chrome) return ctx.skip();
    const bundle = await api(`/api/knowledge/proposals/${proposalId}/bundle`);
    const credentialOf = (id: string) => bundle.credentials.find((c: { credentialSubject: { id: string } }) => c.credentialSubject.id.endsWith(id));
    const dir = mkdtempSync(join(tmpdir(), 'akas-status-drop-'));
    const page = await context.newPage();
    try {
      await page.goto(`${base}/explore/verify`, { waitUntil: 'load' });
      for (const [id, verdict] of [
        [judgmentIds[0], 'not verified'],
        [judgmentIds[1], 'verified'],
      ] as const) {
        const file = join(dir, `${id}.json`);
        writeFileSync(file, JSON.stringify(credentialOf(id)));
        await page.setInputFiles('#v-files', file);
        await page.click('form[data-verify-form] button[type=submit]');
        const card = page.locator('[data-result="credential"]');
        await card.waitFor();
        expect(await card.locator('h3 .v-text').textContent(), id).toBe(verdict);
        const row = card.locator('tr[data-check-id="status.revocation"]');
        if (verdict === 'verified') expect(await row.getAttribute('data-layer')).toBe('L1');
        else expect(await row.textContent()).toContain('REVOKED');
        if (verdict === 'not verified') expect(await row.textContent()).toContain('found colluding');
      }
    } finally {
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says "suspended" with the reason while a judgment is suspended, and not suspended once the operator lifts it', async (ctx) => {
    if (!chrome) return ctx.skip();
    const id = judgmentIds[2];
    const suspend = await runCli(['admin', 'revoke', id, '--suspend', '--reason', 'under review', '--data', node.dir]);
    expect(suspend.code, suspend.stderr).toBe(0);
    let { page, errors } = await openProposal();
    expect(await stateOf(page, `[data-verify-status="${id}"]`)).toEqual(['bad', expect.stringMatching(/^suspended: under review, \d{4}-.* UTC$/)]);
    await page.close();
    const lift = await runCli(['admin', 'revoke', id, '--unsuspend', '--reason', 'cleared', '--data', node.dir]);
    expect(lift.code, lift.stderr).toBe(0);
    ({ page, errors } = await openProposal());
    expect(await stateOf(page, `[data-verify-status="${id}"]`)).toEqual([
      'ok',
      'not revoked · not suspended (revocation list version 1, suspension list version 2, checked in your browser)',
    ]);
    expect(errors).toEqual([]);
    await page.close();
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
