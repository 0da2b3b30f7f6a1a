// An artifact's evals on the explorer's page, held in the reader's browser against the log's
// record of its bytes (issue 51, 2; PROTOCOL 9.3, 9.10, 10.4): Debian's chromium driven by
// playwright-core opens the artifact's page on a node listening on 127.0.0.1 (port 0) in this
// test's process, so the test can do to the node what a dishonest one would: drop an eval from
// its store (the read leaves out one the log records), change an eval's score (the read shows
// one other than the log records), and serve the page with an eval's row cut out of its HTML.
// The page says "evals complete as of checkpoint N" only when every check holds, and names the
// one that failed otherwise.
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Evals } from '../../src/domain/knowledge/tree.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { decide } from '../helpers/flows.js';
import { untilLogSettled } from '../helpers/written.js';

const ARTIFACT = 951;
const PATH = `/models/tiny-classifier-x${ARTIFACT}`;
const BOX = '[data-verify-evals]';

let node: TestNode;
let base: string;
let chrome: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let evals: string[] = [];
const errors: string[] = [];

/** Publishes an eval of the artifact (three judges, v2 signatures). */
async function publishedEval(score: number, runner: string) {
  const { proposalId } = await decide(node, 'eval-result', { payload: { ...samplePayload('eval-result', ARTIFACT), score, runner }, sign: 'v2' });
  return proposalId;
}

beforeAll(async () => {
  chrome = await launchChromium();
  if (!chrome) return;
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 }, sameIpCollusionCheck: false });
  await decide(node, 'artifact', { n: ARTIFACT, sign: 'v2' });
  evals = [await publishedEval(0.7, 'ak_runner1'), await publishedEval(0.9, 'ak_runner2')];
  // The node's index maps what was appended once its newest root is a second old by the node's clock.
  await untilLogSettled(node);
  node.clock.advance(2000);
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
  page = await chrome.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
}, 120_000);

afterAll(async () => {
  await chrome?.close();
  await node?.close();
});

/** Opens the artifact's page and answers its evals box's state and text once the check has an answer. */
async function evalsBox(): Promise<[string | null, string]> {
  await page.goto(`${base}/explore/tree${PATH}`, { waitUntil: 'load' });
  await page.waitForSelector(`${BOX}:not([data-state="off"]):not([data-state="pending"])`, { timeout: 30_000 });
  return [await page.getAttribute(BOX, 'data-state'), (await page.textContent(`${BOX} .v-text`)) ?? ''];
}

/** Edits the node's stored record of one eval for the length of `during`, then puts it back. */
async function withEval(id: string, edit: (kept: Record<string, unknown>) => Record<string, unknown> | null, during: () => Promise<void>) {
  const key = `${PATH}\u0000${id}`;
  const kept = (await node.store.get(Evals, key))!;
  const edited = edit(kept as unknown as Record<string, unknown>);
  await node.store.transact(['edit'], async (tx) => (edited ? tx.put(Evals, key, edited as unknown as typeof kept) : tx.del(Evals, key)));
  try {
    await during();
  } finally {
    await node.store.transact(['edit'], async (tx) => tx.put(Evals, key, kept));
  }
}

describe("an artifact's page in Chromium", () => {
  it('says its evals are complete as of a checkpoint when they are every eval the log records, each as recorded', async (ctx) => {
    if (!chrome) return ctx.skip();
    const [state, text] = await evalsBox();
    expect([state, text]).toEqual([
      'ok',
      expect.stringMatching(/^2 evals the log records of these bytes below entry \d+, each as recorded: evals complete as of checkpoint \d+$/),
    ]);
    expect(await page.locator('tr[data-eval]').count()).toBe(2);
    expect(errors).toEqual([]);
  });

  it('names index.complete when the node leaves out an eval the log records (dropped from its store)', async (ctx) => {
    if (!chrome) return ctx.skip();
    await withEval(
      evals[0],
      () => null,
      async () => {
        const [state, text] = await evalsBox();
        expect(state).toBe('bad');
        expect(text).toMatch(/^not verified: index\.complete: /);
        expect(text).toContain(evals[0]);
        expect(text).not.toContain('complete as of');
      },
    );
    expect(await evalsBox()).toEqual(['ok', expect.stringContaining('evals complete as of checkpoint')]);
  });

  it('names index.recorded when the node shows an eval other than the log records it (a changed score)', async (ctx) => {
    if (!chrome) return ctx.skip();
    await withEval(
      evals[1],
      (kept) => ({ ...kept, score: 0.99 }),
      async () => {
        const [state, text] = await evalsBox();
        expect(state).toBe('bad');
        expect(text).toMatch(/^not verified: index\.recorded: /);
        expect(text).toContain(evals[1]);
      },
    );
  });

  it("names page.shown when the page's HTML leaves out an eval of the read it was made from", async (ctx) => {
    if (!chrome) return ctx.skip();
    const url = `${base}/explore/tree${PATH}`;
    await page.route(url, async (route) => {
      const res = await route.fetch();
      const headers = Object.fromEntries(Object.entries(res.headers()).filter(([k]) => !['content-encoding', 'content-length'].includes(k)));
      // The row of the first eval, cut out of the table.
      const html = (await res.text()).replace(new RegExp(`<tr data-eval="${evals[0]}">[\\s\\S]*?</tr>`), '');
      await route.fulfill({ status: res.status(), headers, body: html });
    });
    try {
      const [state, text] = await evalsBox();
      expect(await page.locator('tr[data-eval]').count()).toBe(1);
      expect(state).toBe('bad');
      expect(text).toMatch(/^not verified: page\.shown: /);
      expect(text).toContain(evals[0]);
    } finally {
      await page.unroute(url);
    }
  });
});
