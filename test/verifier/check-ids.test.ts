// The one registry of check ids (verifier/report.ts CHECKS, PROTOCOL 8.8): every id documented
// with its layer and meaning, both ways; the layer of a check always the registry's; a
// credential's checks named credential.ID where a bundle or presentation carries it; no id in
// the source that the registry lacks. And the one way input a verifier cannot read is reported:
// NotCheckableError from every verify function, never a report.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyCredential, verifyCredentialAsync } from '../../verifier/credential.js';
import { verifyBundle } from '../../verifier/bundle.js';
import { dsseKey, verifyDsse } from '../../verifier/dsse.js';
import { verifyNode } from '../../verifier/node.js';
import { verifyPresentation, verifyPresentationAsync } from '../../verifier/presentation.js';
import {
  CHECKS,
  type CheckId,
  type CheckInfo,
  Checks,
  credentialCheckId,
  layerOf,
  NotCheckableError,
  ownCheckId,
  readJsonInput,
} from '../../verifier/report.js';
import { verifySigstore } from '../../verifier/sigstore.js';
import { credentialStatusChecks } from '../../verifier/status-list.js';
import { verifyTlogProof } from '../../verifier/tlog-proof.js';
import { vectorText } from '../helpers/vectors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LAYERS = ['input', 'content', 'L1', 'L2', 'L3', 'CAS'];
const registry = Object.entries(CHECKS) as Array<[CheckId, CheckInfo]>;

