// Offline check of content-store hashes: does a local file hash to the sha256 a node (or a
// bundle, or a proposal) recorded for it? No node, no network: a file is streamed through
// sha256 in chunks, so any size checks in bounded memory.
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Blobs } from './bundle.js';

const SHA256_ANY_CASE = /^[0-9a-fA-F]{64}$/;

/** The lowercase form of a 64-hex sha256, or undefined when the text is not one. */
export function normalizeSha256(text: unknown): string | undefined {
  return typeof text === 'string' && SHA256_ANY_CASE.test(text.trim()) ? text.trim().toLowerCase() : undefined;
}

/** sha256 and size of a file, streamed. Rejects when the file cannot be read. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * The blobs of a folder for `verify bundle --blobs DIR`: files named by their sha256 (an
 * extension is allowed), as `akas export --blobs` writes them, each streamed through SHA-256
 * when the bundle names it. Throws (the check cannot run) when the folder cannot be read.
 */
export function blobsInFolder(dir: string): Blobs {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    const sha = normalizeSha256(name.split('.')[0]);
    if (sha && statSync(join(dir, name)).isFile()) files.set(sha, join(dir, name));
  }
  return {
    where: dir,
    async hash(sha) {
      const file = files.get(sha);
      return file ? { ...(await hashFile(file)), name: file } : null;
    },
  };
}

export type CasStatus = 'match' | 'mismatch' | 'unreadable';

export interface CasCheck {
  path: string;
  status: CasStatus;
  /** The recorded hash (lowercase). */
  expected: string;
  /** The hash of the bytes on disk (absent when unreadable). */
  actual?: string;
  bytes?: number;
  /** Why the file could not be read. */
  reason?: string;
}

/** Checks one file against its recorded sha256 (expected must already be 64 hex). */
export async function verifyCasFile(path: string, expected: string): Promise<CasCheck> {
  const want = normalizeSha256(expected);
  if (!want) throw new TypeError(`not a sha256 (64 hex characters): ${expected}`);
  try {
    const { sha256, bytes } = await hashFile(path);
    return { path, status: sha256 === want ? 'match' : 'mismatch', expected: want, actual: sha256, bytes };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { path, status: 'unreadable', expected: want, reason: err.code ?? err.message };
  }
}

export interface ManifestEntry {
  path: string;
  sha256: string;
}

/**
 * Reads a manifest: a JSON array of {path, sha256}, or an object carrying that array as
 * `files` or `entries`. Relative paths are relative to the manifest's own folder. Throws
 * (a message fit for the user) when the manifest is unreadable or malformed.
 */
export async function readCasManifest(manifestPath: string): Promise<ManifestEntry[]> {
  const text = await readFile(manifestPath, 'utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`${manifestPath} is not JSON`);
  }
  const list = Array.isArray(doc) ? doc : ((doc as { files?: unknown; entries?: unknown })?.files ?? (doc as { entries?: unknown })?.entries);
  if (!Array.isArray(list)) throw new Error(`${manifestPath}: expected a JSON array of {path, sha256} (or {files: [...]})`);
  const base = dirname(resolve(manifestPath));
  return list.map((entry, i) => {
    const e = entry as Partial<ManifestEntry>;
    if (typeof e?.path !== 'string' || e.path === '') throw new Error(`${manifestPath}: entry ${i} has no path`);
    const sha = normalizeSha256(e.sha256);
    if (!sha) throw new Error(`${manifestPath}: entry ${i} (${e.path}) has no valid sha256 (64 hex characters)`);
    return { path: isAbsolute(e.path) ? e.path : resolve(base, e.path), sha256: sha };
  });
}

export interface ManifestResult {
  /** Every entry matched. */
  ok: boolean;
  checked: number;
  matched: number;
  mismatched: number;
  unreadable: number;
  results: CasCheck[];
}

/** Checks every entry of a manifest (one file at a time: bounded memory). */
export async function verifyCasManifest(entries: ManifestEntry[]): Promise<ManifestResult> {
  const results: CasCheck[] = [];
  for (const e of entries) results.push(await verifyCasFile(e.path, e.sha256));
  const count = (s: CasStatus) => results.filter((r) => r.status === s).length;
  const matched = count('match');
  return { ok: matched === results.length, checked: results.length, matched, mismatched: count('mismatch'), unreadable: count('unreadable'), results };
}
