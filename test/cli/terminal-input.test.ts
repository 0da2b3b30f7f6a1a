// Typing into the interactive views when keys arrive in chunks (issue 23, item 1): an answer
// and its Enter in one chunk (a paste, a slow SSH link, `tmux send-keys "3" Enter`) must
// submit that answer, never put a carriage return into it. Rendered with ink's testing
// library here; test/e2e/terminal.test.ts drives the built binary through a pseudo-terminal.
import { createElement } from 'react';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Questionnaire, type CalibrationOutcome } from '../../cli/views/calibrate.js';
import { splitChunk, splitLines } from '../../cli/views/line-input.js';
import { Queue, type QueueItem, type QueueViewResult } from '../../cli/views/queue.js';
import { inkFramesEverywhere } from '../helpers/cli.js';
import { reactActEnvironment, renderInk, typeChunks as type } from '../helpers/ink.js';

const restoreCi = inkFramesEverywhere();
const restoreAct = reactActEnvironment();
afterAll(() => (restoreCi(), restoreAct()));

const QUESTIONS = ['Q1', 'Q2', 'Q3'].map((id) => ({ id, systemPrompt: 'Answer briefly.', userPrompt: `What is ${id}?`, maxAnswerLen: 100 }));

async function questionnaire() {
  const onDone = vi.fn<(o: CalibrationOutcome) => void>();
  const view = await renderInk(createElement(Questionnaire, { questions: QUESTIONS, attemptsRemaining: 3, onDone }));
  return { ...view, onDone };
}

describe('splitChunk', () => {
  it('submits at the first line break and hands on what follows', () => {
    expect(splitChunk('42')).toEqual({ text: '42', submit: false, rest: '' });
    expect(splitChunk('42\r')).toEqual({ text: '42', submit: true, rest: '' });
    expect(splitChunk('42\r\n')).toEqual({ text: '42', submit: true, rest: '' });
    expect(splitChunk('42\n7\r')).toEqual({ text: '42', submit: true, rest: '7\r' });
    expect(splitChunk('a\u0007b')).toEqual({ text: 'ab', submit: false, rest: '' });
    expect(splitLines('1\r2\r\n3')).toEqual({ lines: ['1', '2'], tail: '3' });
  });
});

describe('the calibration questionnaire', () => {
  it('takes an answer and its Enter in one chunk as that answer', async () => {
    const v = await questionnaire();
    await type(v.stdin, '42\r');
    expect(v.lastFrame()).toContain('Question 2 of 3');
    await type(v.stdin, 'second\r');
    await type(v.stdin, 'third\r\n');
    expect(v.lastFrame()).toContain('Your answers');
    expect(v.frames.join('')).not.toContain('\r');
    await type(v.stdin, 'y\r');
    expect(v.onDone).toHaveBeenCalledWith({ answers: { Q1: '42', Q2: 'second', Q3: 'third' } });
  });

  it('answers the following questions with the following lines of a paste', async () => {
    const v = await questionnaire();
    await type(v.stdin, 'one\rtwo\nthr');
    expect(v.lastFrame()).toContain('Question 3 of 3');
    expect(v.lastFrame()).toContain('thr');
    await type(v.stdin, 'ee\r');
    // Lines pasted past the last question do not answer the confirmation.
    expect(v.lastFrame()).toContain('Submit?');
    expect(v.onDone).not.toHaveBeenCalled();
    await type(v.stdin, 'n');
    expect(v.onDone).toHaveBeenCalledWith({ declined: true });
  });

  it('keeps keys typed faster than frames in order (a burst of single keys)', async () => {
    const v = await questionnaire();
    await type(v.stdin, '4', '2', '\r');
    await type(v.stdin, 'b\r');
    await type(v.stdin, 'c\r');
    await type(v.stdin, 'y');
    expect(v.onDone).toHaveBeenCalledWith({ answers: { Q1: '42', Q2: 'b', Q3: 'c' } });
  });

  it('ends as interrupted on Ctrl-C, submitting nothing', async () => {
    const v = await questionnaire();
    await type(v.stdin, 'first\r');
    await type(v.stdin, '\u0003');
    expect(v.onDone).toHaveBeenCalledWith({ interrupted: true, answered: 1 });
  });
});

describe('the judge form of the queue', () => {
  const item: QueueItem = {
    proposalId: 'prop_0123456789abcdef',
    kind: 'brief',
    title: 'A brief',
    path: '/a/b',
    submittedAt: 0,
    judgmentCount: 0,
    requiredJudgments: 3,
  };

  async function queue() {
    const judge = vi.fn(async (input: unknown) => ({ judgmentId: 'jdg_0000000000000001', newStatus: 'pending', input }));
    const result: QueueViewResult = { judged: [], interrupted: false, inFlight: null };
    const view = await renderInk(createElement(Queue, { stdout: process.stdout, items: [item], agentTag: 'ak_test0000', judge, result }));
    return { ...view, judge, result };
  }

  it('takes each score and the rationale with its Enter in one chunk', async () => {
    const v = await queue();
    await type(v.stdin, '\r'); // open the proposal
    for (const chunk of ['0.9\r', '0.8\r', '0.7\r', '0.8\r', 'Accurate and sourced\r']) await type(v.stdin, chunk);
    expect(v.lastFrame()).toContain('Sign with your key and send?');
    await type(v.stdin, 'y\r');
    expect(v.judge).toHaveBeenCalledWith({
      proposalId: item.proposalId,
      scores: { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 },
      rationale: 'Accurate and sourced',
    });
    expect(v.result.judged).toEqual([{ proposalId: item.proposalId, judgmentId: 'jdg_0000000000000001', newStatus: 'pending' }]);
  });

  it('fills the form from one pasted chunk, stops at a refused value, and never confirms by itself', async () => {
    const v = await queue();
    await type(v.stdin, '\r');
    await type(v.stdin, '0.9\r0.8\r7\r0.8\rWhy\r');
    expect(v.lastFrame()).toContain('compression is a number from 0 to 1');
    await type(v.stdin, '\u007f'); // the refused value is shown again, to fix
    await type(v.stdin, '0.7\r0.8\rWhy not\r');
    expect(v.lastFrame()).toContain('Sign with your key and send?');
    expect(v.judge).not.toHaveBeenCalled();
    await type(v.stdin, 'y');
    expect(v.judge).toHaveBeenCalledWith({
      proposalId: item.proposalId,
      scores: { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 },
      rationale: 'Why not',
    });
  });

  it('ends as interrupted on Ctrl-C', async () => {
    const v = await queue();
    await type(v.stdin, '\u0003');
    expect(v.result.interrupted).toBe(true);
  });
});
