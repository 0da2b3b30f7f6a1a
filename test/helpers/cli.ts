// In-process CLI runs for tests: the commander program run on argv with captured streams,
// against a test node listening on 127.0.0.1 (port 0), with identities saved under a temp
// AKAS_CONFIG_DIR. Also stand-ins for a terminal (a TTY stdout that records frames, a TTY
// stdin that ink reads keys from) for the ink views.
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect, onTestFailed } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { run } from '../../cli/program.js';
import type { AppConfig } from '../../src/http/app.js';
import { markCalibrated } from './agents.js';
import { testNode, type TestNode } from './app.js';

/** A writable that keeps what was written; `tty` makes it look like a terminal to ink. */
export class Capture extends Writable {
  text = '';
  isTTY?: boolean;
  columns = 120;
  rows = 40;
  constructor(tty = false) {
    super();
    if (tty) this.isTTY = true;
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void) {
    this.text += chunk.toString();
    this.emit('wrote'); // frameWaiter wakes on the write itself
    done();
  }
}

/** A stand-in for a terminal's stdin as ink reads it: raw mode, 'readable' events, read(). */
export class FakeTtyStdin extends EventEmitter {
  isTTY = true;
  private queue: string[] = [];
  setRawMode() {}
  setEncoding() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
  read(): string | null {
    return this.queue.shift() ?? null;
  }
  press(keys: string) {
    this.queue.push(keys);
    this.emit('readable');
  }
}

// React's scheduler, the very module ink's renderer queues its work on (one copy in
// node_modules, loaded once by Node): a task queued here at low priority runs after the work
// React queued before it, a frame's effects among it.
const scheduler = createRequire(import.meta.url)('scheduler') as {
  unstable_scheduleCallback(priority: number, task: () => void): unknown;
  unstable_LowPriority: number;
};

/** Resolves once React has run the work it had queued when this was called. */
export const afterReactWork = () => new Promise<void>((resolve) => scheduler.unstable_scheduleCallback(scheduler.unstable_LowPriority, () => resolve()));

/**
 * Waits for a frame to draw text (after what the previous wait found), then for the frame's
 * effects to have run: ink attaches a newly drawn input's key handler in an effect, after the
 * paint, and a key pressed before it is lost. Both waits are for the events themselves (a
 * write, React's queue), never for a while: on a busy machine the effect can come later than
 * any pause (20 ms sleeps lost keys so in terminal-input.test.ts; issue 31, item 6). What was
 * drawn is printed if the test fails.
 */
export function frameWaiter(stdout: Capture) {
  let seen = 0;
  let awaited: string | undefined;
  onTestFailed(() => {
    if (awaited !== undefined) console.error(`never drew "${awaited}"; drew:\n${stdout.text.slice(seen)}`);
  });
  return async (text: string) => {
    awaited = text;
    let at: number;
    while ((at = stdout.text.indexOf(text, seen)) < 0) await once(stdout, 'wrote');
    seen = at;
    awaited = undefined;
    await afterReactWork();
  };
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

export interface CliHarness {
  node: TestNode;
  baseUrl: string;
  configDir: string;
  /** Runs `akas ...args` in-process against the node. */
  akas(args: string[], opts?: { profile?: string; stdin?: NodeJS.ReadableStream | FakeTtyStdin; stdout?: Capture }): Promise<Ran>;
  /** Registers a fresh profile through the CLI and calibrates it through the domain. */
  agent(score?: number, balance?: number): Promise<{ profile: string; tag: string }>;
  close(): Promise<void>;
}

/** A test node listening on 127.0.0.1 and an in-process CLI pointed at it. */
export async function cliHarness(config: Partial<AppConfig> = {}): Promise<CliHarness> {
  const configDir = mkdtempSync(join(tmpdir(), 'akas-cli-config-'));
  process.env.AKAS_CONFIG_DIR = configDir;
  // Every CLI run comes from 127.0.0.1: a single-operator node.
  const node = await testNode({ sameIpCollusionCheck: false, ...config });
  await node.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = node.app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  let profiles = 0;
  const h: CliHarness = {
    node,
    baseUrl,
    configDir,
    async akas(args, opts = {}) {
      const stdout = opts.stdout ?? new Capture();
      const stderr = new Capture();
      const io = { stdout, stderr, ...(opts.stdin ? { stdin: opts.stdin } : {}) };
      const code = await run([...(opts.profile ? ['--profile', opts.profile] : []), ...args], io, commandGroups, { AKAS_BASE_URL: baseUrl });
      process.exitCode = 0;
      return { code, stdout: stdout.text, stderr: stderr.text, json: () => JSON.parse(stdout.text) };
    },
    async agent(score = 0.8, balance = 20) {
      const profile = `p${++profiles}`;
      const r = await h.akas(['--json', 'register'], { profile });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const { tag } = r.json();
      if (score >= 0) await markCalibrated(node, tag, score, balance);
      return { profile, tag };
    },
    async close() {
      await node.close();
      rmSync(configDir, { recursive: true, force: true });
      delete process.env.AKAS_CONFIG_DIR;
      process.exitCode = 0;
    },
  };
  return h;
}

/**
 * ink draws only its last frame when it thinks it runs in CI; tests that read frames turn
 * that off for the file (is-in-ci reads the environment when ink is first imported).
 * Answers a function that restores the environment.
 */
export function inkFramesEverywhere(): () => void {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  process.env.CI = '0';
  process.env.CONTINUOUS_INTEGRATION = '0';
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
