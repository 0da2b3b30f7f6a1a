// Where a node's data is, for every command that opens or names a node's store (`akas serve`,
// `log check`, `admin revoke`, `store migrate`): a data folder (the embedded LevelDB store) or a
// PostgreSQL database several processes share. One reading of --data, --store, AKAS_DATA and
// AKAS_STORE, so the commands cannot drift apart (they did: four copies, issue 48):
//
// - a flag wins over the environment, and --data alone ignores AKAS_STORE;
// - --store (or AKAS_STORE) is a postgres:// URL, and --data with --store is refused: with a
//   database the records, blobs and node keys all live in it (README, "Several processes");
// - with neither, the folder AKAS_DATA names, else ./.akas. `admin revoke` first looks for the
//   one local node running (nodeMeant below: each `akas serve` records itself, PROTOCOL 8.7).
import type { LiveNode, liveNodes, realDataFolder } from '../../src/ops/admin-ask.js';
import { CliError, usageError } from './errors.js';

/** The data folder used when nothing names one. */
export const DEFAULT_DATA_DIR = './.akas';

export const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s);

/** What a command was told: its flags (the ones it has) and the environment. */
export interface LocationFlags {
  data?: string;
  store?: string;
  nodeSecretFile?: string;
}

/**
 * A node's data: a folder, or a database (whose node keys are sealed with the node secret, read
 * from `secretFile` or `secret`: the caller reads it, as opening a file is not this function's).
 * A database location keeps the data folder it would otherwise have used (serve names it in
 * the refusals of a start).
 */
export type NodeLocation =
  | { kind: 'folder'; dataDir: string; named: boolean }
  | { kind: 'store'; store: string; dataDir: string; secretFile?: string; secret?: string };

/** An environment variable set to nothing counts as not set (`AKAS_STORE= akas serve`). */
const envOf = (env: NodeJS.ProcessEnv, name: string) => (env[name] === '' ? undefined : env[name]);

/** Where the node's data is, from the flags and the environment; a usage error (exit 2) for what cannot be. */
export function nodeLocation(flags: LocationFlags, env: NodeJS.ProcessEnv = process.env): NodeLocation {
  const store = flags.store ?? (flags.data === undefined ? envOf(env, 'AKAS_STORE') : undefined);
  const named = flags.data ?? envOf(env, 'AKAS_DATA');
  const dataDir = named ?? DEFAULT_DATA_DIR;
  if (store === undefined) return { kind: 'folder', dataDir, named: named !== undefined };
  if (!isPostgresUrl(store)) throw usageError('--store takes a postgres:// URL (the embedded store is --data DIR)');
  if (flags.data !== undefined) throw usageError('--data and --store exclude each other: with --store the data, blobs and node keys live in the database');
  const secretFile = flags.nodeSecretFile ?? envOf(env, 'AKAS_NODE_SECRET_FILE');
  return {
    kind: 'store',
    store,
    dataDir,
    ...(secretFile ? { secretFile } : {}),
    ...(env.AKAS_NODE_SECRET !== undefined ? { secret: env.AKAS_NODE_SECRET } : {}),
  };
}

/** The running-node registry, as `admin revoke` reads it (src/ops/admin-ask.ts). */
export interface Registry {
  liveNodes: typeof liveNodes;
  realDataFolder: typeof realDataFolder;
}

/** The node meant, and how it was chosen: named (a flag or its env), the one running, or the default folder. */
export type NodeMeant =
  | { location: Extract<NodeLocation, { kind: 'store' }>; chosen: 'named' }
  | { location: Extract<NodeLocation, { kind: 'folder' }>; chosen: 'named' | 'running' | 'default'; node?: LiveNode };

/**
 * nodeLocation, and when neither a flag nor the environment names a node, the one local node
 * running (PROTOCOL 8.7): several are refused (exit 2 `several_nodes`, listing them), none is
 * the default folder. A folder's path is made real, and the record of a node running on it
 * found (a node may have bound its socket where this shell would not look). Nodes on a shared
 * database are never taken so: changing one needs its URL's password and the node secret,
 * which no record holds.
 */
export async function nodeMeant(flags: LocationFlags, env: NodeJS.ProcessEnv, registry: Registry): Promise<NodeMeant> {
  const location = nodeLocation(flags, env);
  if (location.kind === 'store') return { location, chosen: 'named' };
  const running = location.named ? undefined : await theOneRunning(registry);
  const dataDir = registry.realDataFolder(running?.dataDir ?? location.dataDir);
  const node = running ?? (await registry.liveNodes().catch(() => [])).find((n) => n.dataDir === dataDir);
  const chosen = location.named ? 'named' : running ? 'running' : 'default';
  return { location: { ...location, dataDir }, chosen, ...(node ? { node } : {}) };
}

const listed = (nodes: LiveNode[]) => nodes.map((n) => `  ${n.dataDir ?? n.store}  ${n.url}  pid ${n.pid}`).join('\n');

/** The one local node running on a data folder of its own; undefined when none runs; exit 2 for several, or for database nodes alone. */
async function theOneRunning(registry: Registry): Promise<LiveNode | undefined> {
  let live: LiveNode[];
  try {
    live = await registry.liveNodes();
  } catch (e) {
    throw new CliError('node_registry', `${(e as Error).message}; or give --data DIR`, { error: (e as Error).message });
  }
  const local = live.filter((n) => n.dataDir);
  if (local.length === 1) return local[0];
  const nodes = live.map((n) => ({ ...(n.dataDir ? { dataDir: n.dataDir } : { store: n.store }), url: n.url, pid: n.pid }));
  if (local.length > 1) {
    const message = `${local.length} nodes run here: give --data DIR to name the one meant\n${listed(local)}`;
    throw new CliError('several_nodes', message, { error: message, nodes });
  }
  if (live.length) {
    const message =
      `no node runs here on a data folder of its own; ${live.length} run on a shared database:\n${listed(live)}\n` +
      'give --store URL (and --node-secret-file) to change the database they share, or --data DIR for a stopped node';
    throw new CliError('store_nodes', message, { error: message, nodes });
  }
  return undefined;
}
