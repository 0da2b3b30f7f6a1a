// One verdict, one shape (issue 47, 2): every verify command — credential, presentation,
// judgments, bundle, node, log-proof, dsse, sigstore, fork — ends with one line, VERIFIED, NOT
// VERIFIED, UNANCHORED or STATUS UNKNOWN, then what it was anchored on and the status it speaks
// for; its --json is the same object on each, {verdict, anchoredOn, status, checks[{id, layer,
// result}]}; its exit code is the verdict's. And status is checked or said (issue 47, 1): a
// credential that names a status list is STATUS UNKNOWN (exit 3) unless its lists are read
// (--status, --status-list) or the reader skips them on purpose (--no-status, printed).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORK_EVIDENCE_TYPE } from '../../cli/commands/monitor/evidence.js';
import { cryptoRandom, formatCheckpoint, freshNodeKeys, signNote } from '../../src/core/index.js';
import { changeStatus } from '../../src/domain/credentials/status-lists.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';
import { decide } from '../helpers/flows.js';
import { ed25519Signer, envelope, bundleOf } from '../helpers/dsse-fixtures.js';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

let h: CliHarness;
let fx: VerifierFixtures;
let dir: string;
const EXIT = { verified: 0, 'not verified': 1, unanchored: 3, 'status unknown': 3 } as const;
const LINE = /^(VERIFIED|NOT VERIFIED|UNANCHORED|STATUS UNKNOWN) — /;

