// The release shape: `npm pack` gives a package whose `akas` works after a global install from
// the tarball (dependencies from the npm registry), with the data a node needs and nothing the
// tests need. Slow (a whole install), so it runs only with AKAS_TEST_RELEASE=1 (.ci/run sets it
// after npm test); the build it packs is the one npm test made.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const RELEASE = process.env.AKAS_TEST_RELEASE === '1';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let work: string;
let tarball: string;
let files: string[];

beforeAll(() => {
  if (!RELEASE) return;
  work = mkdtempSync(join(tmpdir(), 'akas-pack-'));
  // --ignore-scripts: pack the build npm test made (prepare would build again).
  const packed = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const info = JSON.parse(packed.stdout)[0] as { filename: string; files: Array<{ path: string }> };
  tarball = join(work, info.filename);
  files = info.files.map((f) => f.path);
}, 180_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!RELEASE)('npm pack and a global install from the tarball (AKAS_TEST_RELEASE=1)', () => {
  it('packs the CLI, the single file, the browser build and the data a node reads, and nothing the tests need', () => {
    for (const f of [
      'package.json',
      'README.md',
      'dist/bin/main.cjs',
      'dist/akas-verify.mjs',
      'dist/akas-verify.browser.js',
      'data/calibration',
      'data/challenges',
      'data/attestations',
      'data/contexts',
      'data/extract',
    ]) {
      expect(
        files.some((p) => p === f || p.startsWith(f + '/')),
        f,
      ).toBe(true);
    }
    const unwanted = files.filter(
      (p) =>
        /^(test|bench|scripts|src|cli|verifier|docs)\//.test(p) || /^dist\/(test|bench|src|cli|verifier)\//.test(p) || /akas-verify-(linux|darwin|win)/.test(p),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs globally with npm install -g, and akas serve and akas verify work', async () => {
    const prefix = join(work, 'prefix');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    expect(install.status, install.stderr).toBe(0);
    const akas = join(prefix, 'bin', 'akas');
    expect(existsSync(akas)).toBe(true);
    const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: work, AKAS_CONFIG_DIR: join(work, 'config') };

    const version = spawnSync(akas, ['--version'], { encoding: 'utf8', env });
    expect(version.stdout.trim()).toBe(JSON.parse(spawnSync('npm', ['pkg', 'get', 'version'], { cwd: ROOT, encoding: 'utf8' }).stdout));

    // akas serve from the installed package: it reads its calibration pools, challenge bank and schemas from data/.
    const data = join(work, 'data');
    const serve = spawn(akas, ['serve', '--data', data, '--port', '0', '--log-level', 'warn'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`akas serve did not listen: ${out}`)), 30_000);
        serve.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const health = (await (await fetch(`${url}/healthz`)).json()) as { issuer: string };
      expect(health.issuer).toMatch(/^did:key:z6Mk/);
      // Registering and drawing the calibration questions reads data/calibration from the package.
      const registered = (await (await fetch(`${url}/api/agent/v1/register`, { method: 'POST' })).json()) as { apiKey: string };
      const questions = await fetch(`${url}/api/agent/v1/calibrate`, { headers: { authorization: `Bearer ${registered.apiKey}` } });
      expect(questions.status).toBe(200);
      expect(((await questions.json()) as { questions: unknown[] }).questions).toHaveLength(5);
      // The installed akas verify, on the W3C vector copied beside the tests.
      const vector = join(ROOT, 'test/vectors/w3c-vc-di-eddsa/eddsa-jcs-2022/signedJCS.json');
      const verify = spawnSync(akas, ['--json', 'verify', 'credential', vector], { encoding: 'utf8', env });
      expect(verify.status).toBe(1);
      expect(
        JSON.parse(verify.stdout)
          .results[0].checks.filter((c: { result: string }) => c.result === 'failed')
          .map((c: { id: string }) => c.id),
      ).toEqual(['issuer.controller']);
    } finally {
      const exited = new Promise((r) => serve.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    expect(readdirSync(join(prefix, 'lib', 'node_modules'))).toContain('akas');
  }, 600_000);
});
