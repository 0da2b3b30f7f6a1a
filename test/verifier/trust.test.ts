// The trust file of verifier/trust.ts (PROTOCOL 8.6): its C2SP tlog-policy (log, witness, group
// and quorum lines, as https://c2sp.org/tlog-policy defines them), the quorum of groups met by
// the witnesses that cosigned, and the refusals that make a wrong file exit 2, never pin less.
import { describe, expect, it } from 'vitest';
import { cosign, cosignerVerifierKey, formatCheckpoint, generateKeyPair, signNote } from '../../src/core/index.js';
import { verifierKeyString } from '../../src/core/note.js';
import { checkWitnesses, Checks } from '../../verifier/index.js';
import { parseTlogPolicy, parseTrust, quorumHolds } from '../../verifier/trust.js';

const log = generateKeyPair();
const logKey = verifierKeyString('example.com/log', log.publicKey);
const witness = (name: string) => {
  const k = generateKeyPair();
  return { name, seed: k.privateKey, vkey: cosignerVerifierKey(name, k.publicKey) };
};
const [x1, x2, x3, y1, y2] = ['x1', 'x2', 'x3', 'y1', 'y2'].map((n) => witness(`${n}.example/w`));
const groups = [
  `log ${logKey}`,
  '',
  '# the X operators: two of three',
  `witness X1 ${x1.vkey} https://x1.example/`,
  `witness X2 ${x2.vkey}`,
  `\twitness X3 ${x3.vkey}  `,
  'group X-witnesses 2 X1 X2 X3',
  `witness Y1 ${y1.vkey}`,
  `witness Y2 ${y2.vkey}`,
  'group Y-witnesses any Y1 Y2',
  'group X-and-Y all X-witnesses Y-witnesses',
  'quorum X-and-Y',
].join('\n');
const text = formatCheckpoint({ origin: 'example.com/log', size: 9, rootHash: Buffer.alloc(32, 3) });
const cosigned = (...ws: Array<typeof x1>) => signNote(text, 'example.com/log', log.privateKey) + ws.map((w) => cosign(text, w, 100)).join('');

describe('C2SP tlog-policy (verifier/trust.ts)', () => {
  it("reads the spec's example shape: log keys, witnesses, groups of groups, one quorum", () => {
    const p = parseTlogPolicy(groups);
    expect(p.logs).toEqual([logKey]);
    expect(p.witnesses).toEqual([x1, x2, x3, y1, y2].map((w) => w.vkey));
    expect(p.quorum).toMatchObject({ group: 'X-and-Y', k: 2 });
    expect(parseTlogPolicy('quorum none\n').quorum).toBeNull();
  });

  it('meets the quorum of groups only with enough of each group, as a checkpoint check', () => {
    const p = parseTlogPolicy(groups);
    const run = (note: string) => {
      const c = new Checks();
      return checkWitnesses(c, note, { keys: p.witnesses, rule: p.quorum! });
    };
    expect(run(cosigned(x1, x3, y2))).toBe(true);
    expect(run(cosigned(x1, y1, y2))).toBe(false); // one of X only
    expect(run(cosigned(x1, x2, x3))).toBe(false); // no Y
    expect(quorumHolds(p.quorum!, new Set())).toBe(false);
  });

  it('refuses what the spec refuses, naming the line', () => {
    const bad: Array<[string, RegExp]> = [
      [`log ${logKey}`, /no quorum line/],
      ['quorum none\nquorum none', /exactly one quorum line/],
      [`witness X1 ${x1.vkey}\nquorum X2`, /X2 is not a witness or group defined on a line above/],
      [`witness X1 ${x1.vkey}\ngroup G any X1 none\nquorum G`, /none cannot be a group member/],
      [`witness X1 ${x1.vkey}\ngroup G 2 X1\nquorum G`, /threshold 2 is not all, any, or 1 to 1/],
      [`witness X1 ${x1.vkey}\nwitness X2 ${x1.vkey}\nquorum X1`, /the same witness key twice/],
      [`witness quorum ${x1.vkey}\nquorum none`, /reserved/],
      ['log not-a-key\nquorum none', /not a C2SP Ed25519 note verifier key/],
      ['quorom none', /not a tlog-policy keyword/],
    ];
    for (const [policy, why] of bad) expect(() => parseTlogPolicy(policy), policy).toThrow(why);
  });
});

describe('the trust file (verifier/trust.ts)', () => {
  const issuer = 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2';
  const file = (over: Record<string, unknown> = {}) => JSON.stringify({ type: 'akas.trust.v1', issuers: [{ did: issuer }], policy: 'quorum none', ...over });

  it('reads issuers with their windows (null or absent: unbounded) and the policy', () => {
    const t = parseTrust(file({ issuers: [{ did: issuer, validFrom: '2026-01-01T00:00:00Z', validUntil: null }], source: 'tofu' }));
    expect(t).toMatchObject({ source: 'tofu', issuers: [{ did: issuer, validFrom: Date.UTC(2026, 0, 1), validUntil: Infinity }] });
  });

  it('refuses a file that is not one, or pins nothing, or has a window that is not a dateTimeStamp', () => {
    expect(() => parseTrust('{"issuers": []}')).toThrow(/not a trust file/);
    expect(() => parseTrust(file({ issuers: [] }))).toThrow(/pins nothing/);
    expect(() => parseTrust(file({ issuers: [{ did: 'did:web:example.com' }] }))).toThrow(/not an Ed25519 did:key/);
    expect(() => parseTrust(file({ issuers: [{ did: issuer, validUntil: '2026-01-01' }] }))).toThrow(/dateTimeStamp/);
    expect(() => parseTrust(file({ issuers: [{ did: issuer, validFrom: '2026-01-02T00:00:00Z', validUntil: '2026-01-01T00:00:00Z' }] }))).toThrow(
      /validFrom is not before validUntil/,
    );
    expect(() => parseTrust(file({ policy: undefined }))).toThrow(/policy is not a string/);
    expect(() => parseTrust('{"type": "akas.trust.v1", "type": 1}')).toThrow(/not strict JSON/);
  });
});
