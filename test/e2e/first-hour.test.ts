// Issue 36, the first hour's third pass, against the built binary: a saved identity belongs to a
// node (its issuer), not to a URL; no claim of success that is not one (a browser that did not
// open, work that is not waiting); `akas serve` on a terminal (its banner first, then readable
// log lines) and every address it listens on; /healthz says `seeding` until the demo is in;
// help that helps (one pointer after a mistyped option, every missing flag at once, a dry run's
// next step).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, calibratedProfiles, runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { onTerminal } from '../helpers/pty.js';

const running: RunningNode[] = [];
afterAll(async () => {
  for (const n of running) await n.stop();
});

async function serve(args: string[] = [], opts: Parameters<typeof startServe>[1] = {}) {
  const n = await startServe(args, opts);
  running.push(n);
  return n;
}

/** A port free now (the two nodes of the profile test take it in turn). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const issuerOf = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as { issuer: string }).issuer;

describe('a saved identity belongs to a node, not to a URL (issue 36, 1)', () => {
  it('on another node at the same URL: me names both nodes, register makes one without --force, the old one is used again on its node', async () => {
    const port = await freePort();
    const configDir = tempDir('akas-fh-config-');
    const dataA = tempDir('akas-fh-a-');
    const cli = (args: string[], url: string) => runCli(['--base-url', url, ...args], { configDir });

    let a = await serve(['--port', String(port)], { dataDir: dataA });
    const issuerA = await issuerOf(a.url);
    const first = await cli(['--json', 'register'], a.url);
    expect(first.code, first.stderr).toBe(0);
    await a.stop({ keepData: true });

    const b = await serve(['--port', String(port)]);
    expect(b.url).toBe(a.url);
    const issuerB = await issuerOf(b.url);
    const me = await cli(['me'], b.url);
    expect(me.code).toBe(1);
    expect(me.stderr).toContain(issuerA);
    expect(me.stderr).toContain(issuerB);
    expect(me.stderr).toContain("another node's");
    const again = await cli(['--json', 'register'], b.url);
    expect(again.code, again.stderr).toBe(0);
    const tagB = JSON.parse(again.stdout).tag as string;
    expect(tagB).not.toBe(JSON.parse(first.stdout).tag);
    expect(JSON.parse((await cli(['--json', 'me'], b.url)).stdout).tag).toBe(tagB);
    await b.stop();

    // The first node back at the URL: its identity, kept for it, is used again.
    a = await serve(['--port', String(port)], { dataDir: dataA });
    const back = await cli(['--json', 'me'], a.url);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).tag).toBe(JSON.parse(first.stdout).tag);
    // And register there is refused: this node's identity is saved.
    const twice = await cli(['register'], a.url);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('already holds');
  }, 120_000);
});

describe('no claim of success that is not one (issue 36, 3)', () => {
  it('explore and docs --open print the URL and say nothing opened when the browser fails, exit 2', async () => {
    const n = await serve();
    for (const args of [['explore'], ['docs', '--open']]) {
      const r = await runCli(['--base-url', n.url, ...args], { env: { BROWSER: '/bin/false' } });
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stdout).not.toContain('opened');
      expect(r.stdout.trim()).toMatch(new RegExp(`^${n.url.replace(/[./]/g, '\\$&')}/`));
      expect(r.stderr).toContain('nothing opened: /bin/false exited 1');
    }
    // No display and no $BROWSER: nothing is started at all.
    const headless = await runCli(['--base-url', n.url, 'explore'], { env: { BROWSER: '', DISPLAY: '', WAYLAND_DISPLAY: '' } });
    expect(headless.code).toBe(2);
    expect(headless.stderr).toContain('nothing opened: no display here');
  });

  it('wakeup says no proposal waits when the queue is empty', async () => {
    const n = await serve();
    const configDir = tempDir('akas-fh-config-');
    await calibratedProfiles(n.url, tempDir('akas-fh-work-'), ['default'], configDir);
    const r = await runCli(['--base-url', n.url, 'wakeup'], { configDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('may be waiting');
    expect(r.stdout).toContain('no proposal waits for your judgment now');
  }, 60_000);
});

describe('akas serve on a terminal, and where it listens (issue 36, 4)', () => {
  it('prints the banner first, then one readable line per request, no JSON', async () => {
    const data = tempDir('akas-fh-pty-');
    const r = await onTerminal(['serve', '--demo', '--port', '0', '--data', data], [{ wait: 'stop with Ctrl-C' }, { signal: 'INT' }]);
    const out = r.output.replace(/\r/g, '');
    const banner = out.indexOf('akas node listening on http://');
    const firstRequest = out.search(/\d\d:\d\d:\d\d INFO {2}(GET|POST) \/\S* \d{3} [\d.]+ ms/);
    expect(banner, out).toBeGreaterThanOrEqual(0);
    expect(firstRequest, out).toBeGreaterThan(banner);
    expect(out).not.toContain('{"level"');
    expect(out.slice(0, banner)).toBe('');
  }, 120_000);

  it('names every address it listens on and its public URL (0.0.0.0), and logs JSON lines when not on a terminal', async () => {
    const n = await serve(['--host', '0.0.0.0', '--public-url', 'https://akas.example.org', '--log-level', 'info']);
    const out = n.stdout();
    const line = /\n {2}addresses {4}(.*)\n/.exec(out)?.[1] ?? '';
    const port = new URL(n.url).port;
    const v4 = Object.values(networkInterfaces())
      .flat()
      .filter((i) => i?.family === 'IPv4')
      .map((i) => `http://${i!.address}:${port}`);
    expect(v4.length).toBeGreaterThan(0);
    for (const u of v4) expect(line, out).toContain(u);
    expect(out).toContain('public URL   https://akas.example.org\n');
    await fetch(`${n.url}/healthz`);
    await n.stop();
    const lines = n.stderr().trim().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow();
  });
});

describe('/healthz while the demo is seeded (issue 36, 5)', () => {
  it('answers 503 seeding until the demo tree is in: a script that waits for 200 finds the tree', async () => {
    const port = await freePort();
    const data = tempDir('akas-fh-demo-');
    const child = spawn(process.execPath, [CLI, 'serve', '--demo', '--port', String(port), '--data', data, '--log-level', 'warn'], {
      stdio: 'ignore',
      env: { ...process.env, AKAS_CONFIG_DIR: tempDir('akas-fh-config-') },
    });
    const exited = new Promise((r) => child.once('exit', r));
    const url = `http://127.0.0.1:${port}`;
    let seeding = 0;
    try {
      for (;;) {
        const h = await fetch(`${url}/healthz`).catch(() => undefined);
        if (!h) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const body = (await h.json()) as { ok: boolean; seeding?: { what: string } };
        const tree = (await fetch(`${url}/api/knowledge/node/models/tiny-classifier`)).status;
        if (h.status === 503) {
          expect(body.ok).toBe(false);
          expect(body.seeding?.what).toContain('demo');
          seeding++;
          continue;
        }
        expect(h.status).toBe(200);
        // The first 200 a waiting script sees: the tree it then reads is there.
        expect(tree).toBe(200);
        expect(body.seeding).toBeUndefined();
        break;
      }
      expect(seeding).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});

describe('help that helps (issue 36, 6)', () => {
  it('a mistyped option prints the error, the suggestion and one pointer, not the whole help', async () => {
    const r = await runCli(['serve', '--prot', '7373']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--prot'");
    expect(r.stderr).toContain('Did you mean --port?');
    expect(r.stderr).toContain('akas serve --help lists its options');
    expect(r.stderr).not.toContain('Usage:');
    expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
  });

  it('judge names every missing flag at once', async () => {
    const r = await runCli(['judge', 'cprop_0123456789abcdef', '--clarity', '0.5']);
    expect(r.code).toBe(2);
    for (const flag of ['--accuracy', '--compression', '--sources', '--rationale']) expect(r.stderr).toContain(flag);
    expect(r.stderr).not.toContain('--clarity,');
  });

  it('a dry run by an uncalibrated agent of a valid payload says it is valid and that calibrating is next', async () => {
    const n = await serve();
    const configDir = tempDir('akas-fh-config-');
    const work = tempDir('akas-fh-work-');
    expect((await runCli(['--base-url', n.url, 'register'], { configDir })).code).toBe(0);
    const template = await runCli(['propose', 'capability', '--template']);
    writeFileSync(join(work, 'payload.json'), template.stdout);
    const r = await runCli(['--base-url', n.url, 'propose', 'capability', '--file', 'payload.json', '--dry-run'], { configDir, cwd: work });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('the payload is a valid capability');
    expect(r.stdout).toContain('next: akas calibrate');
    expect(r.stdout).not.toContain('NOT valid');
  });
});
