// The built binary's interactive views on a pseudo-terminal (run `npm run build` first): an
// answer and its Enter arrive in one chunk and are taken as that answer (issue 23, item 1);
// Ctrl-C (the key) and SIGINT (a real signal) leave with exit 130, saying what was and was
// not submitted.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, savedIdentity, startServe, type RunningNode } from '../helpers/e2e.js';
import { onTerminal } from '../helpers/pty.js';

let node: RunningNode;
beforeAll(async () => {
  node = await startServe();
}, 30_000);
afterAll(async () => {
  await node?.stop();
});

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args]);

async function registered(profile: string) {
  const r = await akas(profile, ['--json', 'register']);
  expect(r.code, r.stderr).toBe(0);
  const poolId = savedIdentity(profile).calibrationPoolId;
  const pool = JSON.parse(readFileSync(new URL(`../../data/calibration/pool-${poolId}.json`, import.meta.url), 'utf8')) as {
    questions: Array<{ id: string; expected: string }>;
  };
  return pool.questions;
}

const attemptsLeft = async (profile: string) => JSON.parse((await akas(profile, ['--json', 'calibrate', '--questions'])).stdout).attemptsRemaining as number;

describe('akas calibrate on a terminal', () => {
  it('takes each answer sent with its Enter in one chunk, and scores them', async () => {
    const questions = await registered('paste');
    // Each answer is sent once its field listens (its placeholder is drawn only then: line-input.tsx).
    const steps = questions.flatMap((q, i) => [{ wait: `Question ${i + 1} of ${questions.length}` }, { wait: 'Enter to go on' }, { send: `${q.expected}\r` }]);
    const r = await onTerminal(['--base-url', node.url, '--profile', 'paste', 'calibrate'], [...steps, { wait: 'Submit?' }, { send: 'y\r' }]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain('^M');
    const me = JSON.parse((await akas('paste', ['--json', 'me'])).stdout);
    expect(me.intelligenceScore).toBe(1);
  }, 60_000);

  it('exits 130 on Ctrl-C, saying nothing was submitted, and spends no attempt', async () => {
    await registered('ctrlc');
    const r = await onTerminal(
      ['--base-url', node.url, '--profile', 'ctrlc', 'calibrate'],
      [{ wait: 'Question 1 of' }, { wait: 'Enter to go on' }, { send: 'half an answer\r' }, { wait: 'Question 2 of' }, { send: '\u0003' }],
    );
    expect(r.code, r.output).toBe(130);
    expect(r.output).toContain('interrupted: nothing submitted, no attempt used (1 of 5 questions answered');
    expect(await attemptsLeft('ctrlc')).toBe(3);
  }, 60_000);

  it('exits 130 on a real SIGINT too', async () => {
    await registered('sigint');
    const r = await onTerminal(['--base-url', node.url, '--profile', 'sigint', 'calibrate'], [{ wait: 'Question 1 of' }, { signal: 'INT' }]);
    expect(r.code, r.output).toBe(130);
    expect(r.output).toContain('interrupted: nothing submitted, no attempt used');
    expect(await attemptsLeft('sigint')).toBe(3);
  }, 60_000);
});
