// The work of `akas cas put | get`, loaded only when one of them runs. Transfers
// stream (undici, loaded lazily: it costs ~100 ms and `akas --help` must stay fast), are
// hashed on the way, and are checked end to end: put compares the node's sha256 with the
// local one, get writes to a temp file and renames it into place only when the bytes hash
// to the name asked for.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { CliError, type Json, type Output, reasonOf, undiciRequest, unreachableError, usageError } from '../../kit/index.js';
import type { Cli } from '../../program.js';
import type { ProgressHandle } from '../../views/progress.js';

/** Files from this size up get a progress bar on a terminal. */
const PROGRESS_FROM = 1024 * 1024;
/** A node never serves more than 10 MiB (PROTOCOL 14); a body that keeps going is not a blob. */
const MAX_DOWNLOAD = 10 * 1024 * 1024;

const SHA256 = /^[0-9a-fA-F]{64}$/;

export function parseSha(text: string): string {
  if (!SHA256.test(text)) throw usageError(`not a sha256 (64 hex characters): ${text}`);
  return text.toLowerCase();
}

async function progressFor(out: Output, label: string, total: number): Promise<ProgressHandle | undefined> {
  if (!out.interactive || total < PROGRESS_FROM) return undefined;
  const { startProgress } = await import('../../views/progress.js');
  return startProgress(out.io.stdout as NodeJS.WriteStream, label, total);
}

const unreachable = (cli: Cli, e: unknown): CliError => unreachableError(cli.globals().baseUrl, e);

/** A non-2xx answer as a CliError carrying the node's envelope (exit 1: refused). */
async function refusal(res: Dispatcher.ResponseData): Promise<never> {
  const text = await res.body.text().catch(() => '');
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    body = { error: text || `HTTP ${res.statusCode}` };
  }
  const message = String(body.error ?? body.detail ?? `HTTP ${res.statusCode}`);
  // A blob failing its hash check is a check that did not hold (1), not a broken node (2).
  const exit = res.statusCode >= 500 && body.code !== 'integrity_violation' ? 2 : 1;
  throw CliError.fromNode(exit, `${message}${body.code ? ` (${body.code})` : ''}`, { status: res.statusCode, ...body });
}

export async function putFile(cli: Cli, out: Output, file: string): Promise<Json> {
  const unreadable = (e: unknown) => new CliError('unreadable', `Cannot read ${file}: ${reasonOf(e)}`, { path: file });
  const st = await stat(file).catch((e) => {
    throw unreadable(e);
  });
  if (!st.isFile()) throw new CliError('unreadable', `${file} is not a regular file`, { path: file });

  const request = await undiciRequest();
  const hash = createHash('sha256');
  let sent = 0;
  let readError: unknown;
  const progress = await progressFor(out, basename(file), st.size);
  async function* body() {
    try {
      for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
        hash.update(chunk as Buffer);
        sent += (chunk as Buffer).length;
        progress?.update(sent);
        yield chunk as Buffer;
      }
    } catch (e) {
      readError = e;
      throw e;
    }
  }
  let res: Dispatcher.ResponseData;
  try {
    res = await request(cli.client().url('/api/cas'), {
      method: 'POST',
      body: Readable.from(body(), { objectMode: false }),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(st.size) },
    });
  } catch (e) {
    if (readError) throw unreadable(readError);
    if ((e as { code?: string }).code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH') {
      throw new CliError('unreadable', `${file} changed size while it was being sent`, { path: file });
    }
    throw unreachable(cli, e);
  } finally {
    progress?.finish();
  }
  if (res.statusCode !== 200) await refusal(res);
  const answer = (await res.body.json()) as Json;
  const local = hash.digest('hex');
  if (sent !== st.size || answer.sha256 !== local) {
    throw new CliError(
      'hash_mismatch',
      `The node answered sha256 ${answer.sha256} for ${file}, whose bytes hash to ${local}: the upload was altered on the way.`,
      { path: file, expected: local, actual: answer.sha256 },
    );
  }
  return answer;
}

/** Streams the body of a blob answer into fh (or memory), hashing it; answers sha256 and size. */
async function receive(res: Dispatcher.ResponseData, sink: (chunk: Buffer) => Promise<void>, progress?: ProgressHandle) {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body) {
    const buf = chunk as Buffer;
    bytes += buf.length;
    if (bytes > MAX_DOWNLOAD) throw new CliError('hash_mismatch', 'The node sent more than the 10 MiB a blob may hold.');
    hash.update(buf);
    await sink(buf);
    progress?.update(bytes);
  }
  return { sha256: hash.digest('hex'), bytes };
}

const mismatch = (expected: string, actual: string, bytes: number) =>
  new CliError('hash_mismatch', `The bytes received hash to ${actual}, not ${expected}: nothing was written.`, { expected, actual, bytes });

export async function getBlob(cli: Cli, out: Output, sha256: string, output: string): Promise<Json | undefined> {
  const request = await undiciRequest();
  let res: Dispatcher.ResponseData;
  try {
    res = await request(cli.client().url(`/api/cas/${sha256}`), { method: 'GET' });
  } catch (e) {
    throw unreachable(cli, e);
  }
  if (res.statusCode !== 200) await refusal(res);
  const total = Number(res.headers['content-length'] ?? 0);

  if (output === '-') {
    // stdout cannot take bytes back: hold the blob (at most 10 MiB), check it, then write it.
    const chunks: Buffer[] = [];
    const got = await receive(res, async (c) => void chunks.push(c));
    if (got.sha256 !== sha256) throw mismatch(sha256, got.sha256, got.bytes);
    await new Promise<void>((done, fail) => out.io.stdout.write(Buffer.concat(chunks), (e) => (e ? fail(e) : done())));
    return undefined;
  }

  const target = resolve(output);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.part`);
  const fh = await open(temp, 'wx').catch((e) => {
    throw new CliError('unwritable', `Cannot write ${dirname(target)}: ${(e as NodeJS.ErrnoException).code}`, { path: target });
  });
  // Ctrl-C mid-transfer must not leave a partial file behind either.
  const onSignal = () => {
    void unlink(temp).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  let placed = false;
  try {
    const progress = await progressFor(out, basename(target), total);
    let got;
    try {
      got = await receive(
        res,
        async (c) => {
          await fh.write(c);
        },
        progress,
      );
    } catch (e) {
      if (CliError.is(e)) throw e;
      throw new CliError('transfer_failed', `The transfer broke off: ${(e as Error).message}`);
    } finally {
      progress?.finish();
    }
    if (got.sha256 !== sha256) throw mismatch(sha256, got.sha256, got.bytes);
    await fh.sync();
    await fh.close();
    await rename(temp, target);
    placed = true;
    return { sha256, bytes: got.bytes, path: target, verified: true };
  } finally {
    process.removeListener('SIGINT', onSignal);
    if (!placed) {
      await fh.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
    }
  }
}