beforeAll(async () => {
  h = await cliHarness();
  dir = mkdtempSync(join(tmpdir(), 'akas-verdict-'));
  fx = await writeVerifierFixtures(join(dir, 'fx'));
  // DSSE and Sigstore: an Ed25519 envelope and its bundle, with the key as PEM.
  const by = ed25519Signer();
  writeFileSync(join(fx.dir, 'key.pem'), by.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(join(fx.dir, 'envelope.json'), JSON.stringify(envelope(by)));
  writeFileSync(join(fx.dir, 'sigstore.json'), JSON.stringify(bundleOf(envelope(by))));
  // A fork: one log key signing two roots for one size.
  const keys = freshNodeKeys(cryptoRandom);
  const cp = () => signNote(formatCheckpoint({ origin: keys.log.origin, size: 5, rootHash: randomBytes(32) }), keys.log.origin, keys.log.privateKey);
  writeFileSync(
    join(fx.dir, 'fork.json'),
    JSON.stringify({
      type: FORK_EVIDENCE_TYPE,
      logKey: keys.log.verifierKey,
      older: { note: cp(), from: 'a' },
      newer: { note: cp(), from: 'b' },
      proof: [],
      olderRootInNewer: null,
    }),
  );
  fx.commands.push(['verify', 'dsse', 'envelope.json', '--key', 'key.pem'], ['verify', 'sigstore', 'sigstore.json', '--key', 'key.pem']);
  fx.commands.push(['verify', 'fork', 'fork.json', '--log-key', keys.log.verifierKey]);
}, 120_000);
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a verify command of the fixtures in their folder (paths relative to it). */
async function inFixtures(args: string[]) {
  const cwd = process.cwd();
  process.chdir(fx.dir);
  try {
    return await h.akas(args);
  } finally {
    process.chdir(cwd);
  }
}

describe('every verify command', () => {
  it('answers --json with {verdict, anchoredOn, status, checks[{id, layer, result}]} and exits as its verdict says', async () => {
    const kinds = new Set<string>();
    for (const args of fx.commands) {
      if (args.includes('cas')) continue;
      kinds.add(args[1]);
      const r = await inFixtures(['--json', ...args]);
      if (r.code === 2) continue; // an input that could not be read (garbage.json): the check could not run
      const out = r.json();
      expect(Object.keys(EXIT), args.join(' ')).toContain(out.verdict);
      expect(r.code, args.join(' ')).toBe(EXIT[out.verdict as keyof typeof EXIT]);
      expect(out.anchoredOn === null || typeof out.anchoredOn === 'string', args.join(' ')).toBe(true);
      expect(out.status === null || typeof out.status?.checked === 'boolean', args.join(' ')).toBe(true);
      expect(out.checks.length, args.join(' ')).toBeGreaterThan(0);
      for (const c of out.checks) {
        expect(c, args.join(' ')).toMatchObject({
          id: expect.any(String),
          layer: expect.any(String),
          result: expect.stringMatching(/^(held|failed|not checked)$/),
        });
        expect(c.valid, args.join(' ')).toBeUndefined();
      }
    }
    expect([...kinds].sort()).toEqual(['bundle', 'credential', 'dsse', 'fork', 'judgments', 'log-proof', 'node', 'presentation', 'sigstore']);
  });

  it('ends its human report with one verdict line', async () => {
    for (const args of fx.commands) {
      if (args.includes('cas')) continue;
      const r = await inFixtures(args);
      if (r.code === 2) continue;
      const last = r.stdout.trimEnd().split('\n').at(-1)!;
      expect(last, args.join(' ')).toMatch(LINE);
    }
  });
});

describe('a credential that names a status list', () => {
  let files: { revoked: string; suspended: string; lifted: string };
  beforeAll(async () => {
    // The lists the credentials name are on the node's public URL: here, the address it listens on.
    h.node.app.akas.config.publicUrl = h.baseUrl;
    const { answers } = await decide(h.node, 'brief');
    const ids = answers.map((a: { judgmentId: string }) => a.judgmentId);
    const ctx = h.node.app.akas;
    await changeStatus(ctx, { action: 'revoke', reason: 'stolen key', ids: [ids[0]] });
    await changeStatus(ctx, { action: 'suspend', reason: 'under review', ids: [ids[1]] });
    await changeStatus(ctx, { action: 'suspend', reason: 'look', ids: [ids[2]] });
    await changeStatus(ctx, { action: 'unsuspend', reason: 'cleared', ids: [ids[2]] });
    const save = async (i: number) => {
      const file = join(dir, `${ids[i]}.json`);
      writeFileSync(file, (await h.node.app.inject({ url: answers[i].credentialUrl })).body);
      return file;
    };
    files = { revoked: await save(0), suspended: await save(1), lifted: await save(2) };
  }, 120_000);

  const verify = (file: string, extra: string[]) => h.akas(['--json', 'verify', 'credential', file, '--issuer', h.node.keys.issuer.did, ...extra]);

  it('is STATUS UNKNOWN (exit 3) when no status source is given, naming how to check it — revoked, suspended or not', async () => {
    for (const file of Object.values(files)) {
      const r = await verify(file, []);
      expect(r.code, r.stdout).toBe(3);
      expect(r.json()).toMatchObject({ verdict: 'status unknown', status: { checked: false, source: 'none' } });
      const text = await h.akas(['verify', 'credential', file, '--issuer', h.node.keys.issuer.did]);
      expect(text.stdout.trimEnd().split('\n').at(-1)).toMatch(/^STATUS UNKNOWN — .*--status .*--status-list FILE/);
    }
  });

  it('reads the status with --status: revoked and suspended are NOT VERIFIED (exit 1) naming the purpose, the unsuspended VERIFIED', async () => {
    const revoked = await verify(files.revoked, ['--status']);
    expect(revoked.code, revoked.stdout).toBe(1);
    expect(revoked.json().checks).toContainEqual(
      expect.objectContaining({ id: 'status.revocation', result: 'failed', why: expect.stringContaining('REVOKED') }),
    );
    const suspended = await verify(files.suspended, ['--status']);
    expect(suspended.code).toBe(1);
    expect(suspended.json().checks).toContainEqual(expect.objectContaining({ id: 'status.suspension', result: 'failed' }));
    const lifted = await verify(files.lifted, ['--status']);
    expect(lifted.code, lifted.stdout).toBe(0);
    expect(lifted.json()).toMatchObject({
      verdict: 'verified',
      anchoredOn: expect.stringContaining(h.node.keys.issuer.did),
      status: { checked: true, source: 'node' },
    });
    expect(lifted.json().status.lists).toEqual(
      expect.arrayContaining([expect.objectContaining({ purpose: 'suspension', version: expect.any(Number), at: expect.any(String) })]),
    );
  });

  it('skips it with --no-status, and says so on the verdict line (exit 0 even for a revoked one: the reader chose)', async () => {
    const r = await verify(files.revoked, ['--no-status']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json().status).toEqual({ checked: false, source: 'skipped', lists: [] });
    const text = await h.akas(['verify', 'credential', files.revoked, '--issuer', h.node.keys.issuer.did, '--no-status']);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toMatch(/^VERIFIED — .*status not checked \(--no-status\)/);
    const both = await verify(files.revoked, ['--no-status', '--status-list', files.lifted]);
    expect(both.code).toBe(2);
    expect(both.json().code).toBe('usage');
  });

  it('is STATUS UNKNOWN when the lists cannot be read (its node gone)', async () => {
    await h.node.app.close();
    const down = await verify(files.lifted, ['--status']);
    expect(down.code, down.stdout).toBe(3);
    expect(down.json()).toMatchObject({ verdict: 'status unknown', status: { checked: false, source: 'node' } });
  });
});
