// The Store interface as written (src/store/types.ts, ARCHITECTURE 2): every member of the
// interfaces the domain and the node's assembly use is required, and says what it promises;
// and nothing in the domain or the HTTP layer asks how the store is deployed (`shared`), which
// only the assembly reads (src/node/strategies.ts). Read with TypeScript's own parser.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TYPES = 'src/store/types.ts';
/** The interfaces of the store's contract. */
const CONTRACT = [
  'Reads',
  'Tx',
  'Store',
  'ExclusiveStore',
  'SharedStore',
  'TokenBucketStore',
  'SharedBuckets',
  'TextIndex',
  'Blobs',
  'BlobWriter',
  'BlobReader',
];

function interfaces(): Map<string, ts.InterfaceDeclaration> {
  const source = ts.createSourceFile(TYPES, readFileSync(join(ROOT, TYPES), 'utf8'), ts.ScriptTarget.Latest, true);
  const found = new Map<string, ts.InterfaceDeclaration>();
  for (const s of source.statements) if (ts.isInterfaceDeclaration(s)) found.set(s.name.text, s);
  return found;
}

const memberName = (m: ts.TypeElement) => (m.name && ts.isIdentifier(m.name) ? m.name.text : m.getText());

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the Store interface', () => {
  it('has no optional member: each means one thing on both stores', () => {
    const found = interfaces();
    const optional: string[] = [];
    for (const name of CONTRACT) {
      const decl = found.get(name);
      expect(decl, `${TYPES} declares ${name}`).toBeDefined();
      for (const m of decl!.members) if (m.questionToken) optional.push(`${name}.${memberName(m)}`);
    }
    expect(optional).toEqual([]);
  });

  it('says on each member of Store, Tx, SharedStore, the token buckets and the text index what it promises', () => {
    const found = interfaces();
    const silent: string[] = [];
    for (const name of ['Store', 'Tx', 'SharedStore', 'TokenBucketStore', 'TextIndex']) {
      for (const m of found.get(name)!.members) if (ts.getJSDocCommentsAndTags(m).length === 0) silent.push(`${name}.${memberName(m)}`);
    }
    expect(silent).toEqual([]);
  });

  it('is never asked how the store is deployed by the domain or the HTTP layer', () => {
    const asking: string[] = [];
    for (const file of [...filesUnder('src/domain'), ...filesUnder('src/http')]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [i, line] of text.split('\n').entries()) if (/\.shared\b/.test(line) && !/^\s*(\/\/|\*)/.test(line)) asking.push(`${file}:${i + 1}`);
    }
    expect(asking).toEqual([]);
  });
});
