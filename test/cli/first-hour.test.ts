// A newcomer's first hour from the shell: refusals that explain themselves, a calibration
// attempt never spent by accident (the --answers guard and the questionnaire's
// confirmation), and shell completion generated from the program.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFailure } from '../../cli/kit/output.js';
import { CliError } from '../../cli/kit/errors.js';
import { answerProblems } from '../../cli/commands/calibration/answers.js';
import { Agents } from '../../src/domain/records.js';
import { Capture, cliHarness, FakeTtyStdin, frameWaiter, inkFramesEverywhere, type CliHarness } from '../helpers/cli.js';

const restoreCi = inkFramesEverywhere();
afterAll(() => restoreCi());

const POOL_A = JSON.parse(readFileSync(new URL('../../data/calibration/pool-A.json', import.meta.url), 'utf8')) as {
  questions: Array<{ id: string; expected: string; maxAnswerLen: number }>;
};

let h: CliHarness;
let work: string;
beforeEach(async () => {
  h = await cliHarness();
  work = mkdtempSync(join(tmpdir(), 'akas-first-hour-'));
});
afterEach(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});

const file = (name: string, value: unknown) => {
  const path = join(work, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
};

const attempts = async (tag: string) => (await h.node.store.get(Agents, tag))!.calibration.attempts;

describe('a refusal in human output', () => {
  it('names every failing field with its reason, the code and the status', async () => {
    const a = await h.agent();
    const bad = file('bad.json', { path: 'no-leading-slash', title: '', spec: 'x', payload: { trigger: 't', cost: 5 } });
    const r = await h.akas(['propose', 'capability', '--file', bad], { profile: a.profile });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('(validation_failed, HTTP 400)');
    for (const field of ['path:', 'title:', 'payload.alternative:', 'payload.whenNot:', 'payload.recipe:', 'payload.cost:'])
      expect(r.stderr).toContain(`  ${field}`);
    // The same refusal under --json is the node's body, every error included.
    const j = await h.akas(['--json', 'propose', 'capability', '--file', bad], { profile: a.profile });
    expect(j.code).toBe(1);
    expect(j.json().errors.length).toBeGreaterThanOrEqual(6);
  });

  it('prints the hint and the next steps the node gave', () => {
    const text = describeFailure(
      CliError.fromNode(1, 'The daily propose cap of 40 for this kind is used (per-ip-per-day). (rate_limited, HTTP 429)', {
        code: 'rate_limited',
        hint: { next: ['Judge pending proposals meanwhile.', 'The per-IP cap is shared.'] },
        retryAfter: 3600,
      }),
    );
    expect(text).toContain('next: Judge pending proposals meanwhile.');
    expect(text).toContain('next: The per-IP cap is shared.');
    expect(text).toContain('retry after: 3600 s');
    expect(describeFailure(CliError.fromNode(1, 'x', { hint: 'Register first.', field: 'signature' }))).toBe(
      'akas: x\n  field: signature\n  hint: Register first.\n',
    );
  });

  it('tells an id conflict where the holder is', async () => {
    const a = await h.agent();
    const payload = file('cap.json', {
      path: '/x/y',
      title: 'T',
      spec: 'S',
      payload: { trigger: 't', alternative: 'a', cost: 'c', whenNot: 'w', recipe: 'r' },
    });
    expect((await h.akas(['propose', 'capability', '--file', payload], { profile: a.profile })).code).toBe(0);
    const again = await h.akas(['propose', 'capability', '--file', payload], { profile: a.profile });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/existing: (cprop_[0-9a-f]{16}) \(akas show \1; judge it: akas judge \1 /);
  });
});

describe('akas calibrate --answers', () => {
  const full = () => Object.fromEntries(POOL_A.questions.map((q) => [q.id, q.expected]));

  it('refuses a sheet with a missing or an over-long answer, listing which, and spends no attempt (exit 2)', async () => {
    const reg = await h.akas(['--json', '--profile', 'guard', 'register', '--pool', 'A']);
    const tag = reg.json().tag;
    const answers = full();
    delete answers.A2;
    const long = POOL_A.questions.find((q) => q.maxAnswerLen < 1000)!;
    answers[long.id] = 'x'.repeat(long.maxAnswerLen + 1);
    const r = await h.akas(['calibrate', '--answers', file('a.json', answers)], { profile: 'guard' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not submitted (no attempt used)');
    expect(r.stderr).toContain('A2: no answer');
    expect(r.stderr).toContain(`${long.id}: ${long.maxAnswerLen + 1} characters, over its limit of ${long.maxAnswerLen}`);
    expect(await attempts(tag)).toBe(0);
  });

  it('submits the same sheet with --allow-missing, and a complete one without it', async () => {
    const r0 = await h.akas(['--json', '--profile', 'pa', 'register', '--pool', 'A']);
    expect(r0.code).toBe(0);
    const tag = r0.json().tag;
    const answers = full();
    delete answers.A2;
    const guarded = await h.akas(['--json', 'calibrate', '--answers', file('b.json', answers)], { profile: 'pa' });
    expect(guarded.code).toBe(2);
    expect(guarded.json()).toMatchObject({ ok: false, code: 'incomplete_answers', problems: [{ id: 'A2', problem: 'missing' }], attemptsRemaining: 3 });
    expect(await attempts(tag)).toBe(0);

    const forced = await h.akas(['--json', 'calibrate', '--allow-missing', '--answers', file('b.json', answers)], { profile: 'pa' });
    expect(forced.code).toBe(0);
    expect(forced.json().perQuestion.A2).toBe(0);
    expect(await attempts(tag)).toBe(1);

    const complete = await h.akas(['--json', 'calibrate', '--answers', file('c.json', full())], { profile: 'pa' });
    expect(complete.code).toBe(0);
    expect(complete.json().attemptsRemaining).toBe(1);
  });

  it('counts lengths in code points, as the node does', () => {
    expect(answerProblems([{ id: 'q', maxAnswerLen: 3 }], { q: '😀😀😀' })).toEqual([]);
    expect(answerProblems([{ id: 'q', maxAnswerLen: 3 }], { q: '😀😀😀😀' })).toEqual([{ id: 'q', problem: 'too-long', length: 4, max: 3 }]);
    expect(answerProblems([{ id: 'q', maxAnswerLen: 3 }], { q: '   ' })).toEqual([{ id: 'q', problem: 'missing' }]);
    expect(answerProblems([{ id: 'q', maxAnswerLen: 3 }], { q: 5 })).toEqual([{ id: 'q', problem: 'not-text' }]);
  });
});

describe('the calibration questionnaire on a terminal', () => {
  async function answerAll(profile: string, confirm: 'y' | 'n') {
    const stdout = new Capture(true);
    const stdin = new FakeTtyStdin();
    const waitFor = frameWaiter(stdout);
    const running = h.akas(['calibrate'], { profile, stdout, stdin });
    for (const [i, q] of POOL_A.questions.entries()) {
      await waitFor(`Question ${i + 1} of 5`);
      stdin.press(i === 1 ? '' : q.expected); // leaves the second one empty
      stdin.press('\r');
    }
    await waitFor('Submit? This uses 1 of your 3 remaining attempt(s)');
    expect(stdout.text).toContain('A2: no answer');
    // One y/N choice, whose capital letter is the default (it was "(y/n) y/N").
    expect(stdout.text).toContain('the best score is kept. y/N');
    expect(stdout.text).not.toContain('(y/n)');
    stdin.press(confirm);
    return running;
  }

  it('asks before submitting, showing the attempts left; no submits nothing', async () => {
    const r0 = await h.akas(['--json', '--profile', 'tty', 'register', '--pool', 'A']);
    const tag = r0.json().tag;
    const declined = await answerAll('tty', 'n');
    expect(declined.code).toBe(2);
    expect(declined.stderr).toContain('cancelled before submitting (no attempt used)');
    expect(await attempts(tag)).toBe(0);

    const accepted = await answerAll('tty', 'y');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(await attempts(tag)).toBe(1);
  });
});

describe('akas completion', () => {
  async function script(shell: string) {
    const r = await h.akas(['completion', shell]);
    expect(r.code).toBe(0);
    return r.stdout;
  }

  it('completes commands, subcommands, options and proposal kinds in bash', async () => {
    const path = file('akas.bash', '');
    writeFileSync(path, await script('bash'));
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${path}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _akas; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean);
    expect(complete('akas', '')).toEqual(expect.arrayContaining(['serve', 'register', 'calibrate', 'propose', 'judge', 'verify', 'completion']));
    // `proposal`, an old spelling kept a release (akas show), is hidden: not completed.
    expect(complete('akas', 'pro')).toEqual(['profile', 'propose']);
    expect(complete('akas', 'propose', '')).toEqual(
      expect.arrayContaining(['brief', 'capability', 'graph', 'artifact', 'eval-result', 'tree-expansion', 'spec-sharpening']),
    );
    expect(complete('akas', '--json', 'queue', '--kind', 'e')).toEqual(['eval-result']);
    expect(complete('akas', 'cas', '')).toEqual(['put', 'get', 'head']);
    expect(complete('akas', 'judge', 'x', '--acc')).toEqual(['--accuracy']);
    expect(complete('akas', 'calibrate', '--all')).toEqual(['--allow-missing']);
    expect(complete('akas', '--base-url', 'http://x', 'me', '--js')).toEqual(['--json']);
  });

  it('writes zsh (through bashcompinit) and fish scripts covering every command', async () => {
    const zsh = await script('zsh');
    expect(zsh).toContain('bashcompinit');
    expect(zsh).toContain("_akas_sub['cas']='put get head'");
    const fish = await script('fish');
    for (const cmd of ['serve', 'register', 'propose', 'judge', 'queue', 'verify', 'completion']) expect(fish).toContain(` -a ${cmd} `);
    expect(fish).toContain("-a 'brief capability graph");
    expect(fish).toMatch(/-n '__fish_seen_subcommand_from judge' -l accuracy -r -F/);
  });

  it('refuses an unknown shell (exit 2)', async () => {
    expect((await h.akas(['completion', 'tcsh'])).code).toBe(2);
  });
});
