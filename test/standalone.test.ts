// A plain clone stands alone: nothing in the code, the tests, the benchmarks or the docs
// reads or links outside the repository. Source files are parsed with TypeScript's own
// parser and every path they hand to the module loader, to `new URL(x, import.meta.url)`
// or to join()/resolve() with literal `..` segments is resolved from the file's folder;
// Markdown links are resolved from the document's folder. Any that lands outside the
// repository root fails with the file and line.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CODE_DIRS = ['src', 'cli', 'verifier', 'test', 'bench', 'scripts'];
const SKIP = new Set(['node_modules', 'dist', 'vectors', '.git']);

interface PathUse {
  path: string;
  line: number;
}

const escapes = (from: string, target: string) => {
  const rel = relative(ROOT, resolve(ROOT, from, target));
  return rel === '..' || rel.startsWith('..' + sep) || resolve(ROOT, from, target) === resolve(ROOT, '..');
};

/** Text of a string literal, or the fixed head of a template literal (`../data/${x}.json` → `../data/`). */
function literalText(node: ts.Node | undefined): string | undefined {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text;
  return undefined;
}

const isImportMetaUrl = (n: ts.Node | undefined) => !!n && ts.isPropertyAccessExpression(n) && n.name.text === 'url' && ts.isMetaProperty(n.expression);

/**
 * The paths a source file resolves relative to its own folder: module specifiers,
 * `new URL(path, import.meta.url)`, and the literal segments of join/resolve calls whose
 * first argument is the file's folder (`__dirname`, `import.meta.dirname`, `dirname(...)`).
 */
function pathUses(fileName: string, text: string): PathUse[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: PathUse[] = [];
  const add = (node: ts.Node, path: string | undefined) => {
    if (path !== undefined) found.push({ path, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const isFileDir = (n: ts.Expression) =>
    (ts.isIdentifier(n) && n.text === '__dirname') ||
    (ts.isPropertyAccessExpression(n) && n.name.text === 'dirname' && ts.isMetaProperty(n.expression)) ||
    (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'dirname');
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) add(node, literalText(node.moduleSpecifier));
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) add(node, literalText(node.arguments[0]));
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      if ((name === 'join' || name === 'resolve') && node.arguments.length > 1 && isFileDir(node.arguments[0])) {
        const parts = node.arguments.slice(1).map(literalText);
        if (parts.every((p) => p !== undefined)) add(node, parts.join('/'));
      }
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL' && isImportMetaUrl(node.arguments?.[1])) {
      add(node, literalText(node.arguments?.[0]));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Only relative paths can climb; bare specifiers are packages.
  return found.filter((u) => u.path.startsWith('.'));
}

/** Relative targets of Markdown links and images ([text](target)), without #anchors. */
function markdownLinks(text: string): PathUse[] {
  const out: PathUse[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ path: m[1], line: i + 1 });
  });
  return out;
}

function files(dir: string, test: (name: string) => boolean): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return files(rel, test);
    return test(name) ? [rel] : [];
  });
}

