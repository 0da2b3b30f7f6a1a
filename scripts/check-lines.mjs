// No line over 160 characters in the code Biome formats (issue 31, 5). Biome's formatter wraps
// code at 160 columns but never splits a string or a comment, so this check holds the rest:
// it lists every longer line and fails, for `npm run lint` (and so `npm test`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MAX = 160;
const ROOTS = ['src', 'cli', 'verifier', 'test', 'bench', 'scripts'];
const SKIP = /^test\/(vectors|fixtures)\//;
const CODE = /\.(ts|tsx|mjs|js|css)$/;

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...ROOTS], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => CODE.test(f) && !SKIP.test(f));
const long = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // listed by git but deleted in the work tree
  }
  text.split('\n').forEach((line, i) => {
    if ([...line].length > MAX) long.push(`${file}:${i + 1}: ${[...line].length} characters`);
  });
}
if (long.length) {
  console.error(`${long.length} line(s) over ${MAX} characters (split strings with +, wrap comments):\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`no line over ${MAX} characters in ${files.length} files`);
