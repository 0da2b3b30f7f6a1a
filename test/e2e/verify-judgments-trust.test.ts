// `akas verify judgments --trust FILE` (issue 32, 1; PROTOCOL 8.6), through the built CLI: the
// verdict rests on the judges' keys, so a trust file anchors it when its `agents` section pins
// each judge's key in a window that holds when the judgment arrived: verified (0) then;
// unanchored (3) naming the judges it does not pin (a trust file written before the section,
// or one pinning some judges only); failed (1) for a key other than the one pinned, a window
// that had ended, or a signature that does not hold; a bad agents section or --trust with
// --agent, exit 2. The single file answers the same. The data comes from a node in this
// process; the checks run offline.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNode, type TestNode } from '../helpers/app.js';
import { runCli, tempDir } from '../helpers/e2e.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
let work: string;
let detailFile: string;
let detail: { judgments: Array<{ judgmentId: string; agentTag: string; receivedAt: number; rationale: string }> };
const profiles: Array<{ tag: string; signing: { publicKey: string; validFrom: number } }> = [];
const api = async (url: string) => (await node.app.inject({ url })).json();

beforeAll(async () => {
  node = await testNode();
  work = tempDir('akas-judgments-trust-');
  const { proposalId } = await decide(node, 'capability', { n: 5 });
  detail = await api(`/api/knowledge/proposals/${proposalId}`);
  detailFile = join(work, 'proposal.json');
  writeFileSync(detailFile, JSON.stringify(detail));
  for (const j of detail.judgments) profiles.push(await api(`/api/agents/${j.agentTag}`));
});

afterAll(async () => {
  await node?.close();
});

const iso = (ms: number) => new Date(ms).toISOString();
/** A judge's key as a trust file pins it, from its public profile (open-ended unless told). */
const pin = (p: (typeof profiles)[number], window: { validFrom?: string | null; validUntil?: string | null } = {}) => ({
  tag: p.tag,
  publicKey: p.signing.publicKey,
  validFrom: window.validFrom === undefined ? iso(p.signing.validFrom) : window.validFrom,
  validUntil: window.validUntil ?? null,
});

let n = 0;
/** Writes a trust file pinning the node's issuer and log (as akas trust pin does), with agents when given. */
function trustFile(agents?: unknown): string {
  const path = join(work, `trust-${n++}.json`);
  const doc = {
    type: 'akas.trust.v1',
    issuers: [{ did: node.keys.issuer.did, validFrom: null, validUntil: null }],
    policy: `log ${node.keys.log.verifierKey}\nquorum none\n`,
    ...(agents === undefined ? {} : { agents }),
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const verify = (...args: string[]) => runCli(['verify', 'judgments', ...args]);
/** The single-file verifier, as an auditor runs it with no package installed. */
const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));

describe('akas verify judgments --trust FILE', () => {
  it("is anchored when the trust file pins every judge's key: exit 0", async () => {
    const trust = trustFile(profiles.map((p) => pin(p)));
    const r = await verify(detailFile, '--trust', trust);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('3/3 judgments');
    expect(r.stdout).toContain('key the trust file pins, in its window');
    const json = await verify(detailFile, '--trust', trust, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ verdict: 'verified', verified: true, anchored: true, unanchored: [], pinnedBy: 'trust' });
    // The single file says the same, and exit 3 for a trust file that pins no judge.
    expect(spawnSync(process.execPath, [SINGLE, 'verify', 'judgments', detailFile, '--trust', trust]).status).toBe(0);
    expect(spawnSync(process.execPath, [SINGLE, 'verify', 'judgments', detailFile, '--trust', trustFile()]).status).toBe(3);
  });

  it('is unanchored (exit 3) naming the judges a trust file does not pin, a file written before the agents section included', async () => {
    const old = await verify(detailFile, '--trust', trustFile());
    expect(old.code, old.stdout + old.stderr).toBe(3);
    const last = old.stdout.trim().split('\n').at(-1)!;
    expect(last).toMatch(/^UNANCHORED — .* pins no key for /);
    for (const p of profiles) expect(last).toContain(p.tag);
    expect(last).toContain('an agents entry {tag, publicKey, validFrom, validUntil} for each judge');
    const some = await verify(detailFile, '--trust', trustFile(profiles.slice(0, 2).map((p) => pin(p))), '--json');
    expect(some.code).toBe(3);
    const report = JSON.parse(some.stdout);
    expect(report).toMatchObject({ verdict: 'unanchored', verified: false, anchored: false });
    expect(report.unanchored).toEqual([`judge.key (${detail.judgments[2].judgmentId} by ${profiles[2].tag})`]);
  });

  it('fails (exit 1) on a key the trust file does not pin for that judge, or a window that had ended when the judgment arrived', async () => {
    // The first judge pinned with the second judge's key.
    const swapped = trustFile([{ ...pin(profiles[0]), publicKey: profiles[1].signing.publicKey }, pin(profiles[1]), pin(profiles[2])]);
    const r = await verify(detailFile, '--trust', swapped);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(`FAIL  ${detail.judgments[0].judgmentId}  by ${profiles[0].tag}  (NOT a key the trust file pins`);
    expect(r.stdout).toContain(`the key was not ${profiles[0].tag}'s when the judgment arrived (per the keys the trust file pins)`);
    const ended = iso(detail.judgments[1].receivedAt - 1);
    const expired = trustFile([pin(profiles[0]), pin(profiles[1], { validFrom: null, validUntil: ended }), pin(profiles[2])]);
    const e = await verify(detailFile, '--trust', expired);
    expect(e.code, e.stdout + e.stderr).toBe(1);
    expect(e.stdout).toContain(`FAIL  ${detail.judgments[1].judgmentId}`);
  });

  it('fails (exit 1) on a judgment changed after its judge signed it, every key pinned', async () => {
    const tampered = join(work, 'tampered.json');
    const changed = structuredClone(detail);
    changed.judgments[0].rationale = 'Changed after the judge signed it.';
    writeFileSync(tampered, JSON.stringify(changed));
    const r = await verify(tampered, '--trust', trustFile(profiles.map((p) => pin(p))));
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(`FAIL  ${detail.judgments[0].judgmentId}`);
  });

  it('refuses a malformed agents section and --trust with --agent: exit 2', async () => {
    const bad = await verify(detailFile, '--trust', trustFile([{ tag: profiles[0].tag, publicKey: 'not hex', validFrom: null, validUntil: null }]), '--json');
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).toContain('not_a_trust_file');
    expect(bad.stderr + bad.stdout).toContain('agents[0].publicKey');
    const window = await verify(detailFile, '--trust', trustFile([{ ...pin(profiles[0]), validUntil: 'yesterday' }]));
    expect(window.code).toBe(2);
    const profile = join(work, 'profile.json');
    writeFileSync(profile, JSON.stringify(profiles[0]));
    const mixed = await verify(detailFile, '--trust', trustFile(profiles.map((p) => pin(p))), '--agent-file', profile);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--trust pins the judges');
  });
});
