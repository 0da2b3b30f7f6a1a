// The running node: opens the store in the data folder, loads (or creates) the node keys,
// builds the app and listens. Closes cleanly on SIGINT/SIGTERM.
import { resolve } from 'node:path';
import { cryptoRandom, systemClock } from '../core/index.js';
import { loadOrCreateNodeKeys, openLevelStore, rotateNodeKeys } from '../store/index.js';
import { createApp, type AppConfig } from './app.js';

export interface StartOptions {
  dataDir: string;
  host: string;
  port: number;
  logLevel: string;
  config: Partial<AppConfig>;
  /** Rotate these node keys before starting (the prior keys stay, so old signatures verify). */
  rotate?: { issuer?: boolean; hmac?: boolean };
}

/**
 * The node's own audit of its data folder (`akas log check`, `akas serve --check`): the log's
 * chain, MACs, tree and checkpoints, the credit ledger, and the proposals (their judgments,
 * status, escrow and pending indexes agree). The node must not be running on
 * the folder (LevelDB takes it for one process).
 */
export async function checkNode(dataDirIn: string, onProgress?: (entries: number) => void) {
  const dataDir = resolve(dataDirIn);
  const store = await openLevelStore(dataDir);
  try {
    const keys = loadOrCreateNodeKeys(dataDir, cryptoRandom, systemClock.now());
    const { checkLog } = await import('../domain/log.js');
    const { checkLedger } = await import('../domain/ledger.js');
    const { checkProposals } = await import('../domain/proposal-check.js');
    const log = await checkLog(store, keys, onProgress);
    const ledger = await checkLedger(store);
    const proposals = await checkProposals(store);
    return { ok: log.ok && ledger.ok && proposals.ok, log, ledger: { ok: ledger.ok, problems: ledger.problems, totals: ledger.totals }, proposals };
  } finally {
    await store.close();
  }
}

export async function startNode(opts: StartOptions) {
  const dataDir = resolve(opts.dataDir);
  const store = await openLevelStore(dataDir);
  const keys =
    opts.rotate?.issuer || opts.rotate?.hmac
      ? rotateNodeKeys(dataDir, opts.rotate, cryptoRandom, systemClock.now())
      : loadOrCreateNodeKeys(dataDir, cryptoRandom, systemClock.now());
  const app = await createApp({
    store,
    keys,
    config: opts.config,
    // Logs go to stderr; stdout carries the command's own output.
    logger: opts.logLevel === 'silent' ? false : { level: opts.logLevel, stream: process.stderr },
  });
  const address = await app.listen({ host: opts.host, port: opts.port });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await app.close();
    await store.close();
    // The regex evaluator is one worker per process (unref'd); stop it with the node.
    const { closeRegexWorker } = await import('../domain/tools/index.js');
    await closeRegexWorker();
    resolveClosed();
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return { url: address, dataDir, issuerDid: keys.issuer.did, signingKeyId: keys.hmac[0].signingKeyId, app, close, closed };
}
