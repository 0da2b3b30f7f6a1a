// akas verify credential over a large batch (the built binary): checked on worker threads
// (cli/commands/verify/pool.ts), with the same answers, in the same order, as on one thread and from the
// single file, and a tampered credential among thousands named by its line.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { setStatusBit, STATUS_LIST_LENGTH, statusEntry, statusListCredential, type StatusPurpose } from '../../src/core/status-list.js';
import { issueStatusListCredential } from '../../src/domain/credentials/credentials.js';
import { encodeBits } from '../../src/domain/credentials/status-lists.js';
import { PARALLEL_FROM } from '../../cli/commands/verify/pool.js';
import { runCli, tempDir } from '../helpers/e2e.js';
import { manyJudgmentCredentials } from '../helpers/verifier-fixtures.js';

const SINGLE_FILE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
const work = tempDir('akas-e2e-verify-many-');
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('akas verify credential, many at once', () => {
  it('answers on worker threads exactly what one thread answers, in input order', async () => {
    const count = PARALLEL_FROM + 300;
    const { keys, lines } = await manyJudgmentCredentials(count);
    // One credential in the middle is changed after issuing.
    lines[1233] = lines[1233].replace('item 1233', 'item 9999');
    const file = join(work, 'many.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');

    const args = ['--json', 'verify', 'credential', file, '--issuer', keys.issuer.did, '--at', '2026-06-01T00:00:00Z'];
    const parallel = await runCli(args, { env: { AKAS_VERIFY_THREADS: '3' }, timeoutMs: 120_000 });
    const single = await runCli(args, { env: { AKAS_VERIFY_THREADS: '1' }, timeoutMs: 120_000 });
    expect(parallel.code).toBe(1);
    expect(single.code).toBe(1);
    const p = JSON.parse(parallel.stdout);
    expect(p).toMatchObject({ total: count, held: count - 1, failed: 1 });
    const failedAt = p.results.findIndex((r: { verified: boolean }) => !r.verified);
    expect(p.results[failedAt].source).toBe(`${file}:1234`);
    expect(p.results.map((r: { source: string }) => r.source)).toEqual(lines.map((_, i) => `${file}:${i + 1}`));
    expect(p).toEqual(JSON.parse(single.stdout));

    // Its workers start before the file is read (cli/commands/verify/pool.ts startWorkers): a command
    // that fails after that (a status list file that is not there) still ends, with the reason.
    const missing = join(work, 'no-such-list.json');
    const failed = await runCli([...args, '--status-list', missing], { env: { AKAS_VERIFY_THREADS: '2' }, timeoutMs: 60_000 });
    expect(failed.code).toBe(2);
    expect(`${failed.stdout}${failed.stderr}`).toContain(missing);
  }, 180_000);

  it('answers on every thread, and from the single file, what one thread answers: many distinct failures and stapled status lists', async () => {
    // The threads hand reports back packed (cli/commands/verify/pack.ts): each distinct check once. Here
    // twenty credentials fail each with a reason of its own, and two are revoked in a stapled list.
    const count = PARALLEL_FROM + 300;
    const url = (p: StatusPurpose) => `https://akas.example.org/credentials/status/${p}`;
    const { keys, lines } = await manyJudgmentCredentials(count, (i) => [
      statusEntry(url('revocation'), 'revocation', i * 7),
      statusEntry(url('suspension'), 'suspension', i * 7),
    ]);
    for (let k = 0; k < 20; k++) {
      const i = 50 + k * 61;
      lines[i] = lines[i].replace(/"validFrom":"[^"]*"/, `"validFrom":"not a date ${k}"`);
    }
    const file = join(work, 'many-status.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const lists: string[] = [];
    for (const purpose of ['revocation', 'suspension'] as const) {
      const bits = new Uint8Array(STATUS_LIST_LENGTH / 8);
      if (purpose === 'revocation') for (const i of [7, 1200]) setStatusBit(bits, i * 7, true);
      const at = Date.UTC(2026, 0, 2);
      const unsigned = statusListCredential({
        listUrl: url(purpose),
        issuer: keys.issuer.did,
        purpose,
        encodedList: encodeBits(bits),
        validFrom: new Date(at).toISOString(),
      });
      lists.push(join(work, `${purpose}.json`));
      writeFileSync(lists[lists.length - 1], JSON.stringify(await issueStatusListCredential(keys, unsigned, at)));
    }

    const args = ['--json', 'verify', 'credential', file, '--issuer', keys.issuer.did, '--at', '2026-06-01T00:00:00Z', '--status-list', ...lists];
    const parallel = await runCli(args, { env: { AKAS_VERIFY_THREADS: '3' }, timeoutMs: 120_000 });
    const single = await runCli(args, { env: { AKAS_VERIFY_THREADS: '1' }, timeoutMs: 120_000 });
    const singleFile = spawnSync(process.execPath, [SINGLE_FILE, ...args], {
      encoding: 'utf8',
      env: { ...process.env, AKAS_VERIFY_THREADS: '3' },
      maxBuffer: 256 * 1024 * 1024,
      timeout: 120_000,
    });
    expect([parallel.code, single.code, singleFile.status]).toEqual([1, 1, 1]);
    const p = JSON.parse(parallel.stdout);
    expect(p).toMatchObject({ total: count, held: count - 22, failed: 22 });
    const failed = p.results.filter((r: { verified: boolean }) => !r.verified);
    expect(
      failed.filter((r: { checks: Array<{ id: string; result: string }> }) => r.checks.some((c) => c.id === 'dates' && c.result === 'failed')),
    ).toHaveLength(20);
    expect(
      new Set(
        failed.flatMap((r: { checks: Array<{ id: string; result: string; why?: string }> }) =>
          r.checks.filter((c) => c.id === 'dates' && c.result === 'failed').map((c) => c.why),
        ),
      ).size,
    ).toBe(20);
    const revoked = p.results.filter((r: { checks: Array<{ id: string; result: string }> }) =>
      r.checks.some((c) => c.id === 'status.revocation' && c.result === 'failed'),
    );
    expect(revoked.map((r: { source: string }) => r.source)).toEqual([`${file}:8`, `${file}:1201`]);
    expect(p).toEqual(JSON.parse(single.stdout));
    expect(p).toEqual(JSON.parse(singleFile.stdout));
  }, 180_000);
});
