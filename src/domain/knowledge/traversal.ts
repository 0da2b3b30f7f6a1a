// Decision-graph traversal (PROTOCOL 10.5): from a published decision node, every branch
// whose JSON Logic condition holds on the inputs is followed; a branch leading to another
// decision node continues there, several true branches fork in parallel, and the leaves
// name where each path ends. A cycle along a path is refused (400 graph_cycle), and a path
// deeper than the depth limit, a walk past the step limit, or conditions that use up their
// step budget (logic.ts) stop there with a clear answer, so no graph can hang a node.
import { canonicalize, hex, ServiceError, sha256Hex, type RandomSource } from '../../core/index.js';
import { holds, LogicBudgetSpent, LogicRefused, type LogicMeter } from './logic.js';
import { space, type Store } from '../../store/index.js';
import { KnowledgeNodes, normalizePath, type KnowledgeNode } from './tree.js';

export const MAX_DEPTH = 64;
export const MAX_STEPS = 2000;

interface Branch {
  id: string;
  condition: unknown;
  to: string;
  priors?: number;
}

export interface TraversalStep {
  path: string;
  question: string;
  depth: number;
  /** Every branch of the node and whether its condition held. */
  branches: Array<{ id: string; holds: boolean; to: string }>;
}

export interface TraversalLeaf {
  /** Where the path ends: the `to` of the last branch taken. */
  to: string;
  depth: number;
  /** The decisions that led here: each node and the branch taken at it. */
  via: Array<{ path: string; branch: string }>;
  /** The published node at `to`, when there is one. */
  node?: { path: string; kind: string; title: string };
}

export interface Traversal {
  traversalId: string;
  path: string;
  /** The inputs, in the answer to the traversal only: the node keeps their hash alone. */
  inputs?: Record<string, unknown>;
  /** sha256 of the JCS of the inputs. */
  inputsSha256: string;
  complete: boolean;
  /** Why the traversal stopped early (depth or step limit, or the conditions' step budget), when it did. */
  stopped?: { reason: 'depth-limit' | 'step-limit' | 'logic-budget'; at: string; depth: number; limit: number };
  steps: TraversalStep[];
  leaves: TraversalLeaf[];
  /** How many times more than one branch held at a node. */
  forks: number;
  /** Decision nodes where no branch held. */
  deadEnds: string[];
  at: number;
}

/**
 * Traversals kept for GET /api/knowledge/dg/traversals/{id}, without their inputs, for
 * DomainConfig.traversalTtlMs (a day by default); then swept (retention.ts) and answered 404
 * expired. Their ids begin with the second they were made (8 hex), so keys sort by age and an
 * id tells its age even once the traversal is gone.
 */
export const Traversals = space<Traversal>('knowledge-traversals');

/** The id of a traversal made at `now`: trv_ + 8 hex of its epoch second + 8 random hex. */
const traversalIdAt = (random: RandomSource, now: number) =>
  `trv_${Math.floor(now / 1000)
    .toString(16)
    .padStart(8, '0')
    .slice(-8)}${hex(random, 4)}`;
/** The key every traversal made before `t` sorts below. */
export const traversalKeyBefore = (t: number) =>
  `trv_${Math.floor(t / 1000)
    .toString(16)
    .padStart(8, '0')
    .slice(-8)}`;

const decisionAt = async (store: Store, path: string) => {
  const node = await store.get(KnowledgeNodes, path);
  return node?.kind === 'leaf-decision' ? node : undefined;
};

