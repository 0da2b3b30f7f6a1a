// regex-test (PROTOCOL 4.4, 14): an ECMAScript pattern from an untrusted caller, run against a
// text of at most 5000 characters under a hard 50 ms limit that also stops catastrophic
// backtracking such as (a+)+$ on "aaaa…!".
//
// Design (ARCHITECTURE 6): the pattern runs in node:vm with `timeout: 50` (V8 interrupts a
// running regular expression, so the limit holds inside the backtracking loop), inside ONE
// long-lived worker_threads worker, so the main thread keeps serving requests while a bad
// pattern burns its 50 ms. Calls queue on the main side and go to the worker one at a time;
// a call the worker has not answered REGEX_BACKSTOP_MS (1 s) after it was sent (a worker stuck where the vm
// timeout cannot reach) is failed, and the worker is terminate()d and respawned. The worker
// code is a plain JS string run with `eval: true`, so the same code works from the
// TypeScript sources under vitest and from dist/ without locating a file.
//
// Measured (bench/tools.ts, 2 cores, Node 20): about 120 µs per call, most of it the
// watchdog thread node:vm starts for each timed run (~50 µs) and the message round trip;
// a direct RegExp loop on the same input takes ~1 µs. One worker gives several thousand
// calls per second, far above what the HTTP surface serves, so no pool.
//
// The vm is a timer, not a sandbox: the pattern and text are data handed to `new RegExp` and
// `matchAll`, never evaluated as code; string code generation is disabled in the context.
//
// Compiling is inside the limit too, but V8 cannot interrupt it: the vm's timer only stops the
// run at the next check after the pattern is compiled (issue 30: a 720,000-character pattern
// compiled for 1.3 to 1.6 s past the 50 ms). So the pattern is capped at REGEX_PATTERN_MAX
// characters in the schema, and the worker times the whole evaluation, compilation included,
// answering a timeout for a run that finished past the limit. Measured here (Node 20): a
// 935-character alternation with flags `iu` still compiles for 0.5 to 1 s, which is why a
// timed-out call is charged and uses its challenge up (src/domain/challenges/challenges.ts): each such call
// costs the agent a challenge and its price, so nobody keeps the worker busy for free.
import { Worker } from 'node:worker_threads';
import { ServiceError } from '../../../core/index.js';
import { checkToolInput } from './check-input.js';
import { ToolError } from './errors.js';
import type { ToolSpec } from './types.js';

/** PROTOCOL 14: the pattern evaluation time limit. */
export const REGEX_TIME_LIMIT_MS = 50;
/**
 * A call the worker has not answered this long after it was sent is failed and the worker
 * replaced. The 50 ms vm timeout is the real limit; this only catches a worker that stopped
 * answering, so it is generous: at 250 ms a CPU-starved machine failed harmless patterns.
 */
export const REGEX_BACKSTOP_MS = 1000;
/** PROTOCOL 14: regex-test text max. */
export const REGEX_TEXT_MAX = 5000;
/** PROTOCOL 14: regex-test pattern max, so compiling (which no timer interrupts) stays short. */
export const REGEX_PATTERN_MAX = 1000;
/** At most this many matches are returned; `truncated: true` says more existed. */
export const REGEX_MAX_MATCHES = 1000;
/** At most this many characters of match and group text in total (a pattern with many groups
 * over every position could otherwise return gigabytes); `truncated: true` when cut. */
export const REGEX_MAX_OUTPUT_CHARS = 200_000;
/** Calls waiting for the worker beyond this fail at once with ToolError regex_busy. */
export const REGEX_MAX_QUEUED = 100;

// The limits in force; only tests change them (to reach the backstop path on purpose).
const limits = { timeLimitMs: REGEX_TIME_LIMIT_MS, backstopMs: REGEX_BACKSTOP_MS };

/** Tests only: overrides the vm time limit and the backstop delay; answers the previous values. */
export function setRegexLimitsForTests(next: Partial<typeof limits>): typeof limits {
  const prev = { ...limits };
  Object.assign(limits, next);
  return prev;
}

/** A call held by holdNextRegexForTests. */
export interface HeldRegexCall {
  /** Resolves once the call is in the worker (running, with no time limit of its own). */
  sent: Promise<void>;
  /** Ends the call as the time limit does: the worker is replaced and the call fails with regex_timeout. */
  expire(): void;
}

