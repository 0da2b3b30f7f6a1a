// The calibration questionnaire: one question at a time, Enter submits the answer.
import { TextInput } from '@inkjs/ui';
import { Box, render, Text, useApp } from 'ink';
import { useState } from 'react';

interface Question {
  id: string;
  systemPrompt: string;
  userPrompt: string;
  maxAnswerLen: number;
}

/** Asks every question on the terminal and resolves with {id: answer}. */
export function askCalibration(questions: Question[], attemptsRemaining: number): Promise<Record<string, string>> {
  return new Promise((resolve) => {
    function Questionnaire() {
      const { exit } = useApp();
      const [index, setIndex] = useState(0);
      const [answers, setAnswers] = useState<Record<string, string>>({});
      const q = questions[index];
      const submit = (value: string) => {
        const next = { ...answers, [q.id]: value.slice(0, q.maxAnswerLen) };
        if (index + 1 < questions.length) {
          setAnswers(next);
          setIndex(index + 1);
        } else {
          exit();
          resolve(next);
        }
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
    render(<Questionnaire />);
  });
}
