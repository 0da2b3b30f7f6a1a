// `akas verify serve` reads the status of what it verifies (issue 47; PROTOCOL 8.7): run
// in-process, the judgment credentials' lists served on 127.0.0.1 by the test, which counts what
// is fetched. A revoked or suspended credential is verified: false with a problem naming the
// purpose, the reason and the time; an unsuspended one is verified; a list that cannot be read is
// status unknown (verified: false, STATUS_RETRIEVAL_ERROR), never 200; nothing is fetched for a
// credential whose proof or pinned issuer fails; what was read is kept for the list's ttl (an
// injected clock moves past it) and no longer than STATUS_CACHE_MAX_MS. And a presentation is
// held to the challenge and domain the request's options give.
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  REVOKED_PROBLEM,
  STATUS_CACHE_MAX_MS,
  SUSPENDED_PROBLEM,
  serveVerifier,
  type ServeOptions,
  UNANCHORED_PROBLEM,
} from '../../cli/commands/verify/server.js';
import { toMultibaseBase64url } from '../../src/core/index.js';
import { setStatusBit, STATUS_LIST_LENGTH, statusEntry, statusListCredential, type StatusPurpose } from '../../src/core/status-list.js';
import { issueStatusListCredential } from '../../src/domain/credentials/credentials.js';
import { type TestServer, testServer } from '../helpers/hostile-server.js';
import { signer, signJcs } from '../helpers/jcs-sign.js';
import { manyJudgmentCredentials } from '../helpers/verifier-fixtures.js';

const INDEX = 7;
const AT = Date.parse('2026-06-01T00:00:00Z');
const CHANGED_AT = Date.UTC(2026, 1, 3);

type Keys = Awaited<ReturnType<typeof manyJudgmentCredentials>>['keys'];
type Problem = { type: string; title: string; detail: string; statusPurpose?: string; reason?: string; changedAt?: string };
type Answer = {
  status: number;
  body: {
    verified: boolean;
    verdict: string;
    anchoredOn: string | null;
    status: { checked: boolean; source: string; lists: Array<{ purpose: string; at: string }> } | null;
    checks: string[];
    errors: Problem[];
  };
};

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of closing.splice(0)) await s.close();
});

/** A signed list of `purpose` at `url`, the credential's bit set when `set`, its ttl as given (absent when null). */
async function list(keys: Keys, url: string, purpose: StatusPurpose, set: boolean, ttl: number | null = 300_000) {
  const bits = new Uint8Array(STATUS_LIST_LENGTH / 8);
  if (set) setStatusBit(bits, INDEX, true);
  const at = Date.UTC(2026, 0, 2);
  const unsigned = statusListCredential({
    listUrl: url,
    issuer: keys.issuer.did,
    purpose,
    encodedList: toMultibaseBase64url(gzipSync(bits)),
    validFrom: new Date(at).toISOString(),
  });
  const subject = unsigned.credentialSubject as Record<string, unknown>;
  if (ttl === null) delete subject.ttl;
  else subject.ttl = ttl;
  return JSON.stringify(await issueStatusListCredential(keys, unsigned, at));
}

interface NodeState {
  revoked?: boolean;
  suspended?: boolean;
  /** The suspension was lifted: its versions say suspend then unsuspend, the bit is clear. */
  unsuspended?: boolean;
  ttl?: number | null;
}

/** A node serving the two lists a judgment credential names, and their /versions; answers the credential and its issuer. */
async function statusNode(state: NodeState = {}) {
  let lists: Record<string, string> = {};
  const versions: Record<string, unknown[]> = {
    revocation: state.revoked ? [{ version: 1, at: CHANGED_AT, action: 'revoke', reason: 'the key was stolen', changes: [{ index: INDEX }] }] : [],
    suspension:
      state.suspended || state.unsuspended
        ? [
            { version: 1, at: CHANGED_AT, action: 'suspend', reason: 'under review', changes: [{ index: INDEX }] },
            ...(state.unsuspended ? [{ version: 2, at: CHANGED_AT + 1000, action: 'unsuspend', reason: 'cleared', changes: [{ index: INDEX }] }] : []),
          ]
        : [],
  };
  const s = await testServer((req, res) => {
    const path = req.url ?? '/';
    const v = /^\/credentials\/status\/(revocation|suspension)\/versions\?from=0$/.exec(path);
    if (v) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ purpose: v[1], versions: versions[v[1]] }));
    const purpose = /^\/credentials\/status\/(revocation|suspension)$/.exec(path)?.[1];
    if (purpose) return void res.writeHead(200, { 'content-type': 'application/json' }).end(lists[purpose]);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such thing","code":"not_found"}');
  });
  closing.push(s);
  const url = (p: StatusPurpose) => `${s.url}/credentials/status/${p}`;
  const { keys, lines } = await manyJudgmentCredentials(1, () => [
    statusEntry(url('revocation'), 'revocation', INDEX),
    statusEntry(url('suspension'), 'suspension', INDEX),
  ]);
  const ttl = state.ttl === undefined ? 300_000 : state.ttl;
  lists = {
    revocation: await list(keys, url('revocation'), 'revocation', Boolean(state.revoked), ttl),
    suspension: await list(keys, url('suspension'), 'suspension', Boolean(state.suspended), ttl),
  };
  return { server: s, credential: JSON.parse(lines[0]) as Record<string, unknown>, issuer: keys.issuer.did };
}

