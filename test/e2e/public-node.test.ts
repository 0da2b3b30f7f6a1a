// The built `akas serve` as a public node would run it (issue 22): what it refuses to start on,
// and what it says about itself when it starts.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/e2e.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('akas serve on a data folder others can read', () => {
  it('refuses to start, naming the folder, its mode and the chmod that fixes it', async () => {
    const parent = tempDir('akas-e2e-mode-');
    dirs.push(parent);
    const data = join(parent, 'data');
    mkdirSync(data);
    chmodSync(data, 0o755);
    const r = await runCli(['serve', '--data', data, '--port', '0', '--log-level', 'warn'], { timeoutMs: 15_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`chmod 700 ${data}`);
    expect(r.stderr).toContain('0755');
    chmodSync(data, 0o700);
  });
});
