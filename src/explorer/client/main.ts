// The explorer's one page script (bundled by scripts/build-explorer.mjs). The pages read
// without it; it adds what needs a browser: search as you type, live updates from the node's
// event stream, and verification of what a page shows, computed here by the verifier's own
// browser build (loaded from the node, never a second implementation of any check) under keys
// this browser pinned on its first visit. Everything is built with DOM calls and textContent:
// nothing the node sends is ever parsed as HTML.
//
// This file starts what a page has; each part is a file of its own: the pinned keys (keys.ts),
// the checks of each kind of page (proposal.ts, log.ts with the live log, node.ts with an
// artifact's evals in evals.ts, the lookups of lookup.ts), each credential's status read from
// the node's lists, on every page that shows one (status.ts), how their results are shown
// (results.ts), search as you type (search.ts), the Verify page (verify-form.ts), the
// verifier's loader (verifier.ts) and the DOM helpers (dom.ts).
import { $, $$ } from './dom.js';
import { nodeKeys, showPin, type Keys } from './keys.js';
import { checkCheckpoints, checkEntries, liveLog } from './log.js';
import { checkLookups } from './lookup.js';
import { checkNode } from './node.js';
import { checkBundles, checkContent } from './proposal.js';
import { setState } from './results.js';
import { liveSearch } from './search.js';
import { checkAgentStanding } from './standing.js';
import { statusOfPage } from './status.js';
import { loadVerifier, type Verifier } from './verifier.js';
import { verifyForm } from './verify-form.js';

/** The checks of whatever this page shows, once the verifier and the pinned keys are here. */
async function verifyPage() {
  const wanted = $$(
    '[data-verify-bundle], [data-verify-entry], [data-verify-checkpoint], [data-verify-consistency], [data-verify-content], ' +
      '[data-verify-judged], [data-verify-shown], [data-verify-node], [data-verify-status], [data-verify-standing], [data-verify-lookup], ' +
      '[data-verify-evals]',
  );
  const pinBox = $('[data-pin-status]');
  if (!wanted.length && !pinBox) return;
  let keys: Keys;
  let V: Verifier;
  try {
    [V, keys] = await Promise.all([loadVerifier(), nodeKeys()]);
  } catch (err) {
    // Every state on the page says why, each layer of a judgment too (no verifier, or not the package's).
    for (const e of [...wanted, ...$$('[data-check][data-subject]')]) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    return;
  }
  showPin(keys);
  await Promise.all([
    checkBundles(V, keys),
    checkEntries(V, keys),
    checkCheckpoints(V, keys),
    checkContent(V),
    checkNode(V, keys),
    statusOfPage(V, keys),
    checkLookups(V, keys),
  ]);
}

/** An agent page's standing (PROTOCOL 8.9), checked once the verifier and the pinned keys are here (both loaded once per page). */
async function verifyStanding() {
  const boxes = $$('[data-verify-agent-standing]');
  if (!boxes.length) return;
  try {
    const [V, keys] = await Promise.all([loadVerifier(), nodeKeys()]);
    await checkAgentStanding(V, keys);
  } catch (err) {
    for (const e of boxes) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
  }
}

function start() {
  for (const input of $$<HTMLInputElement>('input[data-live-search]')) liveSearch(input);
  document.addEventListener('keydown', (ev) => {
    // "/" jumps to the search box, as on many sites (not while typing in a field).
    const t = ev.target as HTMLElement;
    if (ev.key === '/' && !/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) && !t.isContentEditable) {
      ev.preventDefault();
      $<HTMLInputElement>('#q')?.focus();
    }
  });
  const form = $<HTMLFormElement>('[data-verify-form]');
  if (form) verifyForm(form);
  liveLog();
  void verifyPage();
  void verifyStanding();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
