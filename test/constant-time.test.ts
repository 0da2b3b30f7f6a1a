// Secrets are compared in constant time (ARCHITECTURE 4 "secrets at rest"): every equality
// test in src/, cli/ and verifier/ whose operands name a secret (an api key or its hash, a
// recovery token, a claim secret, a MAC, a private key) must go through safeEqual
// (node:crypto's timingSafeEqual), never === or !==. The source is parsed with TypeScript's
// own parser; the few comparisons of public values that happen to carry such a name are
// listed below with the reason they are public.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { safeEqual } from '../src/core/index.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SECRET = /(apiKey|recoveryToken|claimSecret|secret|keyHash|tokenHash|\bmac\b|hmac|privateKey|signature)/i;

/** Comparisons of public values whose operands merely look like secrets: `file: expression` -> why it is public. */
const PUBLIC: Record<string, string> = {
  "verifier/lookup.ts: (doc as Json).keyHash === lookupKeyHash(key).toString('hex')": "a lookup key's hash is public (the key itself is in the route)",
  'src/core/note.ts: keyHashOf(parts.name, parts.key) !== parts.hash': 'a C2SP note key hash identifies a public key',
  "src/core/note.ts: keyHashOf(parts.name, Buffer.from(publicKey, 'hex')) !== parts.hash": 'a C2SP note key hash identifies a public key',
  'src/core/note.ts: k.keyHash.toLowerCase() !== keyHash': 'a C2SP note key hash identifies a public key',
  'verifier/bundle.ts: s.judgeSignature === sig.signature': "a judge's Ed25519 signature is public (it is in the bundle)",
  'verifier/judgment.ts: js.signature !== signature': "a judge's Ed25519 signature is public (the attestation restates it)",
  'cli/commands/journal/journal.ts: u.signature === shown.signature': "a judge's Ed25519 signature is public (the node shows it in the proposal's detail)",
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** Every ==, ===, != or !== of a source text whose operands name a secret, neither side a literal. */
function comparisonsIn(fileName: string, text: string): string[] {
  const found: string[] = [];
  const src = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const literal = (n: ts.Expression) =>
    ts.isStringLiteralLike(n) ||
    ts.isNumericLiteral(n) ||
    ts.isTypeOfExpression(n) ||
    [ts.SyntaxKind.NullKeyword, ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword].includes(n.kind) ||
    n.getText(src) === 'undefined';
  const visit = (n: ts.Node) => {
    if (ts.isBinaryExpression(n) && EQUALITY.has(n.operatorToken.kind) && !literal(n.left) && !literal(n.right)) {
      if (SECRET.test(n.left.getText(src)) || SECRET.test(n.right.getText(src))) found.push(`${fileName}: ${n.getText(src)}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return found;
}

function secretComparisons(): string[] {
  return ['src', 'cli', 'verifier']
    .flatMap((d) => sources(join(ROOT, d)))
    .flatMap((file) => comparisonsIn(relative(ROOT, file).split('\\').join('/'), readFileSync(file, 'utf8')));
}

describe('constant-time comparison of secrets', () => {
  it('no secret is compared with == or ===', () => {
    const found = secretComparisons();
    expect(found.filter((c) => !(c in PUBLIC))).toEqual([]);
    // The list of public exceptions stays true: each one is still in the code.
    expect(Object.keys(PUBLIC).filter((c) => !found.includes(c))).toEqual([]);
  });

  it('the scan finds secrets compared with === or !=, and leaves literals and safeEqual alone', () => {
    const text = [
      'if (agent.recoveryTokenHash === presented) ok();',
      'if (claimSecret != expected) no();',
      'if (typeof apiKey === "string" && apiKey !== undefined) go();',
      'if (safeEqual(agent.apiKeyHash, hash)) go();',
    ].join('\n');
    expect(comparisonsIn('x.ts', text)).toEqual(['x.ts: agent.recoveryTokenHash === presented', 'x.ts: claimSecret != expected']);
  });

  it('safeEqual answers equality, for any lengths', () => {
    expect(safeEqual('a'.repeat(64), 'a'.repeat(64))).toBe(true);
    expect(safeEqual('a'.repeat(64), 'a'.repeat(63) + 'b')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
