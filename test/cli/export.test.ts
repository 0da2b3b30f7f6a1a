// `akas export` names the files it writes from what the node sends (issue 54, item 4): a log
// entry's id (--with-proof), a credential's subject id (--credentials), a blob's hash (--blobs).
// Against a stub node on 127.0.0.1 that answers ids of its choosing, a name outside the id's
// own grammar is refused (exit 1, unsafe_name) and nothing is written outside the folder; a
// good name is written through a temporary file renamed in place, so a link planted in the
// folder is replaced, never written through.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import { Capture } from '../helpers/cli.js';

const ATT = 'att_00000000000000aa';
const PROP = 'prop_00000000000000bb';
const CHECKPOINT = 'example.org/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— example.org/log AAAA\n';

/** What the stub node answers, per path; set by each test. */
let answers: Record<string, unknown> = {};
let server: Server;
let baseUrl: string;
let work: string;
let savedConfig: string | undefined;

const proven = (id: string) => ({
  entry: { id, seq: 0, kind: 'note.v1', body: {}, prevHash: 'x', hash: 'y' },
  inclusion: { index: 0, proof: [] },
  checkpoint: CHECKPOINT,
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = answers[req.url ?? ''];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: { code: 'not_found', message: 'no such thing' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  savedConfig = process.env.AKAS_CONFIG_DIR;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  if (savedConfig === undefined) delete process.env.AKAS_CONFIG_DIR;
  else process.env.AKAS_CONFIG_DIR = savedConfig;
});
beforeEach(() => {
  // work/a/b/out is the folder asked for: ../../x from it lands in work/a.
  work = mkdtempSync(join(tmpdir(), 'akas-export-names-'));
  mkdirSync(join(work, 'a', 'b'), { recursive: true });
  process.env.AKAS_CONFIG_DIR = join(work, 'config');
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

async function akas(args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(['--json', ...args], { stdout, stderr }, commandGroups, { AKAS_BASE_URL: baseUrl });
  process.exitCode = 0;
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Every file under work, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isDirectory())
    .map((d) => join(d.parentPath, d.name).slice(work.length + 1));

describe('akas export --with-proof', () => {
  it('refuses an entry id that is a path (../../x): exit 1, unsafe_name, and nothing is written outside the folder', async () => {
    answers = { [`/api/attestations/${ATT}`]: proven('../../x') };
    const out = join(work, 'a', 'b', 'out');
    const r = await akas(['export', ATT, '--with-proof', out]);
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'unsafe_name', value: '../../x' });
    expect(existsSync(join(work, 'a', 'x.tlog-proof'))).toBe(false);
    expect(filesUnder(work)).toEqual([]);
  });

  it("refuses a proposal bundle whose log names an event by a path, before writing any of the bundle's proofs", async () => {
    answers = {
      [`/api/knowledge/proposals/${PROP}/bundle`]: {
        log: { checkpoint: CHECKPOINT, entries: [proven(ATT), proven('../../y')].map(({ entry, inclusion }) => ({ entry, inclusion })) },
      },
    };
    const r = await akas(['export', PROP, '--with-proof', join(work, 'a', 'b', 'out'), '-o', join(work, 'bundle.json')]);
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.parse(r.stdout).code).toBe('unsafe_name');
    expect(filesUnder(work)).toEqual([]);
  });

  it('writes a good id as DIR/<id>.tlog-proof, replacing a link planted there rather than writing through it', async () => {
    answers = { [`/api/attestations/${ATT}`]: proven(ATT) };
    const out = join(work, 'a', 'b', 'out');
    mkdirSync(out);
    const victim = join(work, 'a', 'victim');
    writeFileSync(victim, 'keep');
    symlinkSync(victim, join(out, `${ATT}.tlog-proof`));
    const r = await akas(['export', ATT, '--with-proof', out]);
    expect(r.code, r.stdout).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('keep');
    expect(lstatSync(join(out, `${ATT}.tlog-proof`)).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(out, `${ATT}.tlog-proof`), 'utf8').split('\n')[0]).toBe('c2sp.org/tlog-proof@v1');
  });
});

describe('akas export --credentials and --blobs', () => {
  it("refuses a credential whose subject id is no judgment's (a path): exit 1, nothing written", async () => {
    answers = {
      [`/api/knowledge/proposals/${PROP}/bundle`]: {
        credentials: [{ credentialSubject: { id: 'urn:akas:judgment:jdg_00000000000000cc' } }, { credentialSubject: { id: 'urn:akas:judgment:../../y' } }],
        cas: [],
        log: { checkpoint: CHECKPOINT, entries: [] },
      },
    };
    const r = await akas(['export', PROP, '--credentials', join(work, 'a', 'b', 'creds'), '-o', join(work, 'bundle.json')]);
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.parse(r.stdout).code).toBe('unsafe_name');
    expect(filesUnder(work)).toEqual([]);
  });

  it('refuses a blob named by a path instead of a sha256, without fetching or writing anything', async () => {
    answers = {
      [`/api/knowledge/proposals/${PROP}/bundle`]: {
        credentials: [],
        cas: [{ sha256: '../../z', platformVerified: true }],
        log: { checkpoint: CHECKPOINT, entries: [] },
      },
    };
    const r = await akas(['export', PROP, '--blobs', join(work, 'a', 'b', 'blobs'), '-o', join(work, 'bundle.json')]);
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.parse(r.stdout).code).toBe('unsafe_name');
    expect(filesUnder(work)).toEqual([]);
  });
});
