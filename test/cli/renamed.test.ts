// The old spellings kept for one release (docs/CLI.md "Spellings that changed"; issue 48, 1):
// each still does what it did, against a node, answering as its new spelling does, and says
// once on stderr what replaced it (under --json too, stdout keeping its one document). These
// are the only tests that use the old spellings; test/cli/grammar.test.ts holds that each parses.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renamedNotice } from '../../cli/kit/index.js';
import { enqueueLogEntry } from '../../src/domain/log/index.js';
import { cliHarness, type CliHarness, type Ran } from '../helpers/cli.js';
import { decide } from '../helpers/flows.js';

let h: CliHarness;
let dir: string;
let proposalId: string;
let judges: string[];
let attestationId: string;

beforeAll(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  dir = mkdtempSync(join(tmpdir(), 'akas-renamed-'));
  const decided = await decide(h.node, 'capability', { n: 3 });
  proposalId = decided.proposalId;
  judges = decided.judges.map((j) => j.tag);
  const queued = await h.node.store.transact(['t:renamed'], async (tx) =>
    enqueueLogEntry(tx, h.node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { step: 'renamed' } }),
  );
  await h.node.app.akas.log.appended(queued);
  const listed = await h.node.app.inject({ url: '/api/attestations?kind=pipeline.facet.v1' });
  attestationId = listed.json().items[0].id;
});
afterAll(() => h.close());

/** The old spelling said exactly once, and nothing else on stderr. */
function saidOnce(r: Ran, old: string, now: string) {
  expect(r.stderr).toBe(renamedNotice(old, now));
}

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('old commands', () => {
  it('akas proposal ID shows the proposal as akas show ID does', async () => {
    // The first read pins the node (trust on first use, said on stderr): made here, so the old spelling's notice is alone.
    expect((await h.akas(['show', proposalId])).stderr).toContain('trust on first use');
    const old = await h.akas(['--json', 'proposal', proposalId]);
    saidOnce(old, 'akas proposal <id>', 'akas show <id>');
    expect(old.code).toBe(0);
    expect(old.json()).toEqual((await h.akas(['--json', 'show', proposalId])).json());
    const text = await h.akas(['proposal', proposalId]);
    expect(text.stdout).toBe((await h.akas(['show', proposalId])).stdout);
  });

  it('akas attestation ID shows the entry with its proof, and --format tlog-proof writes what akas export writes', async () => {
    const old = await h.akas(['--json', 'attestation', attestationId]);
    saidOnce(old, 'akas attestation <id>', 'akas show <id>');
    expect(old.json()).toEqual((await h.akas(['--json', 'show', attestationId])).json());
    const proof = await h.akas(['attestation', attestationId, '--format', 'tlog-proof']);
    saidOnce(proof, 'akas attestation <id> --format tlog-proof', 'akas export <id> --format tlog-proof');
    expect(proof.code).toBe(0);
    expect(proof.stdout).toMatch(/^c2sp\.org\/tlog-proof@v1\n/);
    expect(proof.stdout).toBe((await h.akas(['export', attestationId, '--format', 'tlog-proof'])).stdout);
  });

  it('akas traversal ID reads the traversal the node kept, as akas show does', async () => {
    const old = await h.akas(['--json', 'traversal', 'trv_0000000000000000']);
    saidOnce(old, 'akas traversal <id>', 'akas show <id>');
    expect(old.code).toBe(1);
    const shown = await h.akas(['--json', 'show', 'trv_0000000000000000']);
    expect([old.code, old.json()]).toEqual([shown.code, shown.json()]);
  });

  it("akas events lists the log's entries as akas log events does, JSON lines on stdout", async () => {
    const old = await h.akas(['--json', 'events', '--from', '0']);
    saidOnce(old, 'akas events', 'akas log events');
    expect(old.code).toBe(0);
    expect(old.stdout).toBe((await h.akas(['--json', 'log', 'events', '--from', '0'])).stdout);
    expect(old.stdout).toContain(`"id":"${attestationId}"`);
  });
});

