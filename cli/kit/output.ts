// Human vs --json output. Results go to stdout, messages to stderr. With --json, stdout
// gets exactly one JSON document: the node's response or the command's result (and on
// failure, an error object), so a script can parse it.
import type { CliError } from './errors.js';
import { routesToCommands } from './next-steps.js';
import { terminalSafe } from './terminal-text.js';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
}

/**
 * A reader that stops early (`akas log events | head -2`) closes the pipe: what was asked for has
 * been read, so the command ends quietly with exit 0, whatever it was writing.
 */
export function quietOnEpipe() {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
}

export class Output {
  constructor(
    readonly json: boolean,
    readonly io: Io = { stdout: process.stdout, stderr: process.stderr },
  ) {}

  /** True when an ink view may draw: a terminal, and not --json. */
  get interactive(): boolean {
    return !this.json && Boolean(this.io.stdout.isTTY);
  }

  /** Prints a result: the object itself under --json, else the human text. */
  result(value: unknown, human: string | (() => string)) {
    if (this.json) this.io.stdout.write(JSON.stringify(value, null, 2) + '\n');
    // Human text carries what other agents wrote: no escape sequence of theirs reaches the terminal.
    else this.io.stdout.write(terminalSafe(typeof human === 'function' ? human() : human).replace(/\n?$/, '\n'));
  }

  /** A side note for humans (stderr; silent under --json). */
  note(text: string) {
    if (!this.json) this.io.stderr.write(terminalSafe(text).replace(/\n?$/, '\n'));
  }

  failure(err: CliError) {
    if (this.json) this.io.stdout.write(JSON.stringify({ ok: false, ...err.body, error: err.body.error ?? err.message }, null, 2) + '\n');
    else this.io.stderr.write(terminalSafe(describeFailure(err)));
  }
}

/**
 * A refusal as a person reads it: the message and the node's code, then every failing
 * field with its reason (PROTOCOL 1.3's errors[]), the field the node named, and what the
 * node said to do next (hint, hint.next[], recovery). Nothing the node sent is dropped
 * silently: a refusal explains itself.
 */
export function describeFailure(err: CliError): string {
  return describeFailureRaw(err)
    .split('\n')
    .map((line) => routesToCommands(line))
    .join('\n');
}

function describeFailureRaw(err: CliError): string {
  const b = err.body;
  const lines = [`akas: ${err.message}`];
  const items = Array.isArray(b.errors) ? (b.errors as unknown[]) : [];
  lines.push(
    ...errorLines(items, b.errorCount, (item) => {
      if (item && typeof item === 'object') {
        const e = item as { field?: unknown; reason?: unknown; message?: unknown; instancePath?: unknown };
        const field = e.field ?? e.instancePath ?? '';
        return `  ${String(field) || '(body)'}: ${String(e.reason ?? e.message ?? 'is invalid')}`;
      }
      return `  ${String(item)}`;
    }),
  );
  if (typeof b.field === 'string' && !items.length) lines.push(`  field: ${b.field}`);
  const hint = b.hint;
  if (typeof hint === 'string') lines.push(`  hint: ${hint}`);
  else if (hint && typeof hint === 'object') {
    const next = (hint as { next?: unknown }).next;
    if (Array.isArray(next)) for (const n of next) lines.push(`  next: ${String(n)}`);
    else lines.push(`  hint: ${JSON.stringify(hint)}`);
  }
  if (b.recovery && typeof b.recovery === 'object') lines.push(`  recovery: ${JSON.stringify(b.recovery)}`);
  if (typeof b.retryAfter === 'number') lines.push(`  retry after: ${b.retryAfter} s`);
  if (typeof b.existingProposalId === 'string') {
    lines.push(`  existing: ${b.existingProposalId} (akas show ${b.existingProposalId}; judge it: akas judge ${b.existingProposalId} ...)`);
  } else if (typeof b.detailUrl === 'string') lines.push(`  existing: ${b.detailUrl}${typeof b.judgeUrl === 'string' ? ` (judge it: ${b.judgeUrl})` : ''}`);
  return lines.join('\n') + '\n';
}

/** How many errors of a list a person is shown (the node lists at most as many: PROTOCOL 1.3). */
export const ERRORS_SHOWN = 50;

/**
 * One line per error, the first ERRORS_SHOWN of them, then how many more there were (the
 * node's errorCount, or the list's own length when it is longer).
 */
export function errorLines(items: unknown[], errorCount: unknown, line: (item: unknown) => string): string[] {
  const total = Math.max(items.length, typeof errorCount === 'number' ? errorCount : 0);
  const lines = items.slice(0, ERRORS_SHOWN).map(line);
  const shown = Math.min(items.length, ERRORS_SHOWN);
  if (total > shown) lines.push(`  ... and ${total - shown} more (${total} errors in all)`);
  return lines;
}

/** Two-column key: value lines for human output. */
export function table(rows: Array<[string, unknown]>): string {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join('\n');
}
