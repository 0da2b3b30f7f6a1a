// The work of `akas verify cas --node NODE.json (BLOB | --fetch)`, loaded only when it runs: does the
// blob an artifact node names (PROTOCOL 10.4) hash to the sha256 the node records? With a
// local file, offline (verifier/cas.ts). With --fetch instead, the bytes are fetched from the
// uri the node gives (a path under /api/cas/ from --base-url) and hashed as they stream, never
// kept; the report says which. The uri is the proposer's choice (any host, an internal one
// included), so nothing is fetched from the auditor's machine unless --fetch says so. Either way the node's own sha256Verification is shown beside the
// result: it is the node's claim, this is the check.
import { createHash } from 'node:crypto';
import { hashFile, normalizeSha256 } from '../../../verifier/index.js';
import { CliError, type Json, readJsonFile, reasonOf, undiciRequest } from '../../kit/index.js';
import type { Cli } from '../../program.js';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What an artifact node (or its bare manifest) says about the blob. */
export interface NamedBlob {
  path: string | null;
  uri: string;
  sha256: string;
  bytes: number | null;
  /** The node's sha256Verification.status, when the file carries it. */
  nodeStatus: string | null;
  /** The manifest names other bytes than the payload: the file was edited. */
  inconsistent: string | null;
}

/** Reads the blob an artifact node's JSON names; exit 2 when the JSON is no artifact node. */
export function namedBlob(doc: unknown): NamedBlob {
  if (!isObject(doc)) throw notArtifact();
  const p = isObject(doc.payload) ? doc.payload : doc;
  const m = isObject(doc.manifest) ? doc.manifest : null;
  const sha256 = normalizeSha256(p.sha256);
  if (!sha256 || typeof p.uri !== 'string') throw notArtifact();
  if (doc.kind !== undefined && doc.kind !== 'leaf-artifact')
    throw new CliError('not_an_artifact', `This is a ${doc.kind} node, not an artifact: only a leaf-artifact names a blob.`);
  const differ = m ? ['sha256', 'bytes', 'uri'].filter((k) => m[k] !== undefined && String(m[k]).toLowerCase() !== String(p[k]).toLowerCase()) : [];
  return {
    path: typeof doc.path === 'string' ? doc.path : typeof doc.artifactPath === 'string' ? doc.artifactPath : null,
    uri: p.uri,
    sha256,
    bytes: Number.isInteger(p.bytes) ? p.bytes : null,
    nodeStatus: isObject(doc.sha256Verification) && typeof doc.sha256Verification.status === 'string' ? doc.sha256Verification.status : null,
    inconsistent: differ.length ? `the manifest's ${differ.join(', ')} differ from the payload's: the file was edited` : null,
  };
}

function notArtifact() {
  return new CliError('not_an_artifact', 'Not an artifact node: give what `akas node PATH --json` prints for a leaf-artifact (or its manifest).');
}

export interface BlobCheck {
  ok: boolean;
  path: string | null;
  /** Where the bytes checked came from: a local file, or the uri (fetched). */
  source: { file: string } | { fetched: string };
  expected: { sha256: string; bytes: number | null };
  actual: { sha256: string; bytes: number };
  nodeStatus: string | null;
  problems: string[];
}

function compare(named: NamedBlob, source: BlobCheck['source'], actual: { sha256: string; bytes: number }): BlobCheck {
  const problems: string[] = [];
  if (actual.sha256 !== named.sha256) problems.push(`the bytes hash to ${actual.sha256}, not ${named.sha256}`);
  if (named.bytes !== null && actual.bytes !== named.bytes) problems.push(`${actual.bytes} bytes, not the ${named.bytes} recorded`);
  if (named.inconsistent) problems.push(named.inconsistent);
  return {
    ok: problems.length === 0,
    path: named.path,
    source,
    expected: { sha256: named.sha256, bytes: named.bytes },
    actual,
    nodeStatus: named.nodeStatus,
    problems,
  };
}

