// akas log watch (the monitor), akas log check (the node's own audit) and akas log events, in-process
// against a node on 127.0.0.1: every way of rewriting the log is caught.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryHash, hmacSha256Hex } from '../../src/core/index.js';
import { enqueueLogEntry, LogCheckpoints, LogEntries, LogHead, LogIndex, LogNodes, seqKey } from '../../src/domain/log/index.js';
import type { Space } from '../../src/store/index.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
beforeEach(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => h.close());

async function append(n: number, tag = 'a') {
  const ids = [];
  for (let i = 0; i < n; i++)
    ids.push(
      await h.node.store.transact([`t:${tag}${i}`], async (tx) =>
        enqueueLogEntry(tx, h.node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { step: `${tag}${i}` } }),
      ),
    );
  for (const id of ids) await h.node.app.akas.log.appended(id);
}

const watch = (...extra: string[]) => h.akas(['--json', 'log', 'watch', '--once', ...extra]);
const result = (r: { stdout: string }) => JSON.parse(r.stdout.trim().split('\n').pop()!);

async function editEntry(seq: number, consistentHash = false) {
  await h.node.store.transact(['x'], async (tx) => {
    const e = (await tx.get(LogEntries, seqKey(seq)))!;
    e.body = { ...e.body, step: 'forged' };
    if (consistentHash) {
      e.hash = entryHash(e);
      e.mac = hmacSha256Hex(h.node.keys.hmac[0].key, e.hash);
    }
    tx.put(LogEntries, seqKey(seq), e);
  });
}

describe('akas log watch', () => {
  it("trusts the node's log key at the first run, then checks each new checkpoint extends the last", async () => {
    await append(10);
    const first = await watch();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(result(first)).toMatchObject({ ok: true, size: 10, audited: 10, logKey: h.node.keys.log.verifierKey });
    await append(7, 'b');
    const second = await watch();
    expect(second.code).toBe(0);
    expect(result(second)).toMatchObject({ ok: true, size: 17, previousSize: 10, audited: 7 });
    expect(result(second).message).toContain('+7 since the last check, consistent');
  });

  it('exits 1 on an edited entry it had not seen, and with --full on one it had', async () => {
    await append(10);
    expect((await watch()).code).toBe(0);
    await append(5, 'b');
    await editEntry(12);
    const r = await watch();
    expect(r.code).toBe(1);
    expect(result(r).message).toMatch(/REWRITE: entry 12 .* was edited/);

    await editEntry(12, true); // the new entry's own hash fixed: the chain and the root still give it away
    expect(result(await watch()).message).toMatch(/REWRITE/);
    await editEntry(3); // already seen: only a full audit reads it again
    expect(result(await watch('--full')).message).toMatch(/REWRITE/);
  });

  it('exits 1 on a checkpoint signed over a forked tree', async () => {
    await append(8);
    expect((await watch()).code).toBe(0);
    // The node rewrites its history: another log of more entries, signed with the same key.
    await h.node.store.transact(['x'], async (tx) => {
      for (const sp of [LogEntries, LogNodes, LogHead, LogCheckpoints, LogIndex] as Array<Space<unknown>>) {
        for (const [k] of await tx.list(sp)) tx.del(sp, k);
      }
    });
    await append(12, 'forked');
    const r = await watch();
    expect(r.code).toBe(1);
    expect(result(r).message).toMatch(/FORK: the checkpoint of 12 entries does not extend the one of 8/);
  });

  it('exits 1 when the log shrinks, or the key it trusted changes', async () => {
    await append(6);
    expect((await watch()).code).toBe(0);
    await h.node.store.transact(['x'], async (tx) => {
      for (const k of [seqKey(5)]) tx.del(LogEntries, k);
      tx.put(LogHead, 'head', { size: 5, lastHash: (await tx.get(LogEntries, seqKey(4)))!.hash });
      for (const [k, cp] of await tx.list(LogCheckpoints)) if (cp.size > 5) tx.del(LogCheckpoints, k);
    });
    expect(result(await watch()).message).toMatch(/ROLLBACK: the log shrank from 6 to 5/);
    expect(result(await watch('--log-key', 'other+00000000+AbCd')).message).toMatch(/differs/);
  });
});

