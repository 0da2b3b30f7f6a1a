// The read tools of `akas mcp --stdio`, verified before the model sees them (issue 50, 2;
// PROTOCOL 12.5): node, brief, search and proposal. Each call is the node's tool as before (what
// the model asked for, through the node's MCP endpoint), and what it answers is checked here
// (./verify.ts) with the read's full evidence (PROTOCOL 10.7: the same route with
// ?evidence=full, asked of the node over HTTP) under the profile's pinned keys, at a checkpoint
// proven one history with the newest one kept. What the model is shown is the read verified,
// less the decision's evidence it was checked with (./cache.ts viewOf), with a `verification`
// object in structuredContent and one line first in its text:
// - verified (or unanchored, status unknown: said so) -> the read and its verdict;
// - not verified -> withheld: an error result saying which checks failed and why, with nothing
//   of the read's text (a search withholds its failed hits only); `--allow-unverified` shows it
//   marked instead;
// - `--no-verify` -> the node's answer as it is, saying it was not checked.
// A verdict is kept for content read again at the same checkpoint (./cache.ts), so a read asks
// the node for its evidence once per checkpoint, not at every call.
import type { ReadShape } from '../../../verifier/index.js';
import { type AkasClient, CliError, type Json } from '../../kit/index.js';
import { readKey, sameContent, VerdictCache, viewOf } from './cache.js';
import { verifyLookupRead } from './lookup.js';
import { SKIPPED } from './skipped.js';
import { notesOf, ReadVerifier, type Verification } from './verify.js';

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Json;
  isError?: boolean;
}

/** How the read tools answer: verified (failures withheld), verified with failures shown marked, or unchecked. */
export type ReadMode = 'verify' | 'allow-unverified' | 'off';

/** Each read tool: the shape of its read, and its route with ?evidence=full (path parameter first, the rest in the query). */
const READ_TOOLS: Record<string, { shape: ReadShape; route: (args: Json) => string | undefined }> = {
  node: {
    shape: 'node',
    route: (a) => (typeof a.path === 'string' ? `/api/knowledge/node/${a.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}` : undefined),
  },
  brief: { shape: 'brief', route: (a) => (typeof a.id === 'string' ? `/api/knowledge/briefs/${encodeURIComponent(a.id)}` : undefined) },
  search: { shape: 'search', route: () => '/api/knowledge/search' },
  proposal: { shape: 'proposal', route: (a) => (typeof a.id === 'string' ? `/api/knowledge/proposals/${encodeURIComponent(a.id)}` : undefined) },
};
const PATH_ARGS = new Set(['path', 'id']);

/** Hits a search page carries with their evidence at most (PROTOCOL 10.6): a verified search asks for no more. */
export const VERIFIED_SEARCH_HITS = 20;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The full-evidence URL of a read tool's call, as the node's tool builds it from the same arguments (src/http/mcp/call.ts). */
export function fullReadUrl(tool: string, args: Json): string | undefined {
  const t = READ_TOOLS[tool];
  const route = t?.route(args);
  if (!route) return undefined;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(args))
    if (!PATH_ARGS.has(k) && k !== 'evidence' && v !== undefined && v !== null) q.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  q.set('evidence', 'full');
  return `${route}?${q}`;
}

/** The read tools, and the lookup tool (./lookup.ts), which this server checks before the model sees them. */
export const isReadTool = (name: string) => name in READ_TOOLS || name === 'lookup';

/** Bytes a checkpoint note may have (a signed note with a cosignature per witness is a few hundred). */
const CHECKPOINT_NOTE_BYTES = 64 * 1024;
const CHECKPOINT_WAIT_MS = 15_000;

/**
 * The node's checkpoint note now, asked at every read of the long-lived server: through fetch's
 * kept-alive connections (which the MCP client has loaded already), not a connection of its own
 * each time; bounded in bytes and time as every read on a node's word is (cli/kit/http1.ts).
 */
