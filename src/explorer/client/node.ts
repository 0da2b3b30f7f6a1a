// A knowledge node's page, checked in the browser: the node's read (the URL the page was made
// from) with verifyNode under the pinned keys, and every served text the page shows held
// against that read; an artifact's evals against the log's record of its bytes (evals.ts).
import { $, $$, el, getJson, type Json } from './dom.js';
import { checkEvals } from './evals.js';
import type { Keys } from './keys.js';
import { checksTable, setState, verdict, verifiedAsTheCliSays, type Check } from './results.js';
import type { Verifier } from './verifier.js';

/** Reads the value at a JSON Pointer (no leading slash) in a document. */
function at(doc: unknown, pointer: string): unknown {
  let v = doc;
  for (const raw of pointer.split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Json)[key];
  }
  return v;
}

/** Every served text this page shows (data-field) against the read that was checked. */
function shownFieldsCheck(doc: Json): Check {
  const fields = $$('[data-field]');
  const wrong: string[] = [];
  for (const e of fields) {
    const pointer = e.dataset.field!;
    const v = at(doc, pointer);
    const expected = typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
    if (e.textContent !== expected)
      wrong.push(
        expected === undefined
          ? `${pointer}: the page shows text the node did not serve`
          : `${pointer}: the page shows ${JSON.stringify((e.textContent ?? '').slice(0, 60))}, the node served ${JSON.stringify(expected.slice(0, 60))}`,
      );
  }
  return {
    id: 'page.shown',
    layer: 'content',
    what: 'the text on this page is the text served and checked',
    valid: fields.length ? wrong.length === 0 : null,
    why: wrong.length ? wrong.join('; ') : fields.length ? `${fields.length} texts` : 'not checked: the page marks no served text',
  } as Check;
}

/**
 * A knowledge node page: the node's read (the same URL the page was made from) checked against
 * its evidence with the verifier's verifyNode, under the issuer and log key this browser
 * pinned, and every text the page shows held against that read.
 */
export async function checkNode(V: Verifier, keys: Keys) {
  const box = $('[data-verify-node]');
  if (!box) return;
  setState(box, 'pending', 'checking…');
  try {
    const doc = await getJson(box.dataset.verifyNode!);
    const report = await V.verifyNode(doc, { issuer: keys.issuer, issuerKeys: keys.issuerKeys, logKey: keys.logKey });
    const shown = shownFieldsCheck(doc);
    const checks = [...report.checks, shown];
    const v = verdict(checks);
    if (v.state === 'ok') v.text = verifiedAsTheCliSays(report.checks, 'akas verify node', shown.valid ? 'the text shown is the text checked' : undefined);
    setState(box, v.state, v.text, v.detail);
    $('[data-node-checks]')?.replaceChildren(el('details', {}, el('summary', {}, 'Each check, layer by layer'), checksTable(checks)));
    // An artifact's evals, held against the log's record of its bytes (./evals.ts).
    await checkEvals(V, keys, doc, report.checks);
  } catch (err) {
    for (const e of [box, ...$$('[data-verify-evals]')]) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
  }
}
