// The built binary against a real `akas serve` (run `npm run build` first).
import { randomBytes, createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let node: RunningNode;
let work: string;
beforeAll(async () => {
  node = await startServe();
  work = tempDir('akas-e2e-cas-');
}, 30_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const akas = (...args: string[]) => runCli(['--base-url', node.url, ...args], { cwd: work });

describe('akas cas (e2e)', () => {
  it('put then get round-trips a 5 MiB random file byte for byte', async () => {
    const bytes = randomBytes(5 * 1024 * 1024);
    const file = join(work, 'five.bin');
    writeFileSync(file, bytes);

    const put = await akas('--json', 'cas', 'put', file);
    expect(put.code).toBe(0);
    const answer = JSON.parse(put.stdout);
    expect(answer).toMatchObject({ sha256: sha256(bytes), bytes: bytes.length, deduplicated: false });
    expect(answer.fetchUrl).toBe(`${node.url}/api/cas/${answer.sha256}`);

    const out = join(work, 'five.out');
    const get = await akas('cas', 'get', answer.sha256, '-o', out);
    expect(get.code).toBe(0);
    expect(readFileSync(out).equals(bytes)).toBe(true);

    const again = await akas('--json', 'cas', 'put', file);
    expect(JSON.parse(again.stdout).deduplicated).toBe(true);
  }, 60_000);

  it('prints sha256 and fetchUrl for several files, and head tells existence by exit code', async () => {
    const a = join(work, 'a.txt');
    const b = join(work, 'b.txt');
    writeFileSync(a, 'alpha');
    writeFileSync(b, 'beta');
    const put = await akas('cas', 'put', a, b);
    expect(put.code).toBe(0);
    expect(put.stdout).toContain(sha256(Buffer.from('alpha')));
    expect(put.stdout).toContain(`${node.url}/api/cas/${sha256(Buffer.from('beta'))}`);

    const json = await akas('--json', 'cas', 'put', a, b);
    expect(JSON.parse(json.stdout).map((r: { file: string }) => r.file)).toEqual([a, b]);

    const yes = await akas('--json', 'cas', 'head', sha256(Buffer.from('alpha')));
    expect(yes.code).toBe(0);
    expect(JSON.parse(yes.stdout)).toMatchObject({ exists: true, bytes: 5 });
    const no = await akas('--json', 'cas', 'head', 'ef'.repeat(32));
    expect(no.code).toBe(1);
    expect(JSON.parse(no.stdout)).toMatchObject({ exists: false });
  }, 60_000);

  it('is refused (exit 1) over 10 MiB and for an empty file; a missing file cannot run (exit 2)', async () => {
    const big = join(work, 'big.bin');
    writeFileSync(big, Buffer.alloc(10 * 1024 * 1024 + 1, 1));
    const tooBig = await akas('--json', 'cas', 'put', big);
    expect(tooBig.code).toBe(1);
    expect(JSON.parse(tooBig.stdout).code).toBe('blob_too_large');

    const empty = join(work, 'empty.bin');
    writeFileSync(empty, '');
    const none = await akas('--json', 'cas', 'put', empty);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).code).toBe('empty_body');

    const missing = await akas('cas', 'put', join(work, 'nope.bin'));
    expect(missing.code).toBe(2);
  }, 60_000);

  it('get fails with exit 1 and leaves no file when the stored bytes were damaged', async () => {
    // Over the inline threshold (64 KiB): a file in the data folder, damaged in place.
    const bytes = randomBytes(100_000);
    const file = join(work, 'to-damage.bin');
    writeFileSync(file, bytes);
    const sha = JSON.parse((await akas('--json', 'cas', 'put', file)).stdout).sha256 as string;
    const blob = join(node.dataDir, 'blobs', sha.slice(0, 2), sha.slice(2));
    chmodSync(blob, 0o644);
    const stored = readFileSync(blob);
    stored[100] ^= 1;
    writeFileSync(blob, stored);

    const dir = tempDir('akas-e2e-get-');
    try {
      const get = await runCli(['--base-url', node.url, '--json', 'cas', 'get', sha, '-o', join(dir, 'x.bin')]);
      expect(get.code).toBe(1);
      expect(JSON.parse(get.stdout).code).toBe('integrity_violation');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('akas cas get against a node that sends the wrong bytes', () => {
  let liar: Server;
  let url: string;
  beforeAll(async () => {
    liar = createServer((_req, res) => {
      const wrong = Buffer.from('these are not the bytes you asked for');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(wrong.length) });
      res.end(wrong);
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => liar.close(() => r())));

  it('checks the hash before the file appears: exit 1, no file, no temp file', async () => {
    const dir = tempDir('akas-e2e-liar-');
    try {
      const want = 'ab'.repeat(32);
      const get = await runCli(['--base-url', url, '--json', 'cas', 'get', want, '-o', join(dir, 'blob.bin')]);
      expect(get.code).toBe(1);
      expect(JSON.parse(get.stdout)).toMatchObject({ code: 'hash_mismatch', expected: want });
      expect(readdirSync(dir)).toEqual([]);

      const toStdout = await runCli(['--base-url', url, 'cas', 'get', want, '-o', '-']);
      expect(toStdout.code).toBe(1);
      expect(toStdout.stdoutBytes.length).toBe(0);
      expect(existsSync(join(dir, 'blob.bin'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
