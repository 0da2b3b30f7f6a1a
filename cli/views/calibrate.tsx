// The calibration questionnaire: one question at a time, Enter goes on; then a summary of
// the sheet (an empty or cut answer is pointed out) and a confirmation, since submitting
// spends one of the three lifetime attempts. Answers are typed into LineInput, so an answer
// and its Enter arriving in one chunk (a paste, a slow link) submit that answer; pasted
// lines answer the following questions in turn. Ctrl-C leaves without submitting.
import { Box, render, Text, useApp, useInput } from 'ink';
import { useRef, useState } from 'react';
import { answerProblems, describeProblem } from '../commands/calibration/answers.js';
import { LineInput, splitLines, YesNo } from './line-input.js';
import { terminalSafeDeep } from '../kit/index.js';

interface Question {
  id: string;
  systemPrompt: string;
  userPrompt: string;
  maxAnswerLen: number;
}

export interface Streams {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
}

/** How the questionnaire ended: the sheet to submit, declined at the confirmation, or interrupted (Ctrl-C). */
export type CalibrationOutcome = { answers: Record<string, string> } | { declined: true } | { interrupted: true; answered: number | null };

const preview = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text) || '(no answer)';

export interface QuestionnaireProps {
  questions: Question[];
  attemptsRemaining: number;
  /** Called once, with how it ended. */
  onDone: (outcome: CalibrationOutcome) => void;
}

/** The questionnaire as a component (askCalibration draws it; tests render it with ink-testing-library). */
export function Questionnaire({ questions, attemptsRemaining, onDone }: QuestionnaireProps) {
  const { exit } = useApp();
  const [index, setIndex] = useState(0);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [carried, setCarried] = useState('');
  const finished = useRef(false);
  const finish = (value: CalibrationOutcome) => {
    if (finished.current) return;
    finished.current = true;
    exit();
    onDone(value);
  };
  useInput((input, key) => {
    if (key.ctrl && input === 'c') finish({ interrupted: true, answered: index });
  });
  if (index === questions.length) {
    const problems = answerProblems(questions, answers);
    return (
      <Box flexDirection="column" borderStyle="round" paddingX={1}>
        <Text color="cyan">Your answers</Text>
        {questions.map((q) => (
          <Text key={q.id}>
            {q.id} {preview(answers[q.id] ?? '')}
          </Text>
        ))}
        {problems.map((p) => (
          <Text key={`p-${p.id}`} color="yellow">
            ! {describeProblem(p)}
          </Text>
        ))}
        <Box marginTop={1}>
          <Text>Submit? This uses 1 of your {attemptsRemaining} remaining attempt(s); the best score is kept. </Text>
          <YesNo defaultChoice="no" onYes={() => finish({ answers })} onNo={() => finish({ declined: true })} />
        </Box>
      </Box>
    );
  }
  const q = questions[index];
  // One answer submitted, and what followed its line break in the same chunk: whole lines
  // answer the next questions, the unfinished tail starts the next field.
  const submit = (value: string, rest: string) => {
    const next = { ...answers, [q.id]: value.trim() };
    let at = index + 1;
    const { lines, tail } = splitLines(rest);
    for (const line of lines) {
      if (at >= questions.length) break;
      next[questions[at].id] = line.trim();
      at += 1;
    }
    setAnswers(next);
    setCarried(at < questions.length ? tail : '');
    setIndex(at);
  };
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text color="cyan">
        Question {index + 1} of {questions.length} · {q.id} · max {q.maxAnswerLen} chars · {attemptsRemaining} attempt(s) left, the best is kept
      </Text>
      <Text dimColor>{q.systemPrompt}</Text>
      <Text bold>{q.userPrompt}</Text>
      <Box marginTop={1}>
        <Text color="green">› </Text>
        <LineInput key={q.id} defaultValue={carried} placeholder="type your answer, Enter to go on" onSubmit={submit} />
      </Box>
    </Box>
  );
}

/**
 * Asks every question on the terminal, then asks to confirm. Nothing is submitted here:
 * the caller submits the answers it gets back. Ctrl-C (a key in raw mode) or a SIGINT
 * from outside ends it as interrupted.
 */
export function askCalibration(questions: Question[], attemptsRemaining: number, streams: Streams = {}): Promise<CalibrationOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: CalibrationOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const app = render(<Questionnaire questions={terminalSafeDeep(questions)} attemptsRemaining={attemptsRemaining} onDone={done} />, {
      ...(streams.stdout ? { stdout: streams.stdout } : {}),
      ...(streams.stdin ? { stdin: streams.stdin } : {}),
      patchConsole: false,
      exitOnCtrlC: false,
    });
    const onSignal = () => {
      app.unmount();
      done({ interrupted: true, answered: null });
    };
    process.once('SIGINT', onSignal);
    void app.waitUntilExit().finally(() => process.removeListener('SIGINT', onSignal));
  });
}
