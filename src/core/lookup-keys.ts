// The keys of the verifiable index (docs/INDEX.md 2): how a lookup key is written, and which
// keys a log entry mentions. The node, the monitor's rebuild and the verifiers derive them with
// this one function, so an entry left out of a key, or put under the wrong one, shows.
import { LOOKUP_ROOT_KIND } from './lookup.js';

/** The six kinds of lookup key, by their prefix. */
export const LOOKUP_KEY_PREFIXES = ['agent', 'key', 'proposal', 'path', 'sha256', 'credential'] as const;
export type LookupKeyPrefix = (typeof LOOKUP_KEY_PREFIXES)[number];

/** The longest lookup key, in characters. */
export const MAX_LOOKUP_KEY = 600;

const SHA256 = /^[0-9a-f]{64}$/;

/** Why a lookup key is not one (INDEX.md 2.1), or null when it is. */
export function lookupKeyProblem(key: string): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'an empty key';
  if (key.length > MAX_LOOKUP_KEY) return `longer than ${MAX_LOOKUP_KEY} characters`;
  const colon = key.indexOf(':');
  const prefix = key.slice(0, colon) as LookupKeyPrefix;
  const value = key.slice(colon + 1);
  if (colon < 0 || !LOOKUP_KEY_PREFIXES.includes(prefix)) return `not one of ${LOOKUP_KEY_PREFIXES.map((p) => `${p}:`).join(', ')}`;
  if (!value) return `nothing after ${prefix}:`;
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'a control character';
  if (prefix === 'sha256' && !SHA256.test(value)) return 'sha256: takes 64 lowercase hex digits';
  if (prefix === 'path' && !value.startsWith('/')) return 'path: takes a path starting with /';
  if (prefix === 'key' && !value.startsWith('did:key:')) return 'key: takes a did:key';
  return null;
}

/** What entryLookupKeys takes of an entry. */
export interface KeyedEntry {
  kind: string;
  agent: string | null;
  body: Record<string, unknown>;
}

/**
 * entryLookupKeys, made by a function that refers to nothing outside itself, so that a worker
 * thread runs the very same code from its source (cli/commands/monitor/index-rebuild-worker.ts): the keys an
 * entry mentions are derived by one function wherever they are.
 */
export function lookupKeysKit(rootKind: string, maxKey: number): (e: KeyedEntry) => string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  const sha256 = /^[0-9a-f]{64}$/;
  const control = /[\u0000-\u001f\u007f]/;
  // The body fields whose value is a knowledge path (INDEX.md 2.2).
  const pathFields = ['path', 'artifactPath', 'parentPath'];
  return (e) => {
    if (e.kind === rootKind) return [];
    const out: string[] = [];
    const add = (prefix: string, value: string) => {
      const k = prefix + value;
      if (k.length <= maxKey && !control.test(value) && !out.includes(k)) out.push(k);
    };
    const body = isObject(e.body) ? e.body : {};
    if (str(e.agent)) add('agent:', e.agent);
    const digests: string[] = [];
    for (const name in body) {
      const v = body[name];
      if (typeof v === 'string') {
        if (v.startsWith('did:key:') && v.length > 8) add('key:', v);
        if ((name === 'sha256' || name.endsWith('Sha256')) && sha256.test(v)) digests.push(v);
      } else if (Array.isArray(v))
        for (const item of v) if (isObject(item) && typeof item.sha256 === 'string' && sha256.test(item.sha256)) digests.push(item.sha256);
    }
    if (str(body.proposalId)) add('proposal:', body.proposalId);
    for (const f of pathFields) {
      const v = body[f];
      if (str(v) && v.startsWith('/')) add('path:', v);
    }
    for (const d of digests) add('sha256:', d);
    if (str(body.judgmentId)) add('credential:', body.judgmentId);
    if (Array.isArray(body.judgments)) for (const j of body.judgments) if (isObject(j) && str(j.judgmentId)) add('credential:', j.judgmentId);
    if (Array.isArray(body.judgmentIds)) for (const id of body.judgmentIds) if (str(id)) add('credential:', id);
    return out;
  };
}

/**
 * The keys an entry mentions (INDEX.md 2.2), each once, in the order the rules name them. Only
 * well-formed keys count: a field that is not one (a sha256 not of 64 hex) mentions nothing.
 * Written for speed (a monitor runs it on every entry of the log): each rule checks the value
 * its prefix takes (lookupKeyProblem's rules), one pass over the body's fields.
 */
export const entryLookupKeys: (e: KeyedEntry) => string[] = lookupKeysKit(LOOKUP_ROOT_KIND, MAX_LOOKUP_KEY);