/** Walks a decision graph from path with the inputs; stores and answers the traversal. */
export async function traverse(
  ctx: { store: Store; random: RandomSource; clock: { now(): number }; config: { traversalLogicBudget: number } },
  pathIn: string,
  inputs: Record<string, unknown>,
): Promise<Traversal> {
  const path = normalizePath(pathIn);
  const start = path ? await decisionAt(ctx.store, path) : undefined;
  if (!path || !start) {
    throw new ServiceError('not_found', `No published decision graph at ${pathIn}.`, {
      field: 'path',
      hint: 'GET /api/knowledge/dg/by-path?path=... shows one; search with kind=leaf-decision.',
    });
  }
  const required = ((start.payload?.inputsRequired as string[]) ?? []).filter((name) => !(name.split('.')[0] in inputs));
  if (required.length) {
    throw new ServiceError('validation_failed', `The graph at ${path} needs inputs it was not given.`, {
      errors: required.map((name) => ({ field: `inputs.${name}`, reason: 'is required by the graph (inputsRequired)' })),
    });
  }
  const now = ctx.clock.now();
  const t: Traversal = {
    traversalId: traversalIdAt(ctx.random, now),
    path,
    inputs,
    inputsSha256: sha256Hex(canonicalize(inputs)),
    complete: true,
    steps: [],
    leaves: [],
    forks: 0,
    deadEnds: [],
    at: now,
  };
  // Depth first, each path carrying the decision nodes it went through (a cycle is one
  // repeated). Leaves wait on the stack too, so they come out in branch order, depth first.
  type Item = { node: KnowledgeNode; depth: number; via: TraversalLeaf['via']; trail: string[] } | { leaf: TraversalLeaf };
  const stack: Item[] = [{ node: start, depth: 0, via: [], trail: [path] }];
  const budget = ctx.config.traversalLogicBudget;
  const steps: LogicMeter = { left: budget };
  while (stack.length) {
    const item = stack.pop()!;
    if ('leaf' in item) {
      t.leaves.push(item.leaf);
      continue;
    }
    const { node, depth, via, trail } = item;
    if (t.steps.length >= MAX_STEPS) {
      t.complete = false;
      t.stopped = { reason: 'step-limit', at: node.path, depth, limit: MAX_STEPS };
      break;
    }
    const branches = (node.payload?.branches as Branch[]) ?? [];
    let results: Array<{ id: string; holds: boolean; to: string }>;
    try {
      results = branches.map((b) => ({ id: b.id, holds: holds(b.condition, inputs, steps), to: b.to }));
    } catch (e) {
      if (e instanceof LogicBudgetSpent) {
        t.complete = false;
        t.stopped = { reason: 'logic-budget', at: node.path, depth, limit: budget };
        break;
      }
      // A graph published before the operator allow-list may hold one off it: never evaluated.
      const reason = e instanceof LogicRefused ? `${e.message}; this node does not evaluate it` : "the graph's conditions cannot be evaluated on them";
      throw new ServiceError('validation_failed', `A condition of ${node.path} cannot be evaluated on these inputs: ${(e as Error).message}`, {
        errors: [{ field: 'inputs', reason }],
      });
    }
    t.steps.push({ path: node.path, question: String(node.payload?.question ?? ''), depth, branches: results });
    const taken = results.filter((r) => r.holds);
    if (taken.length === 0) t.deadEnds.push(node.path);
    if (taken.length > 1) t.forks += taken.length - 1;
    const next: Item[] = [];
    for (const b of taken) {
      const to = normalizePath(b.to);
      const nextVia = [...via, { path: node.path, branch: b.id }];
      const decision = to ? await decisionAt(ctx.store, to) : undefined;
      if (decision && to) {
        if (trail.includes(to)) {
          throw new ServiceError('graph_cycle', `The graph loops: ${[...trail, to].join(' -> ')}.`, {
            cycle: [...trail.slice(trail.indexOf(to)), to],
            hint: 'A decision graph must not lead back to a node on its own path; fix the branch targets.',
          });
        }
        if (depth + 1 > MAX_DEPTH) {
          t.complete = false;
          t.stopped = { reason: 'depth-limit', at: to, depth: depth + 1, limit: MAX_DEPTH };
          continue;
        }
        next.push({ node: decision, depth: depth + 1, via: nextVia, trail: [...trail, to] });
        continue;
      }
      const target = to ? await ctx.store.get(KnowledgeNodes, to) : undefined;
      next.push({ leaf: { to: b.to, depth, via: nextVia, ...(target ? { node: { path: target.path, kind: target.kind, title: target.title } } : {}) } });
    }
    // Pushed in reverse so the first branch comes off the stack first.
    stack.push(...next.reverse());
  }
  // Kept without the inputs (they may be a caller's private data, up to the body limit): the
  // caller has them, and their hash says which they were.
  const { inputs: _, ...kept } = t;
  await ctx.store.transact([`traversal:${t.traversalId}`], async (tx) => tx.put(Traversals, t.traversalId, kept), { durable: false });
  return t;
}

/** A kept traversal; 404 expired once it is older than the node keeps them, 404 not_found for an unknown id. */
export async function getTraversal(ctx: { store: Store; clock: { now(): number }; config: { traversalTtlMs: number } }, id: string): Promise<Traversal> {
  const well = /^trv_[0-9a-f]{16}$/.test(id);
  const t = well ? await ctx.store.get(Traversals, id) : undefined;
  const now = ctx.clock.now();
  const madeAt = t?.at ?? (well ? parseInt(id.slice(4, 12), 16) * 1000 : NaN);
  if (madeAt <= now && madeAt + ctx.config.traversalTtlMs <= now) {
    throw new ServiceError(
      'expired',
      `Traversal ${id} is older than this node keeps traversals (${Math.round(ctx.config.traversalTtlMs / 3_600_000)} hours).`,
      {
        hint: 'Traverse again: POST /api/knowledge/dg/traverse with the same path and inputs.',
      },
    );
  }
  if (!t) throw new ServiceError('not_found', `No traversal ${id}.`, { hint: 'POST /api/knowledge/dg/traverse answers a traversalId.' });
  return t;
}
