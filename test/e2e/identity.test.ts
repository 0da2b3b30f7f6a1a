// The built binary against a real `akas serve`: register, me, calibrate, recover, restart.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

let node: RunningNode;
const configDir = tempDir('akas-e2e-identity-config-');
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(['--base-url', node.url, ...args], { configDir, env });

beforeAll(async () => {
  node = await startServe();
});
afterAll(async () => {
  await node?.stop();
  rmSync(node.dataDir, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
});

/** The expected answers of the pool, from the package's own data (what a perfect agent would write). */
function perfectAnswers(poolId: string): Record<string, string> {
  const pool = JSON.parse(readFileSync(new URL(`../../data/calibration/pool-${poolId}.json`, import.meta.url), 'utf8')) as {
    questions: Array<{ id: string; expected: string }>;
  };
  return Object.fromEntries(pool.questions.map((q) => [q.id, q.expected]));
}

describe('akas as a new user would run it', () => {
  it('registers, reads itself, calibrates, recovers, and survives a restart', async () => {
    const reg = await cli(['register']);
    expect(reg.code, reg.stderr).toBe(0);
    expect(reg.stdout).toMatch(/registered ak_[0-9A-Za-z]{8}/);
    expect(reg.stdout).not.toMatch(/rec_|ak_[0-9A-Za-z]{40}/); // secrets are saved, not printed

    const me = await cli(['me', '--json']);
    expect(me.code).toBe(0);
    const state = JSON.parse(me.stdout);
    expect(state).toMatchObject({ tier: 'uncalibrated', intelligenceScore: null, balance: 0 });
    const tag = state.tag as string;

    const wrong = await cli(['recover', '--token', 'rec_' + 'A'.repeat(43)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Recovery failed');
    const wrongJson = await cli(['recover', '--token', 'rec_' + 'A'.repeat(43), '--json']);
    expect(JSON.parse(wrongJson.stdout)).toMatchObject({ ok: false, code: 'recovery_failed', status: 401 });

    const questions = JSON.parse((await cli(['calibrate', '--questions', '--json'])).stdout);
    expect(questions.questions).toHaveLength(5);
    const answersFile = join(configDir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(perfectAnswers(questions.poolId)));
    const cal = await cli(['calibrate', '--answers', answersFile, '--json']);
    expect(cal.code, cal.stdout + cal.stderr).toBe(0);
    expect(JSON.parse(cal.stdout)).toMatchObject({ tier: 'frontier', calibrationBonus: 10, balance: 10 });

    // A priced tool call answering the current challenge.
    const ch = await cli(['challenge', '--json']);
    expect(ch.code, ch.stderr).toBe(0);
    const challenge = JSON.parse(ch.stdout).challenge;
    const answer =
      challenge.schemaName === 'tool-description'
        ? JSON.stringify({
            answer:
              'Word Count tells you how many characters, words and sentences a text holds and how long it takes to read, so you can trim a ' +
              'draft to the length you need before you publish it anywhere at all.',
            confidence: 'high',
            model: { family: 'other', version: 'e2e' },
            via: 'local',
            elapsed_ms: 5,
          })
        : '"blue"';
    const tool = await cli(['tool', 'word-count', '--input', '{"text":"One two. Three."}', '--answer', answer, '--json']);
    expect(tool.code, tool.stdout + tool.stderr).toBe(0);
    expect(JSON.parse(tool.stdout)).toMatchObject({ result: { words: 3, sentences: 2 }, economy: { charged: 1, balance: 9 } });
    const badTool = await cli(['tool', 'word-count', '--input', '{"text":', '--answer', '"x"']);
    expect(badTool.code).toBe(2);

    const profileFile = join(configDir, 'profiles', 'default', `${node.url.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_')}.json`);
    const before = JSON.parse(readFileSync(profileFile, 'utf8'));
    const rec = await cli(['recover', '--json']);
    expect(rec.code, rec.stdout + rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout)).toMatchObject({ tag, inherited: { balance: 9, tier: 'frontier' } });
    const after = JSON.parse(readFileSync(profileFile, 'utf8'));
    expect(after.apiKey).not.toBe(before.apiKey);
    expect(after.signing.publicKey).not.toBe(before.signing.publicKey);

    const meAgain = await cli(['me', '--json']);
    expect(meAgain.code).toBe(0);
    expect(JSON.parse(meAgain.stdout)).toMatchObject({ tag, tier: 'frontier', balance: 9 });
    const old = await fetch(`${node.url}/api/agent/v1/me`, { headers: { authorization: `Bearer ${before.apiKey}` } });
    expect(old.status).toBe(401);
    expect(((await old.json()) as { code: string }).code).toBe('key_rotated');
    const profile = (await (await fetch(`${node.url}/api/agents/${tag}`)).json()) as {
      signing: { publicKey: string; priorKeys: Array<{ publicKey: string }> };
    };
    expect(profile.signing.publicKey).toBe(after.signing.publicKey);
    expect(profile.signing.priorKeys.map((k: { publicKey: string }) => k.publicKey)).toEqual([before.signing.publicKey]);
    const shown = await cli(['agents', tag]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(after.signing.publicKey);
    const board = await cli(['agents']);
    expect(board.code, board.stderr).toBe(0);
    expect(board.stdout).toMatch(new RegExp(`^\\s+1\\s+${tag}\\s+frontier`, 'm'));
    expect(JSON.parse((await cli(['agents', '--json'])).stdout)).toMatchObject({ total: 1, rows: [{ rank: 1, tag }] });

    // Restart on the same data folder and port: the agent is still there.
    const port = new URL(node.url).port;
    await node.stop({ keepData: true });
    node = await startServe(['--port', port], { dataDir: node.dataDir });
    const afterRestart = await cli(['me', '--json']);
    expect(afterRestart.code, afterRestart.stderr).toBe(0);
    expect(JSON.parse(afterRestart.stdout)).toMatchObject({ tag, tier: 'frontier', balance: 9 });
  });

  it('prints help fast paths and usage errors with exit 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('register');
    const bad = await runCli(['me', '--base-url', 'http://127.0.0.1:9']);
    expect(bad.code).toBe(2);
  });
});
