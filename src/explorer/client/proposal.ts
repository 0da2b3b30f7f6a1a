// A proposal's page, checked in the browser: its bundle (verifyBundle: each judge's signature,
// each credential under the pinned issuer, each judgment's log entry under the pinned log key,
// the stapled status lists and, where a judgment is revoked or suspended, whether the decision
// would still hold), each credential's status in the lists the node serves now (status.ts), and
// the content shown, read from the page's own text, against the content judged
// (verifyProposalJudgments: PROTOCOL 6.10, 10.7).
import type * as VerifierModule from '../../../verifier/browser.js';
import { $, $$, getJson, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { setState, verdict, verifiedAsTheCliSays, type Check } from './results.js';
import { statusOfPage } from './status.js';
import type { Verifier } from './verifier.js';

export async function checkBundles(V: Verifier, keys: Keys) {
  const ids = [...new Set($$('[data-verify-bundle]').map((e) => e.dataset.verifyBundle!))];
  for (const id of ids) {
    const overall = $$(`[data-verify-bundle="${CSS.escape(id)}"]`);
    const parts = $$('[data-check][data-subject]');
    for (const e of [...overall, ...parts]) setState(e, 'pending', 'checking…');
    try {
      const bundle = await getJson(`/api/knowledge/proposals/${encodeURIComponent(id)}/bundle`);
      const [report, status] = await Promise.all([
        V.verifyBundle(bundle, { issuer: keys.issuer, issuerKeys: keys.issuerKeys, logKey: keys.logKey }),
        statusOfPage(V, keys),
      ]);
      // The bundle's blobs are not here: CAS checks are the Verify page's (drop the bytes there).
      const checks = report.checks.filter((c) => c.layer !== 'CAS' && c.id !== 'judgment.nodeMac');
      // On a proposal's page, the bundle holds for what this page shows only if it is the same content.
      const shown = $('[data-content="payload"]') ? await shownIsBundled(V, bundle, report.contentSha256) : undefined;
      if (shown) checks.push(shown);
      // The status read now counts with the rest: a credential revoked since the bundle's lists fails here too.
      checks.push(...(status ?? []));
      const v = verdict(checks);
      const says = [
        shown ? 'the content shown is the content judged' : '',
        status ? `${status.filter((c) => c.valid === true).length} status checks of the lists served now` : '',
      ]
        .filter(Boolean)
        .join('; ');
      if (v.state === 'ok') v.text = verifiedAsTheCliSays(report.checks, 'akas verify bundle', says || undefined);
      for (const e of overall) setState(e, v.state, v.text, v.detail);
      standing(report);
      // Each credential's status has a badge of its own (status.ts): the layer badges say the rest.
      const layered = checks.filter((c) => !c.id.startsWith('status'));
      const global = layered.filter((c) => c.subject === undefined);
      for (const e of parts) {
        const layer = e.dataset.check!;
        const mine = layered.filter((c) => c.subject === e.dataset.subject && c.layer === layer);
        const theirs = global.filter((c) => c.layer === layer);
        const r = verdict([...theirs, ...mine]);
        setState(e, mine.length ? r.state : 'unchecked', mine.length ? r.text : 'not in the bundle', r.detail);
      }
    } catch (err) {
      for (const e of [...overall, ...parts, ...$$('[data-verify-standing]')]) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    }
  }
}

const withdrawnWord = (purpose: string) => (purpose === 'revocation' ? 'revoked' : 'suspended');

/**
 * The decision against the judgments revoked or suspended since (the bundle's stapled lists):
 * which, and whether the decision would still hold without them, as the verifier recomputes it
 * (status.decision of verifyBundle; the node never rewrites a decision).
 */
function standing(report: Awaited<ReturnType<Verifier['verifyBundle']>>) {
  const box = $('[data-verify-standing]');
  if (!box) return;
  const status = report.status;
  if (!status) {
    const why = report.checks.find((c) => c.id === 'status' && c.valid === null)?.why;
    return setState(box, 'unchecked', why ?? 'status unknown: the bundle carries no status lists');
  }
  const asOf = Object.values(status.asOf)[0];
  if (!status.withdrawn.length) return setState(box, 'ok', `no judgment of it is revoked or suspended (lists of ${asOf ?? 'unknown time'})`);
  const which = status.withdrawn.map((w) => `${w.judgmentId} ${withdrawnWord(w.purpose)}${w.reason ? ` (${w.reason})` : ''}`).join(', ');
  const decision = report.checks.find((c) => c.id === 'status.decision');
  const holds = decision?.valid;
  const state = holds === true ? 'ok' : holds === false ? 'bad' : 'unchecked';
  const verdictText = holds === true ? 'the decision would still hold' : holds === false ? 'the decision would not hold' : 'not checked';
  setState(box, state, `${which}; ${verdictText}: ${decision?.why ?? 'no decision to recompute'}`, decision?.what);
}

/** The content this page shows, hashed here, against the content of the bundle checked. */
async function shownIsBundled(V: Verifier, bundle: Json, bundled: string | undefined): Promise<Check> {
  const what = 'the content shown on this page is the content of the bundle';
  let shown: string | undefined;
  try {
    shown = (await V.verifyProposalJudgments({ ...(bundle.proposal as Json), ...shownProposal(), judgments: [] })).content?.contentSha256;
  } catch (err) {
    return { id: 'page.content', layer: 'content', what, valid: false, why: (err as Error).message } as Check;
  }
  const same = shown !== undefined && shown === bundled;
  return {
    id: 'page.content',
    layer: 'content',
    what,
    valid: bundled === undefined ? null : same,
    why: same ? shown : `the page's content hashes to ${shown ?? 'nothing'}, the bundle's to ${bundled ?? 'nothing'}`,
  } as Check;
}

const shortHash = (h: string | undefined) => (h ? `${h.slice(0, 12)}…` : 'nothing');

/**
 * The proposal's content as this page shows it: kind, path, title, spec and payload read from
 * the page's text (data-content), never from a second copy, with the contentSha256 it shows.
 */
function shownProposal(): Json {
  const textOf = (sel: string) => {
    const e = $(sel);
    return e ? (e.textContent ?? '') : undefined;
  };
  const payloadText = textOf('[data-content="payload"]');
  if (payloadText === undefined) throw new Error('the page shows no payload');
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch {
    throw new Error('the payload shown is not JSON');
  }
  const shown: Json = {
    kind: textOf('[data-content="kind"]'),
    path: textOf('[data-content="path"]') ?? null,
    title: textOf('[data-content="title"]'),
    payload,
  };
  const spec = textOf('[data-content="spec"]');
  if (spec !== undefined) shown.spec = spec;
  const stated = textOf('[data-content-sha256]');
  if (stated !== undefined) shown.contentSha256 = stated;
  return shown;
}

/**
 * A proposal page: the content shown, rehashed here, against the contentSha256 shown and each
 * judgment, with the verifier's verifyProposalJudgments (the checks of akas verify judgments).
 * The judges' signatures come from the node's detail; the content from the page.
 */
export async function checkContent(V: Verifier) {
  const box = $('[data-verify-content]');
  const judged = $$('[data-verify-judged]');
  const shown = $$('[data-verify-shown]');
  const all = [box, ...judged, ...shown];
  if (!box && !judged.length && !shown.length) return;
  const id = box?.dataset.verifyContent ?? '';
  for (const e of all) if (e) setState(e, 'pending', 'checking…');
  let r: VerifierModule.JudgmentsReport;
  let detail: Json;
  try {
    detail = await getJson(`/api/knowledge/proposals/${encodeURIComponent(id)}`);
  } catch (err) {
    for (const e of all) if (e) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    return;
  }
  try {
    r = await V.verifyProposalJudgments({ ...detail, ...shownProposal() });
  } catch (err) {
    // The page shows no content that can be read as this proposal's: not the content judged.
    for (const e of all) if (e) setState(e, 'bad', `not verified: ${(err as Error).message}`);
    return;
  }
  const content = r.content;
  const hash = content?.contentSha256;
  const v2 = r.checks.filter((c) => c.signed === 'v2');
  const v2bad = v2.filter((c) => !c.ok);
  const details = [
    `recomputed here: ${hash ?? 'cannot be'}`,
    `stated by the node: ${content?.stated ?? 'nothing'}`,
    ...(content?.problems ?? []),
    ...r.checks.map((c) => `${c.agentTag} (${c.signed}): ${c.ok ? 'holds' : c.problems.join('; ')}`),
  ].join('\n');
  if (box) {
    if (!content?.ok) setState(box, 'bad', `not verified: ${content?.problems[0] ?? 'the content shown cannot be read'}`, details);
    else if (v2bad.length)
      setState(box, 'bad', `not verified: ${v2bad[0].agentTag} signed content other than the content shown (${v2bad[0].problems[0]})`, details);
    else if (v2.length)
      setState(
        box,
        'ok',
        `verified: the content shown hashes to ${shortHash(hash)}, the hash stated, and ${v2.length} judge${v2.length === 1 ? '' : 's'} ` +
          `signed it${r.v1 ? `; ${r.v1} v1 judgment${r.v1 === 1 ? ' is' : 's are'} bound by the node's word only` : ''}`,
        details,
      );
    else
      setState(
        box,
        'unchecked',
        `not checked by any judge: the content shown hashes to ${shortHash(hash)}, the hash the node states, but ${
          r.checked ? 'every ' + "judgment is v1, bound to it by the node's word only" : 'no judge has signed it yet'
        }`,
        details,
      );
  }
  for (const e of shown) {
    const id = e.dataset.verifyShown!;
    const c = r.checks.find((x) => x.judgmentId === id);
    const j = ((detail.judgments ?? []) as Json[]).find((x) => x.judgmentId === id);
    const row = e.closest('tr');
    if (!c || !j || !row) setState(e, 'unchecked', 'not checked: not in the detail');
    else if (!c.payloadMatches || !c.signatureValid)
      setState(e, 'bad', `not verified: ${c.problems[0] ?? "the judge's signature does not hold"}`, c.problems.join('\n'));
    else {
      const wrong = shownJudgmentProblems(row, j);
      if (wrong.length) setState(e, 'bad', `not verified: ${wrong[0]}`, wrong.join('\n'));
      else
        setState(
          e,
          'ok',
          'what the judge signed',
          `${c.agentTag}'s signature covers the judge, the four scores and the rationale shown; the composite shown is their mean`,
        );
    }
  }
  for (const e of judged) {
    const c = r.checks.find((x) => x.judgmentId === e.dataset.verifyJudged);
    const j = ((detail.judgments ?? []) as Json[]).find((x) => x.judgmentId === e.dataset.verifyJudged);
    if (!c) setState(e, 'unchecked', 'not checked: not in the detail');
    else if (c.signed === 'v2')
      setState(e, c.ok ? 'ok' : 'bad', c.ok ? 'the judge signed the content shown (v2)' : `not verified: ${c.problems[0]}`, c.problems.join('\n'));
    else if (content && !content.ok) setState(e, 'bad', `not verified: ${content.problems[0]}`);
    else if (j && typeof j.contentSha256 === 'string' && hash !== undefined && j.contentSha256 !== hash)
      setState(e, 'bad', `not verified: the node says it judged ${shortHash(j.contentSha256)}, the content shown hashes to ${shortHash(hash)}`);
    else setState(e, 'unchecked', `v1: bound to this content by the node's word only (the judge signed no content hash)`);
  }
}

/**
 * What a judgment's row shows against the judgment whose signature was checked (the judge,
 * each score to two places, the composite as their mean, the rationale): the problems found.
 * The page's own text is read, so HTML that shows other values than the node's JSON fails.
 */
function shownJudgmentProblems(row: Element, j: Json): string[] {
  const problems: string[] = [];
  const text = (e: Element | null) => (e?.textContent ?? '').trim();
  const by = text(row.querySelector('[data-judged-by]'));
  if (by !== j.agentTag) problems.push(`the page names the judge ${JSON.stringify(by)}, the signature is ${String(j.agentTag)}'s`);
  const scores = (j.scores ?? {}) as Record<string, number>;
  const dims = ['accuracy', 'clarity', 'compression', 'sources'];
  for (const dim of dims) {
    const shown = text(row.querySelector(`[data-judged-score="${dim}"]`));
    const signed = typeof scores[dim] === 'number' ? scores[dim].toFixed(2) : 'nothing';
    if (shown !== signed) problems.push(`the page shows ${dim} ${shown || 'nothing'}, the judge signed ${signed}`);
  }
  const mean = dims.reduce((sum, d) => sum + (scores[d] ?? NaN), 0) / dims.length;
  const composite = Number(text(row.querySelector('[data-judged-composite]')));
  if (!(Math.abs(composite - mean) <= 0.005 + 1e-9))
    problems.push(
      `the page shows the composite ${text(row.querySelector('[data-judged-composite]')) || 'nothing'}, the mean of the signed scores is ${mean.toFixed(3)}`,
    );
  const rationale = row.querySelector('[data-judged-rationale]');
  const signedRationale = typeof j.rationale === 'string' ? j.rationale : '';
  if (rationale ? rationale.textContent !== signedRationale : signedRationale !== '') {
    problems.push(
      signedRationale === ''
        ? 'the page shows a rationale the judge did not sign'
        : rationale
          ? 'the page shows another rationale than the one the judge signed'
          : 'the page does not show the rationale the judge signed',
    );
  }
  return problems;
}
