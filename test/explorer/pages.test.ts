// The explorer's pages through the HTTP surface (app.inject): each page is plain HTML that shows
// what the API answers, escapes what agents wrote, carries the explorer's own strict policy (and
// the API keeps its own), and needs no script to read. The browser side is test/browser/explorer.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, sha256Hex } from '../../src/core/index.js';
import { contentSha256Of } from '../../src/core/content.js';
import { verifyLogProof } from '../../verifier/index.js';
import { verifyConsistencyProof } from '../../verifier/log.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { agent, decide, proposeAs } from '../helpers/flows.js';
import { untilLogSettled } from '../helpers/written.js';

let node: TestNode;
const HOSTILE = 'PDF <script>alert("x")</script> & "quotes" <img src=x onerror=alert(1)>';
let published: string;
let graphId: string;
let rejected: string;
let pending: string;

const page = async (url: string, accept = 'text/html') => node.app.inject({ url, headers: { accept } });

beforeAll(async () => {
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  published = (await decide(node, 'capability', { payload: { ...samplePayload('capability', 1), title: HOSTILE } })).proposalId;
  await decide(node, 'brief', { n: 2 });
  graphId = (await decide(node, 'graph', { n: 3 })).proposalId;
  rejected = (await decide(node, 'capability', { n: 4, outcome: 'rejected' })).proposalId;
  const a = await agent(node);
  const res = await proposeAs(node, a, 'capability', samplePayload('capability', 5));
  pending = res.json().proposalId;
  // The log's events are appended by its own appender: wait until the last decision is in it.
  await untilLogSettled(node);
  await node.app.inject({ url: '/api/log/checkpoint' });
}, 120_000);
afterAll(() => node?.close());

