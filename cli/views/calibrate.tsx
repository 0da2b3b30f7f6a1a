// The calibration questionnaire: one question at a time, Enter goes on; then a summary of
// the sheet (an empty or cut answer is pointed out) and a confirmation, since submitting
// spends one of the three lifetime attempts.
import { ConfirmInput, TextInput } from '@inkjs/ui';
import { Box, render, Text, useApp } from 'ink';
import { useState } from 'react';
import { answerProblems, describeProblem } from '../calibrate-answers.js';

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

const preview = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text) || '(no answer)';

/**
 * Asks every question on the terminal, then asks to confirm; resolves with {id: answer},
 * or null when the person declines (nothing is submitted then).
 */
export function askCalibration(questions: Question[], attemptsRemaining: number, streams: Streams = {}): Promise<Record<string, string> | null> {
  return new Promise((resolve) => {
    function Questionnaire() {
      const { exit } = useApp();
      const [index, setIndex] = useState(0);
      const [answers, setAnswers] = useState<Record<string, string>>({});
      const finish = (value: Record<string, string> | null) => {
        exit();
        resolve(value);
      };
      if (index === questions.length) {
        const problems = answerProblems(questions, answers);
        return (
          <Box flexDirection="column" borderStyle="round" paddingX={1}>
            <Text color="cyan">Your answers</Text>
            {questions.map((q) => (
              <Text key={q.id}>
                {q.id}  {preview(answers[q.id] ?? '')}
              </Text>
            ))}
            {problems.map((p) => (
              <Text key={`p-${p.id}`} color="yellow">
                ! {describeProblem(p)}
              </Text>
            ))}
            <Box marginTop={1}>
              <Text>
                Submit? This uses 1 of your {attemptsRemaining} remaining attempt(s); the best score is kept. (y/n){' '}
              </Text>
              <ConfirmInput defaultChoice="cancel" onConfirm={() => finish(answers)} onCancel={() => finish(null)} />
            </Box>
          </Box>
        );
      }
      const q = questions[index];
      const submit = (value: string) => {
        setAnswers({ ...answers, [q.id]: value });
        setIndex(index + 1);
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
            <TextInput key={q.id} placeholder="type your answer, Enter to go on" onSubmit={submit} />
          </Box>
        </Box>
      );
    }
    render(<Questionnaire />, { ...(streams.stdout ? { stdout: streams.stdout } : {}), ...(streams.stdin ? { stdin: streams.stdin } : {}), patchConsole: false });
  });
}
