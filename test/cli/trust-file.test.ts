// akas trust pin with judges (issue 32, 1; PROTOCOL 8.6): `--judges-of ID` and `--agent
// TAG` add the judges' keys to the trust file's `agents` section, each key in the window it was
// the judge's (a prior key closed, the current one open), so that `akas verify judgments --trust`
// is anchored on a file the node wrote, trust on first use as the rest of it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsSection } from '../../cli/commands/trust/trust-file.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';
import { agent, decide, proposeAs } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

let h: CliHarness;
let proposalId: string;
let judges: string[];
let detailFile: string;

beforeAll(async () => {
  h = await cliHarness();
  const decided = await decide(h.node, 'capability', { n: 7 });
  proposalId = decided.proposalId;
  judges = decided.judges.map((j) => j.tag);
  const detail = await h.node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` });
  detailFile = join(h.configDir, 'proposal.json');
  writeFileSync(detailFile, detail.body);
});
afterAll(() => h.close());

const trustFile = async (args: string[]) => {
  const r = await h.akas(['trust', 'pin', ...args]);
  expect(r.code, r.stderr).toBe(0);
  const path = join(h.configDir, `trust-${args.join('-')}.json`);
  writeFileSync(path, r.stdout);
  return { path, doc: JSON.parse(r.stdout), stderr: r.stderr };
};

describe('akas trust pin with judges', () => {
  it('pins every judge of a proposal (--judges-of), and verify judgments is anchored on the file: exit 0', async () => {
    const { path, doc, stderr } = await trustFile(['--judges-of', proposalId]);
    expect(doc.agents.map((a: { tag: string }) => a.tag).sort()).toEqual([...judges].sort());
    for (const a of doc.agents)
      expect(a).toMatchObject({ publicKey: expect.stringMatching(/^[0-9a-f]{64}$/), validFrom: expect.any(String), validUntil: null });
    expect(stderr).toContain('trust on first use');
    expect(stderr).toContain('the keys of 3 judge(s)');
    const r = await h.akas(['--json', 'verify', 'judgments', detailFile, '--trust', path]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ verdict: 'verified', anchored: true, pinnedBy: 'trust' });
  });

  it('pins only the judges named (--agent, repeatable): the others leave the verdict unanchored, exit 3', async () => {
    const { path, doc } = await trustFile(['--agent', judges[0], '--agent', judges[1]]);
    expect(doc.agents.map((a: { tag: string }) => a.tag)).toEqual([judges[0], judges[1]]);
    const r = await h.akas(['--json', 'verify', 'judgments', detailFile, '--trust', path]);
    expect(r.code, r.stdout).toBe(3);
    expect(r.json().unanchored.join(' ')).toContain(judges[2]);
  });

  it('refuses an unknown tag, and a proposal nobody judged yet, writing nothing', async () => {
    const unknown = await h.akas(['trust', 'pin', '--agent', 'ak_nobody00000']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
    // A proposal nobody has judged yet: no judge to pin, and no file that would look as if it pinned them.
    const pending = await proposeAs(h.node, await agent(h.node), 'brief', samplePayload('brief', 8));
    const none = await h.akas(['trust', 'pin', '--judges-of', pending.json().proposalId]);
    expect([none.code, none.stdout, none.stderr]).toEqual([2, '', expect.stringContaining('has no judgments yet')]);
  });

  it("puts a judge's prior keys in the windows they were its own, the current key open-ended", () => {
    const section = agentsSection([
      {
        tag: 'ak_x',
        signing: {
          publicKey: 'b'.repeat(64),
          validFrom: Date.UTC(2026, 1, 1),
          priorKeys: [{ publicKey: 'a'.repeat(64), validFrom: Date.UTC(2026, 0, 1), validUntil: Date.UTC(2026, 1, 1) }],
        },
      },
    ]);
    expect(section).toEqual([
      { tag: 'ak_x', publicKey: 'b'.repeat(64), validFrom: '2026-02-01T00:00:00.000Z', validUntil: null },
      { tag: 'ak_x', publicKey: 'a'.repeat(64), validFrom: '2026-01-01T00:00:00.000Z', validUntil: '2026-02-01T00:00:00.000Z' },
    ]);
  });
});
