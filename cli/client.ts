// The HTTP client of a node. JSON calls use Node's built-in fetch (undici, bundled with
// Node) so `akas me` starts fast; streaming transfers (the content store) load the undici
// package lazily for backpressure and progress. Non-2xx answers become a CliError carrying
// the node's body, so `--json` prints the node's own envelope and the exit code is 1.
import { CliError } from './errors.js';

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  /** Overrides fetch (tests). */
  fetch?: typeof fetch;
}

export interface NodeResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export class AkasClient {
  readonly baseUrl: string;
  apiKey?: string;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/$/, '');
    this.apiKey = opts.apiKey;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  url(path: string) {
    return `${this.baseUrl}${path}`;
  }

  /** One JSON request. `auth: true` sends the Bearer key (and fails early without one). */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { body?: unknown; auth?: boolean; headers?: Record<string, string>; okStatuses?: number[] } = {},
  ): Promise<NodeResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (opts.auth) {
      if (!this.apiKey) throw new CliError(2, 'No identity for this node and profile: run `akas register` first (or pass --profile).', { code: 'no_identity' });
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    let payload: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(opts.body);
    }
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path), { method, headers, body: payload });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new CliError(2, `Cannot reach the node at ${this.baseUrl} (${cause}). Is \`akas serve\` running? (--base-url / AKAS_BASE_URL)`, {
        code: 'unreachable',
        baseUrl: this.baseUrl,
      });
    }
    const text = await res.text();
    let body: unknown = text;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (res.status >= 400 && !(opts.okStatuses ?? []).includes(res.status)) {
      const b = (typeof body === 'object' && body !== null ? body : { error: String(body) }) as Record<string, unknown>;
      const message = String(b.error ?? b.detail ?? `HTTP ${res.status}`);
      throw new CliError(res.status >= 500 ? 2 : 1, `${message}${b.code ? ` (${b.code})` : ''}`, { status: res.status, ...b });
    }
    return { status: res.status, headers: res.headers, body: body as T };
  }

  get<T = Record<string, unknown>>(path: string, auth = false) {
    return this.call<T>('GET', path, { auth }).then((r) => r.body);
  }

  post<T = Record<string, unknown>>(path: string, body?: unknown, opts: { auth?: boolean; headers?: Record<string, string> } = {}) {
    return this.call<T>('POST', path, { body, ...opts }).then((r) => r.body);
  }
}