describe('the explorer pages', () => {
  it('serve the home page at / with the node identity, counts and the newest log entries, under 50 KB', async () => {
    const res = await page('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const keys = (await node.app.inject({ url: '/.well-known/akas.json' })).json();
    expect(res.body).toContain(keys.issuer.did);
    expect(res.body).toContain(keys.log.verifierKey);
    expect(res.body).toMatch(/<strong>3<\/strong> published nodes/);
    expect(res.body).toMatch(/<strong>1<\/strong> pending proposals/);
    const head = (await node.app.inject({ url: '/api/attestations/head' })).json();
    expect(res.body).toContain(`data-from="${head.size}"`);
    expect(res.body).toContain(`data-entry="${head.lastId}"`);
    expect(Buffer.byteLength(res.body)).toBeLessThan(50 * 1024);
  });

  it('carry their own strict Content-Security-Policy, while the API keeps its own', async () => {
    const csp = String((await page('/')).headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    const apiCsp = String((await node.app.inject({ url: '/api/agents' })).headers['content-security-policy']);
    expect(apiCsp).toContain("default-src 'none'");
    expect(apiCsp).not.toContain('script-src');
    expect((await page('/')).headers['x-content-type-options']).toBe('nosniff');
    expect((await page('/')).headers['x-frame-options']).toBe('DENY');
  });

  it('need no inline script, style or event handler (what the policy would block)', async () => {
    for (const url of ['/', '/explore/tree', `/explore/proposals/${published}`, '/explore/log', '/explore/verify', '/explore/agents']) {
      const body = (await page(url)).body;
      for (const tag of body.match(/<script\b[^>]*>/g) ?? []) expect(tag, url).toMatch(/ src="\/explore\/assets\/explorer\.[0-9a-f]{16}\.js"/);
      expect(body, url).not.toMatch(/<[^>]*\s(style|on[a-z]+)=/i);
    }
  });

  it('escape what agents wrote', async () => {
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${published}` })).json();
    for (const url of [`/explore/proposals/${published}`, `/explore/tree${detail.path}`, '/explore/proposals?status=decided']) {
      const body = (await page(url)).body;
      expect(body, url).not.toContain('<script>alert');
      expect(body, url).not.toContain('<img src=x');
      expect(body, url).toContain('PDF &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;');
    }
  });

  it('show a node as the API answers it: a brief at its levels, a decision graph with its branches and a form to walk it', async () => {
    const brief = (await node.app.inject({ url: '/api/knowledge/node/distributed-systems/retries-with-backoff-x2?level=deep' })).json();
    const body = (await page('/explore/tree/distributed-systems/retries-with-backoff-x2?level=deep')).body;
    expect(body).toContain(brief.brief.levels.tldr);
    for (const c of brief.brief.levels.core) expect(body).toContain(c);
    expect(body).toContain('Marc Brooker');
    expect(body).toContain(`data-verify-bundle="${brief.proposalId}"`);
    const graph = (await page('/explore/tree/decisions/pick-a-queue-x3')).body;
    for (const b of ['kafka', 'sqs-fifo', 'default']) expect(graph).toContain(`<code>${b}</code>`);
    expect(graph).toContain('action="/explore/traverse"');
    expect(graph).toContain('name="in.throughput"');
    // The form's labels are served text too, marked for the page script to check.
    expect(graph).toMatch(/<label for="in-throughput"><span data-field="payload\/inputsRequired\/\d+">throughput<\/span><\/label>/);
    const root = (await page('/explore/tree')).body;
    expect(root).toContain('href="/explore/tree/tools"');
  });

  it('walk a decision graph from its form (a form post, then the traversal page)', async () => {
    const res = await node.app.inject({
      method: 'POST',
      url: '/explore/traverse',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: 'path=%2Fdecisions%2Fpick-a-queue-x3&in.throughput=20000&in.ordered=true',
    });
    expect(res.statusCode).toBe(303);
    const where = String(res.headers.location);
    expect(where).toMatch(/^\/explore\/traversals\/trv_[0-9a-f]{16}$/);
    const walk = (await node.app.inject({ url: `/api/knowledge/dg/traversals/${where.split('/').pop()}` })).json();
    // The form's values reach the walk as a number and a boolean (the node keeps their hash alone).
    expect(walk.inputsSha256).toBe(sha256Hex(canonicalize({ throughput: 20000, ordered: true })));
    const body = (await page(where)).body;
    expect(body).toContain('/tools/kafka');
    const missing = await node.app.inject({
      method: 'POST',
      url: '/explore/traverse',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: 'path=%2Fdecisions%2Fpick-a-queue-x3&in.throughput=5',
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('inputs.ordered');
  });

  it('list pending and decided proposals, and show one with its judgments and how the decision was computed', async () => {
    expect((await page('/explore/proposals')).body).toContain(pending);
    const decided = (await page('/explore/proposals?status=decided')).body;
    for (const id of [published, graphId, rejected]) expect(decided).toContain(id);
    expect((await page('/explore/proposals?status=decided&kind=graph')).body).not.toContain(published);
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${rejected}` })).json();
    const body = (await page(`/explore/proposals/${rejected}`)).body;
    for (const j of detail.judgments) {
      expect(body).toContain(`data-judgment="${j.judgmentId}"`);
      expect(body).toContain(j.agentTag);
      expect(body).toContain(j.weight.toFixed(3));
    }
    expect(body).toContain(`the node recorded ${detail.outcome.weightedComposite}`);
    expect(body).toContain(`/api/knowledge/proposals/${rejected}/bundle`);
    expect(body).toContain('needs the node');
  });

  it("show a proposal's contentSha256 beside the content it hashes, marked for the page script to rehash", async () => {
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${published}` })).json();
    const body = (await page(`/explore/proposals/${published}`)).body;
    expect(body).toContain(`<code class="wrap" data-content-sha256>${detail.contentSha256}</code>`);
    expect(body).toContain(`data-verify-content="${published}"`);
    for (const j of detail.judgments) expect(body).toContain(`data-verify-judged="${j.judgmentId}"`);
    // The payload shown reads back as the payload submitted, and it rehashes to the hash shown.
    const unescapeHtml = (x: string) =>
      x
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    const shown = JSON.parse(unescapeHtml(body.match(/<pre class="json" data-content="payload">([^<]*)<\/pre>/)![1]));
    expect(shown).toEqual(detail.payload);
    const title = unescapeHtml(body.match(/<span data-content="title">([^<]*)<\/span>/)![1]);
    expect(contentSha256Of('capability', shown)).toBe(detail.contentSha256);
    expect(title).toBe(detail.title);
    expect(body).toContain('<span data-content="kind"><span class="badge b-kind">capability</span></span>');
    // A decision graph shows its spec beside its payload (the DgProposal shape).
    const graph = (await page(`/explore/proposals/${graphId}`)).body;
    const g = (await node.app.inject({ url: `/api/knowledge/proposals/${graphId}` })).json();
    expect(graph).toContain(`<p data-content="spec">${g.spec}</p>`);
  });

  it("show a published node's evidence and mark each served text with its place in the read", async () => {
    const path = '/distributed-systems/retries-with-backoff-x2';
    const read = (await node.app.inject({ url: `/api/knowledge/node${path}?limit=100` })).json();
    const body = (await page(`/explore/tree${path}`)).body;
    const ev = read.evidence;
    expect(body).toContain(`data-verify-node="/api/knowledge/node${path}?limit=100"`);
    expect(body).toContain(`<code class="wrap" data-evidence="contentSha256">${ev.contentSha256}</code>`);
    expect(body).toContain(`href="/explore/log/${ev.publication.id}"`);
    for (const h of ev.publication.inclusion.proof) expect(body).toContain(h);
    expect(body).toContain(ev.publication.checkpoint.split('\n')[2]);
    expect(body).toContain(read.manifest.nodeSignature.signature);
    expect(body).toContain('needs the node: an HMAC');
    // Every marked text is the read's value at its pointer (what the page script holds it against).
    const marks = [...body.matchAll(/<span data-field="([^"]+)">([^<]*)<\/span>/g)];
    expect(marks.length).toBeGreaterThan(5);
    for (const [, at, text] of marks) {
      const v = at.split('/').reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], read);
      expect(
        text
          .replace(/&#39;/g, "'")
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, '&'),
        at,
      ).toBe(typeof v === 'string' ? v : JSON.stringify(v));
    }
    expect(body).toContain(`<span data-field="brief/levels/core/1">${read.brief.levels.core[1]}</span>`);
  });

  it('show the leaderboard and a profile with its keys', async () => {
    const board = (await node.app.inject({ url: '/api/agents?limit=50' })).json();
    const body = (await page('/explore/agents')).body;
    for (const r of board.rows) expect(body).toContain(r.tag);
    const tag = board.rows[0].tag;
    const profile = (await node.app.inject({ url: `/api/agents/${tag}` })).json();
    expect((await page(`/explore/agents/${tag}`)).body).toContain(profile.signing.publicKey);
  });

  it('find a brief by a word of its core, with the match marked, and filter by kind', async () => {
    const body = (await page('/explore/search?q=jitter')).body;
    expect(body).toContain('href="/explore/tree/distributed-systems/retries-with-backoff-x2"');
    expect(body).toContain('<mark>jitter</mark>');
    expect((await page('/explore/search?q=jitter&kind=leaf-capability')).body).not.toContain('retries-with-backoff-x2');
  });

  it('list the log newest first with its checkpoints, and serve proofs the verifier accepts under the log key', async () => {
    const head = (await node.app.inject({ url: '/api/attestations/head' })).json();
    const body = (await page('/explore/log')).body;
    expect(body.indexOf(`data-entry="${head.lastId}"`)).toBeGreaterThan(-1);
    expect(body.indexOf(`data-entry="${head.lastId}"`)).toBeLessThan(body.indexOf('data-entry="att_0000000000000000"'));
    const ids = ['att_0000000000000000', head.lastId, 'att_00000000000fffff'];
    const proofs = (await node.app.inject({ url: `/explore/proofs?ids=${ids.join(',')}` })).json();
    expect(proofs.missing).toEqual(['att_00000000000fffff']);
    for (const doc of proofs.items) expect(verifyLogProof(doc, head.logKey).verified).toBe(true);
    const tampered = { ...proofs.items[0], entry: { ...proofs.items[0].entry, agent: 'ak_someoneel' } };
    expect(verifyLogProof(tampered, head.logKey).verified).toBe(false);
    const entry = (await page(`/explore/log/${head.lastId}`)).body;
    expect(entry).toContain(`data-verify-entry="${head.lastId}"`);
  });

  it('show a consistency proof between two checkpoints that the verifier accepts', async () => {
    const older = await node.app.inject({ url: '/api/log/checkpoint' });
    const oldSize = Number(older.body.split('\n')[1]);
    await decide(node, 'capability', { n: 7 });
    // A decided proposal adds five entries: proposal.submitted, three judgments, the decision.
    await untilLogSettled(node);
    const newer = await node.app.inject({ url: '/api/log/checkpoint' });
    const size = Number(newer.body.split('\n')[1]);
    expect(size).toBe(oldSize + 5);
    const cps = { size: oldSize };
    const body = (await page(`/explore/log/consistency?old=${cps.size}&new=${size}`)).body;
    const notes = [...body.matchAll(/<pre class="note"[^>]*>([^<]*)<\/pre>/g)].map((m) =>
      m[1]
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
    );
    const proof = [...body.matchAll(/<li><code class="wrap">([^<]*)<\/code><\/li>/g)].map((m) => m[1]);
    const logKey = (await node.app.inject({ url: '/api/attestations/head' })).json().logKey;
    expect(notes).toHaveLength(2);
    expect(verifyConsistencyProof({ old: notes[0], new: notes[1], proof }, logKey).verified).toBe(true);
    expect(verifyConsistencyProof({ old: notes[0], new: notes[1], proof: proof.slice(1) }, logKey).verified).toBe(false);
  });

  it('answer a browser with a page and an API caller with the envelope when something is not there', async () => {
    const html = await page('/explore/tree/no/such/node');
    expect([html.statusCode, String(html.headers['content-type'])]).toEqual([404, 'text/html; charset=utf-8']);
    expect(html.body).toContain('Nothing is published at /no/such/node');
    const json = await page('/explore/proposals/cprop_0000000000000000', 'application/json');
    expect(json.statusCode).toBe(404);
    expect(json.json().code).toBe('not_found');
  });

  it('serve their script, stylesheet and the verifier build named by hash, immutable, compressed when asked', async () => {
    const body = (await page('/')).body;
    const urls = [...body.matchAll(/(?:src|href)="(\/explore\/assets\/[^"]+)"/g)].map((m) => m[1]);
    const verifier = body.match(/data-verifier="([^"]+)"/)![1];
    expect(urls.length).toBe(2);
    for (const url of [...urls, verifier]) {
      const res = await node.app.inject({ url, headers: { 'accept-encoding': 'gzip, br' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-encoding']).toBe('br');
      const again = await node.app.inject({ url, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.statusCode).toBe(304);
    }
    expect((await node.app.inject({ url: '/explore/assets/explorer.0000000000000000.js' })).statusCode).toBe(404);
  });
});
