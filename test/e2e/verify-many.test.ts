// akas verify credential over a large batch (the built binary): checked on worker threads
// (cli/verify-pool.ts), with the same answers, in the same order, as on one thread, and a
// tampered credential among thousands named by its line.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cryptoRandom, freshNodeKeys, generateKeyPair, judgmentSigningString, sign } from '../../src/core/index.js';
import { issueJudgmentCredential } from '../../src/domain/credentials/credentials.js';
import type { JudgmentRecord } from '../../src/domain/records.js';
import { PARALLEL_FROM } from '../../cli/verify-pool.js';
import { runCli, tempDir } from '../helpers/e2e.js';

const work = tempDir('akas-e2e-verify-many-');
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('akas verify credential, many at once', () => {
  it('answers on worker threads exactly what one thread answers, in input order', async () => {
    const count = PARALLEL_FROM + 300;
    const keys = freshNodeKeys(cryptoRandom, Date.UTC(2026, 0, 1));
    const judge = generateKeyPair();
    const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      const proposalId = `cprop_${i.toString(16).padStart(16, '0')}`;
      const payload = { type: 'akas.judgment.v1' as const, kind: 'capability' as const, proposalId, judge: 'ak_manyjudge', scores, rationale: `item ${i}` };
      const j = {
        judgmentId: `jdg_${i.toString(16).padStart(16, '0')}`,
        agentTag: 'ak_manyjudge',
        scores,
        composite: 0.8,
        rationale: `item ${i}`,
        receivedAt: Date.UTC(2026, 0, 1) + i,
        signature: { algorithm: 'Ed25519', publicKey: judge.publicKey, signature: sign(judge.privateKey, judgmentSigningString(payload)), payload },
      } as unknown as JudgmentRecord;
      lines.push(JSON.stringify(await issueJudgmentCredential(keys, 'capability', proposalId, j)));
    }
    // One credential in the middle is changed after issuing.
    lines[1233] = lines[1233].replace('item 1233', 'item 9999');
    const file = join(work, 'many.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');

    const args = ['--json', 'verify', 'credential', file, '--issuer', keys.issuer.did, '--at', '2026-06-01T00:00:00Z'];
    const parallel = await runCli(args, { timeoutMs: 120_000 });
    const single = await runCli(args, { env: { AKAS_VERIFY_THREADS: '1' }, timeoutMs: 120_000 });
    expect(parallel.code).toBe(1);
    expect(single.code).toBe(1);
    const p = JSON.parse(parallel.stdout);
    expect(p).toMatchObject({ total: count, held: count - 1, failed: 1 });
    const failedAt = p.results.findIndex((r: { verified: boolean }) => !r.verified);
    expect(p.results[failedAt].source).toBe(`${file}:1234`);
    expect(p.results.map((r: { source: string }) => r.source)).toEqual(lines.map((_, i) => `${file}:${i + 1}`));
    expect(p).toEqual(JSON.parse(single.stdout));
  }, 180_000);
});
