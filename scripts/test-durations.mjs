// Writes test/setup/file-seconds.json, the seconds each test file took in the last run here,
// from vitest's cache of that run (node_modules/.vite/vitest/*/results.json). The sequencer
// (test/setup/sequencer.ts) starts the longest files first; a fresh clone, with no cache,
// orders by this file. Run after a full `npm test` on a quiet machine: npm run test:durations.
// The cache keeps a file's result under every project that ever ran it: after moving files
// between projects, empty it (rm -rf node_modules/.vite/vitest) and run the tests again first.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cacheRoot = join(root, 'node_modules/.vite/vitest');
if (!existsSync(cacheRoot)) throw new Error(`no vitest cache at ${cacheRoot}: run npm test first`);
const seconds = {};
for (const dir of readdirSync(cacheRoot)) {
  const file = join(cacheRoot, dir, 'results.json');
  if (!existsSync(file)) continue;
  for (const [key, result] of JSON.parse(readFileSync(file, 'utf8')).results) {
    const path = key.slice(key.indexOf(':') + 1);
    if (existsSync(join(root, path)) && result.duration > 0) seconds[key] = Math.round(result.duration / 100) / 10;
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(root, 'test/setup/file-seconds.json'), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/setup/file-seconds.json: ${Object.keys(sorted).length} files`);
