// The journal (cli/commands/journal/journal.ts, issue 54): a sending is journaled pending before it goes and settled
// by the node's answer; what the monitor matches against the log is what was accepted, or a
// sending never settled whose payload is exactly the entry's, never a refused one nor one of
// another payload for the same proposal. Its file is written through cli/kit/safe-file.ts.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../cli/kit/errors.js';
import {
  appendJournal,
  attestationHash,
  holdsAttestation,
  holdsJudgment,
  type JournalEntry,
  journalHolds,
  journalPath,
  payloadHash,
  readJournal,
  sendJournaled,
  toolRefusalOf,
} from '../../cli/commands/journal/journal.js';

let dir: string;
let saved: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-journal-'));
  saved = process.env.AKAS_CONFIG_DIR;
  process.env.AKAS_CONFIG_DIR = dir;
});
afterEach(() => {
  if (saved === undefined) delete process.env.AKAS_CONFIG_DIR;
  else process.env.AKAS_CONFIG_DIR = saved;
  rmSync(dir, { recursive: true, force: true });
});

const target = { profile: 'owner', baseUrl: 'http://127.0.0.1:1' };
const TAG = 'ak_abcdefgh';
const PROPOSAL = 'bprop_0123456789abcdef';
// The payload the owner signed, and another one of the same proposal (a thief's).
const OWNER = { signingPayload: '{"owner":1}', signature: 'a'.repeat(128), publicKey: 'b'.repeat(64) };
const THIEF = { signingPayload: '{"thief":1}', signature: 'c'.repeat(128), publicKey: 'b'.repeat(64) };

const pendingJudgment = (signed = OWNER) =>
  appendJournal(target, {
    kind: 'judgment',
    payloadSha256: payloadHash(signed.signingPayload),
    agent: TAG,
    publicKey: signed.publicKey,
    subject: PROPOSAL,
    signature: signed.signature,
  });

const refusal = (status: number, code: string) => CliError.fromNode(status >= 500 ? 2 : 1, `${code} (HTTP ${status})`, { status, code, error: code });
const holds = () => journalHolds(readJournal(target.profile).entries);
const entry = (judgmentId: string) => ({ proposalId: PROPOSAL, judgmentId });

