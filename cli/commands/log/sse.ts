// A Server-Sent Events reader for `akas log events`: one streamed GET (node:http or node:https,
// loaded here only), events parsed as they arrive (WHATWG EventSource rules: `id`, `event`,
// `data` fields, blank line ends an event, `:` lines are comments).
import type { IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Splits a stream of SSE text into events; feed chunks, get complete events back. */
export class SseParser {
  private buffer = '';
  private current: { id?: string; event?: string; data: string[] } = { data: [] };

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.current.data.length) out.push({ id: this.current.id, event: this.current.event ?? 'message', data: this.current.data.join('\n') });
        this.current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.current.data.push(value);
      else if (field === 'id') this.current.id = value;
      else if (field === 'event') this.current.event = value;
    }
    return out;
  }
}

/**
 * Streams the events of url to onEvent until the server ends the stream (or signal aborts).
 * Rejects on a connection error, or an answer that is not a 200 event stream (with its
 * status, body and content type).
 */
export async function readEvents(
  url: string,
  headers: Record<string, string>,
  onEvent: (e: SseEvent) => void,
  signal?: AbortSignal,
  onOpen?: () => void,
): Promise<void> {
  const u = new URL(url);
  const { request } = u.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(u, { method: 'GET', headers: { accept: 'text/event-stream', ...headers }, signal }, (res: IncomingMessage) => {
      const contentType = String(res.headers['content-type'] ?? '');
      if (res.statusCode !== 200 || !contentType.startsWith('text/event-stream')) {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body.slice(0, 300)}`), { status: res.statusCode, body, contentType })));
        return;
      }
      onOpen?.();
      const parser = new SseParser();
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        for (const e of parser.push(c)) onEvent(e);
      });
      res.on('end', () => resolve());
      res.on('error', reject);
    });
    req.on('error', (e) => ((e as { name?: string }).name === 'AbortError' ? resolve() : reject(e)));
    req.end();
  });
}
