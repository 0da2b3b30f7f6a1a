// The one-way rooms of ARCHITECTURE 1, kept true by reading the source: every import, re-export
// and dynamic import() in src/, cli/ and verifier/ is parsed (TypeScript's own parser, so
// comments and strings never count), relative paths are resolved to the room they land in,
// and a forbidden arrow fails with the file and line that draws it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

// The explorer's browser code before the explorer, http's kit before http, and the domain's areas
// that have rules of their own before the domain: a file is in the first room its path starts with.
const DOMAIN_AREAS = ['src/domain/common', 'src/domain/log', 'src/domain/proposals'] as const;
const ROOMS = [
  'src/core',
  'src/store',
  ...DOMAIN_AREAS,
  'src/domain',
  'src/ops',
  'src/http/kit',
  'src/http',
  'src/witness',
  'src/explorer/client',
  'src/explorer',
  'cli',
  'verifier',
  'data',
] as const;
/** The domain and every area of it with rules of its own. */
const DOMAIN: Room[] = [...DOMAIN_AREAS, 'src/domain'];
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
  why: string;
}

const LEVEL = ['level', 'classic-level', 'abstract-level'];
/** PostgreSQL drivers (node-postgres and its parts, postgres.js, pglite). */
const POSTGRES = ['pg', 'pg-pool', 'pg-cursor', 'pg-protocol', 'pg-native', 'postgres', '@electric-sql/pglite'];
/** Every database driver: only src/store may import one. */
const DATABASE = [...LEVEL, ...POSTGRES];
/** The files through which the CLI enters the node's rooms (ARCHITECTURE 1): each names what it exports. */
const CLI_ENTRIES: Partial<Record<Room, string[]>> = {
  'src/http': ['src/http/server.ts'],
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
    forbidRooms: ['src/http/kit', 'src/http', 'src/ops', 'src/witness', 'cli', 'verifier'],
    forbidPackages: ['fastify', '@fastify/*'],
    why: 'src/domain has no HTTP: it never imports src/http, src/ops, cli or fastify',
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
    forbidRooms: ['src/http/kit', 'src/http', 'cli', 'src/explorer'],
    forbidPackages: ['fastify', '@fastify/*'],
    why: 'src/ops (store migrate and copy, the admin channel) runs beside a node on src/domain and src/store, never through src/http',
  },
  {
    from: ['src/http', 'src/http/kit'],
    forbidRooms: ['cli'],
    why: 'src/http never imports cli (cli -> src/http, not back)',
  },
  {
    from: ['src/http/kit'],
    allowRooms: ['src/http/kit', 'src/core'],
    why:
      "src/http/kit (errors, media types, security headers, inner calls, body bounds, the node's origin) stands on src/core only: what " +
      'the explorer takes of http brings no more of it',
  },
  {
    from: ['cli'],
    forbidRooms: [...DOMAIN, 'src/http/kit'],
    onlyThrough: CLI_ENTRIES,
    why:
      "cli reaches a node's rooms through their documented entry points only (src/http/server.ts, src/ops/index.ts, templates.ts and admin-ask.ts, " +
      "src/witness/index.ts, src/store/index.ts), never src/domain, http's kit (the explorer's door) or another room's inner files",
  },
  {
    from: ['src/explorer'],
    forbidRooms: ['cli', 'verifier'],
    forbidPackages: ['undici'],
    why:
      'src/explorer reads through the API routes and src/domain; it never imports the CLI, and its checks run in the browser ' +
      '(src/explorer/client), not on the node',
  },
  {
    from: ['src/explorer'],
    forbidRooms: ['src/http'],
    why: 'of src/http, src/explorer imports src/http/kit only (http registers the explorer: the explorer never reaches back into its routes)',
  },
  {
    from: ['src/explorer/client'],
    allowRooms: ['src/explorer/client', 'verifier'],
    forbidPackages: ['*'],
    why: "the explorer's browser code imports no package and no room but the verifier's browser build (loaded by URL; its types only)",
  },
  {
    from: [...DOMAIN, 'src/ops', 'src/http/kit', 'src/http', 'src/witness', 'src/explorer', 'cli', 'verifier', 'src/core', 'elsewhere'],
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
      if (!rule.from.includes(from)) continue;
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
      expect(violations('src/http/routes/a.ts', [{ specifier: '../../../cli/client.js', line: 1 }])).toHaveLength(1);
      expect(violations('cli/commands/serve.ts', [{ specifier: '../../src/http/server.js', line: 1 }])).toEqual([]);
    });

    it('lets the CLI into the rooms of a node through their entry points only, and never into src/domain', () => {
      const from = (specifier: string, file = 'cli/commands/serve.ts') => violations(file, [{ specifier, line: 1 }]);
      for (const entry of [
        '../../src/http/server.js',
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
        expect(from(inner), inner).toEqual([
          `cli/commands/serve.ts:1 imports '${inner}' (${inner.split('/').slice(2, 4).join('/')}): ${RULES.find((r) => r.onlyThrough)!.why}`,
        ]);
      }
      for (const domain of [
        '../../src/domain/log/witnesses.js',
        '../../src/domain/proposals/templates.js',
        '../../src/domain/calibration/generate.js',
        '../../src/domain/records.js',
      ])
        expect(from(domain), domain).toHaveLength(1);
      expect(from('../../../src/domain/common/ajv.js', 'cli/commands/verify/node.ts')).toHaveLength(1);
      expect(from('../../src/http/kit/index.js')).toHaveLength(1);
      // The doors bind the CLI only: src/http reaches src/domain and src/store's inner files as before.
      expect(
        violations('src/http/server.ts', [
          { specifier: '../domain/log/witnesses.js', line: 1 },
          { specifier: '../store/level.js', line: 2 },
        ]),
      ).toEqual([]);
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
      expect(violations('src/domain/proposals/judging.ts', [{ specifier: '../log/log.js', line: 1 }])).toEqual([]);
      expect(violations('src/domain/knowledge/tree.ts', [{ specifier: '../../http/app.js', line: 1 }])).toHaveLength(1);
      expect(violations('src/ops/store-admin.ts', [{ specifier: '../http/app.js', line: 1 }])).toHaveLength(1);
    });

    it('lets the explorer take of src/http its kit only, and the kit nothing of http outside it', () => {
      expect(violations('src/explorer/index.ts', [{ specifier: '../http/kit/index.js', line: 1 }])).toEqual([]);
      expect(violations('src/explorer/index.ts', [{ specifier: '../http/routes/discovery.js', line: 2 }])).toHaveLength(1);
      expect(violations('src/explorer/pages/home.ts', [{ specifier: '../../http/schemas.js', line: 3 }])).toHaveLength(1);
      expect(
        violations('src/http/kit/errors.ts', [
          { specifier: './urls.js', line: 1 },
          { specifier: '../../core/index.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/http/kit/errors.ts', [{ specifier: '../schemas.js', line: 3 }])).toHaveLength(1);
      expect(violations('src/http/kit/media.ts', [{ specifier: '../../domain/records.js', line: 4 }])).toHaveLength(1);
      expect(
        violations('src/http/app.ts', [
          { specifier: './kit/errors.js', line: 1 },
          { specifier: '../explorer/index.js', line: 2 },
        ]),
      ).toEqual([]);
      expect(violations('src/domain/x.ts', [{ specifier: '../http/kit/index.js', line: 1 }])).toHaveLength(1);
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
      expect(violations('cli/commands/store.ts', [{ specifier: 'pg-pool', line: 1 }])).toHaveLength(1);
      expect(violations('src/core/x.ts', [{ specifier: '@electric-sql/pglite', line: 1 }]).length).toBeGreaterThan(0);
    });
  });

  describe('the source tree', () => {
    const files = ['src', 'cli', 'verifier'].flatMap((d) => sourceFiles(d));
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

    it('lets the explorer reach the kit through its index only, which names its exports', () => {
      const explorer = files.filter((f) => roomOf(f) === 'src/explorer');
      expect(explorer.length).toBeGreaterThan(3);
      const throughKit = explorer.flatMap((file) =>
        targetsOf(file)
          .filter(({ target }) => roomOf(target) === 'src/http/kit')
          .map((t) => ({ file, ...t })),
      );
      expect(throughKit.length).toBeGreaterThan(0);
      expect(
        throughKit.filter(({ target }) => target !== 'src/http/kit/index.ts').map(({ file, line, target }) => `${file}:${line} imports ${target}`),
      ).toEqual([]);
      expect(readFileSync(join(ROOT, 'src/http/kit/index.ts'), 'utf8')).not.toMatch(/export \*/);
    });

    // Route files are plugins app.ts registers; what several answers share (views, schemas) lives
    // beside them (src/http/views.ts, routes/*-schemas.ts), so no route reaches into another.
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
  });
});
