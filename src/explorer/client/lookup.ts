// "Complete as of checkpoint N" on the agent, proposal and artifact pages (PROTOCOL 9.10): each
// [data-verify-lookup] names a key of the verifiable index; its lookup is fetched and checked in
// the browser under the pinned log key, as `akas verify lookup` checks it, and the page says how
// many log entries mention the key, complete as of the checkpoint the root entry is proven under.
import { $$, getJson, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { setState, verdict } from './results.js';
import type { Verifier } from './verifier.js';

export async function checkLookups(V: Verifier, keys: Keys) {
  await Promise.all(
    $$('[data-verify-lookup]').map(async (e) => {
      const key = e.dataset.verifyLookup!;
      setState(e, 'pending', 'checking…');
      try {
        const answer = await getJson<Json>(`/api/index/${encodeURIComponent(key)}`);
        const v = verdict((await V.verifyLookup(answer, keys.logKey)).checks);
        const n = (answer.indices as number[]).length;
        const cp = ((answer.root as Json).inclusion as Json).size;
        const said = `${n} log ${n === 1 ? 'entry' : 'entries'} below entry ${(answer.map as Json).size}: complete as of checkpoint ${cp}`;
        setState(e, v.state, v.state === 'ok' ? said : v.text, v.detail);
      } catch (err) {
        setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
      }
    }),
  );
}
