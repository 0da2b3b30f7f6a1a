// Issue 36 in Debian's chromium (playwright-core, as test/browser/explorer.test.ts): the
// browser's count of a bundle's checks is the CLI's; Home leads with what the node holds and
// what happened lately, its keys below; the Verify page's result shows failures first, folds the
// checks that hold per layer, and at 1280 px keeps its layer and verdict columns on one line.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNode, type TestNode } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { CLI } from '../helpers/e2e.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
let base: string;
let chrome: Awaited<ReturnType<typeof launchChromium>>;
let work: string;
let proposalId: string;

beforeAll(async () => {
  chrome = await launchChromium({ viewport: { width: 1280, height: 900 } });
  if (!chrome) return;
  work = mkdtempSync(join(tmpdir(), 'akas-fh-browser-'));
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  await decide(node, 'brief', { n: 1 });
  proposalId = (await decide(node, 'capability', { n: 2, sign: 'v2' })).proposalId;
  await node.app.inject({ url: '/api/log/checkpoint' });
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await chrome?.close();
  await node?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const api = async (url: string) => (await node.app.inject({ url })).json();

/** Opens a page and waits until every check on it has an answer. */
async function open(path: string): Promise<Page> {
  const page = await chrome!.context.newPage();
  await page.goto(base + path, { waitUntil: 'load' });
  await page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
        '.v[data-state="off"], .v[data-state="pending"]',
      ).length === 0,
    undefined,
    { timeout: 30_000 },
  );
  return page;
}

describe('issue 36 in Chromium', () => {
  it("counts a bundle's checks as akas verify bundle does (item 3)", async (ctx) => {
    if (!chrome) return ctx.skip();
    const issuer = (await api('/healthz')).issuer as string;
    const file = join(work, 'bundle.json');
    writeFileSync(file, JSON.stringify(await api(`/api/knowledge/proposals/${proposalId}/bundle`)));
    const report = JSON.parse(execFileSync(process.execPath, [CLI, '--json', 'verify', 'bundle', file, '--issuer', issuer], { encoding: 'utf8' })) as {
      held: number;
    };
    const page = await open(`/explore/proposals/${proposalId}`);
    const text = (await page.textContent(`[data-verify-bundle="${proposalId}"] .v-text`)) ?? '';
    expect(await page.getAttribute(`[data-verify-bundle="${proposalId}"]`, 'data-state')).toBe('ok');
    const shown = /^verified \((\d+) checks held/.exec(text)?.[1];
    expect(Number(shown), text).toBe(report.held);
    expect(text).toContain('the content shown is the content judged');
    await page.close();
  });

  it('leads Home with what the node holds and what happened lately, its keys below (item 7)', async (ctx) => {
    if (!chrome) return ctx.skip();
    const page = await open('/');
    const top = async (selector: string) => (await page.locator(selector).boundingBox())!.y;
    const [holds, decisions, live, keys] = [await top('#counts'), await top('#dec'), await top('#live'), await top('#who')];
    expect(holds).toBeLessThan(decisions);
    expect(decisions).toBeLessThan(live);
    expect(live).toBeLessThan(keys);
    // The first screen (900 px) shows what it holds and the latest decisions, not the keys.
    expect(decisions).toBeLessThan(900);
    expect(keys).toBeGreaterThan(900);
    await page.close();
  });

  it('shows a Verify result failures first, the checks that hold folded per layer, columns unwrapped at 1280 px (item 7)', async (ctx) => {
    if (!chrome) return ctx.skip();
    const bundle = await api(`/api/knowledge/proposals/${proposalId}/bundle`);
    const good = join(work, 'good.json');
    const bad = join(work, 'tampered.json');
    writeFileSync(good, JSON.stringify(bundle));
    const tampered = structuredClone(bundle);
    tampered.proposal.judgments[0].rationale = 'Changed after the judge signed it.';
    writeFileSync(bad, JSON.stringify(tampered));
    const page = await open('/explore/verify');
    for (const [file, verdict] of [
      [good, 'verified'],
      [bad, 'not verified'],
    ] as const) {
      await page.setInputFiles('#v-files', file);
      await page.click('form[data-verify-form] button[type=submit]');
      const card = page.locator('[data-result="bundle"]');
      await card.waitFor();
      expect(await card.locator('h3 .v-text').textContent()).toBe(verdict);
      const box = (await card.boundingBox())!;
      // 90-odd checks: the card stays within two screens (it ran 8,500 to 12,500 px).
      expect(box.height, file).toBeLessThan(1800);
      // Every visible row keeps its layer and verdict on one line.
      const cells = await card.locator('tr[data-check-id]:visible').evaluateAll((rows) =>
        rows.map((r) => {
          const tds = (r as unknown as { children: ArrayLike<{ getBoundingClientRect(): { height: number; width: number } }> }).children;
          return { layer: tds[0].getBoundingClientRect(), verdict: tds[2].getBoundingClientRect() };
        }),
      );
      for (const c of cells) {
        expect(c.layer.width).toBeGreaterThan(40);
        expect(c.verdict.width).toBeGreaterThan(80);
      }
      const firstRows = await card
        .locator('tr[data-check-id]:visible .v')
        .evaluateAll((vs) => vs.map((v) => (v as unknown as { getAttribute(n: string): string | null }).getAttribute('data-state')));
      if (verdict === 'not verified') {
        expect(firstRows[0]).toBe('bad');
        expect(await card.textContent()).toContain('the shown fields are what the judge signed');
      } else expect(firstRows).not.toContain('bad');
      // The checks that hold are there, folded: one summary per layer.
      expect(await card.locator('details.layer-held').count()).toBeGreaterThanOrEqual(3);
      expect(await card.locator('details.layer-held[open]').count()).toBe(0);
    }
    await page.close();
  });
});
