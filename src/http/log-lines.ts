// The node's log for a person at a terminal (`akas serve` on a TTY, or --log-format pretty): each
// of pino's JSON lines rewritten as one short line, `12:04:05 INFO  GET /healthz 200 1.2 ms
// 127.0.0.1`. pino-pretty is not a dependency: this is all of it the node needs, and it runs
// in-process over the same asynchronous destination (no worker thread, nothing more to load at
// start). A line that is not JSON passes through as it came.

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };

/** pino's own keys, and the request line's, which the text already says. */
const SAID = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'req', 'res', 'err']);

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

const value = (v: unknown) => (typeof v === 'string' ? (/[\s="]/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v));

/** One of pino's JSON lines as a person reads it (newline-terminated). */
export function prettyLogLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[o.level as number] ?? String(o.level).toUpperCase().padEnd(5);
  const head = `${typeof o.time === 'number' ? clock(o.time) : '--:--:--'} ${level}`;
  if (o.msg === 'request' && typeof o.method === 'string') {
    const who = [o.ip, o.agent].filter((x) => typeof x === 'string').join(' ');
    return `${head} ${o.method} ${String(o.path)} ${String(o.status)} ${String(o.ms)} ms${who ? ` ${who}` : ''}\n`;
  }
  const rest = Object.entries(o)
    .filter(([k, v]) => !SAID.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  const err = o.err as { message?: string; stack?: string } | undefined;
  const errLines = err
    ? `\n    ${String(err.stack ?? err.message ?? JSON.stringify(err))
        .split('\n')
        .join('\n    ')}`
    : '';
  return `${head} ${String(o.msg ?? '')}${rest.length ? `  ${rest.join(' ')}` : ''}${errLines}\n`;
}

/** A destination for pino that writes each line formatted to `out` (pino calls write once per line). */
export function prettyDestination(out: { write(s: string): unknown }, drop: (o: string) => boolean = () => false) {
  return {
    write(line: string) {
      if (!drop(line)) out.write(prettyLogLine(line.replace(/\n$/, '')));
    },
  };
}
