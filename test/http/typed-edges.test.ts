// Typed edges (issue 48, 3): a handler's request is typed from its route's schema by the TypeBox
// type provider (src/http-kit/typed.ts), so none is cast by hand; and the route plugins are tables of
// named handlers, each route one line naming the function that answers it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNode, type TestNode } from '../helpers/app.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts file under a folder of the repository, relative to its root. */
function sourcesOf(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourcesOf(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('typed edges', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await testNode();
  });
  afterAll(async () => node.close());

  it("casts no request of src/http or the explorer's pages by hand: its body, query and params are typed from the schema", () => {
    const casts = [...sourcesOf('src/http'), ...sourcesOf('src/explorer').filter((f) => !f.includes('/client/'))].flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/request\.(body|query|params) as\b/.test(line) ? [`${relative('.', file)}:${i + 1}`] : [])),
    );
    expect(casts).toEqual([]);
  });

  it('answers every API route with a named handler (the explorer has pages of its own)', () => {
    const api = node.app.akasRoutes.filter((r) => !(r.schema as { tags?: string[] } | undefined)?.tags?.includes('explorer'));
    expect(api.length).toBeGreaterThan(70);
    const anonymous = api.filter((r) => !r.handler.name).map((r) => `${r.method} ${r.url}`);
    expect(anonymous).toEqual([]);
  });
});
