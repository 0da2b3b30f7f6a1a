// Every command of README.md, in order, against `akas serve --demo` (run `npm run build`
// first): the README's examples answer as printed (issue 23, item 4). Which blocks and
// commands run, what the test writes for the reader and how placeholders are carried are the
// rules at the top of test/helpers/readme.ts; a block the test cannot run says why in a
// `<!-- readme-test: ... -->` comment above it.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savedIdentity, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { readmeBlocks, runBlock, type ReadmeContext } from '../helpers/readme.js';

let node: RunningNode;
let ctx: ReadmeContext;

beforeAll(async () => {
  node = await startServe(['--demo'], { timeoutMs: 60_000 });
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

  it('answers every command it shows, in order, on a demo node', async () => {
    let ran = 0;
    for (const block of blocks) {
      if (block.skip) continue;
      const runs = await runBlock(block, ctx);
      ran += runs.length;
    }
    expect(ran).toBeGreaterThan(40);
  }, 300_000);
});