describe('CHECKS', () => {
  it.each(registry)('%s has a layer and a one-line meaning', (id, info) => {
    expect(id).toMatch(/^[a-z][A-Za-z]*(\.[a-z][A-Za-z-]*)*$/);
    expect(LAYERS).toContain(info.layer);
    expect(info.meaning.trim().length).toBeGreaterThan(15);
    expect(info.meaning).not.toMatch(/[\n|`]/);
  });

  it('names no check of its own as a credential check nested (credential.ID is one reading only)', () => {
    const nestable = registry.filter(([, info]) => info.credential).map(([id]) => `credential.${id}`);
    expect(nestable.length).toBeGreaterThan(10);
    expect(nestable.filter((id) => Object.hasOwn(CHECKS, id))).toEqual([]);
  });
});

describe('docs/PROTOCOL.md section 8.8', () => {
  const text = readFileSync(resolve(ROOT, 'docs/PROTOCOL.md'), 'utf8');
  const section = text.slice(text.indexOf('### 8.8 Check ids'), text.indexOf('\n## 9. '));
  const rows = new Map(
    [...section.matchAll(/^\| `([^`]+)` \| (\w+) \| (credential)? ?\| (.+) \|$/gm)].map((m) => [
      m[1],
      { layer: m[2], credential: m[3] === 'credential', meaning: m[4] },
    ]),
  );

  it('lists every id of the registry with its layer, whether a credential holds it, and its meaning word for word', () => {
    expect(rows.size).toBeGreaterThan(50);
    const wrong = registry
      .filter(([id, info]) => {
        const row = rows.get(id);
        return !row || row.layer !== info.layer || row.credential !== (info.credential === true) || row.meaning !== info.meaning;
      })
      .map(([id, info]) => `| \`${id}\` | ${info.layer} | ${info.credential ? 'credential ' : ''}| ${info.meaning} |`);
    expect(wrong, 'rows PROTOCOL 8.8 should have').toEqual([]);
  });

  it('lists no id the registry lacks', () => {
    expect([...rows.keys()].filter((id) => !Object.hasOwn(CHECKS, id))).toEqual([]);
  });
});

/** Every .ts file under dir. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

describe('ids in the source', () => {
  // `add({ id: 'x'`, and a check built by hand: `id: 'x'` followed by its layer.
  const ADDED = /\.add\(\{\s*id: '([^']+)'/g;
  const BUILT = /\bid: '([^']+)'(?: as const)?,\s*layer:/g;
  const files = ['verifier', 'cli/commands/verify', 'src/explorer/client'].flatMap((d) => sourceFiles(resolve(ROOT, d)));
  const found = files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(ADDED), ...text.matchAll(BUILT)].map((m) => ({ id: m[1], where: relative(ROOT, file) }));
  });

  it('are found (the scan is not empty) and are all in CHECKS', () => {
    expect(found.length).toBeGreaterThan(100);
    expect(found.filter((f) => !Object.hasOwn(CHECKS, f.id)).map((f) => `${f.where}: ${f.id}`)).toEqual([]);
  });
});

describe('Checks.add', () => {
  it('takes an options object, and the layer from the registry', () => {
    const c = new Checks();
    expect(c.add({ id: 'shape', what: 'a JSON object', valid: false, why: 'an array' })).toBe(false);
    expect(c.add({ id: 'issuer.pinned', what: 'the issuer is pinned', valid: null, why: undefined, subject: 'x', anchor: true })).toBe(null);
    expect(c.list).toStrictEqual([
      { id: 'shape', layer: 'input', what: 'a JSON object', valid: false, why: 'an array' },
      { id: 'issuer.pinned', layer: 'L1', what: 'the issuer is pinned', valid: null, subject: 'x', anchor: true },
    ]);
    expect(c.report()).toMatchObject({ verified: false, anchored: false, unanchored: ['issuer.pinned (x)'] });
  });

  it("names a credential's check credential.ID, with the layer of ID, and reads it back", () => {
    expect(credentialCheckId('proof.signature')).toBe('credential.proof.signature');
    expect(layerOf('credential.proof.signature')).toBe('L1');
    expect(layerOf('credential.status.revocation')).toBe('L1');
    expect(ownCheckId('credential.proof.signature')).toBe('proof.signature');
    // The bundle's own checks about a credential, and checks no credential holds, stay as they are.
    expect(credentialCheckId('log.key')).toBe('log.key');
    expect(ownCheckId('credential.content')).toBe('credential.content');
  });

  it('reports every check of a credential, good or bad, under an id the registry marks as a credential check', () => {
    const signed = vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/signedJCS.json');
    const doc = JSON.parse(signed);
    const changed = { ...doc, validFrom: 'yesterday', proof: [doc.proof, { ...doc.proof, proofValue: 'z1' }] };
    const ids = new Set(
      [
        verifyCredential(signed),
        verifyCredential(doc, { issuer: 'did:key:z6MkOther' }),
        verifyCredential(changed, { checkJudgeSignature: true }),
        verifyCredential([1]),
      ].flatMap((r) => r.checks.map((c) => c.id)),
    );
    expect(ids.size).toBeGreaterThan(12);
    expect([...ids].filter((id) => !(CHECKS as Record<string, CheckInfo>)[id]?.credential)).toEqual([]);
  });
});

describe('a status entry', () => {
  const entry = (statusPurpose: string) => ({
    credentialStatus: { type: 'BitstringStatusListEntry', statusPurpose, statusListIndex: '7', statusListCredential: 'https://example.org/list' },
  });
  const idsOf = (credential: unknown) => {
    const c = new Checks();
    credentialStatusChecks(c, credential, new Map());
    return c.list.map((k) => [k.id, k.what]);
  };

  it('is checked under the id of its purpose, and one of another purpose under status.other, the purpose in its text', () => {
    expect(idsOf(entry('revocation'))[0][0]).toBe('status.revocation');
    expect(idsOf(entry('message'))[0][0]).toBe('status.message');
    expect(idsOf(entry('made-up purpose'))).toEqual([['status.other', expect.stringContaining('made-up purpose')]]);
    expect(idsOf(entry('__proto__'))[0][0]).toBe('status.other');
  });
});

describe('input a verifier cannot read', () => {
  const twice = '{"payload": "a", "payload": "b"}';
  const garbage = 'not json at all';
  const key = dsseKey('-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n');
  const calls: Array<[string, (input: string) => unknown]> = [
    ['verifyCredential', (i) => verifyCredential(i)],
    ['verifyPresentation', (i) => verifyPresentation(i)],
    ['verifyBundle', (i) => verifyBundle(i)],
    ['verifyNode', (i) => verifyNode(i)],
    ['verifyDsse', (i) => verifyDsse(i, key)],
    ['verifySigstore', (i) => verifySigstore(i, key)],
  ];

  it.each(calls)('%s throws NotCheckableError (invalid_json) for text that is not strict JSON, and answers no report', async (_name, call) => {
    for (const input of [twice, garbage, new TextEncoder().encode(garbage)]) {
      let answer: unknown;
      let error: unknown;
      try {
        answer = await call(input as string);
      } catch (e) {
        error = e;
      }
      expect(answer).toBeUndefined();
      expect(error).toBeInstanceOf(NotCheckableError);
      expect(NotCheckableError.is(error)).toBe(true);
      expect(error).toMatchObject({ name: 'NotCheckableError', code: 'invalid_json' });
    }
  });

  it('is rejected with, not thrown, by the asynchronous forms', async () => {
    const credential = verifyCredentialAsync(garbage);
    const presentation = verifyPresentationAsync(twice);
    await expect(credential).rejects.toMatchObject({ code: 'invalid_json' });
    await expect(presentation).rejects.toBeInstanceOf(NotCheckableError);
  });

  it('is a tlog-proof text that does not parse as one: not_checkable', () => {
    let error: unknown;
    try {
      verifyTlogProof('c2sp.org/tlog-proof@v1\nindex 01\n', undefined);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'NotCheckableError', code: 'not_checkable' });
  });

  it('is read by one function for every verifier: parsed values pass as they are', () => {
    const parsed = { a: 1 };
    expect(readJsonInput(parsed, 'a thing')).toBe(parsed);
    expect(readJsonInput('{"a": 1}', 'a thing')).toEqual(parsed);
    expect(() => readJsonInput('{"a": 1, "a": 2}', 'a thing')).toThrow(/^not a thing: /);
  });
});
