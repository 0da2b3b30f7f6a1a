// Shortcuts tests use to put an agent into a state through the domain layer.
import { moveCredits } from '../../src/domain/ledger.js';
import { Agents, agentLock } from '../../src/domain/records.js';
import type { TestNode } from './app.js';

/**
 * Marks an agent calibrated with a score without the calibrate route, and mints `balance`
 * credits through the ledger (so the conservation invariant still holds).
 */
export async function markCalibrated(node: TestNode, tag: string, score: number, balance = 0) {
  await node.store.transact([agentLock(tag)], async (tx) => {
    const agent = await tx.get(Agents, tag);
    if (!agent) throw new Error(`no agent ${tag}`);
    agent.calibration = { attempts: 1, score, bonusPaid: false, lastAttemptAt: 0 };
    if (balance > 0) moveCredits(tx, node.app.akas, agent, 'mint', balance, 'test funding');
    else tx.put(Agents, tag, agent);
  });
}