describe('akas log check', () => {
  it("is the same audit the node runs (here through the in-process node's store)", async () => {
    const { checkLog } = await import('../../src/domain/log/index.js');
    await append(20);
    await h.node.app.akas.log.checkpoint();
    expect((await checkLog(h.node.store, h.node.keys)).ok).toBe(true);
    await editEntry(4);
    expect((await checkLog(h.node.store, h.node.keys)).ok).toBe(false);
  });
});

describe('akas log events', () => {
  it('prints the entries so far, and as JSON lines with --json', async () => {
    await append(4);
    const r = await h.akas(['log', 'events']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(4);
    const j = await h.akas(['--json', 'log', 'events', '--kind', 'pipeline.facet.v1', '--from', '2']);
    expect(
      j.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).seq),
    ).toEqual([2, 3]);
  });
});

describe('akas attest --dry-run', () => {
  it('shows the first 50 errors of a hostile body and how many there were (issue 22)', async () => {
    const body: Record<string, unknown> = {};
    for (const f of ['schemaVersion', 'reviewId', 'reviewerId', 'reviewerDid', 'subjectId', 'subjectSha256', 'verdict', 'reviewedAt']) body[f] = [f];
    for (let i = 0; i < 50; i++) body[`x${i}`] = i;
    const r = await h.akas(['attest', 'review.attestation.v1', '--dry-run', '--body', JSON.stringify(body)]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('  /') || l.startsWith('  (body)'))).toHaveLength(50);
    expect(r.stdout).toMatch(/\.\.\. and \d+ more \(\d+ errors in all\)/);
  });
});

