// The explorer's static files, served from the package: its stylesheet and page script
// (built by scripts/build-explorer.mjs into dist/explorer/) and the verifier's browser build
// (dist/akas-verify.browser.js, scripts/build-verifier.mjs). Each is read once at start, named
// by a hash of its bytes (so it can be cached for a year, immutable) and compressed once with
// brotli and gzip; nothing is fetched from anywhere but the node.
//
// The pages' tags carry the Subresource Integrity the build recorded for each file
// (dist/explorer/integrity.json, scripts/build-explorer.mjs), not a hash of the bytes found at
// start: a file changed after the build is then refused by every browser, and said so in the
// node's log at start. Without that record (a build before it), the values are computed from
// the files as found.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { sha256Hex } from '../core/index.js';
import { packageRoot } from '../core/paths.js';
import type { Assets } from './layout.js';

export interface Asset {
  file: string;
  type: string;
  body: Buffer;
  br: Buffer;
  gzip: Buffer;
  etag: string;
}

export const ASSET_PREFIX = '/explore/assets/';

const SOURCES: Array<{ key: keyof Assets; path: string[]; base: string; ext: string; type: string }> = [
  { key: 'css', path: ['dist', 'explorer', 'explorer.css'], base: 'explorer', ext: 'css', type: 'text/css; charset=utf-8' },
  { key: 'js', path: ['dist', 'explorer', 'explorer.js'], base: 'explorer', ext: 'js', type: 'text/javascript; charset=utf-8' },
  { key: 'verifier', path: ['dist', 'akas-verify.browser.js'], base: 'akas-verify', ext: 'js', type: 'text/javascript; charset=utf-8' },
];

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

/** Reads, hashes and compresses the explorer's files once. */
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
    files.set(file, {
      file,
      type: s.type,
      body,
      br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      gzip: gzipSync(body, { level: 9 }),
      etag: `"${digest}"`,
    });
    urls[s.key] = `${ASSET_PREFIX}${file}`;
  }
  return { urls, files, missing, altered };
}

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
