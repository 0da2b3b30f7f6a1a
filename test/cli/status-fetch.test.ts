// `akas verify credential --status` bounds what it fetches on a credential's word (issue 54, 3):
// run in-process, the credentials' lists served on 127.0.0.1 by the test. A credential whose
// proof or pinned issuer fails sends the reader nowhere; an endless list is refused at its cap
// (the reader hangs up long before the test's ceiling); a redirect to another origin is not
// followed; a list's /versions pages are read no further than the version the node says the list
// is, and never more than MAX_VERSIONS_PAGES.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import { MAX_VERSIONS_PAGES } from '../../cli/commands/verify/status-check.js';
import { toMultibaseBase64url } from '../../src/core/index.js';
import { setStatusBit, STATUS_LIST_LENGTH, statusEntry, statusListCredential, type StatusPurpose } from '../../src/core/status-list.js';
import { issueStatusListCredential } from '../../src/domain/credentials/credentials.js';
import { Capture } from '../helpers/cli.js';
import { endless, type Stream, type TestServer, testServer } from '../helpers/hostile-server.js';
import { manyJudgmentCredentials } from '../helpers/verifier-fixtures.js';

const INDEX = 7;
const AT = '2026-06-01T00:00:00Z';
/** The pages an endless /versions serves before the test stops it (more than any bound). */
const PAGES_SERVED = 1000;

let dir: string;
const servers: TestServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-status-fetch-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Keys = Awaited<ReturnType<typeof manyJudgmentCredentials>>['keys'];

/** A list of `purpose` at `url` by `keys`, the credential's bit set when `revoked`. */
async function list(keys: Keys, url: string, purpose: StatusPurpose, revoked: boolean) {
  const bits = new Uint8Array(STATUS_LIST_LENGTH / 8);
  if (revoked) setStatusBit(bits, INDEX, true);
  const at = Date.UTC(2026, 0, 2);
  const unsigned = statusListCredential({
    listUrl: url,
    issuer: keys.issuer.did,
    purpose,
    encodedList: toMultibaseBase64url(gzipSync(bits)),
    validFrom: new Date(at).toISOString(),
  });
  return JSON.stringify(await issueStatusListCredential(keys, unsigned, at));
}

/**
 * A node whose lists the credential names; `special` may answer a path its own way first. Its
 * /versions pages never end (each the next 100 versions, every one changing the credential's bit)
 * until PAGES_SERVED.
 */
