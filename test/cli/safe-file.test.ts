import { chmodSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendLineSafely, UnsafeFileError, writeFileSafely } from '../../cli/kit/safe-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-safe-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileSafely', () => {
  it('replaces a symbolic link planted at the path, never writing through it', () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'keep');
    symlinkSync(victim, join(dir, 'state.json'));
    writeFileSafely(join(dir, 'state.json'), '{"a":1}');
    expect(readFileSync(victim, 'utf8')).toBe('keep');
    expect(lstatSync(join(dir, 'state.json')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, 'state.json'), 'utf8')).toBe('{"a":1}');
  });

  it('sets the mode it is asked for and leaves no temporary file', () => {
    writeFileSafely(join(dir, 'f'), 'x', 0o600);
    expect(statSync(join(dir, 'f')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['f']);
  });
});

describe('appendLineSafely', () => {
  it('refuses a symbolic link at the path', () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, '');
    symlinkSync(victim, join(dir, 'journal.jsonl'));
    expect(() => appendLineSafely(join(dir, 'journal.jsonl'), 'line')).toThrow(UnsafeFileError);
    expect(readFileSync(victim, 'utf8')).toBe('');
  });

  it('refuses a file with a mode it did not set, and appends to its own', () => {
    const p = join(dir, 'journal.jsonl');
    appendLineSafely(p, 'one');
    appendLineSafely(p, 'two');
    expect(readFileSync(p, 'utf8')).toBe('one\ntwo\n');
    expect(statSync(p).mode & 0o777).toBe(0o600);
    chmodSync(p, 0o666);
    expect(() => appendLineSafely(p, 'three')).toThrow(UnsafeFileError);
    expect(readFileSync(p, 'utf8')).toBe('one\ntwo\n');
  });
});
