// `akas serve --log-origin` (PROTOCOL 9.5): the log's origin is chosen at the first start and
// kept; a data folder made without one keeps akas/<fingerprint>; a later start asking for
// another origin is refused rather than silently signing a new log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cryptoRandom, parseVerifierKey } from '../../src/core/index.js';
import { loadOrCreateNodeKeys, NodeKeysError } from '../../src/store/index.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'akas-origin-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the log origin', () => {
  it('is the one given at the first start, kept on later starts, and names the log key', () => {
    const dir = fresh();
    const keys = loadOrCreateNodeKeys(dir, cryptoRandom, 0, 'example.com/akas');
    expect(keys.log.origin).toBe('example.com/akas');
    expect(parseVerifierKey(keys.log.verifierKey)!.name).toBe('example.com/akas');
    expect(loadOrCreateNodeKeys(dir, cryptoRandom, 1).log.origin).toBe('example.com/akas');
    expect(loadOrCreateNodeKeys(dir, cryptoRandom, 1, 'example.com/akas').log.verifierKey).toBe(keys.log.verifierKey);
  });

  it('stays akas/<fingerprint> for a folder made without one, and another origin later is refused', () => {
    const dir = fresh();
    const keys = loadOrCreateNodeKeys(dir, cryptoRandom, 0);
    expect(keys.log.origin).toMatch(/^akas\/z6Mk/);
    expect(() => loadOrCreateNodeKeys(dir, cryptoRandom, 1, 'example.com/akas')).toThrow(NodeKeysError);
    const named = fresh();
    loadOrCreateNodeKeys(named, cryptoRandom, 0, 'example.com/a');
    expect(() => loadOrCreateNodeKeys(named, cryptoRandom, 1, 'example.com/b')).toThrow(/fixed at its first start/);
  });

  it('refuses an origin that cannot be a note key name', () => {
    expect(() => loadOrCreateNodeKeys(fresh(), cryptoRandom, 0, 'has space')).toThrow(TypeError);
    expect(() => loadOrCreateNodeKeys(fresh(), cryptoRandom, 0, 'a+b')).toThrow(TypeError);
  });
});
