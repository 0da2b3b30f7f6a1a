// How a check's outcome is shown: a verdict over some checks, the state of a badge on the page,
// and a table of checks layer by layer (a node page's details, each result of the Verify page).
import type * as VerifierModule from '../../../verifier/browser.js';
import { el } from './dom.js';

export type Report = VerifierModule.Report;
export type Check = VerifierModule.Check;

export type State = 'ok' | 'bad' | 'unchecked' | 'pending';

export function setState(target: Element, state: State, text: string, detail?: string) {
  target.setAttribute('data-state', state);
  const t = target.querySelector('.v-text') ?? target;
  t.textContent = text;
  if (detail) target.setAttribute('title', detail);
}

/** The verdict of some checks: any failure is bad; all unchecked is unchecked; else ok. */
export function verdict(checks: Check[]): { state: State; text: string; detail: string } {
  const failed = checks.filter((c) => c.valid === false);
  const held = checks.filter((c) => c.valid === true);
  const unchecked = checks.filter((c) => c.valid === null);
  const detail = checks.map((c) => `${c.valid === true ? '✓' : c.valid === false ? '✗' : '–'} [${c.layer}] ${c.what}${c.why ? `: ${c.why}` : ''}`).join('\n');
  if (failed.length) return { state: 'bad', text: `not verified: ${failed[0].what}${failed[0].why ? ` (${failed[0].why})` : ''}`, detail };
  if (!held.length)
    return { state: 'unchecked', text: unchecked.length ? `not checked: ${unchecked[0].why ?? unchecked[0].what}` : 'nothing to check', detail };
  return {
    state: 'ok',
    text: unchecked.length ? `verified (${held.length} checks; ${unchecked.length} not checkable here)` : `verified (${held.length} checks)`,
    detail,
  };
}

/**
 * "verified" with the count `akas verify bundle` or `akas verify node` prints for the same report
 * (its checks that held): a check of the page's own (what it shows against what was checked) is
 * said apart, never added to the count, so the browser and the CLI give one number.
 */
export function verifiedAsTheCliSays(reportChecks: Check[], command: string, pageSays?: string): string {
  const held = reportChecks.filter((c) => c.valid === true).length;
  const unchecked = reportChecks.filter((c) => c.valid === null).length;
  return `verified (${held} checks held${unchecked ? `, ${unchecked} not checkable here` : ''}, as ${command} counts them${pageSays ? `; ${pageSays}` : ''})`;
}

const LAYER_ORDER = ['input', 'content', 'L1', 'L2', 'L3', 'CAS'];
const byLayer = (a: string, b: string) => (LAYER_ORDER.indexOf(a) + 1 || 99) - (LAYER_ORDER.indexOf(b) + 1 || 99);
const stateOf = (valid: boolean | null): State => (valid === true ? 'ok' : valid === false ? 'bad' : 'unchecked');
const verdictText = (valid: boolean | null) => (valid === true ? 'holds' : valid === false ? 'does not hold' : 'not checked');

/** Rows of checks under a head of four fixed columns (layer and verdict never wrap letter by letter). */
function rows(checks: Check[], caption: string): HTMLTableElement {
  return el(
    'table',
    { class: 'checks-table' },
    el('caption', { class: 'sr' }, caption),
    el('colgroup', {}, el('col', { class: 'c-layer' }), el('col', { class: 'c-check' }), el('col', { class: 'c-verdict' }), el('col', { class: 'c-why' })),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'layer'),
        el('th', { scope: 'col' }, 'check'),
        el('th', { scope: 'col' }, 'verdict'),
        el('th', { scope: 'col' }, 'why'),
      ),
    ),
    el(
      'tbody',
      {},
      ...checks.map((c) =>
        el(
          'tr',
          { 'data-check-id': c.id, 'data-layer': c.layer },
          el('td', {}, c.layer),
          el('td', {}, c.what, c.subject ? el('br') : null, c.subject ? el('code', { class: 'small' }, c.subject) : null),
          el('td', {}, el('span', { class: 'v', 'data-state': stateOf(c.valid) }, el('span', { class: 'v-text' }, verdictText(c.valid)))),
          el('td', {}, c.why ?? ''),
        ),
      ),
    ),
  );
}

/**
 * Checks for a person: what failed first, then what could not be checked, each in full; the
 * checks that hold folded per layer (content, L1, L2, L3, CAS), each layer saying how many hold.
 * A bundle's 90-odd checks no longer make a table thousands of pixels tall.
 */
export function checksTable(checks: Check[]): HTMLElement {
  const failed = checks.filter((c) => c.valid === false);
  const unchecked = checks.filter((c) => c.valid === null);
  const held = checks.filter((c) => c.valid === true);
  const layers = [...new Set(held.map((c) => c.layer as string))].sort(byLayer);
  return el(
    'div',
    { class: 'checks' },
    failed.length ? el('h4', { class: 'checks-failed' }, `${failed.length} check${failed.length === 1 ? '' : 's'} failed`) : null,
    failed.length ? rows(failed, 'Checks that failed') : null,
    unchecked.length ? el('h4', {}, `${unchecked.length} not checked (never counted as verified)`) : null,
    unchecked.length ? rows(unchecked, 'Checks that could not run') : null,
    ...layers.map((layer) => {
      const mine = held.filter((c) => c.layer === layer);
      return el(
        'details',
        { class: 'layer-held', 'data-layer': layer },
        el(
          'summary',
          {},
          el('span', { class: 'v', 'data-state': 'ok' }, el('span', { class: 'v-text' }, `${layer}: ${mine.length} hold${mine.length === 1 ? 's' : ''}`)),
        ),
        rows(mine, `Checks of ${layer} that hold`),
      );
    }),
  );
}

/** One result of the Verify page: what was checked, its kind, the overall verdict and its checks' table. */
export function resultCard(title: string, kind: string, report: Report): HTMLElement {
  const v = verdict(report.checks);
  const failed = report.checks.some((c) => c.valid === false);
  // Unanchored (issue 32): the checks held, but on keys the file brought itself: not verified.
  const unanchored = report.anchored === false && !failed;
  // A status (revocation, suspension) that could not be read is unknown, never good (PROTOCOL 8.7), as akas verify says.
  const unknown = report.checks.find((c) => c.id.startsWith('status') && c.valid === null);
  const verified = report.verified && !failed;
  const [stateName, text] = !verified
    ? unanchored
      ? ['unchecked', `unanchored: no key pinned for ${report.unanchored.slice(0, 3).join(', ')} (give the issuer and log key above)`]
      : ['bad', 'not verified']
    : unknown
      ? ['unchecked', (unknown.why ?? 'status unknown').replace(/^(status unknown)?:?\s*/, 'status unknown: ')]
      : v.state === 'unchecked'
        ? ['unchecked', 'nothing could be checked']
        : ['ok', 'verified'];
  const state = el('span', { class: 'v', 'data-state': stateName }, el('span', { class: 'v-text' }, text));
  return el(
    'div',
    { class: 'result', 'data-result': kind },
    el('h3', {}, `${title} `, el('span', { class: 'badge' }, kind), ' ', state),
    checksTable(report.checks),
  );
}
