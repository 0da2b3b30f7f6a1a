// Shortcuts tests use to put an agent into a state through the domain layer.
import { Agents, agentLock } from '../../src/domain/records.js';
import type { Store } from '../../src/store/index.js';

/** Marks an agent calibrated with a score (and optional balance) without the calibrate route. */
export async function markCalibrated(store: Store, tag: string, score: number, balance?: number) {
  await store.transact([agentLock(tag)], async (tx) => {
    const agent = await tx.get(Agents, tag);
    if (!agent) throw new Error(`no agent ${tag}`);
    agent.calibration = { attempts: 1, score, bonusPaid: false, lastAttemptAt: 0 };
    if (balance !== undefined) agent.balance = balance;
    tx.put(Agents, tag, agent);
  });
}
