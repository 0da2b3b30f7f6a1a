// Human vs --json output. Results go to stdout, messages to stderr. With --json, stdout
// gets exactly one JSON document: the node's response or the command's result (and on
// failure, an error object), so a script can parse it.
import { CliError } from './errors.js';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
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
    else this.io.stdout.write((typeof human === 'function' ? human() : human).replace(/\n?$/, '\n'));
  }

  /** A side note for humans (stderr; silent under --json). */
  note(text: string) {
    if (!this.json) this.io.stderr.write(text.replace(/\n?$/, '\n'));
  }

  failure(err: CliError) {
    if (this.json) this.io.stdout.write(JSON.stringify({ ok: false, ...err.body, error: err.body.error ?? err.message }, null, 2) + '\n');
    else this.io.stderr.write(`akas: ${err.message}\n`);
  }
}

/** Two-column key: value lines for human output. */
export function table(rows: Array<[string, unknown]>): string {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join('\n');
}
