// The public conformance vectors copied into test/vectors (see its README). Paths are
// resolved inside that folder only, so the tests of a plain clone read nothing beside it.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of test/vectors (with a trailing separator). */
export const VECTORS_DIR = fileURLToPath(new URL('../vectors/', import.meta.url));

/** Absolute path of a file or folder of a vector set, e.g. vectorPath('rfc8032', 'x.json'). */
export function vectorPath(...parts: string[]): string {
  const path = resolve(VECTORS_DIR, ...parts);
  if (relative(VECTORS_DIR, path).startsWith('..')) throw new Error(`${join(...parts)} lies outside test/vectors`);
  // A missing vector fails the run, never skips it.
  if (!existsSync(path)) throw new Error(`conformance vector not found: ${path}`);
  return path;
}

export const vectorText = (...parts: string[]) => readFileSync(vectorPath(...parts), 'utf8');
export const vectorBytes = (...parts: string[]) => readFileSync(vectorPath(...parts));
export const vectorJson = <T = any>(...parts: string[]): T => JSON.parse(vectorText(...parts)) as T;
