// The one registry of error codes (src/core/errors.ts): every code documented with a status,
// and no code thrown anywhere in the source that the registry (and so /errors) lacks.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isServiceError, ServiceError, type ErrorCode } from '../../src/core/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts/.tsx file under dir (none when the folder does not exist yet). */
function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

// `new ServiceError('code'` and `ServiceError(\n  'code'`, with any quote.
const THROWN_CODE = /\bServiceError\(\s*(['"`])([^'"`]*)\1/g;

/** The code literals passed to ServiceError in a source text, with their line numbers. */
function thrownCodes(text: string): Array<{ code: string; line: number }> {
  return [...text.matchAll(THROWN_CODE)].map((m) => {
    const at = m.index + m[0].length - m[2].length - 1; // where the literal starts
    return { code: m[2], line: text.slice(0, at).split('\n').length };
  });
}

describe('ERROR_CODES', () => {
  const entries = Object.entries(ERROR_CODES) as Array<[ErrorCode, { status: number; doc: string; action: string }]>;

  it.each(entries)('%s has a 4xx/5xx status, a one-line doc and what to do', (code, { status, doc, action }) => {
    expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(Number.isInteger(status)).toBe(true);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(600);
    expect(doc.trim().length).toBeGreaterThan(10);
    expect(doc).not.toContain('\n');
    expect(action.trim().length).toBeGreaterThan(10);
    expect(action).not.toContain('\n');
  });
});

describe('ServiceError', () => {
  it('takes its status from the registry', () => {
    const e = new ServiceError('not_found', 'no such proposal', { proposalId: 'prop_0' });
    expect(e.status).toBe(404);
    expect(e.code).toBe('not_found');
    expect(e.extra).toEqual({ proposalId: 'prop_0' });
    expect(isServiceError(e)).toBe(true);
    expect(isServiceError(new Error('x'))).toBe(false);
  });

  it('lets a caller override the status', () => {
    expect(new ServiceError('rate_limited', 'slow down', {}, 503).status).toBe(503);
  });
});

describe('codes thrown in the source', () => {
  const files = ['src', 'cli', 'verifier'].flatMap((d) => sourceFiles(resolve(ROOT, d)));
  const thrown = files.flatMap((file) => thrownCodes(readFileSync(file, 'utf8')).map((t) => ({ ...t, where: `${relative(ROOT, file)}:${t.line}` })));

  it('finds the thrown codes it looks for (the scan is not empty)', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(thrown.length).toBeGreaterThan(0);
    expect(thrownCodes("throw new ServiceError(\n    'not_found',\n 'x')")).toEqual([{ code: 'not_found', line: 2 }]);
    expect(thrownCodes('new ServiceError("banned", "x")')).toEqual([{ code: 'banned', line: 1 }]);
  });

  it('are all in ERROR_CODES', () => {
    const missing = thrown.filter((t) => !Object.hasOwn(ERROR_CODES, t.code)).map((t) => `${t.where} throws '${t.code}'`);
    expect(missing).toEqual([]);
  });
});

describe('docs/PROTOCOL.md section 13', () => {
  const text = readFileSync(resolve(ROOT, 'docs/PROTOCOL.md'), 'utf8');
  const section = text.slice(text.indexOf('## 13. Error codes'), text.indexOf('\n## 14.'));
  const rows = new Map([...section.matchAll(/^\| ([a-z][a-z0-9_]*) \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]));

  it('lists every code of the registry with its status', () => {
    expect(rows.size).toBeGreaterThan(10);
    const wrong = Object.entries(ERROR_CODES)
      .filter(([code, { status }]) => rows.get(code) !== status)
      .map(([code, { status }]) => `${code} ${status} (PROTOCOL says ${rows.get(code) ?? 'nothing'})`);
    expect(wrong).toEqual([]);
  });

  it('lists no code the registry lacks', () => {
    expect([...rows.keys()].filter((code) => !Object.hasOwn(ERROR_CODES, code))).toEqual([]);
  });
});
