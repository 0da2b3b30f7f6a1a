// Id formats of PROTOCOL 1.8 (src/core/ids.ts).
import { describe, expect, it } from 'vitest';
import {
  base62,
  cryptoRandom,
  kindOfProposalId,
  newApiKey,
  newAttestationId,
  newChallengeId,
  newJudgmentId,
  newProposalId,
  newRecoveryToken,
  PROPOSAL_KINDS,
  rotatedApiKey,
  tagOf,
  type ProposalKind,
  type RandomSource,
} from '../../src/core/ids.js';

/** A source that repeats the given bytes forever. */
const fixed = (bytes: number[]): RandomSource => {
  let i = 0;
  return (n) => Buffer.from(Array.from({ length: n }, () => bytes[i++ % bytes.length]));
};

// PROTOCOL 6.1 prefixes by kind (written out here, not read from the code under test).
const PROTOCOL_PREFIXES: Record<ProposalKind, string> = {
  brief: 'prop_',
  capability: 'cprop_',
  graph: 'gprop_',
  artifact: 'aprop_',
  'eval-result': 'eprop_',
  'spec-sharpening': 'sprop_',
  'tree-expansion': 'tprop_',
};

describe('apiKey', () => {
  it("is 'ak_' + 40 base62 characters", () => {
    for (let i = 0; i < 200; i++) expect(newApiKey(cryptoRandom)).toMatch(/^ak_[0-9A-Za-z]{40}$/);
  });

  it('differs on every draw', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => newApiKey(cryptoRandom)));
    expect(keys.size).toBe(1000);
  });

  it('has its first 11 characters as the tag', () => {
    const key = newApiKey(cryptoRandom);
    expect(tagOf(key)).toBe(key.slice(0, 11));
    expect(tagOf(key)).toMatch(/^ak_[0-9A-Za-z]{8}$/);
  });

  it('keeps the tag as its prefix when rotated', () => {
    const key = newApiKey(cryptoRandom);
    const rotated = rotatedApiKey(cryptoRandom, tagOf(key));
    expect(rotated).toMatch(/^ak_[0-9A-Za-z]{40}$/);
    expect(tagOf(rotated)).toBe(tagOf(key));
    expect(rotated).not.toBe(key);
  });
});

describe('base62', () => {
  it('draws only from bytes below 248, so no character is favoured', () => {
    // 250 and 255 are skipped; 0 -> '0', 61 -> 'z', 62 -> '0', 247 -> 'z'.
    expect(base62(fixed([250, 0, 61, 255, 62, 247]), 8)).toBe('0z0z0z0z');
  });

  it('gets the length it asks for even when most bytes are rejected', () => {
    expect(base62(fixed([255, 255, 255, 1]), 5)).toBe('11111');
  });
});

describe('recoveryToken', () => {
  it("is 'rec_' + 43 base64url characters (32 random bytes)", () => {
    for (let i = 0; i < 200; i++) {
      const token = newRecoveryToken(cryptoRandom);
      expect(token).toMatch(/^rec_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    }
  });
});

describe('proposal ids', () => {
  it('cover the seven kinds of PROTOCOL 6.1', () => {
    expect([...PROPOSAL_KINDS].sort()).toEqual(Object.keys(PROTOCOL_PREFIXES).sort());
  });

  it.each(Object.entries(PROTOCOL_PREFIXES) as Array<[ProposalKind, string]>)(
    'are %s: the kind prefix + 16 lowercase hex, and name their kind back',
    (kind, prefix) => {
      const id = newProposalId(cryptoRandom, kind);
      expect(id).toMatch(new RegExp(`^${prefix}[0-9a-f]{16}$`));
      expect(kindOfProposalId(id)).toBe(kind);
    },
  );

  it('name no kind for what is not a proposal id', () => {
    for (const bad of [
      '',
      'prop_',
      'prop_0123456789abcde',
      'prop_0123456789abcdef0',
      'prop_0123456789ABCDEF',
      'xprop_0123456789abcdef',
      'jdg_0123456789abcdef',
      'prop-0123456789abcdef',
      ' prop_0123456789abcdef',
    ]) {
      expect(kindOfProposalId(bad)).toBeNull();
    }
  });
});

describe('judgment, challenge and attestation ids', () => {
  it.each([
    ['jdg_', newJudgmentId],
    ['ch_', newChallengeId],
    ['att_', newAttestationId],
  ] as const)("are '%s' + 16 lowercase hex", (prefix, make) => {
    expect(make(cryptoRandom)).toMatch(new RegExp(`^${prefix}[0-9a-f]{16}$`));
    expect(make(fixed([0xab]))).toBe(prefix + 'ab'.repeat(8));
  });
});
