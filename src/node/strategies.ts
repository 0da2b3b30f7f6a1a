// Where the node's strategies are chosen: once, from the store the node was opened on. A store
// this process holds alone (LevelDB) lets it keep in memory what is then the truth; a store
// several processes share (PostgreSQL) keeps it in the store, where every process sees it.
// Nothing below (src/domain, src/http) asks the store how it is deployed: it is handed these.
import type { Strategies } from '../domain/context.js';
import { heldCasQuota, storedCasQuota } from '../domain/cas/quota.js';
import { processSearch, storeSearch } from '../domain/knowledge/search.js';
import { HeldBuckets, type OpenedStore } from '../store/index.js';

/**
 * The strategies of a node on this store:
 * - the CAS quota: counts held in memory and written behind, or one transaction per change;
 * - search: MiniSearch in the process (following the store's watch), or the store's own text index;
 * - token buckets: held in memory and written behind, or drawn in the store, atomically for all;
 * - idempotency: the process's slot alone, or a claim in the store that other processes wait on.
 */
export function strategiesFor(store: OpenedStore): Strategies {
  if (store.shared) {
    const { buckets, text } = store;
    return { casQuota: storedCasQuota, search: storeSearch(text), buckets: () => buckets, idempotency: 'claims' };
  }
  return { casQuota: heldCasQuota, search: processSearch, buckets: (s, clock) => new HeldBuckets(s, clock), idempotency: 'slot' };
}
