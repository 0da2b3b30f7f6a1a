// Store administration for `akas store`: running the PostgreSQL migrations alone, and moving
// a LevelDB node (its data folder: every space, the blobs inline and in files, and the node keys) into PostgreSQL,
// then checking the copy: entry counts per space, blob count and bytes, the credit ledger's
// conservation invariant and the transparency log's own audit, on the target.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cryptoRandom, nodeKeysFrom, systemClock } from '../core/index.js';
import { backfilled, backfillSearch, SearchState } from '../domain/knowledge/search-store.js';
import { checkLedger } from '../domain/ledger.js';
import { checkLog } from '../domain/log/index.js';
import {
  assertPrivateMode,
  BlobStore,
  blobsOf,
  EMBEDDED_BLOB_SPACES,
  isPostgresUrl,
  loadOrCreateSealedNodeKeys,
  migrateStore,
  openLevelStore,
  openStore,
  readNodeKeyMaterial,
  redact,
  space,
  type Store,
} from '../store/index.js';
import type { PgStore } from '../store/postgres/index.js';

/**
 * Runs the missing migrations of the database at url (its indexes built online), then gives
 * the text index the documents of nodes written before it existed, in batches (onProgress
 * hears each step and the nodes indexed so far); reports both.
 */
export async function migrateDatabase(url: string, onProgress?: (what: string) => void) {
  if (!isPostgresUrl(url)) throw new Error(`--store takes a postgres:// URL, got ${redact(url)}`);
  const report = await migrateStore(url, onProgress);
  const store = await openStore(url, { migrate: false });
  try {
    if (!store.shared) throw new Error(`${redact(url)} opened no shared store`);
    const indexed = (await backfilled(store))
      ? 0
      : await backfillSearch(store, store.text, { onProgress: (n) => onProgress?.(`indexing nodes for search: ${n}`) });
    return { ...report, search: { indexed } };
  } finally {
    await store.close();
  }
}

/** The node secret: the file's content (mode 0600 or it is refused) or the environment's value. */
export function readNodeSecret(file: string | undefined, env: string | undefined): string | undefined {
  if (file) {
    assertPrivateMode(file);
    return readFileSync(file, 'utf8').trim();
  }
  return env;
}

export interface CopyOptions {
  /** The LevelDB node's data folder (the node must be stopped). */
  from: string;
  /** A postgres:// URL of an empty database (or schema). */
  to: string;
  nodeSecret?: string;
  onProgress?: (what: string, done: number) => void;
}

export interface CopyReport {
  ok: boolean;
  from: string;
  to: string;
  spaces: Array<{ space: string; source: number; target: number }>;
  blobs: { source: number; target: number; bytes: number };
  issuer: string;
  ledger: { ok: boolean; problems: string[]; totals: Record<string, number> };
  log: { ok: boolean; entries: number; checkpoints: number; problems: string[] };
  /** Published nodes given to the target's text index. */
  search: { indexed: number };
  problems: string[];
}

const BATCH = 1000;
/** Sealed keys are the target's own entry (the source keeps them in a file). */
const KEYS_SPACE = 'node-keys';

/** Copies a stopped LevelDB node into an empty PostgreSQL database, then checks the copy. */
export async function copyStore(opts: CopyOptions): Promise<CopyReport> {
  if (isPostgresUrl(opts.from)) throw new Error('--from is the data folder of a LevelDB node');
  if (!isPostgresUrl(opts.to)) throw new Error(`--to takes a postgres:// URL, got ${redact(opts.to)}`);
  const from = resolve(opts.from);
  const material = readNodeKeyMaterial(from, systemClock.now());
  if (!material) throw new Error(`${from} holds no node-keys.json: not the data folder of a node`);
  let source: Awaited<ReturnType<typeof openLevelStore>>;
  try {
    source = await openLevelStore(from);
  } catch (e) {
    throw new Error(`cannot open ${from}: ${(e as Error).message} (stop the node first)`);
  }
  let target: PgStore | undefined;
  try {
    // No notifications: nothing serves the target during the copy.
    target = (await openStore(opts.to, { notify: false })) as PgStore;
    if (!(await target.isEmpty())) throw new Error(`${target.location} already holds data: a copy goes into an empty database (or a new ?schema=)`);
    const m = await loadOrCreateSealedNodeKeys(target, opts.nodeSecret, cryptoRandom, systemClock.now(), { initial: material });
    const keys = nodeKeysFrom(m);

    const spaces: CopyReport['spaces'] = [];
    for (const name of await source.spaces()) {
      // Small blobs (and what is known of the blob files) live in spaces of their own on
      // LevelDB; the target keeps every blob in its own tables, so they are copied below with
      // the files, through the blob stores.
      if (EMBEDDED_BLOB_SPACES.includes(name)) continue;
      const sp = space<unknown>(name);
      let n = 0;
      let batch: Array<[string, unknown]> = [];
      const flush = async () => {
        const rows = batch;
        batch = [];
        await target!.transact([`copy:${name}`], async (tx) => {
          for (const [k, v] of rows) tx.put(sp, k, v);
        });
        opts.onProgress?.(name, n);
      };
      for await (const entry of source.iterate(sp)) {
        batch.push(entry);
        n++;
        if (batch.length >= BATCH) await flush();
      }
      if (batch.length) await flush();
      spaces.push({ space: name, source: n, target: 0 });
    }

    const blobs = { source: 0, target: 0, bytes: 0 };
    const files = await BlobStore.open(from, { store: source });
    const into = await blobsOf(target);
    for await (const sha of files.list()) {
      const blob = await files.open(sha);
      if (!blob) continue;
      blobs.source++;
      const up = into.begin(undefined, blob.size);
      try {
        for await (const chunk of blob.stream()) await up.write(chunk as Buffer);
        if (up.sha256() !== sha) throw new Error(`blob ${sha} does not hash to its name in the source: not copied`);
        await up.place();
        blobs.bytes += up.bytes;
      } finally {
        await up.discard();
      }
      opts.onProgress?.('blobs', blobs.source);
    }

    // The target's text index is filled from the nodes copied: searchable at once.
    const indexed = await backfillSearch(target, target.text, { onProgress: (n) => opts.onProgress?.('search index', n) });

    // The checks read the target as a fresh process would.
    const counts = await target.counts();
    const problems: string[] = [];
    for (const s of spaces) {
      s.target = counts.get(s.space) ?? 0;
      if (s.target !== s.source) problems.push(`${s.space}: ${s.source} entries in the source, ${s.target} in the target`);
    }
    for (const [name, n] of counts)
      if (name !== KEYS_SPACE && name !== SearchState.name && !spaces.some((s) => s.space === name))
        problems.push(`${name}: ${n} entries in the target, none in the source`);
    for await (const _ of into.list()) blobs.target++;
    if (blobs.target !== blobs.source) problems.push(`blobs: ${blobs.source} in the source, ${blobs.target} in the target`);
    const ledger = await checkLedger(target);
    const log = await checkLog(target, keys);
    problems.push(...ledger.problems.map((p) => `ledger: ${p}`), ...log.problems.map((p) => `log: ${p}`));
    return {
      ok: problems.length === 0,
      from,
      to: target.location,
      spaces,
      blobs,
      search: { indexed },
      issuer: keys.issuer.did,
      ledger: { ok: ledger.ok, problems: ledger.problems, totals: ledger.totals },
      log: { ok: log.ok, entries: log.entries, checkpoints: log.checkpoints, problems: log.problems },
      problems,
    };
  } finally {
    await source.close();
    await (target as Store | undefined)?.close();
  }
}
