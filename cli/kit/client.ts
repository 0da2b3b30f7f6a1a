// The HTTP client of a node. JSON calls go through cli/kit/http1.ts (one HTTP/1.1 exchange on a
// TCP socket, TLS for an https:// node), bounded in bytes and time. Node's global
// fetch loads and compiles its bundled undici (WASM parser included) on first use, and the
// process then waits ~150 ms for V8 to finish optimising it before it can exit, which alone
// would make `akas me` 2.6 times slower than `node -e 0`; node:http costs ~6 ms more than
// cli/kit/http1.ts cold (bench/coldstart.ts). Streaming transfers (the content store) load
// the undici package lazily for backpressure and progress. Non-2xx answers become a CliError
// carrying the node's body, so `--json` prints the node's own envelope and the exit code is 1.
import { CliError } from './errors.js';
import { http1Request } from './http1.js';

/** The minimal transport the client needs; tests may pass their own. */
export type Transport = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  /** Overrides the transport (tests). */
  fetch?: Transport;
}

export interface NodeResponse<T> {
  status: number;
  headers: { get(name: string): string | null };
  body: T;
}

/** One request, through cli/kit/http1.ts (TLS for https://): within its default caps of bytes and time, whatever the node sends. */
const nodeTransport: Transport = async (url, init) => {
  let res;
  try {
    res = await http1Request(new URL(url), init.method, init.headers, init.body);
  } catch (e) {
    throw Object.assign(new Error((e as Error).message), { cause: e });
  }
  const text = res.body.toString('utf8');
  return { status: res.status, headers: { get: (name: string) => res.headers.get(name.toLowerCase()) ?? null }, text: async () => text };
};

/**
 * A --base-url that is not an http:// or https:// URL (`127.0.0.1:7373`, `htp://...`) is a
 * typo, not a node that is down: say so, with the URL it probably meant.
 */
export function baseUrlProblem(baseUrl: string): CliError | undefined {
  let u: URL | undefined;
  try {
    u = new URL(baseUrl);
  } catch {
    u = undefined;
  }
  if (u && (u.protocol === 'http:' || u.protocol === 'https:')) return undefined;
  const guess = /^[a-z][a-z0-9+.-]*:\/\//i.test(baseUrl) ? baseUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, 'http://') : `http://${baseUrl}`;
  return new CliError('bad_base_url', `--base-url ${baseUrl} is not an http:// or https:// URL: try --base-url ${guess} (or AKAS_BASE_URL)`, { baseUrl });
}

/**
 * A request that got no answer: a --base-url typo is said as one, else nothing answers there.
 * `e` is the failure (a fetch error with its `cause`, or a socket error with its `code`).
 */
export function unreachableError(baseUrl: string, e: unknown): CliError {
  const bad = baseUrlProblem(baseUrl);
  if (bad) return bad;
  const err = e as { code?: string; cause?: { code?: string }; message?: string };
  const cause = err.cause?.code ?? err.code ?? err.message;
  return new CliError('unreachable', `nothing answers at ${baseUrl} (${cause}): is \`akas serve\` running there? (--base-url / AKAS_BASE_URL)`, { baseUrl });
}

export class AkasClient {
  readonly baseUrl: string;
  apiKey?: string;
  private readonly fetchImpl: Transport;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/$/, '');
    this.apiKey = opts.apiKey;
    this.fetchImpl = opts.fetch ?? nodeTransport;
  }

  url(path: string) {
    return `${this.baseUrl}${path}`;
  }

  /** One JSON request. `auth: true` sends the Bearer key (and fails early without one). */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: {
      body?: unknown;
      auth?: boolean;
      headers?: Record<string, string>;
      okStatuses?: number[] /** A JSON answer is expected: anything else means this is not an akas node. */;
      json?: boolean;
    } = {},
  ): Promise<NodeResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (opts.auth) {
      if (!this.apiKey) throw new CliError('no_identity', 'No identity for this node and profile: run `akas register` first (or pass --profile).');
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    let payload: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(opts.body);
    }
    let res: Awaited<ReturnType<Transport>>;
    try {
      res = await this.fetchImpl(this.url(path), { method, headers, body: payload });
    } catch (e) {
      throw unreachableError(this.baseUrl, e);
    }
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    let body: unknown = text;
    if (text && contentType.includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    // Every akas refusal is a JSON envelope with a code (PROTOCOL 1.3), and every JSON route
    // answers JSON: an HTML error page, an empty body or text where JSON belongs means
    // --base-url points at some other server.
    const envelope = typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string';
    const failed = res.status >= 400 && !(opts.okStatuses ?? []).includes(res.status);
    if ((failed && !envelope) || (!failed && opts.json && (typeof body !== 'object' || body === null))) {
      throw new CliError(
        'not_akas',
        `${this.baseUrl} is not an akas node: asked for ${path.split('?')[0]}, it answered HTTP ${res.status}${
          contentType ? ` with ` + `${contentType.split(';')[0]}` : ''
        }${failed ? '' : ' where JSON belongs'}. Check --base-url / AKAS_BASE_URL.`,
        { baseUrl: this.baseUrl, status: res.status },
      );
    }
    if (failed) {
      const b = body as Record<string, unknown>;
      const message = String(b.error ?? b.detail ?? `HTTP ${res.status}`);
      const label = b.code ? `${b.code}, HTTP ${res.status}` : `HTTP ${res.status}`;
      throw CliError.fromNode(res.status >= 500 ? 2 : 1, `${message} (${label})`, { status: res.status, ...b });
    }
    return { status: res.status, headers: res.headers, body: body as T };
  }

  /** GET /healthz: its answer whether 200 or 503 (a node seeding its demo tree, or whose store fails, answers 503 with the same body). */
  health<T = Record<string, unknown>>() {
    return this.call<T>('GET', '/healthz', { json: true, okStatuses: [503] }).then((r) => r.body);
  }

  get<T = Record<string, unknown>>(path: string, auth = false) {
    return this.call<T>('GET', path, { auth, json: true }).then((r) => r.body);
  }

  post<T = Record<string, unknown>>(path: string, body?: unknown, opts: { auth?: boolean; headers?: Record<string, string> } = {}) {
    return this.call<T>('POST', path, { body, json: true, ...opts }).then((r) => r.body);
  }
}
