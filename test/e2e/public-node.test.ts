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
    const r = await runCli(['serve', '--data', data, '--port', '0', '--log-level', 'warn']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`chmod 700 ${data}`);
    expect(r.stderr).toContain('0755');
    chmodSync(data, 0o700);
  });
});

describe('akas serve and its calibration set', () => {
  it('refuses the demo set on a non-loopback address unless told otherwise', async () => {
    const data = tempDir('akas-e2e-demo-');
    dirs.push(data);
    // Refused before anything listens: nothing is ever bound to 0.0.0.0 here.
    const r = await runCli(['serve', '--data', data, '--host', '0.0.0.0', '--port', '0', '--log-level', 'warn']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('demo calibration set');
    expect(r.stderr).toContain('akas calibration init DIR');
    expect(r.stderr).toContain('--allow-demo-calibration');
    // On loopback behind a reverse proxy (nginx on the same machine), or published at a public URL: reachable all the same.
    for (const [args, said] of [
      [['--trust-proxy', '--public-url', 'https://akas.example.org'], 'behind a reverse proxy (--trust-proxy)'],
      [['--public-url', 'https://akas.example.org'], 'published at https://akas.example.org (--public-url)'],
    ] as const) {
      const behind = await runCli(['serve', '--data', data, '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn', ...args]);
      expect(behind.code, behind.stderr).toBe(2);
      expect(behind.stderr).toContain(`Refusing to serve ${said} with the demo calibration set`);
    }
  });

  it('runs on a private set made by akas calibration init, and says so at start and in /healthz', async () => {
    const parent = tempDir('akas-e2e-cal-');
    dirs.push(parent);
    const set = join(parent, 'set');
    const init = await runCli(['--json', 'calibration', 'init', set, '--entries', '120']);
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ questions: 10, decoys: expect.any(Number) });
    const { startServe } = await import('../helpers/e2e.js');
    const node = await startServe(['--calibration', set]);
    try {
      expect(await (await fetch(`${node.url}/healthz`)).json()).toMatchObject({ calibration: 'private' });
    } finally {
      await node.stop();
    }
    const demo = await startServe();
    try {
      expect(await (await fetch(`${demo.url}/healthz`)).json()).toMatchObject({ calibration: 'demo' });
    } finally {
      await demo.stop();
    }
  });
});
