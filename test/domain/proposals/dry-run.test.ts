// The propose dry run (PROTOCOL 6.9) checks a payload against the store as it is and writes
// nothing: the checks it shares with propose take Reads (src/store/types.ts), the get and list a
// transaction and the store both have, so propose hands them its transaction and the dry run the
// store itself, and neither can write through them.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Ctx } from '../../../src/domain/context.js';
import { dryRunProposal } from '../../../src/domain/proposals/dry-run.js';
import { assertArtifactExists, assertBriefNotPublished, assertNoConflict, assertPathFree } from '../../../src/domain/proposals/proposals.js';
import type { Reads, Store } from '../../../src/store/index.js';
import { samplePayload } from '../../fixtures/payloads.js';
import { testNode } from '../../helpers/app.js';
import { agent, proposeAs } from '../../helpers/flows.js';

/** The store with every write refused: what the dry run is handed below. */
function readOnly(store: Store): Store {
  const refuse = () => {
    throw new Error('the dry run wrote');
  };
  return new Proxy(store, { get: (target, name) => (name === 'transact' ? refuse : Reflect.get(target, name, target)) });
}

describe('the propose dry run', () => {
  it('hands the checks it shares with propose a Reads: a key, a range, and no way to write', () => {
    expectTypeOf(assertNoConflict).parameter(0).toEqualTypeOf<Reads>();
    expectTypeOf(assertPathFree).parameter(0).toEqualTypeOf<Reads>();
    expectTypeOf(assertBriefNotPublished).parameter(0).toEqualTypeOf<Reads>();
    expectTypeOf(assertArtifactExists).parameter(1).toEqualTypeOf<Reads>();
    expectTypeOf<Store>().toExtend<Reads>();
  });

  it('finds the pending proposal a payload conflicts with, on a store that refuses every write', async () => {
    const node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
    try {
      const payload = samplePayload('capability', 1);
      expect((await proposeAs(node, await agent(node), 'capability', payload)).statusCode).toBe(200);
      const ctx: Ctx = { ...node.app.akas, store: readOnly(node.store) };
      const r = await dryRunProposal(ctx, { kind: 'capability', payload, agent: null });
      expect(r.valid).toBe(false);
      expect(r.errors).toContainEqual(
        expect.objectContaining({ field: 'payload', reason: expect.stringMatching(/^held by pending proposal cprop_.*\(id_conflict\)$/) }),
      );
    } finally {
      await node.close();
    }
  });
});
