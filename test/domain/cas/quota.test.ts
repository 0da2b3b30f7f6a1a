// The content store's daily quota counts held in memory on an embedded store (src/domain/cas/quota.ts):
// bounded in number, and a count dropped from memory is read back from the store, never stale.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  casQuotaStatus,
  CasQuotaUse,
  heldCasQuota,
  heldCounts,
  releaseCasQuota,
  reserveCasQuota,
  type CasQuota,
  type QuotaCtx,
} from '../../../src/domain/cas/quota.js';
import { openTempStore } from '../../../src/store/index.js';
import { untilWritten } from '../../helpers/written.js';

const DAY = Date.UTC(2026, 10, 25, 12);
const cap = 10_000;
const quota = (ip: string): CasQuota => ({ scope: 'per-ip-per-day', key: ip, tier: null, cap });

let handle: Awaited<ReturnType<typeof openTempStore>>;
let ctx: QuotaCtx;
const max = heldCounts.max;
beforeEach(async () => {
  heldCounts.max = 2;
  handle = await openTempStore();
  ctx = { store: handle.store, clock: { now: () => DAY }, strategies: { casQuota: heldCasQuota } };
});
afterEach(async () => {
  heldCounts.max = max;
  await handle.dispose();
});

describe('content-store quota counts in memory', () => {
  it('holds at most heldCounts.max clients, and reads a dropped one back from the store with every byte it reserved', async () => {
    const a = quota('10.0.0.1');
    await reserveCasQuota(ctx, a, 6000, cap);
    // Two other clients push the first out of memory while its count is still being written behind.
    await reserveCasQuota(ctx, quota('10.0.0.2'), 100, cap);
    await reserveCasQuota(ctx, quota('10.0.0.3'), 100, cap);
    // Back: 6000 of its 10000 are taken, so 5000 more do not fit, 4000 do.
    await expect(reserveCasQuota(ctx, a, 5000, cap)).rejects.toMatchObject({ code: 'rate_limited', extra: { used: 6000, remaining: 4000 } });
    const r = await reserveCasQuota(ctx, a, 4000, cap);
    expect(r).toMatchObject({ reserved: 4000, usedBefore: 6000 });
    // A reservation handed back after its count was dropped again still reaches the count.
    await reserveCasQuota(ctx, quota('10.0.0.4'), 100, cap);
    await reserveCasQuota(ctx, quota('10.0.0.5'), 100, cap);
    await releaseCasQuota(ctx, a, 3000, r.at);
    expect(await casQuotaStatus(ctx, a)).toMatchObject({ used: 7000, remaining: 3000 });
    // And the store holds the last count once the writes behind have landed.
    const storedOf = async () => (await handle.store.list(CasQuotaUse)).find(([k]) => k.startsWith('ip:10.0.0.1:'))?.[1].used;
    await untilWritten(handle.store, CasQuotaUse, async () => (await storedOf()) === 7000);
    expect(await storedOf()).toBe(7000);
  });
});
