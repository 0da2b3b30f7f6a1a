// Every command of README.md, in order, against `akas serve --demo` (run `npm run build`
// first): the README's examples answer as printed (issue 23, item 4). Which blocks and
// commands run, what the test writes for the reader and how placeholders are carried are the
// rules at the top of test/helpers/readme.ts; a block the test cannot run says why in a
// `<!-- readme-test: ... -->` comment above it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savedIdentity, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { type CommandRun, readmeBlocks, runBlock, type ReadmeContext } from '../helpers/readme.js';

let node: RunningNode;
let ctx: ReadmeContext;

beforeAll(async () => {
  node = await startServe(['--demo'], { timeoutMs: 60_000 });
  // The banner comes first; /healthz says 503 `seeding` until the demo tree is in (issue 36, 5):
  // a reader's script waits for 200, and so does this.
  while ((await fetch(`${node.url}/healthz`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
  const work = tempDir('akas-readme-');
  const configDir = join(work, '.config');
  mkdirSync(configDir);
  const health = (await (await fetch(`${node.url}/healthz`)).json()) as any;
  const keys = (await (await fetch(`${node.url}/api/node/keys`)).json()) as any;
  ctx = { url: node.url, issuer: health.issuer, logKey: keys.log.verifierKey, work, configDir, profile: (name) => savedIdentity(name, configDir) };
}, 90_000);
afterAll(async () => {
  await node?.stop();
  if (ctx) rmSync(ctx.work, { recursive: true, force: true });
});

describe('README.md', () => {
  const blocks = readmeBlocks();

  it('has its blocks either run or marked with why not', () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const b of blocks) expect(b.skip === null || b.skip.length > 10, `block at line ${b.at}`).toBe(true);
    expect(blocks.filter((b) => !b.skip).length).toBeGreaterThanOrEqual(5);
  });

  it('leaves nothing git would track in a clone: every folder and file its commands make is in .gitignore (issue 36, 8)', () => {
    const made = new Set<string>();
    for (const b of blocks) {
      for (const m of b.text.matchAll(/(--data|--blobs|--credentials|-o|>)\s+(\.\/)?([A-Za-z0-9._-]+)\/?(?=\s|$)/g)) {
        // A folder is asked of git as one (a trailing slash): .gitignore's `dir/` patterns match folders only.
        made.add(['--data', '--blobs', '--credentials'].includes(m[1]) ? `${m[3]}/` : m[3]);
      }
    }
    expect(made).toContain('.akas-demo/');
    expect(made).toContain('w1/');
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const notIgnored = [...made].filter((p) => spawnSync('git', ['check-ignore', '-q', '--no-index', p], { cwd: root }).status !== 0);
    expect(notIgnored).toEqual([]);
  });

  it('answers every command it shows, in order, on a demo node', async () => {
    const ran: CommandRun[] = [];
    for (const block of blocks) {
      if (block.skip) continue;
      ran.push(...(await runBlock(block, ctx)));
    }
    expect(ran.length).toBeGreaterThan(40);
    // The revocation block, pasted with no --data, acts on the demo node that runs and names it (issue 47, 3).
    const revoked = ran.find((r) => r.command.startsWith('akas admin revoke '));
    expect(revoked?.stdout).toContain(`via the running node at ${node.url}, data folder ${realpathSync(node.dataDir)}`);
  }, 300_000);
});