describe('akas gate review', () => {
  const review = (subject: string, verdict: string, i: number) => ({
    schemaVersion: '1.0.0',
    reviewId: `rev-${i}`,
    reviewerId: `reviewer-${i}`,
    reviewerDid: 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2',
    subjectId: 'release v2',
    subjectSha256: subject,
    verdict,
    reviewedAt: 1767268800000,
  });

  it('passes only with enough approving reviews from distinct calibrated agents, each proven in the log', async () => {
    const subject = 'c'.repeat(64);
    const [a, b, c] = [await h.agent(), await h.agent(), await h.agent()];
    for (const [i, who, verdict] of [
      [1, a, 'approve'],
      [2, a, 'approve'],
      [3, b, 'approve'],
      [4, c, 'request-changes'],
    ] as const) {
      const r = await h.akas(['--json', 'attest', 'review.attestation.v1', '--body', JSON.stringify(review(subject, verdict, i))], { profile: who.profile });
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    const two = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--min', '2']);
    expect(two.code, two.stdout).toBe(0);
    expect(JSON.parse(two.stdout)).toMatchObject({ approvals: 2, passed: true });
    expect(
      JSON.parse(two.stdout)
        .reviews.filter((r: { counted: boolean }) => !r.counted)
        .map((r: { why: string }) => r.why),
    ).toEqual(['this reviewer is already counted', 'verdict request-changes']);
    const three = await h.akas(['gate', 'review', '--subject', subject, '--min', '3']);
    expect(three.code).toBe(1);
    expect(three.stdout).toContain('2 of 3 required approve review(s)');
    expect((await h.akas(['gate', 'review', '--subject', subject, '--require', 'request-changes'])).code).toBe(0);
    // Under a log key that is not the node's, nothing is proven.
    const otherKey = 'akas/other+1a2b3c4d+AWZAmVKRQ1NBkJLkkjZwPzr2tKNfI9ttbJOZe3jN86wu';
    const forged = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--log-key', otherKey]);
    expect(forged.code).toBe(1);
    expect(JSON.parse(forged.stdout).approvals).toBe(0);
  });

  it("gates on policy: tier, reputation, age and a trusted list; a reviewer's claimed identity is reported as claimed (issue 22)", async () => {
    const subject = 'e'.repeat(64);
    // Five sock puppets registered a minute ago, all approving.
    const puppets: Array<{ profile: string; tag: string }> = [];
    for (let i = 0; i < 5; i++) puppets.push(await h.agent());
    for (const [i, p] of puppets.entries()) {
      const r = await h.akas(['--json', 'attest', 'review.attestation.v1', '--body', JSON.stringify(review(subject, 'approve', 100 + i))], {
        profile: p.profile,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    expect((await h.akas(['gate', 'review', '--subject', subject, '--min', '5'])).code).toBe(0);
    const young = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--min', '5', '--min-age', '7d']);
    expect(young.code, young.stdout + young.stderr).toBe(1);
    expect(young.json()).toMatchObject({ approvals: 0, policy: { minAgeMs: 7 * 86_400_000 } });
    expect(young.json().reviews[0].why).toMatch(/younger than the policy allows/);
    const tier = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--min-tier', 'frontier']);
    expect([tier.code, tier.json().reviews[0].why]).toEqual([1, 'tier strong is below frontier']);
    // One of them failed two decoys: its reputation is below a policy of 0.9.
    const { Agents, agentLock } = await import('../../src/domain/records.js');
    await h.node.store.transact([agentLock(puppets[1].tag)], async (tx) => {
      const a = (await tx.get(Agents, puppets[1].tag))!;
      tx.put(Agents, a.tag, { ...a, decoyAttempted: 4, decoyFailed: 2 });
    });
    const rep = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--min', '5', '--min-reputation', '0.9']);
    expect([rep.code, rep.json().approvals]).toEqual([1, 4]);
    expect(rep.json().reviews.find((r: { reviewer: string }) => r.reviewer === puppets[1].tag).why).toMatch(/^reputation .* is below 0.9$/);
    const list = `${h.configDir}/trusted.txt`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(list, `# the two reviewers we know\n${puppets[0].tag}\n${puppets[3].tag}\n`);
    const trusted = await h.akas(['--json', 'gate', 'review', '--subject', subject, '--min', '2', '--trusted', list]);
    expect(trusted.code).toBe(0);
    expect(
      trusted
        .json()
        .reviews.filter((r: { counted: boolean }) => r.counted)
        .map((r: { reviewer: string }) => r.reviewer)
        .sort(),
    ).toEqual([puppets[0].tag, puppets[3].tag].sort());
    expect((await h.akas(['gate', 'review', '--subject', subject, '--min', '3', '--trusted', list])).code).toBe(1);
    // Who a review says reviewed is a claim: reported, never verified.
    expect(trusted.json().reviews[0].claimed).toEqual({ reviewerId: 'reviewer-100', reviewerDid: 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2' });
    expect((await h.akas(['gate', 'review', '--subject', subject, '--min', '5'])).stdout).toContain(
      'claims reviewerId "reviewer-100", reviewerDid did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2 (as claimed, not verified)',
    );
    // A week later, the same agents are old enough.
    h.node.clock.advance(8 * 86_400_000);
    expect((await h.akas(['gate', 'review', '--subject', subject, '--min', '5', '--min-age', '7d'])).code).toBe(0);
  });

  it('checks a saved attestation with its proof offline (akas verify log-proof)', async () => {
    const a = await h.agent();
    const r = await h.akas(['--json', 'attest', 'review.attestation.v1', '--body', JSON.stringify(review('d'.repeat(64), 'approve', 9))], {
      profile: a.profile,
    });
    const id = JSON.parse(r.stdout).id;
    const saved = await h.akas(['--json', 'show', id]);
    const { writeFileSync } = await import('node:fs');
    const file = `${h.configDir}/proof.json`;
    writeFileSync(file, saved.stdout);
    expect((await h.akas(['verify', 'log-proof', file, '--log-key', h.node.keys.log.verifierKey])).code).toBe(0);
    const doc = JSON.parse(saved.stdout);
    doc.entry.body.verdict = 'reject';
    writeFileSync(file, JSON.stringify(doc));
    const tampered = await h.akas(['verify', 'log-proof', file, '--log-key', h.node.keys.log.verifierKey]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/FAIL +L3 +log\.entry/);
  });
});