async function statusNode(special: (path: string, res: ServerResponse) => boolean = () => false) {
  let lists: Record<string, string> = {};
  const s = await testServer((req, res) => {
    const path = req.url ?? '/';
    if (special(path, res)) return;
    const versions = /^\/credentials\/status\/revocation\/versions\?from=(\d+)$/.exec(path);
    if (versions) {
      const from = Number(versions[1]);
      const page =
        from > PAGES_SERVED * 100
          ? []
          : Array.from({ length: 100 }, (_, k) => ({ version: from + k, at: 0, reason: `v${from + k}`, changes: [{ index: INDEX }] }));
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ purpose: 'revocation', versions: page }));
    }
    const purpose = /^\/credentials\/status\/(revocation|suspension)$/.exec(path)?.[1];
    if (purpose) return void res.writeHead(200, { 'content-type': 'application/json', ...listHeaders }).end(lists[purpose]);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such list","code":"not_found"}');
  });
  servers.push(s);
  let listHeaders: Record<string, string> = {};
  /** One credential naming this node's lists, the lists signed by its issuer; `said` the version the node says the lists are. */
  const credential = async (o: { revoked?: boolean; said?: number } = {}) => {
    const url = (p: StatusPurpose) => `${s.url}/credentials/status/${p}`;
    const { keys, lines } = await manyJudgmentCredentials(1, () => [
      statusEntry(url('revocation'), 'revocation', INDEX),
      statusEntry(url('suspension'), 'suspension', INDEX),
    ]);
    lists = {
      revocation: await list(keys, url('revocation'), 'revocation', Boolean(o.revoked)),
      suspension: await list(keys, url('suspension'), 'suspension', false),
    };
    listHeaders = o.said === undefined ? {} : { 'x-status-list-version': String(o.said) };
    const file = join(dir, `credential-${servers.length}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, lines[0]);
    return { file, issuer: keys.issuer.did };
  };
  return { ...s, credential };
}

/** `akas verify credential FILE --status` in this process. */
async function verifyStatus(file: string, extra: string[] = []) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(['--json', 'verify', 'credential', file, '--status', '--at', AT, ...extra], { stdout, stderr }, commandGroups, {});
  process.exitCode = 0;
  return { code, stderr: stderr.text, json: () => JSON.parse(stdout.text) };
}

const versionPages = (s: TestServer) => s.asked.filter((p) => p.includes('/versions')).length;

describe('akas verify credential --status bounds what it fetches', () => {
  it('reads a clear status (exit 0), and a revoked one (exit 1) with no /versions page past the version the node says the list is', async () => {
    const clear = await statusNode();
    const c = await clear.credential();
    expect((await verifyStatus(c.file, ['--issuer', c.issuer])).code).toBe(0);
    const s = await statusNode();
    const { file, issuer } = await s.credential({ revoked: true, said: 3 });
    const r = await verifyStatus(file, ['--issuer', issuer]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json().results[0].checks).toContainEqual(expect.objectContaining({ id: 'status.revocation', result: 'failed' }));
    expect(versionPages(s)).toBe(1);
  });

  it('reads at most MAX_VERSIONS_PAGES of /versions pages that never end, pinned or not', async () => {
    const s = await statusNode();
    const pinned = await s.credential({ revoked: true });
    expect((await verifyStatus(pinned.file, ['--issuer', pinned.issuer])).code).toBe(1);
    expect(versionPages(s)).toBe(MAX_VERSIONS_PAGES);
    s.asked.length = 0;
    const unpinned = await s.credential({ revoked: true });
    expect((await verifyStatus(unpinned.file)).code).toBe(1);
    expect(versionPages(s)).toBe(MAX_VERSIONS_PAGES);
  });

  it('refuses an endless list at its cap, hanging up long before the stream ends: status unknown (exit 3)', async () => {
    const stream: Stream = { sent: 0, reachedCeiling: false };
    const s = await statusNode((path, res) => path === '/credentials/status/revocation' && (endless(res, stream), true));
    const { file, issuer } = await s.credential();
    const r = await verifyStatus(file, ['--issuer', issuer]);
    expect(r.code, r.stderr).toBe(3);
    expect(stream.reachedCeiling).toBe(false);
  });

  it('does not follow a list that redirects to another origin, and asks nothing of it: status unknown (exit 3)', async () => {
    const other = await statusNode();
    const s = await statusNode((path, res) => path.startsWith('/credentials/status/') && (res.writeHead(302, { location: `${other.url}${path}` }).end(), true));
    const { file, issuer } = await s.credential();
    const r = await verifyStatus(file, ['--issuer', issuer]);
    expect(r.code, r.stderr).toBe(3);
    expect(other.asked).toEqual([]);
  });

  it('fetches nothing for a credential whose proof fails, or whose issuer is not the one pinned', async () => {
    const s = await statusNode();
    const { file, issuer } = await s.credential();
    const forged = join(dir, 'forged.json');
    const text = readFileSync(file, 'utf8');
    writeFileSync(forged, text.replace('"rationale":"item 0"', '"rationale":"item 1"'));
    expect(readFileSync(forged, 'utf8')).not.toBe(text);
    expect((await verifyStatus(forged, ['--issuer', issuer])).code).toBe(1);
    expect((await verifyStatus(forged)).code).toBe(1);
    const other = await statusNode();
    const stranger = (await other.credential()).issuer;
    expect((await verifyStatus(file, ['--issuer', stranger])).code).toBe(1);
    expect(s.asked).toEqual([]);
  });
});
