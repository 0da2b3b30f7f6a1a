// The explorer's files and what a node serves of them (issue 30, finding 8): the node's pinned
// keys protect a reader from forged data, not from a node serving another page script or
// verifier. `akas node-keys` prints the sha256 of this package's files (as sha256sum prints
// them; README, Release integrity) and compares them with the bytes the node serves: its
// explorer page is read for the script, stylesheet and verifier it names, each is fetched and
// hashed here, and the Subresource Integrity on the page's tags is compared with the package's.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../src/core/paths.js';

/** The files a release names the hashes of (scripts/build-explorer.mjs writes the same list). */
export const EXPLORER_FILES = ['dist/explorer/explorer.js', 'dist/explorer/explorer.css', 'dist/akas-verify.browser.js'] as const;
type ExplorerFile = (typeof EXPLORER_FILES)[number];

export interface Served {
  url: string;
  sha256: string;
  /** The integrity attribute of the page's tag (the verifier has none: the page script carries its hash). */
  integrity?: string | null;
  /** The bytes are the package's (and the page's integrity, where it has one, is the package's). */
  same: boolean;
}

export interface ExplorerFileReport {
  file: ExplorerFile;
  /** The package's file: sha256 (hex) and SRI value (sha384), or null when this install has no such file. */
  sha256: string | null;
  integrity: string | null;
  /** What the node serves for it, or why that was not checked. */
  served: Served | { notChecked: string };
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const integrityOf = (bytes: Buffer) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;

/** The tag of the page naming each file: its URL and integrity attribute. */
function named(html: string): Partial<Record<ExplorerFile, { url: string; integrity: string | null }>> {
  const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? null;
  const out: Partial<Record<ExplorerFile, { url: string; integrity: string | null }>> = {};
  for (const tag of html.match(/<(link|script)\b[^>]*>/g) ?? []) {
    const url = attr(tag, tag.startsWith('<link') ? 'href' : 'src');
    if (!url) continue;
    if (tag.startsWith('<link') && attr(tag, 'rel') === 'stylesheet') out['dist/explorer/explorer.css'] = { url, integrity: attr(tag, 'integrity') };
    if (tag.startsWith('<script') && attr(tag, 'type') === 'module') out['dist/explorer/explorer.js'] = { url, integrity: attr(tag, 'integrity') };
  }
  const verifier = /<body\b[^>]*\sdata-verifier="([^"]+)"/.exec(html)?.[1];
  if (verifier) out['dist/akas-verify.browser.js'] = { url: verifier, integrity: null };
  return out;
}

async function bytesOf(url: string, accept: string): Promise<Buffer> {
  const res = await fetch(url, { headers: { accept }, redirect: 'error' });
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** This package's explorer files against what the node at baseUrl serves (its /explore/verify page, a page without data). */
export async function explorerIntegrity(baseUrl: string, root = packageRoot()): Promise<ExplorerFileReport[]> {
  const local = EXPLORER_FILES.map((file) => {
    const at = join(root, file);
    const bytes = existsSync(at) ? readFileSync(at) : null;
    return { file, sha256: bytes ? sha256Of(bytes) : null, integrity: bytes ? integrityOf(bytes) : null };
  });
  let tags: ReturnType<typeof named>;
  const page = `${baseUrl}/explore/verify`;
  try {
    tags = named((await bytesOf(page, 'text/html')).toString('utf8'));
  } catch (e) {
    return local.map((l) => ({ ...l, served: { notChecked: `the explorer page could not be read (${(e as Error).message})` } }));
  }
  return Promise.all(
    local.map(async (l): Promise<ExplorerFileReport> => {
      const tag = tags[l.file];
      if (!tag) return { ...l, served: { notChecked: `${page} names no such file` } };
      const url = new URL(tag.url, `${baseUrl}/`).href;
      try {
        const sha256 = sha256Of(await bytesOf(url, '*/*'));
        const integrityOk = l.file === 'dist/akas-verify.browser.js' || tag.integrity === l.integrity;
        return {
          ...l,
          served: {
            url,
            sha256,
            ...(l.file === 'dist/akas-verify.browser.js' ? {} : { integrity: tag.integrity }),
            same: l.sha256 !== null && sha256 === l.sha256 && integrityOk,
          },
        };
      } catch (e) {
        return { ...l, served: { notChecked: (e as Error).message } };
      }
    }),
  );
}

/** The lines `akas node-keys` prints for the report. */
export function explorerLines(report: ExplorerFileReport[], version: string, baseUrl: string): string[] {
  const width = Math.max(...report.map((r) => r.file.length));
  return [
    `explorer     the sha256 of this akas ${version}'s browser files, and whether ${baseUrl} serves the same`,
    ...report.map((r) => {
      const served = r.served;
      const verdict =
        'notChecked' in served
          ? `not checked: ${served.notChecked}`
          : served.same
            ? 'served: the same'
            : `served: OTHER BYTES (${served.sha256}${
                served.integrity !== undefined && served.integrity !== r.integrity ? `, page ` + `integrity ${served.integrity ?? 'none'}` : ''
              }): not this package's`;
      return `  ${r.file.padEnd(width)}  ${r.sha256 ?? 'not in this install'}  ${verdict}`;
    }),
  ];
}