async function checkpointNote(baseUrl: string): Promise<string | undefined> {
  // Bounded in time by a race rather than an AbortSignal: undici counts a signal's listeners at
  // every request, a cost the profile of a read showed (an answer past the bound is left to the pool).
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), CHECKPOINT_WAIT_MS);
  });
  try {
    return await Promise.race([late, readNote(baseUrl)]);
  } finally {
    clearTimeout(timer);
  }
}

async function readNote(baseUrl: string): Promise<string | undefined> {
  const res = await fetch(`${baseUrl.replace(/\/$/, '')}/api/log/checkpoint`, { headers: { accept: 'text/plain' }, redirect: 'error' });
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    if (bytes > CHECKPOINT_NOTE_BYTES) return undefined; // leaving the loop cancels the body
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const result = (structured: Json, line: string, isError = false): ToolResult => ({
  ...(isError ? { isError: true } : {}),
  content: [{ type: 'text', text: `${line}\n${JSON.stringify(structured)}` }],
  structuredContent: structured,
});

export interface VerifiedToolsOptions {
  profile: string;
  client: AkasClient;
  mode: ReadMode;
  /** The node's tool, as the model called it. */
  callTool(name: string, args: Json): Promise<ToolResult>;
  log(line: string): void;
}

/** The read tools, verified: one per `akas mcp --stdio` process (its verifier's memo and its kept verdicts live as long). */
export class VerifiedTools {
  readonly verifier: ReadVerifier;
  readonly cache = new VerdictCache();
  private checkpointAsked?: Promise<string | undefined>;

  constructor(private readonly o: VerifiedToolsOptions) {
    this.verifier = new ReadVerifier({ profile: o.profile, client: o.client, say: o.log });
  }

  /**
   * The node's checkpoint now (GET /api/log/checkpoint), shared by the calls that ask while one
   * request is on its way; undefined when it cannot be read (nothing kept is then used).
   */
  private checkpointNow(): Promise<string | undefined> {
    this.checkpointAsked ??= checkpointNote(this.o.client.baseUrl)
      .catch(() => undefined)
      .finally(() => (this.checkpointAsked = undefined));
    return this.checkpointAsked;
  }

  async call(name: string, argsIn: Json): Promise<ToolResult> {
    if (name === 'lookup') return this.lookup(argsIn);
    const { shape } = READ_TOOLS[name];
    if (this.o.mode === 'off') {
      const r = await this.o.callTool(name, argsIn);
      if (r.isError || !isObject(r.structuredContent)) return r;
      const verification = SKIPPED('akas mcp --stdio --no-verify');
      return result({ ...r.structuredContent, verification }, verification.line);
    }
    const args = { ...argsIn };
    const asked = args.evidence === 'full';
    delete args.evidence;
    // A page of more hits than carry their evidence is asked for at that many (its nextCursor goes on from there).
    if (name === 'search' && typeof args.limit === 'number' && args.limit > VERIFIED_SEARCH_HITS) args.limit = VERIFIED_SEARCH_HITS;
    const url = fullReadUrl(name, args);
    // A call the node refuses (a missing path, an unknown id) is its refusal, as it answers it.
    if (!url) return this.o.callTool(name, argsIn);
    if (asked) return this.fullRead(shape, url, undefined, true);
    const [plain, note] = await Promise.all([this.o.callTool(name, args), this.checkpointNow()]);
    if (plain.isError || !isObject(plain.structuredContent)) return plain;
    const { untrustedContent, ...read } = plain.structuredContent;
    const key = readKey(name, shape, read);
    const kept = note ? this.cache.get(key) : undefined;
    if (kept && kept.note === note && kept.stamp === this.verifier.pinStamp()) return this.present(shape, kept.view, kept.verification, untrustedContent);
    return this.fullRead(shape, url, { key, read, untrustedContent }, false);
  }

  /**
   * The lookup tool: the node's answer (it proves itself: PROTOCOL 9.10), shown only once `akas
   * verify lookup`'s checks hold under the pinned keys; else withheld as not_verified, naming them.
   */
  private async lookup(argsIn: Json): Promise<ToolResult> {
    // Entries shown are asked with their inclusion proofs, so each is held to the log (index.entries), and shown without them.
    const args = this.o.mode !== 'off' && argsIn.entries === 'true' ? { ...argsIn, proofs: 'true' } : argsIn;
    const r = await this.o.callTool('lookup', args);
    if (r.isError || !isObject(r.structuredContent)) return r;
    const { untrustedContent, ...proven } = r.structuredContent;
    const { inclusions: _inclusions, ...bare } = proven;
    const answer = argsIn.proofs === 'true' ? proven : bare;
    const marked = untrustedContent === undefined ? {} : { untrustedContent };
    if (this.o.mode === 'off') {
      const verification = SKIPPED('akas mcp --stdio --no-verify');
      return result({ ...marked, ...answer, verification }, verification.line);
    }
    const v = await verifyLookupRead(this.verifier, proven);
    if (v.verdict !== 'not verified' || this.o.mode === 'allow-unverified') {
      const line = v.verdict === 'not verified' ? `${v.line} (shown anyway: --allow-unverified)` : v.line;
      return result({ ...marked, ...answer, verification: { ...v, line } }, line);
    }
    const line = `${v.line}. Withheld: what the node answered failed these checks on this machine, so it is not shown.`;
    return result({ code: 'not_verified', error: line, withheld: { key: answer.key }, verification: { ...v, line } }, line, true);
  }

  /** Reads with full evidence, verifies, keeps the verdict when the plain read served the same content, and presents it. */
  private async fullRead(shape: ReadShape, url: string, plain: { key: string; read: Json; untrustedContent: unknown } | undefined, asked: boolean) {
    let full: Json;
    try {
      full = await this.o.client.get<Json>(url);
    } catch (e) {
      if (!CliError.is(e)) throw e;
      const body = { ...e.body };
      delete body.status;
      return result({ error: e.message, ...body, code: String(e.body.code ?? 'failed') }, `akas: ${e.message}`, true);
    }
    const verification = await this.verifier.verify(full);
    const view = asked ? full : viewOf(shape, full);
    const size = verification.checkpoint?.size;
    const note = notesOf(shape, full).find((n) => Number(n.split('\n')[1]) === size);
    if (plain && note && sameContent(shape, plain.read, full)) this.cache.set(plain.key, { note, stamp: this.verifier.pinStamp(), view, verification });
    return this.present(shape, view, verification, plain?.untrustedContent);
  }

  /** The result a model is shown: the read with its verdict, or what failed in its place. */
  private present(shape: ReadShape, view: Json, v: Verification, untrustedContent: unknown): ToolResult {
    const marked = untrustedContent === undefined ? {} : { untrustedContent };
    const shown = this.o.mode === 'allow-unverified';
    if (shape === 'search' && v.hits && !v.refused) {
      // A search withholds the hits that failed, each in place, and shows the others.
      const items = (view.items as Json[]).map((item, i) => {
        const h = v.hits?.[i];
        const verification = h ? { verdict: h.verdict, ...(h.failed.length ? { failed: h.failed } : {}) } : undefined;
        if (h?.verdict === 'not verified' && !shown) return { path: item.path, kind: item.kind, withheld: true, verification };
        return { ...item, ...(verification ? { verification } : {}) };
      });
      return result({ ...marked, ...view, items, verification: v }, v.line);
    }
    if (v.verdict !== 'not verified' || shown) {
      const line = v.verdict === 'not verified' ? `${v.line} (shown anyway: --allow-unverified)` : v.line;
      return result({ ...marked, ...view, verification: { ...v, line } }, line);
    }
    const what = Object.fromEntries(['path', 'kind', 'proposalId', 'briefId'].filter((k) => view[k] !== undefined).map((k) => [k, view[k]]));
    const line = `${v.line}. Withheld: what the node answered failed these checks on this machine, so it is not shown.`;
    return result({ code: 'not_verified', error: line, withheld: what, verification: { ...v, line } }, line, true);
  }
}
