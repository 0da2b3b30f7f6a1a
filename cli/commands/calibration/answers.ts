// What `akas calibrate` checks before it spends one of the three lifetime attempts: every
// question of the pool has an answer, and no answer is longer than its maxAnswerLen (the
// node would cut it there, PROTOCOL 3.2). Lengths are counted in code points, as the node
// counts them.

export interface PoolQuestion {
  id: string;
  maxAnswerLen: number;
}

export interface AnswerProblem {
  id: string;
  problem: 'missing' | 'too-long' | 'not-text';
  /** For too-long: the answer's length and the limit. */
  length?: number;
  max?: number;
}

/** The problems of an answers object against the pool's questions (empty when it is complete). */
export function answerProblems(questions: PoolQuestion[], answers: Record<string, unknown>): AnswerProblem[] {
  const problems: AnswerProblem[] = [];
  for (const q of questions) {
    const a = answers[q.id];
    if (a === undefined || a === null || (typeof a === 'string' && a.trim() === '')) problems.push({ id: q.id, problem: 'missing' });
    else if (typeof a !== 'string') problems.push({ id: q.id, problem: 'not-text' });
    else {
      const length = [...a].length;
      if (length > q.maxAnswerLen) problems.push({ id: q.id, problem: 'too-long', length, max: q.maxAnswerLen });
    }
  }
  return problems;
}

/** One line per problem, for people. */
export function describeProblem(p: AnswerProblem): string {
  if (p.problem === 'missing') return `${p.id}: no answer (it would score 0)`;
  if (p.problem === 'not-text') return `${p.id}: the answer is not a string`;
  return `${p.id}: ${p.length} characters, over its limit of ${p.max} (the node would cut it)`;
}
