// Input a verify command cannot read (PROTOCOL 8.8): one way on every command. The verifier
// throws NotCheckableError and the CLI answers exit 2 with its code, naming the file: text that
// is not strict JSON is invalid_json (a key twice included, whatever the command), a tlog-proof
// that does not parse not_checkable. A batch of credentials checks what it can read and lists
// the rest under the check `input`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import { cryptoRandom, freshNodeKeys } from '../../src/core/index.js';
import { Capture } from '../helpers/cli.js';
import { ed25519Signer } from '../helpers/dsse-fixtures.js';
import { vectorText } from '../helpers/vectors.js';

let dir: string;
const file = (name: string) => join(dir, name);
const logKey = freshNodeKeys(cryptoRandom).log.verifierKey;
const SIGNED = vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/signedJCS.json');
// A key twice: JSON.parse would keep the last, so there is no one document to check.
const TWICE = SIGNED.replace('"validFrom"', '"validFrom": "2020-01-01T00:00:00Z", "validFrom"');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-unreadable-'));
  writeFileSync(file('twice.json'), TWICE);
  writeFileSync(file('garbage.json'), 'not json at all');
  writeFileSync(file('batch.jsonl'), `${JSON.stringify(JSON.parse(SIGNED))}\n${TWICE.replace(/\n/g, ' ')}\n`);
  writeFileSync(file('garbled.tlog-proof'), 'c2sp.org/tlog-proof@v1\nindex 01\n');
  writeFileSync(file('key.pem'), ed25519Signer().publicKey.export({ type: 'spki', format: 'pem' }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function akas(args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(['--json', ...args], { stdout, stderr }, commandGroups, {});
  process.exitCode = 0;
  return { code, out: JSON.parse(stdout.text || stderr.text) };
}

describe('a verify command given input it cannot read', () => {
  it.each([
    ['credential', ['verify', 'credential', 'twice.json']],
    ['presentation', ['verify', 'presentation', 'twice.json']],
    ['bundle', ['verify', 'bundle', 'garbage.json']],
    ['node', ['verify', 'node', 'twice.json']],
    ['dsse', ['verify', 'dsse', 'twice.json', '--key', 'key.pem']],
    ['sigstore', ['verify', 'sigstore', 'garbage.json', '--key', 'key.pem']],
    ['log-proof', ['verify', 'log-proof', 'twice.json', '--log-key', logKey]],
  ])('%s: exits 2, invalid_json, naming the file (no verdict)', async (_kind, args) => {
    const r = await akas(args.map((a) => (a.endsWith('.json') || a.endsWith('.pem') ? file(a) : a)));
    expect(r.code).toBe(2);
    if (args[1] === 'credential') {
      // The batch's own answer: nothing it could read, the input listed as unreadable.
      expect(r.out.unreadable).toEqual([{ source: file('twice.json'), reason: expect.stringContaining('duplicate key') }]);
      expect(r.out.checks).toEqual([expect.objectContaining({ id: 'input', layer: 'input', result: 'failed' })]);
    } else {
      expect(r.out).toMatchObject({ code: 'invalid_json', path: file(args[2]) });
      expect(r.out.verdict).toBeUndefined();
    }
  });

  it('log-proof: a tlog-proof that does not parse exits 2, not_checkable', async () => {
    const r = await akas(['verify', 'log-proof', file('garbled.tlog-proof'), '--log-key', logKey]);
    expect([r.code, r.out.code]).toEqual([2, 'not_checkable']);
  });

  it('credential: a batch checks each credential it can read and lists the one it cannot (exit 2)', async () => {
    const r = await akas(['verify', 'credential', file('batch.jsonl'), '--no-status']);
    expect(r.code).toBe(2);
    expect(r.out.total).toBe(1);
    expect(r.out.results[0].checks.map((c: { id: string }) => c.id)).toContain('proof.signature');
    expect(r.out.unreadable).toEqual([{ source: expect.stringContaining('batch.jsonl'), reason: expect.stringContaining('duplicate key') }]);
  });
});
