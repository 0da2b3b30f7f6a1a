// The built `akas` on a pseudo-terminal (test/helpers/terminal-driver.py), for the interactive views:
// keys arrive in the chunks a test chooses, and signals are real ones.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI, defaultConfigDir } from './e2e.js';

const DRIVER = fileURLToPath(new URL('./terminal-driver.py', import.meta.url));

export type PtyStep = { wait: string } | { send: string } | { signal: 'INT' | 'TERM' } | { sleep: number };

/** Runs `akas ...args` on a terminal 120x40, playing steps; answers the exit code and what it drew. */
export function onTerminal(args: string[], steps: PtyStep[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AKAS_')) clean[k] = v;
  // ink draws every frame only outside CI (is-in-ci); NO_COLOR keeps the text matchable.
  const childEnv = { ...clean, AKAS_CONFIG_DIR: defaultConfigDir(), CI: '0', CONTINUOUS_INTEGRATION: '0', NO_COLOR: '1', TERM: 'xterm-256color', ...env };
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [DRIVER, JSON.stringify(steps), process.execPath, CLI, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', () => {
      let r: { code?: number; output: string; error?: string };
      try {
        r = JSON.parse(out);
      } catch {
        return reject(new Error(`the pty driver failed: ${err}${out}`));
      }
      if (r.error) return reject(new Error(`${r.error}; drew:\n${r.output}`));
      resolve({ code: r.code!, output: r.output });
    });
  });
}