describe('akas node-keys --trust, now akas trust pin', () => {
  it('writes the trust file akas trust pin writes, the judges of --judges-of and --agent in it', async () => {
    const old = await h.akas(['node-keys', '--trust', '--judges-of', proposalId, '--agent', judges[0]]);
    expect(old.code, old.stderr).toBe(0);
    expect(old.stderr.split('\n').filter((l) => l.startsWith('akas: "'))).toEqual(
      ['akas node-keys --trust', 'akas node-keys --agent', 'akas node-keys --judges-of'].map((o) =>
        renamedNotice(o, o.replace('akas node-keys --trust', 'akas trust pin').replace('akas node-keys', 'akas trust pin')).trimEnd(),
      ),
    );
    const now = await h.akas(['trust', 'pin', '--judges-of', proposalId, '--agent', judges[0]]);
    const { fetchedAt: _a, note: _b, policy: _c, ...pinned } = JSON.parse(now.stdout);
    const { fetchedAt: _d, note: _e, policy: _f, ...kept } = JSON.parse(old.stdout);
    expect(kept).toEqual(pinned);
    expect(kept.agents.map((a: { tag: string }) => a.tag).sort()).toEqual([...judges].sort());
  });

  it('refuses judges without --trust (exit 2), as it did', async () => {
    const bare = await h.akas(['node-keys', '--agent', judges[0]]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--agent and --judges-of add judges to a trust file: akas trust pin');
  });
});

describe('renamed flags', () => {
  it('akas register --from sends the attribution --attribution sends', async () => {
    const r = await h.akas(['--json', '--show-secrets', 'register', '--from', 'renamed-test'], { profile: 'from' });
    // register's first contact also says what it pinned (trust on first use); that line aside, the notice alone.
    const rest = r.stderr
      .split('\n')
      .filter((line) => !line.startsWith('akas: trust on first use:'))
      .join('\n');
    expect(rest).toBe(renamedNotice('akas register --from', 'akas register --attribution'));
    expect(r.stderr).toContain('akas: trust on first use:');
    expect(r.code).toBe(0);
    expect(r.json()._attribution).toMatchObject({ funnelSource: 'renamed-test' });
  });

  it('akas journal --node keeps only what went to that node, as --node-url does', async () => {
    // A register signs a proof of possession here: the journal holds it for this node.
    const { profile } = await h.agent();
    const elsewhere = await h.akas(['--json', 'journal', '--node', 'http://127.0.0.1:9'], { profile });
    saidOnce(elsewhere, 'akas journal --node', 'akas journal --node-url');
    expect(elsewhere.json().entries).toEqual([]);
    const here = await h.akas(['--json', 'journal', '--node', h.baseUrl], { profile });
    expect(here.json().entries.length).toBeGreaterThan(0);
    expect(here.json()).toEqual((await h.akas(['--json', 'journal', '--node-url', h.baseUrl], { profile })).json());
  });

  it('akas tool --challenge answers the challenge named, as --challenge-id does', async () => {
    const { profile } = await h.agent();
    const args = ['tool', 'word-count', '--input', '{"text": "a b"}', '--answer', 'x'];
    const old = await h.akas(['--json', ...args, '--challenge', 'chl_0000000000000000'], { profile });
    saidOnce(old, 'akas tool --challenge', 'akas tool --challenge-id');
    const now = await h.akas(['--json', ...args, '--challenge-id', 'chl_0000000000000000'], { profile });
    // The node, not the CLI, answers: the id reached it (without one, no current challenge is a usage error).
    expect(now.json().code).not.toBe('usage');
    expect([old.code, old.json()]).toEqual([now.code, now.json()]);
  });

  it('akas schemas --proposal KIND prints that kind field by field, as --kind does', async () => {
    const old = await h.akas(['schemas', '--proposal', 'artifact']);
    saidOnce(old, 'akas schemas --proposal', 'akas schemas --kind');
    expect(old.stdout).toMatch(/^artifact: /);
    expect(old.stdout).toBe((await h.akas(['schemas', '--kind', 'artifact'])).stdout);
  });

  it("akas verify judgments --agent ties judges' keys as --agent-file does", async () => {
    const detail = file('proposal.json', (await h.akas(['--json', 'show', proposalId])).stdout);
    const profiles = [];
    for (const tag of judges) profiles.push(file(`${tag}.json`, (await h.akas(['--json', 'agents', tag])).stdout));
    const old = await h.akas(['--json', 'verify', 'judgments', detail, '--agent', ...profiles]);
    saidOnce(old, 'akas verify judgments --agent', 'akas verify judgments --agent-file');
    expect(old.code, old.stdout).toBe(0);
    expect(old.json()).toEqual((await h.akas(['--json', 'verify', 'judgments', detail, '--agent-file', ...profiles])).json());
  });

  it('akas store copy --from and --to name the folder and database --data and --store do', async () => {
    const old = await h.akas(['--json', 'store', 'copy', '--from', dir, '--store', 'mysql://db']);
    saidOnce(old, 'akas store copy --from', 'akas store copy --data');
    const now = await h.akas(['--json', 'store', 'copy', '--data', dir, '--store', 'mysql://db']);
    expect([old.code, old.json()]).toEqual([2, now.json()]);
    expect(now.json()).toMatchObject({ code: 'usage', error: '--store takes a postgres:// URL' });
    const target = await h.akas(['--json', 'store', 'copy', '--data', 'postgres://db', '--to', 'postgres://db']);
    saidOnce(target, 'akas store copy --to', 'akas store copy --store');
    expect(target.json()).toMatchObject({ code: 'usage', error: '--data is the data folder of a LevelDB node' });
  });

  it('akas witness --key names the witness key file --witness-key does', async () => {
    const logKey = h.node.keys.log.verifierKey;
    const missing = join(dir, 'no-such-key');
    const old = await h.akas(['--json', 'witness', '--data', dir, '--log', logKey, '--key', missing]);
    saidOnce(old, 'akas witness --key', 'akas witness --witness-key');
    const now = await h.akas(['--json', 'witness', '--data', dir, '--log', logKey, '--witness-key', missing]);
    expect([old.code, old.json()]).toEqual([2, now.json()]);
    expect(now.json()).toMatchObject({ code: 'witness_key' });
    expect(now.json().error).toContain(missing);
  });

  it('akas serve --witness and --witnesses name the cosigners --cosigner and --cosigners do', async () => {
    // Each stops at the flags (a bad cosigner first, a bad --witness-log after it): no node starts.
    const old = await h.akas(['--json', 'serve', '--witness', 'not-a-witness', '--witness-log', 'bad']);
    saidOnce(old, 'akas serve --witness', 'akas serve --cosigner');
    expect([old.code, old.json()]).toEqual([2, { ok: false, code: 'usage', error: '--cosigner: a witness is NAME+KEYID+KEY@URL: not-a-witness' }]);
    const list = await h.akas(['--json', 'serve', '--witnesses', file('cosigners.txt', 'not-a-witness\n'), '--witness-log', 'bad']);
    saidOnce(list, 'akas serve --witnesses', 'akas serve --cosigners');
    expect(list.json()).toEqual(old.json());
  });
});