// Tests only: the hold waiting for the next call sent to the worker.
let pendingHold: { markSent: () => void; expire?: () => void; expired: boolean } | undefined;

/**
 * Tests only (the pattern of torchwood's testingOnlyStallRequest): the next call sent to the
 * worker runs without the vm limit or the backstop until the test calls expire(), which takes
 * the path a pattern past its limit takes. So a test drives the timeout without racing a clock:
 * the call cannot end on its own (give it a pattern that never finishes), and what the node does
 * meanwhile and afterwards is asserted as outcomes.
 */
export function holdNextRegexForTests(): HeldRegexCall {
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const hold: NonNullable<typeof pendingHold> = { markSent, expired: false };
  pendingHold = hold;
  return {
    sent,
    expire: () => {
      hold.expired = true;
      hold.expire?.();
    },
  };
}

/** toolInput of regex-test. */
export interface RegexTestInput {
  pattern: string;
  text: string;
  flags?: string;
}

/** One match: the matched text, its UTF-16 index in text, and its capture groups in order
 * (a group that did not take part in the match is ''). Named groups appear by position. */
export interface RegexMatch {
  match: string;
  index: number;
  groups: string[];
}

/** The result of regex-test; `truncated` is present (true) only when matches were cut. */
export interface RegexTestOutput {
  matches: RegexMatch[];
  truncated?: boolean;
}

/** JSON Schema of regex-test toolInput (PROTOCOL 4.4). */
export const regexTestInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pattern', 'text'],
  properties: {
    pattern: { type: 'string', maxLength: REGEX_PATTERN_MAX, description: 'ECMAScript regular expression source, without slashes (max 1000 characters).' },
    text: { type: 'string', maxLength: REGEX_TEXT_MAX, description: 'The text to search (max 5000 characters).' },
    flags: { type: 'string', maxLength: 8, default: '', description: "ECMAScript flags (dgimsuvy); 'g' is appended when absent." },
  },
} as const;

/** JSON Schema of the regex-test result. */
export const regexTestOutputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['matches'],
  properties: {
    matches: {
      type: 'array',
      maxItems: REGEX_MAX_MATCHES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['match', 'index', 'groups'],
        properties: {
          match: { type: 'string' },
          index: { type: 'integer', minimum: 0 },
          groups: { type: 'array', items: { type: 'string' }, description: "Capture groups in order; '' for a group that did not participate." },
        },
      },
    },
    truncated: { type: 'boolean', description: 'Present and true when more matches existed than were returned (1000 matches or 200000 characters).' },
  },
} as const;

// The worker: builds one vm context at start, then answers {id, pattern, flags, text} with
// {id, result} | {id, invalid: reason} | {id, timeout: true}. Kept as plain JS so it runs
// with `eval: true` from both the sources and the build.
const WORKER_SOURCE = `
'use strict';
const { parentPort } = require('node:worker_threads');
const vm = require('node:vm');
const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
vm.runInContext(\`
  function evaluate(pattern, flags, text, maxMatches, maxChars) {
    let re;
    try {
      re = new RegExp(pattern, flags);
    } catch (e) {
      return { invalid: String((e && e.message) || e) };
    }
    const matches = [];
    let chars = 0;
    let truncated = false;
    for (const m of text.matchAll(re)) {
      if (matches.length === maxMatches) { truncated = true; break; }
      const groups = [];
      let size = m[0].length;
      for (let i = 1; i < m.length; i++) {
        const g = m[i] === undefined ? '' : m[i];
        size += g.length;
        groups.push(g);
      }
      if (chars + size > maxChars) { truncated = true; break; }
      chars += size;
      matches.push({ match: m[0], index: m.index, groups: groups });
    }
    return truncated ? { matches: matches, truncated: true } : { matches: matches };
  }
\`, context);
const script = new vm.Script('evaluate(job.pattern, job.flags, job.text, job.maxMatches, job.maxChars)');
parentPort.on('message', (job) => {
  context.job = job;
  let reply;
  try {
    // Timed as a whole: V8 compiles the pattern (at new RegExp and at its first match) without
    // checking the vm's timer, so a run that finished past the limit is a timeout too.
    const started = performance.now();
    const r = job.timeoutMs === undefined ? script.runInContext(context) : script.runInContext(context, { timeout: job.timeoutMs });
    if (job.timeoutMs !== undefined && performance.now() - started > job.timeoutMs) reply = { id: job.id, timeout: true };
    else reply = r.invalid !== undefined ? { id: job.id, invalid: r.invalid } : { id: job.id, result: r };
  } catch (e) {
    reply = e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
      ? { id: job.id, timeout: true }
      : { id: job.id, invalid: String((e && e.message) || e) };
  }
  context.job = undefined;
  parentPort.postMessage(reply);
});
parentPort.postMessage({ ready: true });
`;

