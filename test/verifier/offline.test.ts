// The offline verifier needs no network: with every socket connect made to throw (and DNS
// and fetch with it), akas verify credential and akas verify bundle still run to the end and
// answer the same verdicts.
import dns from 'node:dns';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import { testNode } from '../helpers/app.js';
import { Capture } from '../helpers/cli.js';
import { decide } from '../helpers/flows.js';

let work: string;
let issuer: string;
let at: string;
const attempts: string[] = [];
const saved = { connect: net.Socket.prototype.connect, lookup: dns.lookup, fetch: globalThis.fetch };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'akas-offline-'));
  const node = await testNode();
  const { proposalId } = await decide(node, 'capability');
  const bundle = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}/bundle` })).json();
  writeFileSync(join(work, 'bundle.json'), JSON.stringify(bundle));
  writeFileSync(join(work, 'credential.json'), JSON.stringify(bundle.credentials[0]));
  issuer = node.keys.issuer.did;
  at = String(node.clock.now());
  await node.close();

  // From here on, nothing may reach the network.
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    attempts.push(JSON.stringify(args[0]));
    throw new Error('network disabled in this test');
  } as typeof net.Socket.prototype.connect;
  (dns as { lookup: unknown }).lookup = () => {
    attempts.push('dns');
    throw new Error('network disabled in this test');
  };
  globalThis.fetch = (async () => {
    attempts.push('fetch');
    throw new Error('network disabled in this test');
  }) as typeof fetch;
});
afterAll(() => {
  net.Socket.prototype.connect = saved.connect;
  (dns as { lookup: unknown }).lookup = saved.lookup;
  globalThis.fetch = saved.fetch;
  rmSync(work, { recursive: true, force: true });
});

async function akas(args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(args, { stdout, stderr }, commandGroups, { AKAS_BASE_URL: 'http://127.0.0.1:9' });
  process.exitCode = 0;
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('the verifier with the network disabled', () => {
  it('really has no network (the guard trips)', () => {
    expect(() => net.connect(80, '127.0.0.1')).toThrow(/network disabled/);
    attempts.length = 0;
  });

  it('verifies a credential and a bundle, and refuses a tampered one, without a single connect', async () => {
    const cred = await akas(['verify', 'credential', join(work, 'credential.json'), '--issuer', issuer, '--judge-signature', '--at', at, '--no-status']);
    expect(cred.code, cred.stdout + cred.stderr).toBe(0);
    const bundle = await akas(['verify', 'bundle', join(work, 'bundle.json'), '--issuer', issuer, '--at', at]);
    expect(bundle.code, bundle.stdout + bundle.stderr).toBe(0);
    writeFileSync(
      join(work, 'tampered.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(join(work, 'credential.json'), 'utf8')), validFrom: '2020-01-01T00:00:00.000Z' }),
    );
    expect((await akas(['verify', 'credential', join(work, 'tampered.json'), '--at', at])).code).toBe(1);
    expect(attempts).toEqual([]);
  });
});
