// The credentials `akas verify credential` reads: files, folders (every .json and .jsonl
// file inside, recursively, in name order), `-` for stdin; a file holds one JSON document or
// JSON lines (one credential per line). Each input keeps its raw text, so the verifier can
// refuse what plain JSON.parse would let through (duplicate keys, lone surrogates).
// The files are read straight into one SharedArrayBuffer, which is then the batch the verifier
// threads share (cli/commands/verify/pool.ts) with no copy: on this kind of machine, copying 16 MB cost
// as much as reading it (every fresh page is a fault).
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { reasonOf } from '../../kit/index.js';

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

/** The files the input paths name, in order, with their sizes ('-': stdin, size 0); paths that cannot be listed are unreadable. */
export interface InputFiles {
  /** regular: a plain file, read into the shared buffer; anything else (a pipe, a device) is read as it comes. */
  files: Array<{ path: string; size: number; regular: boolean }>;
  /** Their sizes added up: what startWorkers sizes the pool by, before anything is read. */
  bytes: number;
  unreadable: Unreadable[];
}

/** Lists every input path's files (folders walked, stdin as '-'); nothing is read yet. */
export function listInputFiles(paths: string[]): InputFiles {
  const files: InputFiles['files'] = [];
  const unreadable: Unreadable[] = [];
  let bytes = 0;
  for (const path of paths) {
    if (path === '-') {
      files.push({ path, size: 0, regular: false });
      continue;
    }
    let found: string[];
    try {
      found = filesOf(path);
    } catch (e) {
      unreadable.push({ source: path, reason: reasonOf(e) });
      continue;
    }
    for (const file of found) {
      try {
        const st = statSync(file);
        // A pipe (`<(curl ...)`) or a device says nothing true of its size, and is read once.
        const regular = st.isFile();
        files.push({ path: file, size: regular ? st.size : 0, regular });
        if (regular) bytes += st.size;
      } catch (e) {
        unreadable.push({ source: file, reason: reasonOf(e) });
      }
    }
  }
  return { files, bytes, unreadable };
}

/**
 * Reads a regular file into `region` from `at`, answering the view of what it holds; undefined
 * when it does not fit (it grew since it was listed) or is no longer a regular file, to be read
 * on its own. Nothing is read then: a pipe must not lose a byte to the probe.
 */
function readInto(path: string, region: SharedArrayBuffer, at: number): Buffer | undefined {
  const fd = openSync(path, 'r');
  try {
    const room = region.byteLength - at;
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > room) return undefined;
    const view = Buffer.from(region, at, room);
    let got = 0;
    for (let n; got < room && (n = readSync(fd, view, got, room - got, null)) > 0; ) got += n;
    // Filled to the brim: one byte more would mean the file grew while it was read.
    if (got === room && readSync(fd, Buffer.alloc(1), 0, 1, null) > 0) return undefined;
    return view.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** One buffer for every file, or none (each file read on its own) where the machine will not give that much in one piece. */
function sharedRegion(bytes: number): SharedArrayBuffer {
  try {
    return new SharedArrayBuffer(bytes);
  } catch {
    return new SharedArrayBuffer(0);
  }
}

/** Reads every listed file (stdin for '-') and splits it into credentials; unreadable ones are listed, not thrown. */
export function readCredentialInputs(listed: InputFiles, stdin: () => Buffer): { inputs: CredentialInput[]; unreadable: Unreadable[] } {
  const inputs: CredentialInput[] = [];
  const unreadable = [...listed.unreadable];
  const region = sharedRegion(listed.bytes);
  let at = 0;
  for (const { path, regular } of listed.files) {
    let bytes: Buffer;
    try {
      bytes = path === '-' ? stdin() : regular ? (readInto(path, region, at) ?? readFileSync(path)) : readFileSync(path);
    } catch (e) {
      unreadable.push({ source: path, reason: reasonOf(e) });
      continue;
    }
    if (bytes.buffer === region) at += bytes.length;
    const docs = splitDocuments(path === '-' ? 'stdin' : path, bytes);
    if (Array.isArray(docs)) inputs.push(...docs);
    else unreadable.push(docs);
  }
  return { inputs, unreadable };
}