describe('the journal settles what it sent by the answer', () => {
  it('writes a pending line before sending and an accepted one naming the judgmentId after', async () => {
    const pending = pendingJudgment();
    const sent = await sendJournaled(
      target,
      pending,
      async () => {
        // Durable before the request goes.
        expect(readJournal(target.profile).entries).toMatchObject([{ state: 'pending', request: pending.request }]);
        return { judgmentId: 'jdg_owner' };
      },
      (a) => ({ state: 'accepted', judgmentId: a.judgmentId }),
    );
    expect(sent).toEqual({ judgmentId: 'jdg_owner' });
    const lines = readJournal(target.profile).entries;
    expect(lines.map((l) => [l.state, l.request])).toEqual([
      ['pending', pending.request],
      ['accepted', pending.request],
    ]);
    expect(lines[1]).toMatchObject({ judgmentId: 'jdg_owner', payloadSha256: pending.payloadSha256, signature: OWNER.signature });
    expect(await holdsJudgment(holds(), entry('jdg_owner'), async () => null)).toBe(true);
  });

  it("a refusal (409: the thief judged first) excuses nothing, not even the thief's judgment of the same payload", async () => {
    await expect(
      sendJournaled(
        target,
        pendingJudgment(),
        () => Promise.reject(refusal(409, 'already_judged')),
        () => undefined,
      ),
    ).rejects.toThrow();
    expect(readJournal(target.profile).entries.map((l) => l.state)).toEqual(['pending', 'refused']);
    expect(readJournal(target.profile).entries[1]).toMatchObject({ status: 409, code: 'already_judged' });
    expect(await holdsJudgment(holds(), entry('jdg_thief'), async () => THIEF)).toBe(false);
    expect(await holdsJudgment(holds(), entry('jdg_thief'), async () => OWNER)).toBe(false);
  });

  it('no answer, or a 5xx, leaves the line pending: it excuses the judgment whose payload and signature are exactly its own, and no other', async () => {
    await expect(
      sendJournaled(
        target,
        pendingJudgment(),
        () => Promise.reject(refusal(503, 'storage_unavailable')),
        () => undefined,
      ),
    ).rejects.toThrow();
    await expect(
      sendJournaled(
        target,
        pendingJudgment(),
        () => Promise.reject(new Error('ECONNRESET')),
        () => undefined,
      ),
    ).rejects.toThrow();
    expect(readJournal(target.profile).entries.map((l) => l.state)).toEqual(['pending', 'pending']);
    const h = holds();
    expect(await holdsJudgment(h, entry('jdg_mine'), async () => OWNER)).toBe(true);
    expect(await holdsJudgment(h, entry('jdg_thief'), async () => THIEF)).toBe(false);
    // The same payload under another signature is not what this machine sent.
    expect(await holdsJudgment(h, entry('jdg_thief'), async () => ({ ...OWNER, signature: 'd'.repeat(128) }))).toBe(false);
    // The node not showing the judgment excuses nothing.
    expect(await holdsJudgment(h, entry('jdg_mine'), async () => null)).toBe(false);
  });

  it('an accepted judgmentId excuses that judgment only, and only for its proposal', async () => {
    await sendJournaled(
      target,
      pendingJudgment(),
      async () => ({}),
      () => ({ state: 'accepted', judgmentId: 'jdg_owner' }),
    );
    const h = holds();
    expect(await holdsJudgment(h, entry('jdg_other'), async () => OWNER)).toBe(false);
    expect(await holdsJudgment(h, { proposalId: 'bprop_ffffffffffffffff', judgmentId: 'jdg_owner' }, async () => OWNER)).toBe(false);
  });

  it('reads lines written before settling existed as pending', async () => {
    const path = journalPath(target.profile);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const old: JournalEntry = {
      kind: 'judgment',
      payloadSha256: payloadHash(OWNER.signingPayload),
      node: target.baseUrl,
      agent: TAG,
      publicKey: OWNER.publicKey,
      subject: PROPOSAL,
      at: 1,
    };
    writeFileSync(path, `${JSON.stringify(old)}\n`, { mode: 0o600 });
    const h = holds();
    expect(await holdsJudgment(h, entry('jdg_mine'), async () => OWNER)).toBe(true);
    expect(await holdsJudgment(h, entry('jdg_thief'), async () => THIEF)).toBe(false);
  });

  it('an attestation accepted excuses its own entry; one refused excuses nothing; one never settled excuses its {kind, body}', async () => {
    const attest = (n: number) =>
      appendJournal(target, {
        kind: 'attestation',
        payloadSha256: attestationHash('review.attestation.v1', { n }),
        agent: TAG,
        publicKey: null,
        subject: 'review',
      });
    await sendJournaled(
      target,
      attest(1),
      async () => ({ hash: 'e1' }),
      (a) => ({ state: 'accepted', entryHash: a.hash }),
    );
    await expect(
      sendJournaled(
        target,
        attest(2),
        () => Promise.reject(refusal(400, 'invalid_kind')),
        () => undefined,
      ),
    ).rejects.toThrow();
    attest(3);
    const h = holds();
    expect(holdsAttestation(h, 'review.attestation.v1', { n: 1 }, 'e1')).toBe(true);
    // The same body in another entry (sent again with the stolen api key) is not the one accepted.
    expect(holdsAttestation(h, 'review.attestation.v1', { n: 1 }, 'e9')).toBe(false);
    expect(holdsAttestation(h, 'review.attestation.v1', { n: 2 }, 'e2')).toBe(false);
    expect(holdsAttestation(h, 'review.attestation.v1', { n: 3 }, 'e3')).toBe(true);
  });

  it("reads an MCP tool error's code as the node's refusal only when its status is a 4xx", () => {
    expect(toolRefusalOf({ code: 'already_judged' })).toEqual({ status: 409, code: 'already_judged' });
    expect(toolRefusalOf({ code: 'internal_error' })).toBeUndefined();
    expect(toolRefusalOf({ code: 'no_such_code' })).toBeUndefined();
  });
});

describe("the journal's file", () => {
  it('is never written through a symbolic link planted at its path', () => {
    const path = journalPath(target.profile);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'keep\n', { mode: 0o600 });
    symlinkSync(victim, path);
    expect(() => pendingJudgment()).toThrow(expect.objectContaining({ code: 'unsafe_file' }));
    expect(readFileSync(victim, 'utf8')).toBe('keep\n');
  });

  it('is refused, not appended to, when it has a mode it did not set', () => {
    pendingJudgment();
    const path = journalPath(target.profile);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o644);
    const before = readFileSync(path, 'utf8');
    expect(() => pendingJudgment()).toThrow(expect.objectContaining({ code: 'unsafe_file' }));
    expect(readFileSync(path, 'utf8')).toBe(before);
  });
});
