// The credentials `akas verify credential` reads: files, folders (every .json and .jsonl
// file inside, recursively, in name order), `-` for stdin; a file holds one JSON document or
// JSON lines (one credential per line). Each input keeps its raw text, so the verifier can
// refuse what plain JSON.parse would let through (duplicate keys, lone surrogates).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface CredentialInput {
  /** file, file:line, or stdin. */
  source: string;
  /** The raw bytes (the verifier checks they are UTF-8 and strict JSON). */
  bytes: Buffer;
}

export interface Unreadable {
  source: string;
  reason: string;
}

function filesOf(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => {
      const full = join(path, name);
      if (statSync(full).isDirectory()) return filesOf(full);
      return /\.(json|jsonl|ndjson)$/.test(name) ? [full] : [];
    });
}

/** Whether bytes hold only JSON white space (RFC 8259: space, tab, LF, CR), read without decoding them. */
function blank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return false;
  return true;
}

/**
 * Splits a file's bytes into credentials: one JSON document, or JSON lines. Lines are not
 * parsed here: the verifier parses each one strictly anyway, and says which is not JSON. A file
 * whose first non-blank line is a whole JSON value and which has another non-blank line is JSON
 * lines, told without decoding the whole file (issue 32, 6: a 10,000-line file was decoded and
 * parsed once more only to learn it is not one document); any other file is read as one document
 * when it is one.
 */
export function splitDocuments(source: string, bytes: Buffer): CredentialInput[] | Unreadable {
  const lines: Array<{ n: number; bytes: Buffer }> = [];
  let start = 0;
  for (let n = 1; start < bytes.length; n++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(start, end);
    start = end + 1;
    if (!blank(line)) lines.push({ n, bytes: line });
  }
  const firstIsValue = () => {
    try {
      JSON.parse(lines[0].bytes.toString('utf8'));
      return true;
    } catch {
      return false;
    }
  };
  if (lines.length < 2 || !firstIsValue()) {
    try {
      JSON.parse(bytes.toString('utf8'));
      return [{ source, bytes }];
    } catch {
      // Not one document: JSON lines.
    }
  }
  const out = lines.map((l) => ({ source: `${source}:${l.n}`, bytes: l.bytes }));
  if (out.length === 1) out[0].source = source; // one line that is not JSON: the file is not JSON
  return out.length ? out : { source, reason: 'empty' };
}

/** Reads every input path (stdin for '-'); unreadable ones are listed, not thrown. */
export function readCredentialInputs(paths: string[], stdin: () => Buffer): { inputs: CredentialInput[]; unreadable: Unreadable[] } {
  const inputs: CredentialInput[] = [];
  const unreadable: Unreadable[] = [];
  for (const path of paths) {
    let files: string[];
    try {
      files = path === '-' ? ['-'] : filesOf(path);
    } catch (e) {
      unreadable.push({ source: path, reason: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
      continue;
    }
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = file === '-' ? stdin() : readFileSync(file);
      } catch (e) {
        unreadable.push({ source: file, reason: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
        continue;
      }
      const docs = splitDocuments(file === '-' ? 'stdin' : file, bytes);
      if (Array.isArray(docs)) inputs.push(...docs);
      else unreadable.push(docs);
    }
  }
  return { inputs, unreadable };
}
