// The one-way rooms of ARCHITECTURE 1, kept true by reading the source: every import, re-export
// and dynamic import() in src/, cli/, verifier/ and bench/ is parsed (TypeScript's own parser, so
// comments and strings never count), relative paths are resolved to the room they land in,
// and a forbidden arrow fails with the file and line that draws it. ARCHITECTURE 1's arrows and
// rules are read back and must say what RULES holds, no more and no less.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

// The explorer's browser code before the explorer, and the domain's areas that have rules of their
// own before the domain: a file is in the first room its path starts with.
const DOMAIN_AREAS = ['src/domain/common', 'src/domain/log', 'src/domain/proposals'] as const;
const ROOMS = [
  'src/core',
  'src/store',
  ...DOMAIN_AREAS,
  'src/domain',
  'src/ops',
  'src/node',
  'src/http-kit',
  'src/http',
  'src/witness',
  'src/explorer/client',
  'src/explorer',
  'cli',
  'verifier',
  'bench',
  'data',
] as const;
/** The domain and every area of it with rules of its own. */
const DOMAIN: Room[] = [...DOMAIN_AREAS, 'src/domain'];
/** The rooms that may import src/domain (the log's door binds them), the log itself aside. */
const OPEN_TO_DOMAIN: Room[] = ['src/domain/proposals', 'src/domain', 'src/ops', 'src/node', 'src/http', 'src/explorer', 'bench'];
type Room = (typeof ROOMS)[number] | 'elsewhere';

interface Import {
  specifier: string;
  line: number;
}

/** Every module a source text imports: import/export ... from, import 'x', import('x'), require('x'), import('x').T. */
function importsOf(fileName: string, text: string): Import[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) {
      found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) add(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The modules a source text loads when it is loaded: its static imports and re-exports, without
 * those that bring types only (erased from the JavaScript), dynamic import() and import types.
 */
function valueImportsOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typesOnly =
        clause &&
        (clause.isTypeOnly ||
          (!clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typesOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typesOnly = node.isTypeOnly || (node.exportClause && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typesOnly) found.push(node.moduleSpecifier.text);
    }
  }
  return found;
}

/** The room a path (relative to the repo root, '/'-separated) lies in. */
function roomOf(path: string): Room {
  return ROOMS.find((room) => path === room || path.startsWith(room + '/')) ?? 'elsewhere';
}

/** The npm package a bare specifier names ('@scope/name' or 'name'), or null for node: builtins. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

interface Rule {
  /** Rooms the rule applies to. */
  from: Room[];
  /** Rooms a relative import may land in (undefined: any but forbidRooms). */
  allowRooms?: Room[];
  forbidRooms?: Room[];
  /** Package names; 'scope/*' matches a whole scope. */
  forbidPackages?: string[];
  /** Rooms a relative import may reach through the listed files only (their entry points). */
  onlyThrough?: Partial<Record<Room, string[]>>;
  /** Files of the `from` rooms the rule does not bind (each says why where it is listed). */
  except?: string[];
  why: string;
}

