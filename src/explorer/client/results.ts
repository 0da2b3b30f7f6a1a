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

/** What a verdict looks like on a badge. */
const VERDICT_STATES: Record<VerifierModule.Verdict, State> = {
  verified: 'ok',
  'not verified': 'bad',
  unanchored: 'unchecked',
  'status unknown': 'unchecked',
};

/**
 * One result of the Verify page: what was checked, its kind, its verdict (verifier/report.ts: the
 * one every verifier gives, the report's own where the verifier settled it), the line `akas
 * verify` ends with (what it was anchored on, the status it speaks for, what failed), and its
 * checks' table. `anchoredOn` names what the page checked against (the issuer, the key given), `status` what status the verdict speaks for.
 */
export function resultCard(
  V: Pick<typeof VerifierModule, 'verdictOf' | 'verdictLine'>,
  title: string,
  kind: string,
  report: Report & { verdict?: VerifierModule.Verdict },
  anchoredOn: string | null,
  status: VerifierModule.StatusSummary | null = null,
): HTMLElement {
  const verdictOf = report.verdict ?? V.verdictOf(report);
  // Nothing held and nothing failed (a file hashed with no hash expected): said as such, never verified.
  const nothing = verdictOf === 'verified' && !report.checks.some((c) => c.valid === true);
  const line = V.verdictLine({
    verdict: verdictOf,
    anchoredOn,
    status,
    failed: report.checks.filter((c) => c.valid === false).map((c) => c.id),
    unanchoredHint: report.unanchored.length
      ? `anchored on nothing you pinned: ${report.unanchored.slice(0, 3).join(', ')} (give the issuer and log key above)`
      : undefined,
  });
  const state = el(
    'span',
    { class: 'v', 'data-state': nothing ? 'unchecked' : VERDICT_STATES[verdictOf] },
    el('span', { class: 'v-text' }, nothing ? 'nothing could be checked' : verdictOf),
  );
  return el(
    'div',
    { class: 'result', 'data-result': kind, 'data-verdict': nothing ? 'nothing checked' : verdictOf },
    el('h3', {}, `${title} `, el('span', { class: 'badge' }, kind), ' ', state),
    el('p', { class: 'small', 'data-verdict-line': '' }, line),
    checksTable(report.checks),
  );
}
