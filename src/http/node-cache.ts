// The serialized answers of GET /api/knowledge/node/... (PROTOCOL 10.2), kept so a node read
// costs what GET /me costs (bench/search.ts). An answer is dropped by any write to what it
// reads (the node at its path, the children under it, the evals of an artifact there: the
// store's watch), and lives at most a second otherwise: its manifest's fetchedAt is then at
// most a second old, as /me's body is (PROTOCOL 1.7).
import type { NodeKind } from '../domain/knowledge/tree.js';
import { Evals, KnowledgeNodes, NodeChildren, pathOfKey } from '../domain/knowledge/tree.js';
import type { Store } from '../store/index.js';
import { Generations } from './generations.js';

export interface CachedNode {
  kind: NodeKind;
  body: string;
  etag: string;
  until: number;
}

export class NodeViewCache {
  /** path -> (variant of the request: origin, version, level, page) -> the answer; kept by time (generations.ts). */
  private readonly byPath: Generations<string, Map<string, CachedNode>>;
  /** Tree writes seen so far: an answer built while one landed is not kept (it may predate it). */
  private writes = 0;
  private readonly unwatch: Array<() => void>;

  constructor(
    store: Store,
    private readonly maxAgeMs = 1000,
    maxPaths = 10_000,
  ) {
    this.byPath = new Generations(maxAgeMs, maxPaths, 0);
    const drop = (path: string) => {
      this.writes++;
      this.byPath.delete(path);
    };
    this.unwatch = [store.watch(KnowledgeNodes, drop), store.watch(NodeChildren, (k) => drop(pathOfKey(k))), store.watch(Evals, (k) => drop(pathOfKey(k)))];
  }

  /** The kept answer for path and variant, or a fresh one from build (kept when no tree write landed meanwhile). */
  async get(path: string, variant: string, now: number, build: () => Promise<Omit<CachedNode, 'until'>>): Promise<CachedNode> {
    const kept = this.byPath.get(path, now)?.get(variant);
    if (kept && kept.until > now) return kept;
    const before = this.writes;
    const fresh = { ...(await build()), until: now + this.maxAgeMs };
    if (this.writes === before) {
      let variants = this.byPath.get(path, now);
      if (!variants) this.byPath.set(path, (variants = new Map()), now);
      variants.set(variant, fresh);
    }
    return fresh;
  }

  close() {
    for (const stop of this.unwatch) stop();
  }
}