const LEVEL = ['level', 'classic-level', 'abstract-level'];
/** PostgreSQL drivers (node-postgres and its parts, postgres.js, pglite). */
const POSTGRES = ['pg', 'pg-pool', 'pg-cursor', 'pg-protocol', 'pg-native', 'postgres', '@electric-sql/pglite'];
/** Every database driver: only src/store may import one. */
const DATABASE = [...LEVEL, ...POSTGRES];
/** The files through which the CLI enters the node's rooms (ARCHITECTURE 1): each names what it exports. */
const CLI_ENTRIES: Partial<Record<Room, string[]>> = {
  'src/node': ['src/node/index.ts'],
  'src/ops': ['src/ops/index.ts', 'src/ops/templates.ts', 'src/ops/admin-ask.ts'],
  'src/witness': ['src/witness/index.ts'],
  'src/store': ['src/store/index.ts'],
};
const RULES: Rule[] = [
  {
    from: ['verifier'],
    allowRooms: ['verifier', 'src/core', 'data'],
    forbidPackages: [...DATABASE, 'fastify', '@fastify/*', 'undici'],
    why: 'verifier/ imports src/core and data/ only, and works offline with no node (never src/store, src/domain, src/http)',
  },
  {
    from: ['src/core'],
    allowRooms: ['src/core', 'data'],
    forbidPackages: [...DATABASE, 'fastify', '@fastify/*', 'undici', 'ink', '@inkjs/*', 'react', 'commander'],
    why: 'src/core is pure: no fastify, database driver, HTTP client or terminal UI, and no other room',
  },
  {
    from: ['src/store'],
    allowRooms: ['src/store', 'src/core'],
    forbidPackages: ['fastify', '@fastify/*'],
    why: 'src/store sits on src/core only (never src/domain, src/http, cli)',
  },
  {
    from: ['src/witness'],
    allowRooms: ['src/witness', 'src/core', 'src/store'],
    forbidPackages: ['fastify', '@fastify/*', 'undici'],
    why: 'the witness (src/witness) stands on src/core and src/store only: it shares nothing else with a node, so it runs where no node does',
  },
  {
    from: DOMAIN,
    forbidRooms: ['src/http-kit', 'src/http', 'src/node', 'src/ops', 'src/witness', 'src/explorer/client', 'src/explorer', 'cli', 'verifier'],
    forbidPackages: ['fastify', '@fastify/*'],
    why: 'src/domain has no HTTP and no pages: it never imports src/http, src/node, src/ops, src/witness, src/explorer, cli, verifier or fastify',
  },
  {
    from: ['src/domain/common'],
    allowRooms: ['src/domain/common', 'src/core', 'data'],
    why: 'src/domain/common holds what every area uses (one Ajv factory, stop words): it imports no area and no store',
  },
  {
    from: ['src/domain/log'],
    forbidRooms: ['src/domain/proposals'],
    why: 'the log (src/domain/log) records what the areas enqueue; it never imports src/domain/proposals, which writes to it',
  },
  {
    from: ['src/ops'],
    allowRooms: ['src/ops', ...DOMAIN, 'src/store', 'src/core', 'data'],
    forbidPackages: ['fastify', '@fastify/*'],
    why: 'src/ops (store migrate and copy, the admin channel) runs beside a node on src/domain and src/store, never through src/http or src/node',
  },
  {
    from: ['src/node'],
    allowRooms: ['src/node', ...DOMAIN, 'src/store', 'src/core', 'src/witness', 'src/http', 'src/http-kit', 'data'],
    onlyThrough: {
      'src/http': ['src/http/app.ts', 'src/http/request-log.ts'],
      'src/http-kit': ['src/http-kit/urls.ts'],
      'src/witness': ['src/witness/index.ts'],
    },
    forbidPackages: ['fastify', '@fastify/*'],
    why:
      'src/node opens, checks and starts a node on src/domain, src/store and src/core; of src/http it takes what starting needs (app.ts, ' +
      "request-log.ts, the kit's urls.ts), imported when a node starts, and of src/witness its index",
  },
  {
    from: ['src/http'],
    forbidRooms: ['src/node'],
    why: 'src/http builds the routes of a node src/node opened: it never imports src/node (src/node -> src/http, not back)',
  },
  {
    from: ['src/http', 'src/http-kit'],
    forbidRooms: ['cli'],
    why: 'src/http never imports cli (cli -> src/http, not back)',
  },
  {
    from: ['src/http-kit'],
    allowRooms: ['src/http-kit', 'src/core'],
    why:
      "the HTTP kit (src/http-kit: errors, media types, security headers, inner calls, body bounds, the node's origin) stands on " +
      'src/core only and never imports src/http: what the explorer takes of it brings nothing of http',
  },
  {
    from: ['cli'],
    forbidRooms: [...DOMAIN, 'src/http', 'src/http-kit', 'src/explorer', 'src/explorer/client'],
    onlyThrough: CLI_ENTRIES,
    why:
      "cli reaches a node's rooms through their documented entry points only (src/node/index.ts, src/ops/index.ts, " +
      "templates.ts and admin-ask.ts, src/witness/index.ts, src/store/index.ts), never src/domain, src/http, src/explorer, http's kit (the explorer's " +
      "door) or another room's inner files",
  },
  {
    from: ['src/explorer'],
    forbidRooms: ['cli', 'verifier', 'src/node', 'src/ops', 'src/witness'],
    forbidPackages: ['undici'],
    why:
      'src/explorer reads through the API routes and src/domain; it never imports the CLI, src/node, src/ops or src/witness, and its checks ' +
      'run in the browser (src/explorer/client), not on the node',
  },
  {
    from: ['src/explorer'],
    forbidRooms: ['src/http'],
    onlyThrough: { 'src/http-kit': ['src/http-kit/index.ts'] },
    why:
      'src/explorer never imports src/http (http registers the explorer: the explorer never reaches back into its routes), and of the ' +
      'HTTP kit only its index, which names what the explorer takes',
  },
  {
    from: ['src/explorer/client'],
    allowRooms: ['src/explorer/client', 'verifier'],
    forbidPackages: ['*'],
    why: "the explorer's browser code imports no package and no room but the verifier's browser build (loaded by URL; its types only)",
  },
  {
    // (the rooms that may import the domain at all)
    from: OPEN_TO_DOMAIN,
    onlyThrough: { 'src/domain/log': ['src/domain/log/index.ts'] },
    why: "the log's door: src/domain/log is reached through its index.ts, which names what the rest of the code uses",
  },
  {
    from: ['bench'],
    forbidRooms: ['elsewhere'],
    why: 'bench/ measures the rooms from outside: it may import any of them (inner files too, as a test does), nothing outside them',
  },
  {
    // (the rooms whose rules name what they may not import; the others name what they may)
    from: ['src/domain/log', 'src/domain/proposals', 'src/domain', 'src/http', 'src/explorer', 'cli'],
    forbidRooms: ['bench', 'elsewhere'],
    why: 'no room imports bench/, test/ or scripts/: what measures and tests the code is never part of it',
  },
  {
    from: [...DOMAIN, 'src/ops', 'src/node', 'src/http-kit', 'src/http', 'src/witness', 'src/explorer', 'cli', 'verifier', 'bench', 'src/core', 'elsewhere'],
    forbidPackages: DATABASE,
    why: 'only src/store knows a database driver (LevelDB, PostgreSQL)',
  },
];

