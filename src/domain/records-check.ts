// The node's own audit of the records the log does not cover (`akas log check`, `akas serve
// --check`): agents and content-store blobs, each counted against the store's own index of
// them, and what the store itself reports having dropped (a LevelDB log cut short at an open).
// The log's own audit (domain/log/audit.ts) covers judgments and attestations; an agent or a blob
// that went missing shows up here instead.
import { safeEqual } from '../core/index.js';
import { blobsOf, StoreIncidents, type Store } from '../store/index.js';
import { Agents, ApiKeys } from './records.js';

export interface RecordsCheck {
  ok: boolean;
  /** Agents stored, and the live api keys of the key index that name them. */
  agents: number;
  liveKeys: number;
  /** Blobs the store's index says were acknowledged, and blobs present. */
  blobs: { acknowledged: number; stored: number; unindexed: number };
  /** What the store dropped of its own log when it opened (writes acknowledged before may be lost). */
  incidents: number;
  problems: string[];
}

/**
 * Every agent has its live api key in the key index and every key names a stored agent (an
 * agent is written with its key, in one batch: a lost or half-kept registration breaks the
 * pair); every blob the store indexed is there, whole, and hashes to its name; and the store
 * never dropped part of its write-ahead log when it opened.
 */
export async function checkRecords(store: Store): Promise<RecordsCheck> {
  const problems: string[] = [];
  const say = (p: string) => problems.length < 50 && problems.push(p);
  const liveKeyOf = new Map<string, string>();
  let liveKeys = 0;
  for await (const [hash, key] of store.iterate(ApiKeys)) {
    if (key.state !== 'live') continue;
    liveKeys++;
    if (liveKeyOf.has(key.tag)) say(`agent ${key.tag} has two live api keys`);
    liveKeyOf.set(key.tag, hash);
  }
  let agents = 0;
  for await (const [tag, agent] of store.iterate(Agents)) {
    agents++;
    const live = liveKeyOf.get(tag);
    if (live === undefined) say(`agent ${tag}: its api key is not in the key index`);
    else if (!safeEqual(live, agent.apiKeyHash)) say(`agent ${tag}: the key index holds another live api key than the agent's`);
    liveKeyOf.delete(tag);
  }
  for (const tag of liveKeyOf.keys()) say(`api key of ${tag}: no such agent is stored (a registration lost)`);

  const blobs = await blobsOf(store);
  const audit = await blobs.audit();
  for (const p of audit.problems) say(p);

  let incidents = 0;
  for await (const [, i] of store.iterate(StoreIncidents)) {
    incidents++;
    say(
      `at ${new Date(i.at).toISOString()} the store dropped ${i.bytes} bytes of its write-ahead log ${i.file} while opening (${i.reason}): ` +
        `writes acknowledged before then may be lost`,
    );
  }
  return {
    ok: problems.length === 0,
    agents,
    liveKeys,
    blobs: { acknowledged: audit.acknowledged, stored: audit.stored, unindexed: audit.unindexed },
    incidents,
    problems,
  };
}
