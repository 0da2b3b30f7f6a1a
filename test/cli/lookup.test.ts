// akas lookup and akas verify lookup (PROTOCOL 9.10), in-process against a node on 127.0.0.1: a
// key's entries with the verdict of their proofs under the profile's pin, the saved answer checked
// offline under a trust file, and a tampered answer refused.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enqueueLogEntry } from '../../src/domain/log/index.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
beforeEach(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => h.close());

const SHA = 'c0'.repeat(32);

async function append(n: number) {
  const ids = [];
  for (let i = 0; i < n; i++)
    ids.push(
      await h.node.store.transact([`t:${i}`], async (tx) =>
        enqueueLogEntry(tx, h.node.app.akas, {
          kind: 'pipeline.facet.v1',
          tier: 'pipeline',
          agent: `ak_lookup${i % 2}`,
          body: { step: `s${i}`, subjectSha256: SHA },
        }),
      ),
    );
  for (const id of ids) await h.node.app.akas.log.appended(id);
}

/** The saved answer and a trust file pinning the node's keys, in the config folder. */
async function saved(key: string) {
  const r = await h.akas(['--json', 'lookup', key, '--with-entries']);
  expect(r.code, r.stderr).toBe(0);
  const file = join(h.configDir, 'lookup.json');
  writeFileSync(file, r.stdout);
  const trust = await h.akas(['trust', 'pin']);
  expect(trust.code, trust.stderr).toBe(0);
  const trustFile = join(h.configDir, 'trust.json');
  writeFileSync(trustFile, trust.stdout);
  return { answer: r.json(), file, trustFile };
}

describe('akas lookup', () => {
  it("prints a key's entries, complete as of a log size, with the verdict of their proofs", async () => {
    await append(6);
    const r = await h.akas(['lookup', 'agent:ak_lookup1']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('agent:ak_lookup1: 3 entries (1, 3, 5), complete as of log size 6');
    expect(r.stdout.trim().split('\n').pop()).toMatch(/^VERIFIED/);
    const none = await h.akas(['--json', 'lookup', 'agent:ak_nobody']);
    expect(none.code).toBe(0);
    expect(none.json()).toMatchObject({ found: false, indices: [], verdict: 'verified' });
  });

  it('refuses a key that is not one before asking the node (exit 2)', async () => {
    const r = await h.akas(['lookup', 'kind:pipeline']);
    expect(r.code).toBe(2);
  });
});

describe('akas verify lookup', () => {
  it('checks a saved lookup offline under a trust file', async () => {
    await append(4);
    const { file, trustFile } = await saved(`sha256:${SHA}`);
    const r = await h.akas(['--json', 'verify', 'lookup', file, '--trust', trustFile]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ verdict: 'verified', found: true, indices: [0, 1, 2, 3], size: 4 });
    // With no key pinned, the verdict is unanchored (exit 3).
    expect((await h.akas(['verify', 'lookup', file])).code).toBe(3);
  });

  it('refuses a lookup with an index left out, a proof changed, or a root of another size', async () => {
    await append(4);
    const { answer, file, trustFile } = await saved('agent:ak_lookup0');
    const tampered: Array<[string, (a: typeof answer) => void, string]> = [
      ['an index left out', (a) => a.indices.pop(), 'index.proof'],
      ['a proof byte changed', (a) => (a.map.proof = flip(a.map.proof)), 'index.proof'],
      ['another size named', (a) => (a.map.size += 1), 'index.root'],
      ['an entry of another key shown', (a) => (a.entries[0].agent = 'ak_lookup1'), 'index.entries'],
    ];
    for (const [what, change, id] of tampered) {
      const copy = JSON.parse(JSON.stringify(answer));
      change(copy);
      writeFileSync(file, JSON.stringify(copy));
      const r = await h.akas(['--json', 'verify', 'lookup', file, '--trust', trustFile]);
      expect(r.code, what).toBe(1);
      expect(
        r
          .json()
          .checks.filter((c: { result: string }) => c.result === 'failed')
          .map((c: { id: string }) => c.id),
        what,
      ).toContain(id);
    }
  });
});

/** The base64 of the same bytes with one bit of the last one changed. */
function flip(b64: string): string {
  const b = Buffer.from(b64, 'base64');
  b[b.length - 1] ^= 1;
  return b.toString('base64');
}