/** The adapter, pinning `issuer`, on an injected clock. */
async function adapter(issuer: string | undefined, o: Partial<ServeOptions> = {}) {
  const server = await serveVerifier({ port: 0, issuer, at: AT, anchoredOn: `issuer ${issuer}`, ...o });
  closing.push(server);
  const post = async (path: string, body: unknown): Promise<Answer> => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };
  return { verify: (vc: unknown) => post('/credentials/verify', { verifiableCredential: vc }), post };
}

/** How many times the lists themselves (not their versions or the head) were fetched. */
const listFetches = (s: TestServer) => s.asked.filter((p) => /^\/credentials\/status\/(revocation|suspension)$/.test(p)).length;

describe('akas verify serve reads the status of the credentials it verifies (PROTOCOL 8.7)', () => {
  it('answers a revoked judgment credential verified: false, naming the purpose, the reason and the time; a changed one sends it nowhere', async () => {
    const { server, credential, issuer } = await statusNode({ revoked: true });
    const serve = await adapter(issuer);
    const changed = await serve.verify({ ...credential, credentialSubject: { ...(credential.credentialSubject as object), id: 'urn:x' } });
    expect(changed.status).toBe(400);
    expect(server.asked).toEqual([]); // the proof failed: no list is fetched on its word

    const r = await serve.verify(credential);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ verified: false, verdict: 'not verified', anchoredOn: `issuer ${issuer}` });
    expect(r.body.errors).toEqual([
      expect.objectContaining({
        type: REVOKED_PROBLEM,
        title: 'status.revocation',
        statusPurpose: 'revocation',
        reason: 'the key was stolen',
        changedAt: new Date(CHANGED_AT).toISOString(),
      }),
    ]);
    expect(r.body.checks).toEqual(
      expect.arrayContaining(['proof.signature', `status.list (${server.url}/credentials/status/revocation)`, 'status.suspension']),
    );
    expect(r.body.status).toMatchObject({ checked: true, source: 'node' });
  });

  it('answers a suspended one verified: false naming the suspension, and an unsuspended one verified: true with the status it speaks for', async () => {
    const suspended = await statusNode({ suspended: true });
    const s = await (await adapter(suspended.issuer)).verify(suspended.credential);
    expect(s.status).toBe(400);
    expect(s.body.verdict).toBe('not verified');
    expect(s.body.errors).toEqual([expect.objectContaining({ type: SUSPENDED_PROBLEM, statusPurpose: 'suspension', reason: 'under review' })]);

    const lifted = await statusNode({ unsuspended: true });
    const u = await (await adapter(lifted.issuer)).verify(lifted.credential);
    expect(u.status, JSON.stringify(u.body.errors)).toBe(200);
    expect(u.body).toMatchObject({ verified: true, verdict: 'verified', errors: [] });
    expect(u.body.checks).toEqual(expect.arrayContaining(['status.revocation', 'status.suspension']));
    expect(u.body.status).toEqual({
      checked: true,
      source: 'node',
      lists: [
        { purpose: 'revocation', at: '2026-01-02T00:00:00.000Z' },
        { purpose: 'suspension', at: '2026-01-02T00:00:00.000Z' },
      ],
    });
  });

  it('answers status unknown when the list cannot be read: verified: false with a STATUS_RETRIEVAL_ERROR, never 200', async () => {
    const { server, credential, issuer } = await statusNode();
    await server.close(); // the lists' node is gone
    const r = await (await adapter(issuer)).verify(credential);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ verified: false, verdict: 'status unknown', status: { checked: false } });
    expect(r.body.errors.map((e) => [e.type, e.title])).toEqual([
      ['https://www.w3.org/ns/credentials/status-list#STATUS_RETRIEVAL_ERROR', 'status.revocation'],
      ['https://www.w3.org/ns/credentials/status-list#STATUS_RETRIEVAL_ERROR', 'status.suspension'],
    ]);
  });

  it('fetches nothing for a credential of an issuer nobody pinned (unanchored, 400)', async () => {
    const { server, credential } = await statusNode({ revoked: true });
    const r = await (await adapter(undefined, { anchoredOn: null })).verify(credential);
    expect(r.status).toBe(400);
    expect(r.body.verdict).toBe('unanchored');
    expect(r.body.errors.map((e) => e.type)).toEqual([UNANCHORED_PROBLEM]);
    expect(server.asked).toEqual([]);
  });
});

