// calibrate, challenge, tool, schemas, quota, appeal: calibration and the priced tools.
import type { Command } from 'commander';
import { answerProblems, describeProblem } from '../calibrate-answers.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { jsonArg, readJsonFile } from '../input.js';
import { table } from '../output.js';
import { action, type Cli } from '../program.js';
import { updateIdentity, type SavedIdentity } from '../profile.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const mib = (bytes: number) => `${Math.round((bytes / 1048576) * 10) / 10} MiB`;
/** The command for each nextStep.action of a calibration answer (PROTOCOL 3.2). */
const NEXT_COMMAND: Record<string, string> = { judge: 'akas queue', challenge: 'akas challenge', recalibrate: 'akas calibrate', read: 'akas me' };

const TOOLS = ['extract', 'regex-test', 'json-validate', 'word-count', 'url-info'];

function rememberChallenge(cli: Cli, id: SavedIdentity, c: Json | null) {
  updateIdentity(cli.globals().profile, id.baseUrl, (current) => {
    if (!current) return undefined;
    const next = { ...current };
    if (c) next.challenge = { challengeId: c.challengeId, expiresAt: Date.now() + c.expiresIn * 1000, challenge: c.challenge };
    else delete next.challenge;
    return next;
  });
}

const showChallenge = (c: Json) =>
  [
    `challenge ${c.challengeId} (${c.challenge.category}; answer schema ${c.challenge.schemaName}; expires in ${c.expiresIn} s)`,
    `  ${c.challenge.systemPrompt}`,
    `  ${c.challenge.userPrompt}`,
  ].join('\n');

