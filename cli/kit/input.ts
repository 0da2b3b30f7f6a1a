// Reading JSON arguments: inline JSON, @file, or - for stdin. Unreadable or malformed input
// is a usage problem (exit 2), never a request to the node.
import { readFileSync } from 'node:fs';
import { parseStrictJson } from '../../src/core/strict-json.js';
import { CliError, reasonOf, usageError } from './errors.js';

/** Reads a whole file, or stdin for '-'. */
export function readSource(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${path === '-' ? 'stdin' : path}: ${reasonOf(e)}`, { path });
  }
}

/**
 * The node's key list given with --issuer-keys (GET /api/node/keys, or its `issuer` part): strict
 * JSON with a `keys` array (and `rotations`, when present, an array). Anything else is exit 2: a
 * wrong file would otherwise be read as no list, and the check run without what was asked.
 */
export function readIssuerKeysFile(path: string): Record<string, unknown> {
  const parsed = parseStrictJson(readSource(path));
  const where = path === '-' ? 'stdin' : path;
  if (!parsed.ok) throw new CliError('invalid_json', `${where} is not strict JSON: ${parsed.reason}`, { path });
  const doc = parsed.value as Record<string, unknown> | null;
  const list = (doc && typeof doc === 'object' && !Array.isArray(doc) && doc.issuer && typeof doc.issuer === 'object' ? doc.issuer : doc) as Record<
    string,
    unknown
  > | null;
  if (
    !list ||
    typeof list !== 'object' ||
    Array.isArray(list) ||
    !Array.isArray(list.keys) ||
    (list.rotations !== undefined && !Array.isArray(list.rotations))
  ) {
    throw new CliError(
      'not_a_key_list',
      `${where} is not the node's key list ({keys[], rotations[]}, or GET /api/node/keys): fetch it with curl NODE/api/node/keys`,
      { path },
    );
  }
  return list;
}

/** Parses JSON from a file (or stdin). */
export function readJsonFile(path: string): unknown {
  const text = readSource(path);
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('invalid_json', `${path === '-' ? 'stdin' : path} is not valid JSON`, { path });
  }
}

/** `{"a":1}` inline, or `@file.json`, or `-` (stdin). */
export function jsonArg(value: string, flag: string): unknown {
  if (value === '-' || value.startsWith('@')) return readJsonFile(value === '-' ? '-' : value.slice(1));
  try {
    return JSON.parse(value);
  } catch {
    throw new CliError('invalid_json', `${flag} is not valid JSON (use @FILE to read a file)`, { flag });
  }
}

/** A page size option (--limit): a whole number from 1 to 100, as the node's paged routes take. */
export function limitArg(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100) throw usageError('--limit is a whole number from 1 to 100');
  return value;
}