/** The source file an import of 'x.js' names: 'x.ts' (imports name the compiled file). */
const sourceOf = (target: string) => target.replace(/\.js$/, '.ts');

const matchesPackage = (pkg: string, pattern: string) =>
  pattern === '*' ? true : pattern.endsWith('/*') ? pkg.startsWith(pattern.slice(0, -1)) : pkg === pattern;

/** The broken arrows of one file (path relative to the repo root), as "file:line ..." lines. */
function violations(file: string, imports: Import[]): string[] {
  const from = roomOf(file);
  const out: string[] = [];
  for (const { specifier, line } of imports) {
    const relativeImport = specifier.startsWith('.') || specifier.startsWith('/');
    const target = relativeImport
      ? relative(ROOT, resolve(ROOT, dirname(file), specifier))
          .split(sep)
          .join('/')
      : null;
    const to = target === null ? null : roomOf(target);
    const pkg = target === null ? packageOf(specifier) : null;
    for (const rule of RULES) {
      if (!rule.from.includes(from) || rule.except?.includes(file)) continue;
      const entries = to === null ? undefined : rule.onlyThrough?.[to];
      const bad =
        (to !== null && ((rule.allowRooms && !rule.allowRooms.includes(to)) || rule.forbidRooms?.includes(to))) ||
        (entries !== undefined && !entries.includes(sourceOf(target!))) ||
        (pkg !== null && rule.forbidPackages?.some((p) => matchesPackage(pkg, p)));
      if (bad) out.push(`${file}:${line} imports '${specifier}'${to ? ` (${to})` : ''}: ${rule.why}`);
    }
  }
  return out;
}

/** Every .ts/.tsx file under dir, relative to the repo root. */
function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return sourceFiles(rel);
    return /\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** A file of `from` may import room `to` (unless a rule names the file in `except`), and if so through which of its files only. */
function arrow(from: Room, to: Room): { allowed: boolean; through: string[] } {
  let allowed = true;
  const through = new Set<string>();
  for (const rule of RULES.filter((r) => r.from.includes(from))) {
    if ((rule.allowRooms && !rule.allowRooms.includes(to)) || rule.forbidRooms?.includes(to)) allowed = false;
    for (const file of rule.onlyThrough?.[to] ?? []) through.add(file.slice(to.length + 1));
  }
  return { allowed, through: [...through] };
}

/** The rooms that hold code (data/ holds none), each with the rooms RULES let it import, as ARCHITECTURE 1 lists them. */
function arrows(): Map<string, string[]> {
  return new Map(
    ROOMS.filter((from) => from !== 'data').map((from) => [
      from,
      ROOMS.filter((to) => to !== from && arrow(from, to).allowed).map((to) => {
        const { through } = arrow(from, to);
        return through.length ? `${to} (${through.join(', ')})` : to;
      }),
    ]),
  );
}

/** The arrows as ARCHITECTURE 1 prints them: `room ──► a, b (x.ts)`, wrapped under the first target. */
function arrowsText(): string {
  const lines: string[] = [];
  for (const [from, to] of arrows()) {
    const head = `${from.padEnd(22)}──► `;
    let current = head;
    to.forEach((t, i) => {
      const piece = t + (i < to.length - 1 ? ',' : '');
      if (current !== head && current.length + 1 + piece.length > 104) {
        lines.push(current);
        current = ' '.repeat(head.length) + piece;
      } else current += (current === head ? '' : ' ') + piece;
    });
    lines.push(current);
  }
  return lines.join('\n');
}

/** The text between `<!-- name -->` and `<!-- /name -->` in a document. */
function between(doc: string, name: string): string {
  const start = doc.indexOf(`<!-- ${name} -->`);
  const end = doc.indexOf(`<!-- /${name} -->`);
  if (start < 0 || end < start) throw new Error(`docs/ARCHITECTURE.md has no <!-- ${name} --> ... <!-- /${name} --> block`);
  return doc.slice(start + name.length + 9, end);
}