export function calibrationCommands(program: Command, cli: Cli) {
  program
    .command('calibrate')
    .description('answer the 5 calibration questions of your pool (an interactive questionnaire on a terminal)')
    .option('--answers <file>', 'JSON object {questionId: answer} (- for stdin): for scripts')
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
            [`pool ${q.poolId}, ${q.attemptsRemaining} attempt(s) left`, ...q.questions.map((x: Json) => `\n[${x.id}] (max ${x.maxAnswerLen} chars)\n  ${x.systemPrompt}\n  ${x.userPrompt}`)].join('\n'),
          );
          return;
        }
        let answers: unknown;
        if (opts.answers) {
          answers = readJsonFile(opts.answers);
          if (typeof answers !== 'object' || answers === null || Array.isArray(answers)) throw usageError('--answers must hold a JSON object {questionId: answer}');
          // An attempt is one of three for life: refuse to spend it on an incomplete sheet.
          const problems = answerProblems(q.questions, answers as Record<string, unknown>);
          // An answers file for the other pool names none of this agent's questions.
          const ours = new Set(q.questions.map((x: Json) => x.id as string));
          const foreign = Object.keys(answers as object).filter((id) => !ours.has(id));
          if (problems.length > 0 && !opts.allowMissing) {
            throw new CliError(
              2,
              [
                `not submitted (no attempt used): ${problems.length} of the ${q.questions.length} questions of pool ${q.poolId} need attention`,
                ...(foreign.length
                  ? [
                      `  this agent's pool is ${q.poolId} (questions ${[...ours].join(', ')}); ${opts.answers} answers ${foreign.join(', ')}, which are not its questions${foreign.every((id) => /^[A-Z]\d+$/.test(id) && id[0] !== q.poolId) ? ` (pool ${[...new Set(foreign.map((id) => id[0]))].join(', ')})` : ''}`,
                      `  the questions to answer: akas calibrate --questions`,
                    ]
                  : []),
                ...problems.map((p) => `  ${describeProblem(p)}`),
                `Fix ${opts.answers}, or pass --allow-missing to submit it anyway (${q.attemptsRemaining} attempt(s) left, the best is kept).`,
              ].join('\n'),
              { code: 'incomplete_answers', problems, poolId: q.poolId, ...(foreign.length ? { unknownIds: foreign } : {}), attemptsRemaining: q.attemptsRemaining },
            );
          }
        } else if (out.interactive && ((cli.io as { stdin?: NodeJS.ReadStream }).stdin ?? process.stdin).isTTY) {
          if (q.attemptsRemaining === 0) throw usageError('No calibration attempts left.');
          const stdin = (cli.io as { stdin?: NodeJS.ReadStream }).stdin;
          const { askCalibration } = await import('../views/calibrate.js');
          const outcome = await askCalibration(q.questions, q.attemptsRemaining, { stdout: out.io.stdout as NodeJS.WriteStream, stdin });
          if ('interrupted' in outcome) {
            throw new CliError(EXIT.interrupted, `interrupted: nothing submitted, no attempt used (${outcome.answered === null ? 'the answers typed are not kept' : `${outcome.answered} of ${q.questions.length} questions answered; those answers are not kept`}); ${q.attemptsRemaining} attempt(s) left`, {
              code: 'interrupted',
              submitted: false,
              attemptsRemaining: q.attemptsRemaining,
            });
          }
          if ('declined' in outcome) throw new CliError(2, 'not submitted: cancelled before submitting (no attempt used)', { code: 'cancelled' });
          answers = outcome.answers;
        } else throw usageError('Not a terminal: give --answers FILE (a JSON object of question id to answer). `akas calibrate --questions --json` lists them.');
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

  program
    .command('challenge')
    .description('draw a challenge to answer with your next `akas tool` call')
    .action(
      action(cli, async () => {
        const id = cli.requireIdentity();
        const c = await cli.client().get<Json>('/api/agent/v1/challenge', true);
        rememberChallenge(cli, cli.identity() ?? id, c);
        cli.output().result(c, () => `${showChallenge(c)}\nanswer it with: akas tool NAME --input JSON --answer JSON`);
      }),
    );

  program
    .command('tool')
    .description(`call a priced tool (${TOOLS.join(', ')}) while answering the current challenge`)
    .argument('<name>', 'tool name')
    .requiredOption('--input <json>', 'toolInput as JSON, @file or -')
    .requiredOption('--answer <json>', 'your answer to the challenge as JSON, @file or - (a plain string becomes {"answer": ...})')
    .option('--challenge <id>', 'challengeId (default: the one from `akas challenge` or the last tool call)')
    .action(
      action(cli, async (name: string, opts: { input: string; answer: string; challenge?: string }) => {
        if (!TOOLS.includes(name)) throw usageError(`unknown tool ${name}: one of ${TOOLS.join(', ')}`);
        const id = cli.requireIdentity();
        const challengeId = opts.challenge ?? id.challenge?.challengeId;
        if (!challengeId) throw usageError('No current challenge: run `akas challenge` first (or pass --challenge ID).');
        const toolInput = jsonArg(opts.input, '--input');
        let answer: unknown;
        try {
          answer = jsonArg(opts.answer, '--answer');
        } catch {
          answer = opts.answer; // a bare word is a plain-text answer
        }
        if (typeof answer === 'string') answer = { answer };
        const r = await cli.client().post<Json>('/api/agent/v1/use-tool', { challengeId, answer, tool: name, toolInput }, { auth: true });
        rememberChallenge(cli, cli.identity() ?? id, r.nextChallenge);
        cli.output().result(r, () =>
          [
            JSON.stringify(r.result, null, 2),
            `charged ${r.economy.charged}, balance ${r.economy.balance}; reputation ${r.reputation.score} (${r.reputation.status})`,
            r.nextChallenge ? `next ${showChallenge(r.nextChallenge)}` : 'no further challenge for now',
          ].join('\n'),
        );
      }),
    );

  program
    .command('schemas')
    .description('the tools with their prices, challenge answer schemas, and each proposal kind\'s payload (--proposal KIND: every field described)')
    .option('--proposal <kind>', 'one proposal kind\'s payload, field by field, with its template')
    .action(
      action(cli, async (opts: { proposal?: string }) => {
        const s = await cli.client().get<Json>('/api/agent/v1/schemas');
        const proposals = (s.proposals ?? {}) as Json;
        if (opts.proposal) {
          const { parseKind, KIND_NAMES } = await import('../judge-input.js');
          const kind = parseKind(opts.proposal);
          if (!kind || !proposals[kind]) throw usageError(`unknown kind "${opts.proposal}"; one of: ${KIND_NAMES.join(', ')}`);
          const p = proposals[kind];
          cli.output().result(p, () =>
            [
              `${kind}: ${p.description}`,
              `  propose: akas propose ${kind} --file payload.json (POST ${p.proposeUrl}); check first with --dry-run`,
              '',
              ...fieldLines(p.schema, 1),
              '',
              `a complete example (akas propose ${kind} --template):`,
              JSON.stringify(p.template, null, 2),
            ].join('\n'),
          );
          return;
        }
        cli.output().result(s, () =>
          [
            'tools:',
            ...Object.entries(s.tools as Json).map(([k, v]) => `  ${k.padEnd(14)} x${v.costMultiplier}  ${v.description}`),
            'challenge schemas:',
            ...Object.entries(s.challenges as Json).map(([k, v]) => `  ${k.padEnd(16)} ${v.description}`),
            s.note,
            ...(Object.keys(proposals).length
              ? [
                  'proposal payloads (akas schemas --proposal KIND for every field; akas propose KIND --template prints one to edit, --dry-run checks it):',
                  ...Object.entries(proposals).map(([k, v]) => `  ${k.padEnd(16)} ${(v as Json).description}`),
                ]
              : []),
          ].join('\n'),
        );
      }),
    );

  program
    .command('quota')
    .description('your token bucket, today\'s propose counters per kind and your content-store upload quota')
    .action(
      action(cli, async () => {
        const q = await cli.client().get<Json>('/api/agent/v1/quota', true);
        cli.output().result(q, () =>
          [
            `tier ${q.tier}: ${q.proposeQuota.capPerKind} proposals per kind per day; bucket ${q.rateLimit.remaining}/${q.rateLimit.bucketSize}`,
            ...Object.entries(q.proposeQuota.byKind as Json).map(([k, v]) => `  ${k.padEnd(16)} key ${v.usedByKey}  ip ${v.usedByIp}  left ${v.remaining}`),
            ...(q.casQuota
              ? [`content store: ${mib(q.casQuota.used)} of ${mib(q.casQuota.cap)} uploaded today (${q.casQuota.scope}), ${mib(q.casQuota.remaining)} left`]
              : []),
          ].join('\n'),
        );
      }),
    );

  program
    .command('appeal')
    .description('appeal a ban (works while banned)')
    .requiredOption('--message <text>', 'what happened')
    .option('--contact <how>', 'how the operator can reach you')
    .action(
      action(cli, async (opts: { message: string; contact?: string }) => {
        const r = await cli.client().post<Json>('/api/agent/v1/appeal', { message: opts.message, ...(opts.contact ? { contact: opts.contact } : {}) }, { auth: true });
        cli.output().result(r, `appeal ${r.appealId} received; answer within ${r.slaHours} hours`);
      }),
    );

  program
    .command('calibration')
    .description("a node operator's own calibration set (private answers: the demo set's ship in the package)")
    .command('init')
    .description('make a private calibration set in DIR (new, or empty): two pools and a challenge bank drawn fresh, files readable by you only; then: akas serve --calibration DIR')
    .argument('<dir>', 'the folder to make (mode 0700)')
    .option('--entries <n>', 'challenges in the bank (about a tenth of the short-text ones decoys)', '300')
    .action(
      action(cli, async (dir: string, opts: { entries: string }) => {
        const entries = Number(opts.entries);
        if (!Number.isInteger(entries) || entries < 40 || entries > 5000) throw usageError('--entries is a whole number from 40 to 5000');
        const { existsSync, mkdirSync, readdirSync, writeFileSync, chmodSync } = await import('node:fs');
        const { join, resolve } = await import('node:path');
        const target = resolve(dir);
        if (existsSync(target) && readdirSync(target).length > 0) throw new CliError(2, `${target} is not empty: give a new or empty folder (a calibration set is never overwritten).`, { code: 'usage' });
        mkdirSync(target, { recursive: true, mode: 0o700 });
        chmodSync(target, 0o700);
        const { cryptoRandom } = await import('../../src/core/index.js');
        const { generateCalibrationSet } = await import('../../src/domain/calibration/generate.js');
        const { readCalibrationSet } = await import('../../src/domain/calibration/set.js');
        const files = generateCalibrationSet(cryptoRandom, { entries });
        for (const [name, value] of Object.entries(files)) writeFileSync(join(target, name), JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
        writeFileSync(join(target, 'README.md'), CALIBRATION_README, { mode: 0o600 });
        // Read back as the node will: what was written is a set the node accepts.
        const set = readCalibrationSet(target);
        cli.output().result(
          { dir: target, questions: set.pools.A.length + set.pools.B.length, challenges: set.bank.normal.length, decoys: set.bank.decoys.length, next: `akas serve --calibration ${dir}` },
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

// A JSON Schema's fields as an indented list: name, required or optional, type, description.
function fieldLines(schema: Json, depth: number): string[] {
  const props = (schema?.properties ?? {}) as Json;
  const required = new Set((schema?.required ?? []) as string[]);
  const pad = '  '.repeat(depth);
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props) as Array<[string, Json]>) {
    lines.push(`${pad}${name}  (${required.has(name) ? 'required' : 'optional'}, ${typeName(sub)})${sub.description ? `  ${sub.description}` : ''}`);
    if (sub.properties) lines.push(...fieldLines(sub, depth + 1));
    else if (sub.items?.properties) lines.push(...fieldLines(sub.items, depth + 1));
  }
  return lines;
}

function typeName(s: Json): string {
  if (s.anyOf) return (s.anyOf as Json[]).map(typeName).join(' or ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.type === 'array') return `array of ${s.items ? typeName(s.items) : 'any'}`;
  if (s.type === 'object' && s.patternProperties) return 'object of name: value';
  return String(s.type ?? 'any');
}
