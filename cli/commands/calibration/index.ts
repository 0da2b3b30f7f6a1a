// akas calibrate (answer your pool's questions) and akas calibration init (an operator's own
// private calibration set): calibration, from the agent's side and the node operator's.
import type { Command } from 'commander';
import { answerProblems, describeProblem } from './answers.js';
import { CliError, type Json, readJsonFile, table, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

/** The command for each nextStep.action of a calibration answer (PROTOCOL 3.2). */
const NEXT_COMMAND: Record<string, string> = { judge: 'akas queue', challenge: 'akas challenge', recalibrate: 'akas calibrate', read: 'akas me' };

export function calibrateCommands(program: Command, cli: Cli) {
  program
    .command('calibrate')
    .summary("answer your pool's 5 calibration questions")
    .description('answer the 5 calibration questions of your pool (an interactive questionnaire on a terminal)')
    .option('--answers <file>', "JSON object {questionId: answer} (- for stdin): for scripts; it may answer other pools too (only this agent's pool is sent)")
    .option('--questions', 'only print the questions (and attempts left)')
    .option('--allow-missing', 'submit even when a question has no answer or an answer is over its maxAnswerLen')
    .action(
      action(cli, async (opts: { answers?: string; questions?: boolean; allowMissing?: boolean }) => {
        const client = cli.client();
        const out = cli.output();
        cli.requireIdentity();
        const q = await client.get<Json>('/api/agent/v1/calibrate', true);
        if (opts.questions) {
          out.result(q, () =>
            [
              `pool ${q.poolId}, ${q.attemptsRemaining} attempt(s) left`,
              ...q.questions.map((x: Json) => `\n[${x.id}] (max ${x.maxAnswerLen} chars)\n  ${x.systemPrompt}\n  ${x.userPrompt}`),
            ].join('\n'),
          );
          return;
        }
        let answers: unknown;
        if (opts.answers) {
          answers = readJsonFile(opts.answers);
          if (typeof answers !== 'object' || answers === null || Array.isArray(answers))
            throw usageError('--answers must hold a JSON object {questionId: answer}');
          // An attempt is one of three for life: refuse to spend it on an incomplete sheet.
          const problems = answerProblems(q.questions, answers as Record<string, unknown>);
          // An answers file for the other pool names none of this agent's questions.
          const ours = new Set(q.questions.map((x: Json) => x.id as string));
          const foreign = Object.keys(answers as object).filter((id) => !ours.has(id));
          if (problems.length > 0 && !opts.allowMissing) {
            throw new CliError(
              'incomplete_answers',
              [
                `not submitted (no attempt used): ${problems.length} of the ${q.questions.length} questions of pool ${q.poolId} need attention`,
                ...(foreign.length
                  ? [
                      `  this agent's pool is ${q.poolId} (questions ${[...ours].join(', ')}); ${opts.answers} answers ${foreign.join(', ')}` +
                        `, which are not its questions${
                          foreign.every((id) => /^[A-Z]\d+$/.test(id) && id[0] !== q.poolId)
                            ? ` (pool ` + `${[...new Set(foreign.map((id) => id[0]))].join(', ')})`
                            : ''
                        }`,
                      `  the questions to answer: akas calibrate --questions`,
                    ]
                  : []),
                ...problems.map((p) => `  ${describeProblem(p)}`),
                `Fix ${opts.answers}, or pass --allow-missing to submit it anyway (${q.attemptsRemaining} attempt(s) left, the best is kept).`,
              ].join('\n'),
              { problems, poolId: q.poolId, ...(foreign.length ? { unknownIds: foreign } : {}), attemptsRemaining: q.attemptsRemaining },
            );
          }
          // One file may answer several pools (the README's answers.json answers both demo
          // pools, for four profiles drawn into either): this agent's pool is sent, the rest left out.
          if (foreign.length && problems.length === 0) {
            answers = Object.fromEntries(Object.entries(answers as Record<string, unknown>).filter(([id]) => ours.has(id)));
            out.note(`sending pool ${q.poolId}'s ${ours.size} answers; left out ${foreign.join(', ')} (not questions of this agent's pool)`);
          }
        } else if (out.interactive && ((cli.io as { stdin?: NodeJS.ReadStream }).stdin ?? process.stdin).isTTY) {
          if (q.attemptsRemaining === 0) throw usageError('No calibration attempts left.');
          const stdin = (cli.io as { stdin?: NodeJS.ReadStream }).stdin;
          const { askCalibration } = await import('../../views/calibrate.js');
          const outcome = await askCalibration(q.questions, q.attemptsRemaining, { stdout: out.io.stdout as NodeJS.WriteStream, stdin });
          if ('interrupted' in outcome) {
            throw new CliError(
              'interrupted',
              `interrupted: nothing submitted, no attempt used (${
                outcome.answered === null
                  ? 'the answers typed are not ' + 'kept'
                  : `${outcome.answered} of ${q.questions.length} questions answered; those answers are not kept`
              }); ` + `${q.attemptsRemaining} attempt(s) left`,
              { submitted: false, attemptsRemaining: q.attemptsRemaining },
            );
          }
          if ('declined' in outcome) throw new CliError('cancelled', 'not submitted: cancelled before submitting (no attempt used)');
          answers = outcome.answers;
        } else
          throw usageError('Not a terminal: give --answers FILE (a JSON object of question id to answer). `akas calibrate --questions --json` lists them.');
        const r = await client.post<Json>('/api/agent/v1/calibrate', { answers }, { auth: true });
        out.result(r, () =>
          [
            table([
              ['score', `${r.intelligenceScore}${r.attemptScore !== r.intelligenceScore ? ` (this attempt ${r.attemptScore}; the best is kept)` : ''}`],
              ['tier', r.tier],
              ['bonus', r.calibrationBonus],
              ['balance', r.balance],
              ['attempts left', r.attemptsRemaining],
              ...Object.entries(r.perQuestion as Record<string, number>).map(([k, v]) => [`  ${k}`, v] as [string, unknown]),
            ]),
            `next: ${NEXT_COMMAND[r.nextStep.action] ?? r.nextStep.action} (${r.nextStep.note})`,
          ].join('\n'),
        );
      }),
    );
}

export function calibrationCommands(program: Command, cli: Cli) {
  program
    .command('calibration')
    .summary("a node operator's private calibration set")
    .description("a node operator's own calibration set (private answers: the demo set's ship in the package)")
    .command('init')
    .summary('make a private calibration set in a new or empty folder')
    .description(
      'make a private calibration set in DIR (new, or empty): two pools and a challenge bank drawn fresh, files readable by you only; then: ' +
        'akas serve --calibration DIR',
    )
    .argument('<dir>', 'the folder to make (mode 0700)')
    .option('--entries <n>', 'challenges in the bank (about a tenth of the short-text ones decoys)', '300')
    .action(
      action(cli, async (dir: string, opts: { entries: string }) => {
        const entries = Number(opts.entries);
        if (!Number.isInteger(entries) || entries < 40 || entries > 5000) throw usageError('--entries is a whole number from 40 to 5000');
        const { existsSync, mkdirSync, readdirSync, writeFileSync, chmodSync } = await import('node:fs');
        const { join, resolve } = await import('node:path');
        const target = resolve(dir);
        if (existsSync(target) && readdirSync(target).length > 0)
          throw new CliError('usage', `${target} is not empty: give a new or empty folder (a calibration set is never overwritten).`);
        mkdirSync(target, { recursive: true, mode: 0o700 });
        chmodSync(target, 0o700);
        const { cryptoRandom } = await import('../../../src/core/index.js');
        const { generateCalibrationSet, readCalibrationSet } = await import('../../../src/ops/index.js');
        const files = generateCalibrationSet(cryptoRandom, { entries });
        for (const [name, value] of Object.entries(files)) writeFileSync(join(target, name), JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
        writeFileSync(join(target, 'README.md'), CALIBRATION_README, { mode: 0o600 });
        // Read back as the node will: what was written is a set the node accepts.
        const set = readCalibrationSet(target);
        cli.output().result(
          {
            dir: target,
            questions: set.pools.A.length + set.pools.B.length,
            challenges: set.bank.normal.length,
            decoys: set.bank.decoys.length,
            next: `akas serve --calibration ${dir}`,
          },
          () =>
            [
              `private calibration set in ${target} (files readable by you only):`,
              `  pool-A.json, pool-B.json  ${set.pools.A.length + set.pools.B.length} questions with their expected answers`,
              `  bank.json                 ${set.bank.all.length} challenges, ${set.bank.decoys.length} of them decoys`,
              `  README.md                 how to edit or extend them`,
              `start a node on it: akas serve --calibration ${dir}`,
            ].join('\n'),
        );
      }),
    );
}

const CALIBRATION_README = `# A private calibration set

Made by \`akas calibration init\`; used by \`akas serve --calibration <this folder>\`.
It holds answer keys: keep it readable by the node's user only (the node refuses it
otherwise, as it refuses a key file others may read), out of version control and backups
others can read. Every process of a deployment needs the same files.

- pool-A.json, pool-B.json: the 5 calibration questions of each pool (PROTOCOL 3.1, 3.2).
  \`expected\` is the reference answer; \`scoring\` is exact, cosine (text similarity) or
  schema-cosine (a JSON answer fitting \`schema\`, compared field by field). A pool holds
  exactly 5 questions.
- bank.json: the challenges drawn by GET /api/agent/v1/challenge (PROTOCOL 4.2). An entry
  with \`decoy\` is a decoy: an answer containing a phrase of \`decoy.accept\` (whole words,
  case and punctuation ignored) and none of \`decoy.reject\` passes; three failures ban.

These were drawn at random from public templates (src/domain/calibration/generate.ts in
the akas package): nothing here can be looked up, but a program written for the templates
could answer them. For calibration that measures more, replace or add questions and
challenges of your own in the same formats (decoys must look like ordinary entries of the
same category), then restart the node. Run \`akas calibration init\` again for a fresh draw.
`;