describe('a plain clone stands alone', () => {
  describe('the path reader', () => {
    it('finds specifiers, URLs from import.meta.url and join/resolve from the file folder', () => {
      const text = [
        "import { a } from '../src/core/index.js';", // 1
        "const v = new URL('../../../elsewhere/vectors/', import.meta.url);", // 2
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the checker reads, a template literal inside
        'const w = new URL(`../../data/pool-${id}.json`, import.meta.url);', // 3
        "const x = join(__dirname, '..', '..', 'elsewhere');", // 4
        "const y = await import('./local.js');", // 5
        "const z = resolve(import.meta.dirname, '../..');", // 6
        "const s = 'not a path: ../../x';", // 7
        "const p = join(someDir, '..');", // 8
      ].join('\n');
      expect(pathUses('test/x.test.ts', text)).toEqual([
        { path: '../src/core/index.js', line: 1 },
        { path: '../../../elsewhere/vectors/', line: 2 },
        { path: '../../data/pool-', line: 3 },
        { path: '../../elsewhere', line: 4 },
        { path: './local.js', line: 5 },
        { path: '../..', line: 6 },
      ]);
    });

    it('tells a path that leaves the repository from one that stays', () => {
      expect(escapes('test/core', '../../../elsewhere/vectors/')).toBe(true);
      expect(escapes('test', '../..')).toBe(true);
      expect(escapes('test/core', '../../data/')).toBe(false);
      expect(escapes('.', '../elsewhere/SPEC.md')).toBe(true);
    });

    it('reads Markdown link targets', () => {
      expect(markdownLinks('see [SPEC](../elsewhere/SPEC.md) and ![x](docs/a.png "t")\n[b](#anchor)')).toEqual([
        { path: '../elsewhere/SPEC.md', line: 1 },
        { path: 'docs/a.png', line: 1 },
        { path: '#anchor', line: 2 },
      ]);
    });
  });

  it('has no path in the code, tests, benchmarks or scripts that leaves the repository root', () => {
    const code = CODE_DIRS.flatMap((d) => files(d, (n) => /\.(ts|tsx|mts|mjs|js)$/.test(n)));
    expect(code.length).toBeGreaterThan(50);
    const broken = code.flatMap((file) =>
      pathUses(file, readFileSync(join(ROOT, file), 'utf8'))
        .filter((u) => escapes(dirname(file), u.path))
        .map((u) => `${file}:${u.line} reaches ${u.path}, outside the repository`),
    );
    expect(broken).toEqual([]);
  });

  // A relative path to a shared/ folder that stays inside the repository is the repository's own
  // folder; one that climbs out of it names the sibling folder. (The examples below build their
  // paths from UP so that this file does not itself read as a mention of the sibling.)
  const UP = '..';
  const SIBLING = resolve(ROOT, '..', 'shared');
  const mentionsSibling = (file: string, line: string) =>
    /shared\/(vectors|SPEC|DESIGN|STYLE)/.test(line) ||
    [...line.matchAll(/((?:\.\.\/)+)shared\//g)].some((m) => resolve(ROOT, dirname(file), m[1], 'shared') === SIBLING);

  it('has no mention of the sibling shared/ folder anywhere in the code or docs', () => {
    const all = [
      ...CODE_DIRS.flatMap((d) => files(d, (n) => /\.(ts|tsx|mjs|js|json|md)$/.test(n))),
      ...files('docs', () => true),
      'README.md',
      'package.json',
      '.ci/run',
    ];
    const hits = all.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (mentionsSibling(file, line) && file !== 'test/standalone.test.ts' ? [`${file}:${i + 1}`] : [])),
    );
    expect(hits).toEqual([]);
  });

  it('tells the sibling shared/ folder from a shared/ folder inside the repository', () => {
    expect(mentionsSibling('src/domain/calibration/bank.ts', `import { x } from '${UP}/shared/validate.js';`)).toBe(false);
    expect(mentionsSibling('README.md', `see ${UP}/shared/SPEC.md`)).toBe(true);
    expect(mentionsSibling('test/x.test.ts', `readFileSync('${UP}/${UP}/shared/notes.md')`)).toBe(true);
    expect(mentionsSibling('docs/ARCHITECTURE.md', 'the vectors of shared/vectors')).toBe(true);
  });

  // The documents akas was first written from (a specification, design and style notes) are not in
  // the repository: the code, the tests and ARCHITECTURE cite docs/PROTOCOL.md and
  // docs/ARCHITECTURE.md by section, and an issue by its number (the tracker, not a document). A
  // document named NAME.md is one the repository has.
  const UNPUBLISHED = new RegExp(`\\b(${['SP', 'DES', 'ST'].map((head, i) => head + ['EC', 'IGN', 'YLE'][i]).join('|')})\\b`);
  /** The names of the Markdown files the repository has (test/vectors' aside: their READMEs are README.md too). */
  const published = new Set(files('.', (n) => n.endsWith('.md')).map((f) => f.split('/').pop()!));
  /** What a line cites that the repository does not hold: an unpublished document, or a NAME.md no file is. */
  const citesOutside = (line: string) => [
    ...(UNPUBLISHED.exec(line)?.slice(1, 2) ?? []),
    ...[...line.matchAll(/\b([A-Z][A-Z0-9-]*\.md)\b/g)].map((m) => m[1]).filter((name) => !published.has(name)),
  ];

  it('tells a citation of a document outside the repository from one inside it', () => {
    const name = ['SP', 'EC'].join('');
    expect(citesOutside(`/** The orientation block of a 401 (${name} 7). */`)).toEqual([name]);
    expect(citesOutside(`// ${['DES', 'IGN'].join('')} 4: tests never race the clock`)).toHaveLength(1);
    expect(citesOutside(`see ${['NOT', 'ES'].join('')}.md`)).toHaveLength(1);
    expect(citesOutside('// PROTOCOL 7.2; docs/ARCHITECTURE.md section 1; README.md; issue 48, item 5')).toEqual([]);
    expect(citesOutside('const SPECIFIC = 1; // a SPECimen, DESIGNS_X')).toEqual([]);
  });

  it('cites no document outside the repository in the code, tests, benchmarks, scripts, README or docs/', () => {
    const all = [...CODE_DIRS.flatMap((d) => files(d, (n) => /\.(ts|tsx|mts|mjs|js)$/.test(n))), 'README.md', ...files('docs', (n) => n.endsWith('.md'))];
    expect(all.length).toBeGreaterThan(50);
    const hits = all
      .filter((file) => file !== 'test/standalone.test.ts')
      .flatMap((file) =>
        readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => citesOutside(line).map((name) => `${file}:${i + 1} cites ${name}`)),
      );
    expect(hits).toEqual([]);
  });

  it('links README and docs/ only to files that exist in the repository', () => {
    const docs = ['README.md', ...files('docs', (n) => n.endsWith('.md')), ...files('test/vectors', (n) => n.endsWith('.md'))];
    expect(docs).toContain('docs/ARCHITECTURE.md');
    expect(docs).toContain('docs/PROTOCOL.md');
    const broken = docs.flatMap((file) =>
      markdownLinks(readFileSync(join(ROOT, file), 'utf8'))
        .filter((l) => !l.path.startsWith('#'))
        .filter((l) => {
          // docs/ may cite public standards by URL; README links only into the repository.
          if (/^https?:\/\//.test(l.path)) return file === 'README.md';
          const target = l.path.split('#')[0];
          return escapes(dirname(file), target) || !existsSync(resolve(ROOT, dirname(file), target));
        })
        .map((l) => `${file}:${l.line} links to ${l.path}`),
    );
    expect(broken).toEqual([]);
  });
});