describe("akas verify serve keeps what it read for the list's ttl", () => {
  it('reads a list again once its ttl has passed, not before', async () => {
    const { server, credential, issuer } = await statusNode({ ttl: 60_000 });
    let now = 1_000_000;
    const serve = await adapter(issuer, { now: () => now });
    expect((await serve.verify(credential)).status).toBe(200);
    expect(listFetches(server)).toBe(2); // the revocation and the suspension list
    now += 59_999;
    expect((await serve.verify(credential)).status).toBe(200);
    expect(listFetches(server)).toBe(2); // fresh: kept
    now += 2;
    expect((await serve.verify(credential)).status).toBe(200);
    expect(listFetches(server)).toBe(4); // expired: read again
  });

  it('keeps a list that says a longer ttl no longer than STATUS_CACHE_MAX_MS, and one that says none not at all', async () => {
    const long = await statusNode({ ttl: 86_400_000 });
    let now = 0;
    const serve = await adapter(long.issuer, { now: () => now });
    await serve.verify(long.credential);
    now += STATUS_CACHE_MAX_MS - 1;
    await serve.verify(long.credential);
    expect(listFetches(long.server)).toBe(2);
    now += 2;
    await serve.verify(long.credential);
    expect(listFetches(long.server)).toBe(4);

    const none = await statusNode({ ttl: null });
    const again = await adapter(none.issuer, { now: () => 0 });
    expect((await again.verify(none.credential)).status).toBe(200);
    expect((await again.verify(none.credential)).status).toBe(200);
    expect(listFetches(none.server)).toBe(4);
  });
});

describe('akas verify serve holds a presentation to the challenge and domain its options give', () => {
  const holder = signer();
  const presentation = (credential: unknown, proof: Record<string, unknown>) =>
    signJcs(
      { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiablePresentation'], holder: holder.did, verifiableCredential: [credential] },
      holder,
      { proofPurpose: 'authentication', ...proof },
    );

  it('refuses a challenge or domain the proof does not carry, and options that are not strings', async () => {
    const { credential, issuer } = await statusNode();
    const serve = await adapter(issuer);
    const vp = presentation(credential, { challenge: 'c-123', domain: 'auditor.example' });
    const ok = await serve.post('/presentations/verify', { verifiablePresentation: vp, options: { challenge: 'c-123', domain: 'auditor.example' } });
    expect(ok.status, JSON.stringify(ok.body.errors)).toBe(200);
    expect(ok.body.verdict).toBe('verified');

    const cases: Array<[Record<string, unknown>, unknown, string]> = [
      [vp, { challenge: 'c-999', domain: 'auditor.example' }, 'https://w3id.org/security#INVALID_CHALLENGE_ERROR'],
      [vp, { challenge: 'c-123', domain: 'other.example' }, 'https://w3id.org/security#INVALID_DOMAIN_ERROR'],
      [presentation(credential, {}), { challenge: 'c-123' }, 'https://w3id.org/security#INVALID_CHALLENGE_ERROR'],
      [presentation(credential, { challenge: 'c-123' }), { challenge: 'c-123', domain: 'auditor.example' }, 'https://w3id.org/security#INVALID_DOMAIN_ERROR'],
    ];
    for (const [doc, options, type] of cases) {
      const r = await serve.post('/presentations/verify', { verifiablePresentation: doc, options });
      expect(r.status, JSON.stringify(options)).toBe(400);
      expect(r.body.verified).toBe(false);
      expect(r.body.errors.map((e) => e.type)).toEqual([type]);
    }
    // A challenge of another type was ignored before, and the proof never held to it.
    for (const options of [{ challenge: 123 }, { domain: [7] }, { domain: [] }, 'challenge']) {
      const r = await serve.post('/presentations/verify', { verifiablePresentation: vp, options });
      expect(r.status, JSON.stringify(options)).toBe(400);
      expect(r.body.errors[0].type).toMatch(/PARSING_ERROR/);
    }
  });

  it('reads the status of the credentials a presentation carries: a revoked one fails it', async () => {
    const { credential, issuer } = await statusNode({ revoked: true });
    const r = await (await adapter(issuer)).post('/presentations/verify', { verifiablePresentation: presentation(credential, {}) });
    expect(r.status).toBe(400);
    expect(r.body.verdict).toBe('not verified');
    expect(r.body.errors).toEqual([expect.objectContaining({ type: REVOKED_PROBLEM, title: 'credential.status.revocation', statusPurpose: 'revocation' })]);
  });
});
