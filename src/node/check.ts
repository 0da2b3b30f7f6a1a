// The node's own audit of its store (`akas log check`, `akas serve --check`), on a node opened
// here: what it reads is loaded when it runs, and no HTTP server ever is (ARCHITECTURE 1).
import { openNode, type StoreOptions } from './open.js';

/**
 * The log's chain, MACs, tree and checkpoints, the credit ledger, and the proposals (their
 * judgments, status, escrow and pending indexes agree). A data folder must not be in use
 * (LevelDB takes it for one process); a shared database may be.
 */
export async function checkNode(opts: StoreOptions | string, onProgress?: (entries: number) => void) {
  const { store, keys, unfollow } = await openNode(typeof opts === 'string' ? { dataDir: opts } : opts, {}, true);
  try {
    const [{ checkLog }, { checkLedger }, { checkProposals }, { checkRecords }] = await Promise.all([
      import('../domain/log/index.js'),
      import('../domain/ledger.js'),
      import('../domain/proposals/check.js'),
      import('../domain/records-check.js'),
    ]);
    const log = await checkLog(store, keys, onProgress);
    const ledger = await checkLedger(store);
    const proposals = await checkProposals(store);
    const records = await checkRecords(store);
    return {
      ok: log.ok && ledger.ok && proposals.ok && records.ok,
      log,
      ledger: { ok: ledger.ok, problems: ledger.problems, totals: ledger.totals },
      proposals,
      records,
    };
  } finally {
    unfollow();
    await store.close();
  }
}