/** The arrows block read back: each room's line (and the lines under it) as the room and the targets it names. */
function readArrows(block: string): Map<string, string[]> {
  const entries = new Map<string, string[]>();
  let last: string | undefined;
  for (const line of block.split('\n')) {
    if (!line.trim() || line.startsWith('```')) continue;
    const m = /^(\S+)\s+──►(.*)$/.exec(line);
    if (m) entries.set((last = m[1]), []);
    const targets = m ? m[2] : line;
    if (last === undefined) throw new Error(`an arrow line names no room: ${line}`);
    entries.get(last)!.push(
      ...targets
        .split(/,(?![^(]*\))/)
        .map((t) => t.trim().replace(/\s+/g, ' '))
        .filter(Boolean),
    );
  }
  return entries;
}

/** The rules block read back: one `- ` item each (its lines joined), whitespace made single. */
function readRules(block: string): string[] {
  return block
    .split(/\n- /)
    .map((item) =>
      item
        .replace(/^\s*-\s/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
}

describe('rooms (ARCHITECTURE 1)', () => {
  describe('the import reader', () => {
    const text = [
      "import { a } from 'fastify';", // 1
      "import type { B } from '../store/index.js';", // 2
      "export * from '../domain/x.js';", // 3
      'export { c } from "undici";', // 4
      "const m = await import('../http/app.js');", // 5
      'import {', // 6
      '  d,', // 7
      "} from 'level';", // 8
      "type T = import('../store/types.js').Store;", // 9
      "import 'react';", // 10
      "// import('commented-out'); import x from 'commented';", // 11
      'const s = "import(\'in-a-string\')";', // 12
      "import e = require('commander');", // 13
      "import { f } from './jcs.js';", // 14
      "import { g } from 'node:crypto';", // 15
    ].join('\n');

    it('finds static, type-only, re-exported, dynamic, multi-line and require imports, with their lines', () => {
      expect(importsOf('src/core/fake.ts', text)).toEqual([
        { specifier: 'fastify', line: 1 },
        { specifier: '../store/index.js', line: 2 },
        { specifier: '../domain/x.js', line: 3 },
        { specifier: 'undici', line: 4 },
        { specifier: '../http/app.js', line: 5 },
        { specifier: 'level', line: 8 },
        { specifier: '../store/types.js', line: 9 },
        { specifier: 'react', line: 10 },
        { specifier: 'commander', line: 13 },
        { specifier: './jcs.js', line: 14 },
        { specifier: 'node:crypto', line: 15 },
      ]);
    });

    it('reports each forbidden one with file and line, and lets the allowed ones pass', () => {
      const found = violations('src/core/fake.ts', importsOf('src/core/fake.ts', text));
      const lines = [...new Set(found.map((v) => v.split(' ')[0]))];
      expect(lines).toEqual([
        'src/core/fake.ts:1',
        'src/core/fake.ts:2',
        'src/core/fake.ts:3',
        'src/core/fake.ts:4',
        'src/core/fake.ts:5',
        'src/core/fake.ts:8',
        'src/core/fake.ts:9',
        'src/core/fake.ts:10',
        'src/core/fake.ts:13',
      ]);
    });

    it('resolves relative paths rather than matching strings', () => {
      expect(violations('verifier/credential.ts', [{ specifier: '../src/core/index.js', line: 1 }])).toEqual([]);
      // '../core/x.js' from verifier/ lands in core/ at the repo root, which is not src/core.
      expect(violations('verifier/credential.ts', [{ specifier: '../core/x.js', line: 1 }])).toHaveLength(1);
      expect(violations('verifier/credential.ts', [{ specifier: '../src/store/index.js', line: 7 }])).toEqual([
        "verifier/credential.ts:7 imports '../src/store/index.js' (src/store): " + RULES[0].why,
      ]);
      expect(violations('verifier/sub/x.ts', [{ specifier: '../../src/domain/a.js', line: 2 }])).toHaveLength(1);
      expect(violations('src/domain/a.ts', [{ specifier: './store-helpers.js', line: 1 }])).toEqual([]);
      expect(violations('src/domain/a.ts', [{ specifier: '../http/app.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/http/routes/a.ts', [{ specifier: '../../../cli/kit/client.js', line: 1 }])).toHaveLength(1);
      expect(violations('cli/commands/serve.ts', [{ specifier: '../../src/node/index.js', line: 1 }])).toEqual([]);
      expect(violations('cli/commands/serve.ts', [{ specifier: '../../src/http/app.js', line: 1 }])).toHaveLength(1);
    });

    it('lets the CLI into the rooms of a node through their entry points only, and never into src/domain', () => {
      const from = (specifier: string, file = 'cli/commands/serve.ts') => violations(file, [{ specifier, line: 1 }]);
      for (const entry of [
        '../../src/node/index.js',
        '../../src/ops/index.js',
        '../../src/ops/templates.js',
        '../../src/ops/admin-ask.js',
        '../../src/witness/index.js',
        '../../src/store/index.js',
      ])
        expect(from(entry), entry).toEqual([]);
      // Outside the doors' rooms the CLI imports what it needs, file by file: src/core and verifier/.
      expect(from('../../src/core/jcs.js')).toEqual([]);
      expect(from('../../verifier/credential.js')).toEqual([]);
      expect(from('../src/core/version.js', 'cli/program.ts')).toEqual([]);
      for (const inner of [
        '../../src/http/app.js',
        '../../src/http/routes/tools.js',
        '../../src/ops/store-admin.js',
        '../../src/ops/admin-channel.js',
        '../../src/witness/witness.js',
        '../../src/store/level.js',
        '../../src/store/postgres/index.js',
      ]) {
        const doors = RULES.find((r) => r.from.includes('cli') && r.onlyThrough)!;
        expect(from(inner), inner).toEqual([`cli/commands/serve.ts:1 imports '${inner}' (${inner.split('/').slice(2, 4).join('/')}): ${doors.why}`]);
      }
      for (const domain of [
        '../../src/domain/log/witnesses.js',
        '../../src/domain/proposals/templates.js',
        '../../src/domain/calibration/generate.js',
        '../../src/domain/records.js',
      ])
        expect(from(domain), domain).toHaveLength(1);
      expect(from('../../../src/domain/common/ajv.js', 'cli/commands/verify/node.ts')).toHaveLength(1);
      expect(from('../../src/http-kit/index.js')).toHaveLength(1);
      // The doors bind the CLI only: src/http reaches src/domain and src/store's inner files as before
      // (but the log's, which has a door for every room).
      expect(
        violations('src/http/app.ts', [
          { specifier: '../domain/calibration/set.js', line: 1 },
          { specifier: '../store/level.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/http/app.ts', [{ specifier: '../domain/log/witnesses.js', line: 3 }])).toHaveLength(1);
    });

    it('keeps the witness on src/core and src/store', () => {
      expect(
        violations('src/witness/witness.ts', [
          { specifier: '../core/index.js', line: 1 },
          { specifier: '../store/index.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/witness/witness.ts', [{ specifier: '../domain/log.js', line: 3 }])).toHaveLength(1);
      expect(violations('src/witness/server.ts', [{ specifier: '../http/app.js', line: 4 }])).toHaveLength(1);
      expect(violations('src/witness/server.ts', [{ specifier: 'fastify', line: 5 }])).toHaveLength(1);
      expect(violations('src/domain/log/witnesses.ts', [{ specifier: '../../witness/witness.js', line: 1 }])).toHaveLength(1);
    });

    it('keeps the areas of the domain apart where ARCHITECTURE 1 says so', () => {
      expect(violations('src/domain/common/ajv.ts', [{ specifier: '../../core/index.js', line: 1 }])).toEqual([]);
      expect(violations('src/domain/common/ajv.ts', [{ specifier: '../log/log.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/domain/common/ajv.ts', [{ specifier: '../records.js', line: 2 }])).toHaveLength(1);
      expect(violations('src/domain/log/log.ts', [{ specifier: '../proposals/judging.js', line: 3 }])).toHaveLength(1);
      expect(violations('src/domain/log/log.ts', [{ specifier: '../context.js', line: 3 }])).toEqual([]);
      expect(violations('src/domain/proposals/judging.ts', [{ specifier: '../log/index.js', line: 1 }])).toEqual([]);
      expect(violations('src/domain/knowledge/tree.ts', [{ specifier: '../../http/app.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/ops/store-admin.ts', [{ specifier: '../http/app.js', line: 1 }])).toHaveLength(1);
    });

    it('lets the explorer take nothing of src/http and the HTTP kit through its index only, and the kit nothing but src/core', () => {
      expect(violations('src/explorer/index.ts', [{ specifier: '../http-kit/index.js', line: 1 }])).toEqual([]);
      expect(violations('src/explorer/data.ts', [{ specifier: '../http-kit/inner-call.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/explorer/index.ts', [{ specifier: '../http/routes/discovery.js', line: 2 }])).toHaveLength(1);
      expect(violations('src/explorer/pages/home.ts', [{ specifier: '../../http/schemas.js', line: 3 }])).toHaveLength(1);
      expect(
        violations('src/http-kit/errors.ts', [
          { specifier: './urls.js', line: 1 },
          { specifier: '../core/index.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/http-kit/errors.ts', [{ specifier: '../http/schemas.js', line: 3 }])).toHaveLength(1);
      expect(violations('src/http-kit/media.ts', [{ specifier: '../domain/records.js', line: 4 }])).toHaveLength(1);
      expect(
        violations('src/http/app.ts', [
          { specifier: '../http-kit/errors.js', line: 1 },
          { specifier: '../explorer/index.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/domain/x.ts', [{ specifier: '../http-kit/index.js', line: 1 }])).toHaveLength(1);
    });

    it('lets only src/store import LevelDB', () => {
      expect(
        violations('src/store/level.ts', [
          { specifier: 'level', line: 1 },
          { specifier: 'abstract-level', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/domain/x.ts', [{ specifier: 'classic-level', line: 1 }])).toHaveLength(1);
      expect(violations('cli/x.ts', [{ specifier: 'level/whatever', line: 1 }])).toHaveLength(1);
    });

    it('lets only src/store import a PostgreSQL driver', () => {
      expect(violations('src/store/postgres/store.ts', [{ specifier: 'pg', line: 1 }])).toEqual([]);
      expect(violations('src/http/app.ts', [{ specifier: 'pg', line: 3 }])).toEqual(["src/http/app.ts:3 imports 'pg': " + RULES[RULES.length - 1].why]);
      expect(violations('src/domain/x.ts', [{ specifier: 'postgres', line: 1 }])).toHaveLength(1);
      expect(violations('cli/commands/store/index.ts', [{ specifier: 'pg-pool', line: 1 }])).toHaveLength(1);
      expect(violations('src/core/x.ts', [{ specifier: '@electric-sql/pglite', line: 1 }]).length).toBeGreaterThan(0);
    });
  });

  describe('the node room', () => {
    it('is entered by the CLI through its index only', () => {
      expect(violations('cli/commands/log/index.ts', [{ specifier: '../../../src/node/index.js', line: 1 }])).toEqual([]);
      expect(violations('cli/commands/log/index.ts', [{ specifier: '../../../src/node/open.js', line: 1 }])).toHaveLength(1);
    });

    it('takes of src/http what starting a node needs, and no fastify of its own', () => {
      expect(
        violations('src/node/start.ts', [
          { specifier: '../http/app.js', line: 1 },
          { specifier: '../http/request-log.js', line: 2 },
          { specifier: '../http-kit/urls.js', line: 3 },
          { specifier: '../domain/calibration/set.js', line: 4 },
          { specifier: '../store/index.js', line: 5 },
          { specifier: '../witness/index.js', line: 6 },
        ]),
      ).toEqual([]);
      for (const specifier of ['../http/routes/log.js', '../http-kit/errors.js', '../ops/index.js', '../explorer/index.js', '../../cli/main.js', 'fastify'])
        expect(violations('src/node/start.ts', [{ specifier, line: 1 }]), specifier).toHaveLength(1);
    });

    it('is never imported by src/http, src/ops, src/explorer or the domain', () => {
      for (const file of ['src/http/app.ts', 'src/http-kit/urls.ts', 'src/ops/admin-channel.ts', 'src/explorer/index.ts', 'src/domain/records.ts'])
        expect(violations(file, [{ specifier: '../node/index.js', line: 1 }]), file).toHaveLength(1);
    });
  });

  describe('the doors every room shares', () => {
    it("keeps the domain off the explorer's pages and the node room", () => {
      expect(violations('src/domain/knowledge/tree.ts', [{ specifier: '../../explorer/data.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/domain/log/log.ts', [{ specifier: '../../explorer/client/verify-form.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/domain/x.ts', [{ specifier: '../node/index.js', line: 1 }])).toHaveLength(1);
    });

    it('reaches the log through its door (index.ts) from every room, bench/ too', () => {
      for (const [file, specifier] of [
        ['src/domain/proposals/statement.ts', '../log/events.js'],
        ['src/http/routes/log.ts', '../../domain/log/proofs.js'],
        ['src/node/check.ts', '../domain/log/audit.js'],
        ['bench/interop.ts', '../src/domain/log/statements.js'],
      ])
        expect(violations(file, [{ specifier, line: 1 }]), file).toHaveLength(1);
      expect(violations('bench/interop.ts', [{ specifier: '../src/domain/log/index.js', line: 1 }])).toEqual([]);
      // Inside the log its files import one another directly.
      expect(violations('src/domain/log/audit.ts', [{ specifier: './proofs.js', line: 1 }])).toEqual([]);
    });

    it('lets bench/ import any room, nothing outside the rooms, and no room import bench/', () => {
      for (const specifier of ['../src/store/level.js', '../src/http/app.js', '../cli/commands/verify/pool.js', '../verifier/index.js', 'fastify'])
        expect(violations('bench/x.ts', [{ specifier, line: 1 }]), specifier).toEqual([]);
      expect(violations('bench/x.ts', [{ specifier: '../test/helpers/app.js', line: 1 }])).toHaveLength(1);
      expect(violations('bench/x.ts', [{ specifier: 'pg', line: 1 }])).toHaveLength(1);
      for (const file of ['src/http/app.ts', 'src/domain/x.ts', 'cli/main.ts', 'src/core/x.ts', 'src/node/x.ts'])
        expect(violations(file, [{ specifier: file.startsWith('cli') ? '../bench/workload.js' : '../../bench/workload.js', line: 1 }]), file).toHaveLength(1);
      expect(violations('src/http/app.ts', [{ specifier: '../../scripts/bundle.mjs', line: 1 }])).toHaveLength(1);
    });
  });

  describe('the source tree', () => {
    const files = ['src', 'cli', 'verifier', 'bench'].flatMap((d) => sourceFiles(d));
    const parsed = new Map<string, Import[]>();
    /** A file's imports, each file parsed once for every test below. */
    const importsOfFile = (file: string) => {
      let found = parsed.get(file);
      if (!found) parsed.set(file, (found = importsOf(file, readFileSync(join(ROOT, file), 'utf8'))));
      return found;
    };

    it('has files in the rooms it checks (the scan is not empty)', () => {
      expect(files.filter((f) => roomOf(f) === 'src/core').length).toBeGreaterThan(3);
      expect(files.filter((f) => roomOf(f) === 'src/store').length).toBeGreaterThan(1);
      expect(files.filter((f) => roomOf(f) === 'src/witness').length).toBeGreaterThan(1);
      expect(files.filter((f) => roomOf(f) === 'src/node').length).toBeGreaterThan(3);
      expect(files.filter((f) => roomOf(f) === 'bench').length).toBeGreaterThan(10);
    });

    it('keeps at most 12 files directly in src/domain: the rest live in their area (ARCHITECTURE 1)', () => {
      const top = files.filter((f) => f.startsWith('src/domain/') && !f.slice('src/domain/'.length).includes('/'));
      expect(top.length, top.join(', ')).toBeLessThanOrEqual(12);
    });

    it('has no import that breaks a one-way door', () => {
      const broken = files.flatMap((file) => violations(file, importsOfFile(file)));
      expect(broken).toEqual([]);
    });

    /** The relative imports of a file, resolved to repo paths (.js named as the .ts it is). */
    const targetsOf = (file: string) =>
      importsOfFile(file)
        .filter(({ specifier }) => specifier.startsWith('.'))
        .map(({ specifier, line }) => ({
          line,
          target: relative(ROOT, resolve(ROOT, dirname(file), specifier))
            .split(sep)
            .join('/')
            .replace(/\.js$/, '.ts'),
        }));

    it('lets the explorer reach the HTTP kit through its index only, which names its exports', () => {
      const explorer = files.filter((f) => roomOf(f) === 'src/explorer');
      expect(explorer.length).toBeGreaterThan(3);
      const throughKit = explorer.flatMap((file) =>
        targetsOf(file)
          .filter(({ target }) => roomOf(target) === 'src/http-kit')
          .map((t) => ({ file, ...t })),
      );
      expect(throughKit.length).toBeGreaterThan(0);
      expect(
        throughKit.filter(({ target }) => target !== 'src/http-kit/index.ts').map(({ file, line, target }) => `${file}:${line} imports ${target}`),
      ).toEqual([]);
      expect(readFileSync(join(ROOT, 'src/http-kit/index.ts'), 'utf8')).not.toMatch(/export \*/);
    });

    // cli/ in rooms (issue 48): its entry at the top, what every command uses in cli/kit, each
    // command with its helpers in cli/commands/<noun>/, ink views in cli/views.
    it("keeps cli/'s top to its entry (main.ts, program.ts): the rest lives in cli/kit, a command's room or cli/views", () => {
      const top = files.filter((f) => f.startsWith('cli/') && !f.slice('cli/'.length).includes('/'));
      expect(top.sort()).toEqual(['cli/main.ts', 'cli/program.ts']);
      const loose = files.filter((f) => f.startsWith('cli/commands/') && !f.slice('cli/commands/'.length).includes('/'));
      expect(loose).toEqual(['cli/commands/index.ts']);
      const elsewhere = files.filter((f) => f.startsWith('cli/') && !/^cli\/(main|program)\.ts$|^cli\/(kit|commands|views)\//.test(f));
      expect(elsewhere).toEqual([]);
    });

    it("lets the CLI's commands reach the kit through its index only, which names its exports", () => {
      const commands = files.filter((f) => f.startsWith('cli/') && !f.startsWith('cli/kit/'));
      const throughKit = commands.flatMap((file) =>
        targetsOf(file)
          .filter(({ target }) => target.startsWith('cli/kit/'))
          .map((t) => ({ file, ...t })),
      );
      expect(throughKit.length).toBeGreaterThan(20);
      expect(throughKit.filter(({ target }) => target !== 'cli/kit/index.ts').map(({ file, line, target }) => `${file}:${line} imports ${target}`)).toEqual([]);
      expect(readFileSync(join(ROOT, 'cli/kit/index.ts'), 'utf8')).not.toMatch(/export \*/);
    });

    // Route files are plugins app.ts registers; what several answers share (views, schemas) lives
    // beside them (src/http/views/, routes/*-schemas.ts), so no route reaches into another.
    it('lets no file but src/http/app.ts import a route file (views and schemas are shared instead)', () => {
      const routes = files.filter((f) => f.startsWith('src/http/routes/') && !f.endsWith('-schemas.ts'));
      expect(routes.length).toBeGreaterThan(10);
      const reaching = files
        .filter((f) => f !== 'src/http/app.ts')
        .flatMap((file) =>
          targetsOf(file)
            .filter(({ target }) => routes.includes(target))
            .map(({ line, target }) => `${file}:${line} imports ${target}`),
        );
      expect(reaching).toEqual([]);
    });

    // The verifier's browser build (scripts/build-verifier.mjs) takes verifier/ but its Node-only
    // files: the rest imports no Node built-in and no barrel that would bring one (src/core/index.ts
    // re-exports node:fs paths), and crypto only through the adapter src/core/crypto.ts.
    it('keeps the browser side of verifier/ free of Node built-ins (crypto through src/core/crypto.ts)', () => {
      // DSSE and Sigstore checks take ECDSA P-256 keys through node:crypto: the CLI and the single file only.
      const NODE_ONLY = ['verifier/index.ts', 'verifier/cas.ts', 'verifier/dsse.ts', 'verifier/sigstore.ts'];
      const broken = files
        .filter((f) => roomOf(f) === 'verifier' && !NODE_ONLY.includes(f))
        .flatMap((file) =>
          importsOfFile(file)
            .filter(({ specifier }) => specifier.startsWith('node:') || specifier.endsWith('/src/core/index.js') || specifier.endsWith('/cas.js'))
            .map(({ specifier, line }) => `${file}:${line} imports '${specifier}'`),
        );
      expect(broken).toEqual([]);
    });

    // What a stopped node's commands load (akas log check, akas admin revoke) is src/node's index
    // and what it imports as the module loads: src/http comes in by import() when a node starts,
    // so no fastify is loaded before (test/e2e/node-room.test.ts checks the built binary).
    it("loads no src/http and no fastify with src/node's index: only starting a node imports them", () => {
      const seen = new Set<string>();
      const packages = new Set<string>();
      const queue = ['src/node/index.ts'];
      while (queue.length) {
        const file = queue.pop()!;
        if (seen.has(file)) continue;
        seen.add(file);
        for (const specifier of valueImportsOf(file, readFileSync(join(ROOT, file), 'utf8'))) {
          if (!specifier.startsWith('.')) packages.add(packageOf(specifier) ?? specifier);
          else
            queue.push(
              sourceOf(
                relative(ROOT, resolve(ROOT, dirname(file), specifier))
                  .split(sep)
                  .join('/'),
              ),
            );
        }
      }
      expect(seen.has('src/store/index.ts') && seen.has('src/node/check.ts')).toBe(true);
      expect([...seen].filter((f) => ['src/http', 'src/http-kit', 'src/explorer'].includes(roomOf(f)))).toEqual([]);
      expect([...packages].filter((p) => matchesPackage(p, 'fastify') || matchesPackage(p, '@fastify/*'))).toEqual([]);
    });

    // ARCHITECTURE 1: src/core does no I/O but finding the package's data/ folder (paths.ts looks
    // for package.json beside data/); the rooms that read data/ read it themselves.
    it('keeps src/core off the file system, the network and other processes, but paths.ts finding data/', () => {
      const IO = /^node:(fs|fs\/promises|net|http|https|http2|tls|dgram|dns|child_process|worker_threads|cluster|readline|repl)$/;
      const io = files
        .filter((f) => roomOf(f) === 'src/core')
        .flatMap((file) => importsOfFile(file).map(({ specifier, line }) => ({ file, specifier, line })))
        .filter(({ specifier }) => IO.test(specifier))
        .map(({ file, specifier, line }) => `${file}:${line} imports '${specifier}'`);
      expect(io).toEqual([expect.stringMatching(/^src\/core\/paths\.ts:\d+ imports 'node:fs'$/)]);
    });
  });

  describe('ARCHITECTURE 1, read back', () => {
    const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
    const sorted = (m: Map<string, string[]>) => Object.fromEntries([...m].map(([room, to]) => [room, [...to].sort()]));

    it('reads an arrows block (targets wrapped under the first, files in brackets) and a rules list (items wrapped)', () => {
      const block = ['```', 'cli          ──► src/core, src/ops (index.ts, templates.ts),', '                 verifier', 'src/core     ──► data', '```'].join(
        '\n',
      );
      expect(Object.fromEntries(readArrows(block))).toEqual({ cli: ['src/core', 'src/ops (index.ts, templates.ts)', 'verifier'], 'src/core': ['data'] });
      expect(readRules('\n- one rule,\n  wrapped\n- another\n')).toEqual(['one rule, wrapped', 'another']);
      expect(readArrows(arrowsText())).toEqual(arrows());
    });

    it('draws every arrow the rules allow and no other', () => {
      expect(sorted(readArrows(between(doc, 'rooms:arrows'))), `ARCHITECTURE 1's arrows, as the rules have them:\n${arrowsText()}`).toEqual(sorted(arrows()));
    });

    it('states every rule this test holds, in its words, and no other', () => {
      const held = [...new Set(RULES.map((r) => r.why))];
      expect(
        readRules(between(doc, 'rooms:rules')).sort(),
        `ARCHITECTURE 1's rules, as this test words them:\n${held.map((w) => `- ${w}`).join('\n')}`,
      ).toEqual(held.sort());
    });
  });
});