/** Checks a local file against the named blob (offline). */
export async function checkLocal(named: NamedBlob, file: string): Promise<BlobCheck> {
  let actual;
  try {
    actual = await hashFile(file);
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${file}: ${reasonOf(e)}`, { path: file });
  }
  return compare(named, { file }, actual);
}

/** The absolute URL of the blob: a path under this node's origin, or an http(s) URL. */
export function blobUrl(uri: string, baseUrl: string): string {
  if (uri.startsWith('/')) return new URL(uri, baseUrl.replace(/\/?$/, '/')).toString();
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new CliError('unfetchable', `Cannot fetch ${uri}: not a URL. Fetch the bytes yourself and pass the file: akas verify cas --node FILE BLOB`, { uri });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new CliError(
      'unfetchable',
      `Cannot fetch ${uri} (${u.protocol} is not http or https). Fetch the bytes yourself and pass the file: akas verify cas --node FILE BLOB`,
      { uri },
    );
  }
  return u.toString();
}

/** Fetches the uri and hashes the bytes as they stream (never more than the recorded size plus one chunk). */
export async function checkFetched(named: NamedBlob, baseUrl: string): Promise<BlobCheck> {
  const url = blobUrl(named.uri, baseUrl);
  const request = await undiciRequest();
  let res;
  try {
    res = await request(url, { method: 'GET' });
  } catch (e) {
    const err = e as { code?: string; message?: string };
    throw new CliError('unreachable', `Cannot fetch ${url} (${err.code ?? err.message}).`, { url });
  }
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    throw new CliError('unfetchable', `Cannot fetch ${url}: HTTP ${res.statusCode}.`, { url, status: res.statusCode });
  }
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
    // Bytes beyond the recorded size already fail the check: stop reading an endless body.
    if (named.bytes !== null && bytes > named.bytes) {
      res.body.destroy();
      break;
    }
  }
  return compare(named, { fetched: url }, { sha256: hash.digest('hex'), bytes });
}

/** `akas verify cas --node`: the blob an artifact node names, against a local file or its uri. */
export async function verifyArtifactBlob(cli: Cli, nodeFile: string, blobFile: string | undefined, fetch = false): Promise<number> {
  const named = namedBlob(readJsonFile(nodeFile));
  if (blobFile === undefined && !fetch) {
    const where = named.uri.startsWith('/') ? `${cli.globals().baseUrl.replace(/\/$/, '')}${named.uri}` : named.uri;
    throw new CliError(
      'usage',
      `No FILE to check. The bytes are at ${where}, a URI the artifact's proposer chose: fetch them yourself and give the file (akas verify ` +
        `cas --node ${nodeFile} FILE), or pass --fetch to fetch them from this machine.`,
      { uri: named.uri },
    );
  }
  const r = blobFile !== undefined ? await checkLocal(named, blobFile) : await checkFetched(named, cli.globals().baseUrl);
  const from = 'file' in r.source ? `${r.source.file} (offline)` : `${r.source.fetched} (fetched now)`;
  const status = r.nodeStatus ?? 'not in the file';
  const nodeSays =
    r.nodeStatus === 'platform-verified'
      ? 'the node says it holds and checked these bytes'
      : r.nodeStatus === 'self-reported'
        ? "the node did not check these bytes: the sha256 is the proposer's claim, which this check tests"
        : r.nodeStatus
          ? 'the node reports a problem with its copy'
          : '';
  cli
    .output()
    .result(r, () =>
      [
        `${r.ok ? 'ok      ' : 'MISMATCH'}  ${r.path ?? named.uri}: ${from}`,
        `  expected  sha256 ${r.expected.sha256}${r.expected.bytes === null ? '' : `, ${r.expected.bytes} bytes`} (as the node records)`,
        `  checked   sha256 ${r.actual.sha256}, ${r.actual.bytes} bytes`,
        ...r.problems.map((p) => `  problem   ${p}`),
        `  node's sha256Verification: ${status}${nodeSays ? ` (${nodeSays})` : ''}`,
      ].join('\n'),
    );
  return r.ok ? 0 : 1;
}
