// Where the package's data/ folder is, from source (src/core) and from the build (dist/src/core).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** Absolute path of the package root (the folder holding package.json and data/). */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'data'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('akas: cannot find the package root (package.json beside data/)');
    dir = up;
  }
  return (cached = dir);
}

/** Absolute path of a file under data/. */
export const dataPath = (...parts: string[]) => join(packageRoot(), 'data', ...parts);
