// The explorer's static files, served from the package: its stylesheet and page script
// (built by scripts/build-explorer.mjs into dist/explorer/) and the verifier's browser build
// (dist/akas-verify.browser.js, scripts/build-verifier.mjs). Each is read once at start, named
// by a hash of its bytes (so it can be cached for a year, immutable) and served brotli or gzip
// compressed; nothing is fetched from anywhere but the node. The build writes both compressed
// forms (dist/explorer/precompressed/): brotli at quality 11 costs about a second of CPU for the
// verifier's 124 KB, which every start (and every test node) paid before. A node takes them, on
// the first request for each, only when they decompress to the bytes it serves, and otherwise
// compresses then.
//
// The pages' tags carry the Subresource Integrity the build recorded for each file
// (dist/explorer/integrity.json, scripts/build-explorer.mjs), not a hash of the bytes found at
// start: a file changed after the build is then refused by every browser, and said so in the
// node's log at start. Without that record (a build before it), the values are computed from
// the files as found.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { sha256Hex } from '../core/index.js';
import { packageRoot } from '../core/paths.js';
import type { Assets } from './layout.js';

export interface Asset {
  file: string;
  type: string;
  body: Buffer;
  /** The brotli form (the build's, or made on first use). */
  br: () => Buffer;
  /** The gzip form (the build's, or made on first use). */
  gzip: () => Buffer;
  etag: string;
}

export const ASSET_PREFIX = '/explore/assets/';

const SOURCES: Array<{ key: keyof Assets; path: string[]; base: string; ext: string; type: string }> = [
  { key: 'css', path: ['dist', 'explorer', 'explorer.css'], base: 'explorer', ext: 'css', type: 'text/css; charset=utf-8' },
  { key: 'js', path: ['dist', 'explorer', 'explorer.js'], base: 'explorer', ext: 'js', type: 'text/javascript; charset=utf-8' },
  { key: 'verifier', path: ['dist', 'akas-verify.browser.js'], base: 'akas-verify', ext: 'js', type: 'text/javascript; charset=utf-8' },
];

/** Where the build writes each file's brotli (NAME.br) and gzip (NAME.gz) forms. */
export const PRECOMPRESSED_DIR = ['dist', 'explorer', 'precompressed'];

/** The build's compressed form of `body`, when it is there and decompresses to exactly `body`. */
function prebuilt(root: string, name: string, ext: 'br' | 'gz', body: Buffer): Buffer | undefined {
  const at = join(root, ...PRECOMPRESSED_DIR, `${name}.${ext}`);
  if (!existsSync(at)) return undefined;
  const packed = readFileSync(at);
  try {
    return (ext === 'br' ? brotliDecompressSync(packed) : gunzipSync(packed)).equals(body) ? packed : undefined;
  } catch {
    return undefined; // damaged: made again on first use
  }
}

/** A value computed on first use and kept. */
function once(make: () => Buffer): () => Buffer {
  let value: Buffer | undefined;
  return () => (value ??= make());
}

/** Where the build records each file's sha256 and Subresource Integrity. */
export const INTEGRITY_MANIFEST = ['dist', 'explorer', 'integrity.json'];

export interface LoadedAssets {
  urls: Assets;
  files: Map<string, Asset>;
  /** What could not be found (the pages still read without it). */
  missing: string[];
  /** Files whose bytes are not what the build recorded (browsers refuse them). */
  altered: string[];
}

/** The SRI value (sha384) of some bytes. */
export const integrityOf = (bytes: Buffer) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;

/** The build's record: file path -> {sha256, integrity}; empty when there is none. */
function recorded(root: string): Record<string, { sha256?: string; integrity?: string }> {
  try {
    const files = JSON.parse(readFileSync(join(root, ...INTEGRITY_MANIFEST), 'utf8')).files;
    return files && typeof files === 'object' ? files : {};
  } catch {
    return {};
  }
}

/** Reads and hashes the explorer's files once; their compressed forms come on first use. */
export function loadAssets(root = packageRoot()): LoadedAssets {
  const files = new Map<string, Asset>();
  const urls: Assets = { css: `${ASSET_PREFIX}missing.css`, js: null, verifier: null };
  const missing: string[] = [];
  const altered: string[] = [];
  const record = recorded(root);
  for (const s of SOURCES) {
    const at = join(root, ...s.path);
    if (!existsSync(at)) {
      missing.push(s.path.join('/'));
      continue;
    }
    const body = readFileSync(at);
    const found = integrityOf(body);
    const built = record[s.path.join('/')]?.integrity;
    if (built !== undefined && built !== found) altered.push(s.path.join('/'));
    if (s.key !== 'verifier') urls.integrity = { ...urls.integrity, [s.key]: built ?? found };
    const digest = sha256Hex(body).slice(0, 16);
    const file = `${s.base}.${digest}.${s.ext}`;
    const name = s.path[s.path.length - 1];
    // The compressed forms are read, and checked by decompressing them, at first use: not by a
    // start that may never serve them (every test node, a node nobody browses).
    files.set(file, {
      file,
      type: s.type,
      body,
      br: once(() => prebuilt(root, name, 'br', body) ?? compressBrotli(body)),
      gzip: once(() => prebuilt(root, name, 'gz', body) ?? compressGzip(body)),
      etag: `"${digest}"`,
    });
    urls[s.key] = `${ASSET_PREFIX}${file}`;
  }
  return { urls, files, missing, altered };
}

/** The brotli form the build writes and a node makes when it has none (quality 11: made once, served for ever). */
export const compressBrotli = (body: Buffer) =>
  brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });

/** The gzip form, likewise. */
export const compressGzip = (body: Buffer) => gzipSync(body, { level: 9 });

/** The encoding to send for an Accept-Encoding header: br, then gzip, else none. */
export function encodingFor(acceptEncoding: string | undefined): 'br' | 'gzip' | null {
  const a = (acceptEncoding ?? '').toLowerCase();
  const allows = (name: string) =>
    a.split(',').some((part) => {
      const [coding, ...params] = part.trim().split(';');
      return coding.trim() === name && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    });
  return allows('br') ? 'br' : allows('gzip') ? 'gzip' : null;
}
