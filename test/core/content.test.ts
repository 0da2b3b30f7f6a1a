// The content hash of PROTOCOL 6.10 (src/core/content.ts): its worked example, the content of
// each kind, the detail a reader rebuilds it from, and the v2 judge payload that signs it.
import { describe, expect, it } from 'vitest';
import { canonicalize, contentSha256Of, judgmentSigningString, proposalContent, PROPOSAL_KINDS } from '../../src/core/index.js';
import { contentOfProposalView, contentSha256 } from '../../src/core/content.js';
import { samplePayload } from '../fixtures/payloads.js';

const EXAMPLE = {
  path: '/tools/pdf-to-text',
  title: 'Turn a PDF into plain text',
  spec: 'Extract the text layer of a PDF in reading order.',
  payload: {
    trigger: 'a PDF must be searched',
    alternative: 'OCR every page',
    cost: 'about 50 ms per page',
    whenNot: 'scanned PDFs without a text layer',
    recipe: ['pdftotext -layout in.pdf out.txt'],
  },
};

describe('contentSha256 (PROTOCOL 6.10)', () => {
  it('gives the worked example of PROTOCOL 6.10, bytes and hash', () => {
    expect(canonicalize(proposalContent('capability', EXAMPLE))).toBe(
      '{"kind":"capability","path":"/tools/pdf-to-text","payload":{"alternative":"OCR every page","cost":"about 50 ms per page",' +
        '"recipe":["pdftotext -layout in.pdf out.txt"],"trigger":"a PDF must be searched","whenNot":"scanned PDFs without a text layer"},' +
        '"spec":"Extract the text layer of a PDF in reading order.","title":"Turn a PDF into plain text"}',
    );
    expect(contentSha256Of('capability', EXAMPLE)).toBe('efad5fd9c0028697ed37f63adc4251babb3aad28bd07c9f9f832983d38529f70');
  });

  it('takes for each kind the path, title, spec and payload of the table', () => {
    const brief = samplePayload('brief', 1) as { brief: Record<string, unknown> };
    expect(proposalContent('brief', brief)).toEqual({
      kind: 'brief',
      path: '/distributed-systems/retries-with-backoff-x1',
      title: brief.brief.title,
      payload: brief.brief,
    });
    expect(proposalContent('brief', { ...brief, path: '/a/b' }).path).toBe('/a/b');
    expect(proposalContent('tree-expansion', samplePayload('tree-expansion', 1))).toMatchObject({
      path: '/tools-x1',
      title: 'expand /tools-x1 with pdf, images',
      payload: { children: expect.any(Array) },
    });
    expect(proposalContent('spec-sharpening', samplePayload('spec-sharpening', 1))).toMatchObject({
      path: '/tools/pdf-to-text-x1',
      spec: expect.any(String),
      payload: { rationale: expect.any(String) },
    });
    const ev = samplePayload('eval-result', 1);
    expect(proposalContent('eval-result', ev)).toEqual({
      kind: 'eval-result',
      path: null,
      title: `accuracy = ${ev.score} on /models/tiny-classifier-x1`,
      payload: ev,
    });
    // A graph's replaceExisting is an instruction, not content.
    const graph = samplePayload('graph', 1);
    expect(contentSha256Of('graph', { ...graph, replaceExisting: true })).toBe(contentSha256Of('graph', graph));
    // Every field of the content counts.
    const base = contentSha256Of('capability', EXAMPLE);
    for (const changed of [
      { ...EXAMPLE, title: 'x' },
      { ...EXAMPLE, path: '/x' },
      { ...EXAMPLE, spec: 'x' },
      { ...EXAMPLE, payload: { ...EXAMPLE.payload, cost: 'free' } },
    ]) {
      expect(contentSha256Of('capability', changed)).not.toBe(base);
    }
    expect(() => contentSha256Of('capability', { ...EXAMPLE, spec: undefined })).toThrow(TypeError);
    for (const kind of PROPOSAL_KINDS) expect(contentSha256Of(kind, samplePayload(kind, 2) as Record<string, unknown>)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is rebuilt from a detail as shown, and names the shown fields that disagree with the body', () => {
    const view = { proposalId: 'cprop_0123456789abcdef', kind: 'capability', path: EXAMPLE.path, title: EXAMPLE.title, payload: EXAMPLE };
    expect(contentOfProposalView('capability', view)).toMatchObject({ ok: true, contentSha256: contentSha256Of('capability', EXAMPLE), problems: [] });
    const shown = contentOfProposalView('capability', { ...view, title: 'Another title' });
    expect(shown.ok && shown.problems).toEqual([expect.stringContaining('title')]);
    // The DgProposal shape lifts path, title and spec beside the payload.
    const g = samplePayload('graph', 1) as Record<string, unknown>;
    expect(contentOfProposalView('graph', { path: g.path, title: g.title, spec: g.spec, payload: g.payload, replaceExisting: false })).toMatchObject({
      ok: true,
      contentSha256: contentSha256Of('graph', g),
    });
    expect(contentOfProposalView('capability', { ...view, payload: 'nope' })).toMatchObject({ ok: false });
  });

  it('is what the v2 judge payload signs; without it the payload is v1', () => {
    const f = {
      kind: 'capability' as const,
      proposalId: 'cprop_0123456789abcdef',
      judge: 'ak_judge001',
      scores: { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 },
      rationale: 'Accurate and sourced.',
    };
    expect(JSON.parse(judgmentSigningString(f))).toEqual({ type: 'akas.judgment.v1', ...f });
    const hash = contentSha256(proposalContent('capability', EXAMPLE));
    expect(judgmentSigningString({ ...f, contentSha256: hash })).toBe(
      `{"contentSha256":"${hash}","judge":"ak_judge001","kind":"capability","proposalId":"cprop_0123456789abcdef","rationale":"Accurate and ` +
        `sourced.","scores":{"accuracy":0.9,"clarity":0.8,"compression":0.7,"sources":0.8},"type":"akas.judgment.v2"}`,
    );
  });
});
