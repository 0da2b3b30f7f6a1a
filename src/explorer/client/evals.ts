// "Evals complete as of checkpoint N" on an artifact's page (issue 51, 2; PROTOCOL 9.3, 9.10,
// 10.4): the read the page was made from (checked by node.ts with verifyNode) has its evals held
// against the log's record of the artifact's bytes by the verifier's verifyArtifactEvals, the
// same checks `akas node PATH` makes: every eval the lookup of sha256:HEX proves the log records
// is in the read (index.complete), each as recorded (index.recorded), and the summary is what
// they give (content.evals, from verifyNode's report). The page's own table must show exactly
// the read's evals (page.shown). Only when all of them hold does the page say complete; else
// it names the check that failed, or the one it could not run.
import { $, $$, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { type Check, setState, verdict } from './results.js';
import type { Verifier } from './verifier.js';

/** The evals the page's table shows (one row per eval) against the read's. */
function rowsCheck(doc: Json): Check {
  const read = (Array.isArray(doc.independentEvals) ? doc.independentEvals : []).map((e) => String((e as Json)?.proposalId));
  const rows = $$('tr[data-eval]').map((r) => r.dataset.eval!);
  const unshown = read.filter((id) => !rows.includes(id));
  const unread = rows.filter((id) => !read.includes(id));
  const problems = [
    ...(unshown.length ? [`the page leaves out eval(s) ${unshown.join(', ')} of the read`] : []),
    ...(unread.length ? [`the page shows eval(s) ${unread.join(', ')} the read does not hold`] : []),
  ];
  return {
    id: 'page.shown',
    layer: 'content',
    what: 'the evals this page shows are the evals of the read checked',
    valid: problems.length === 0 && rows.length === read.length,
    why: problems.length ? problems.join('; ') : rows.length === read.length ? `${rows.length} eval(s)` : 'the page shows an eval twice',
  } as Check;
}

/** The artifact's evals box ([data-verify-evals]), given the read the page was made from and verifyNode's report of it. */
export async function checkEvals(V: Verifier, keys: Keys, doc: Json, nodeChecks: Check[]) {
  const box = $('[data-verify-evals]');
  if (!box) return;
  setState(box, 'pending', 'checking the log’s record of these bytes…');
  try {
    const held = await V.verifyArtifactEvals(doc, keys.logKey);
    if (!held) return setState(box, 'unchecked', 'not checked: the read names no artifact’s bytes and evals to hold to the log');
    const summary = nodeChecks.find((c) => c.id === 'content.evals');
    const checks = [...held.checks, ...(summary ? [summary] : []), rowsCheck(doc)];
    const { detail } = verdict(checks);
    const failed = checks.find((c) => c.valid === false);
    const open = checks.find((c) => c.valid !== true);
    if (failed) setState(box, 'bad', `not verified: ${failed.id}: ${failed.why ?? failed.what}`, detail);
    else if (open) setState(box, 'unchecked', `not checked: ${open.id}: ${open.why ?? open.what}`, detail);
    else if (!summary || !held.asOf || held.checkpoint === undefined)
      setState(box, 'unchecked', 'not checked: content.evals: the read’s summary was not checked', detail);
    else {
      const n = held.asOf.evals ?? 0;
      // As the lookups say it (lookup.ts): the map covers the log below its size, its root proven under the checkpoint.
      const said = `${n} eval${n === 1 ? '' : 's'} the log records of these bytes below entry ${held.asOf.size}, each as recorded`;
      setState(box, 'ok', `${said}: evals complete as of checkpoint ${held.checkpoint}`, detail);
    }
  } catch (err) {
    setState(box, 'unchecked', `not checked: ${(err as Error).message}`);
  }
}
