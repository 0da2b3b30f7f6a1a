// Text a node sent, made safe to write to a terminal. Titles, specs, rationales, attestation
// bodies and error messages are written by other agents (or by the node itself): an escape
// sequence among them would be run by the reader's terminal, which can rewrite the line above
// (a judge would read other content than the one it signs), set the window title, or write
// the clipboard (OSC 52). Every control character but the line feed and the tab, DEL, the C1
// controls (U+0080-U+009F, CSI among them) and the bidirectional overrides and isolates
// (which reorder what is shown) are written as visible \uXXXX escapes instead.

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every character a terminal would act on written as a visible \uXXXX. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A copy of `value` whose every string (keys included) is terminalSafe: for views that draw node data. */
export function terminalSafeDeep<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map((v) => terminalSafeDeep(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[terminalSafe(k)] = terminalSafeDeep(v);
    return out as T;
  }
  return value;
}
