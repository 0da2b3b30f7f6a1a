// The one registry of the CLI's --json error codes (CLI_CODES in cli/kit/errors.ts), as
// test/core/errors.test.ts holds the node's: every code with its exit status and a one-line
// meaning, no code in cli/ that the registry lacks, and docs/CLI.md's table the same both ways.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_CODES, type CliCode, CliError, usageError } from '../../cli/kit/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts/.tsx file under dir. */
function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

// `code: 'x'` in an object literal, and `new CliError('x'` (the code a failure carries), with any quote.
const CODE_LITERAL = /\bcode:\s*(['"`])([a-z][a-z0-9_]*)\1/g;
const THROWN_CODE = /\bCliError\(\s*(['"`])([^'"`]*)\1/g;

/** The codes a source text names, with their line numbers. */
function codesIn(text: string): Array<{ code: string; line: number }> {
  return [...text.matchAll(CODE_LITERAL), ...text.matchAll(THROWN_CODE)].map((m) => ({ code: m[2], line: text.slice(0, m.index).split('\n').length }));
}

describe('CLI_CODES', () => {
  const entries = Object.entries(CLI_CODES) as Array<[CliCode, { exit: number; doc: string }]>;

  it.each(entries)('%s has an exit status of 1, 2, 3 or 130 and a one-line meaning', (code, { exit, doc }) => {
    expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
    expect([1, 2, 3, 130]).toContain(exit);
    expect(doc.trim().length).toBeGreaterThan(10);
    expect(doc).not.toContain('\n');
  });
});

describe('CliError', () => {
  it('takes its exit status from the registry, its code first in the body --json prints', () => {
    const e = new CliError('hash_mismatch', 'the bytes do not hash to it', { path: 'x' });
    expect(e.exitCode).toBe(1);
    expect(e.body).toEqual({ code: 'hash_mismatch', path: 'x' });
    expect(new CliError('interrupted', 'Ctrl-C').exitCode).toBe(130);
    expect(new CliError('incomplete', 'a round broke off').exitCode).toBe(3);
    expect(usageError('give --x').body).toEqual({ code: 'usage', error: 'give --x' });
    expect(CliError.is(e)).toBe(true);
  });

  it('takes no code CLI_CODES lacks: a compile error (the type check of this file holds it), and a throw', () => {
    // @ts-expect-error: a code that is not registered
    expect(() => new CliError('no_such_code', 'x')).toThrow(TypeError);
    // Nor a code among the fields, where it would stand for the registered one (checked by the type check only).
    // @ts-expect-error: the code is the first argument, never one of the fields
    const unregistered = () => new CliError('usage', 'x', { code: 'other' });
    expect(typeof unregistered).toBe('function');
  });

  it("passes a node's refusal through with the exit status the command gives it", () => {
    const e = CliError.fromNode(1, 'no such proposal (not_found, HTTP 404)', { status: 404, code: 'not_found', error: 'no such proposal' });
    expect(e.exitCode).toBe(1);
    expect(e.body).toEqual({ status: 404, code: 'not_found', error: 'no such proposal' });
    const again = e.restated('said otherwise', { savedFor: ['http://a'] });
    expect([again.exitCode, again.message, again.body.code, again.body.savedFor]).toEqual([1, 'said otherwise', 'not_found', ['http://a']]);
  });
});

describe('codes in the source of cli/', () => {
  const files = sourceFiles(resolve(ROOT, 'cli'));
  const found = files.flatMap((file) => codesIn(readFileSync(file, 'utf8')).map((t) => ({ ...t, where: `${relative(ROOT, file)}:${t.line}` })));

  it('finds the codes it looks for (the scan is not empty)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(found.length).toBeGreaterThan(50);
    expect(codesIn("throw new CliError(\n  'unreadable',\n 'x')").map((c) => c.code)).toEqual(['unreadable']);
    expect(codesIn("{ code: 'not_akas', baseUrl }").map((c) => c.code)).toEqual(['not_akas']);
  });

  it('are all in CLI_CODES', () => {
    const missing = found.filter((t) => !Object.hasOwn(CLI_CODES, t.code)).map((t) => `${t.where} names '${t.code}'`);
    expect(missing).toEqual([]);
  });
});

describe('docs/CLI.md "Error codes (--json)"', () => {
  const text = readFileSync(resolve(ROOT, 'docs/CLI.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Error codes'), text.indexOf('\n## What the test holds'));
  const rows = [...section.matchAll(/^\| `([a-z][a-z0-9_]*)` \| (\d+) \| (.*) \|$/gm)].map((m) => ({ code: m[1], exit: Number(m[2]), doc: m[3] }));

  it('lists every code of the registry with its exit status and meaning, in its order', () => {
    expect(rows.length).toBeGreaterThan(40);
    const registry = Object.entries(CLI_CODES).map(([code, { exit, doc }]) => ({ code, exit, doc }));
    // The table's meaning is the registry's, with the doc's backticks around commands and flags.
    expect(rows.map((r) => ({ ...r, doc: r.doc.replace(/`/g, '') }))).toEqual(registry);
  });

  it('lists no code the registry lacks', () => {
    expect(rows.map((r) => r.code).filter((code) => !Object.hasOwn(CLI_CODES, code))).toEqual([]);
  });
});