interface Job {
  pattern: string;
  flags: string;
  text: string;
  resolve: (r: RegexTestOutput) => void;
  reject: (e: Error) => void;
}

interface Reply {
  id?: number;
  ready?: boolean;
  result?: RegexTestOutput;
  invalid?: string;
  timeout?: boolean;
}

// The main-thread side of the one worker: a FIFO of calls, one in flight at a time, with the
// backstop timer, respawn on termination or crash, and ref() only while there is work so an
// idle worker never keeps a process alive.
class RegexEvaluator {
  private worker: Worker | undefined;
  private ready = false;
  private readonly queue: Job[] = [];
  private current: { id: number; job: Job; timer: NodeJS.Timeout | undefined } | undefined;
  private nextId = 1;
  private readyWaiters: Array<() => void> = [];

  evaluate(pattern: string, flags: string, text: string): Promise<RegexTestOutput> {
    if (this.queue.length >= REGEX_MAX_QUEUED) {
      return Promise.reject(new ToolError('regex_busy', 'Too many regex-test calls are waiting; retry shortly.'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ pattern, flags, text, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once a worker is up and ready (starting one if needed). */
  warm(): Promise<void> {
    if (!this.worker) this.spawn();
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.ready = false;
    this.failAll(new ToolError('regex_unavailable', 'The regex evaluator was closed.'));
    if (w) await w.terminate();
  }

  // Sends the next queued call when the worker is ready and idle.
  private pump(): void {
    if (this.current || this.queue.length === 0) {
      this.setRef();
      return;
    }
    if (!this.worker) this.spawn();
    this.setRef();
    if (!this.ready) return;
    const job = this.queue.shift() as Job;
    const id = this.nextId++;
    // A call a test holds runs with no limit and no backstop until the test expires it.
    const hold = pendingHold;
    pendingHold = undefined;
    const timer = hold ? undefined : setTimeout(() => this.backstop(id), limits.backstopMs);
    this.current = { id, job, timer };
    (this.worker as Worker).postMessage({
      id,
      pattern: job.pattern,
      flags: job.flags,
      text: job.text,
      maxMatches: REGEX_MAX_MATCHES,
      maxChars: REGEX_MAX_OUTPUT_CHARS,
      timeoutMs: hold ? undefined : limits.timeLimitMs,
    });
    if (hold) {
      hold.expire = () => this.backstop(id);
      hold.markSent();
      if (hold.expired) this.backstop(id);
    }
  }

  // Keeps the process alive exactly while calls are queued or in flight.
  private setRef(): void {
    if (!this.worker) return;
    if (this.current || this.queue.length) this.worker.ref();
    else this.worker.unref();
  }

  private spawn(): void {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
      stdout: false,
      stderr: false,
    });
    this.worker = worker;
    this.ready = false;
    worker.unref();
    worker.on('message', (m: Reply) => {
      if (worker === this.worker) this.onMessage(m);
    });
    worker.on('error', () => {
      // The exit event that follows does the clean-up.
    });
    worker.on('exit', () => {
      if (worker === this.worker) this.onCrash();
    });
  }

  private onMessage(m: Reply): void {
    if (m.ready) {
      this.ready = true;
      for (const w of this.readyWaiters.splice(0)) w();
      this.pump();
      return;
    }
    const cur = this.current;
    if (!cur || m.id !== cur.id) return;
    clearTimeout(cur.timer);
    this.current = undefined;
    if (m.timeout) {
      cur.job.reject(new ToolError('regex_timeout', `The pattern ran past the ${limits.timeLimitMs} ms evaluation limit.`));
    } else if (m.invalid !== undefined) {
      cur.job.reject(new ServiceError('invalid_pattern', `Invalid regular expression: ${m.invalid}`));
    } else {
      cur.job.resolve(m.result as RegexTestOutput);
    }
    this.pump();
  }

  // The worker did not answer in time: replace it and fail only the call it was running.
  private backstop(id: number): void {
    const cur = this.current;
    if (!cur || cur.id !== id) return;
    this.current = undefined;
    const w = this.worker;
    this.worker = undefined;
    this.ready = false;
    if (w) void w.terminate();
    cur.job.reject(new ToolError('regex_timeout', `The pattern ran past the ${limits.timeLimitMs} ms evaluation limit.`));
    this.pump();
  }

  // The worker died (out of memory, or failed to start): fail the call it held, or, if it
  // never came up, every waiting call (respawning in a loop would never end); later calls
  // start a fresh worker.
  private onCrash(): void {
    const wasReady = this.ready;
    this.worker = undefined;
    this.ready = false;
    const cur = this.current;
    if (cur) {
      clearTimeout(cur.timer);
      this.current = undefined;
      cur.job.reject(new ToolError('regex_unavailable', 'The regex evaluator stopped while running this pattern; it has been restarted.'));
    }
    if (!wasReady) this.failAll(new ToolError('regex_unavailable', 'The regex evaluator could not start.'));
    else this.pump();
  }

  private failAll(err: ToolError): void {
    const cur = this.current;
    if (cur) {
      clearTimeout(cur.timer);
      this.current = undefined;
      cur.job.reject(err);
    }
    for (const job of this.queue.splice(0)) job.reject(err);
    for (const w of this.readyWaiters.splice(0)) w();
  }
}

// Created at the first call (or warm-up) so importing the module starts no thread.
let evaluator: RegexEvaluator | undefined;

const theEvaluator = () => (evaluator ??= new RegexEvaluator());

/**
 * regex-test: every match of `pattern` (with `flags`, 'g' appended when absent) in `text`.
 * Throws ServiceError invalid_pattern for a pattern or flags RegExp refuses (or a pattern
 * whose evaluation throws), ServiceError invalid_tool_input for input outside the schema (a
 * pattern over 1000 characters among it), ToolError regex_timeout past the 50 ms limit (compiling
 * counted), regex_busy when the queue is full.
 */
export async function regexTest(input: RegexTestInput): Promise<RegexTestOutput> {
  checkToolInput(regexTestInputSchema, input);
  const flags = input.flags ?? '';
  // Flags are checked here, where no pattern runs (an empty one cannot backtrack): a wrong flag
  // is refused at once, never raced against the worker's time limit on a loaded machine.
  try {
    new RegExp('', flags);
  } catch (e) {
    throw new ServiceError('invalid_pattern', `Invalid regular expression: ${(e as Error).message}`);
  }
  return theEvaluator().evaluate(input.pattern, flags.includes('g') ? flags : `${flags}g`, input.text);
}

/** Starts the regex worker ahead of the first call (optional; the first call starts it anyway). */
export const warmRegexWorker = (): Promise<void> => theEvaluator().warm();

/**
 * Stops the regex worker; calls still waiting fail with ToolError regex_unavailable. A later
 * call starts a new worker. The worker is unref()ed while idle, so not calling this never
 * keeps a process alive; call it on app close for a tidy shutdown.
 */
export async function closeRegexWorker(): Promise<void> {
  pendingHold = undefined;
  const e = evaluator;
  evaluator = undefined;
  if (e) await e.close();
}

/** regex-test as a registry entry (PROTOCOL 4.4, cost multiplier 1). */
export const regexTestTool: ToolSpec<RegexTestInput, RegexTestOutput> = {
  name: 'regex-test',
  description:
    'Tests an ECMAScript regular expression (max 1000 characters) against a text (max 5000 characters) and lists every match with its index ' +
    "and capture groups. 'g' is added to the flags when absent; evaluation, compiling included, stops after 50 ms (catastrophic " +
    'backtracking included), and a call stopped there is charged. Returns at most 1000 matches.',
  costMultiplier: 1,
  input: regexTestInputSchema,
  output: regexTestOutputSchema,
  run: regexTest,
};
