import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { blobsOf, INLINE_BLOB_BYTES } from '../../src/store/index.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { blobBackdoor } from '../helpers/stores.js';
import { eventually } from '../helpers/written.js';

const MiB = 1024 * 1024;
const LIMIT = 10 * MiB;

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => {
  await node.close();
});

// Beneath the API: the stored copies (files, or rows on PostgreSQL) and uploads in progress.
const stored = () => blobBackdoor(node);
const storedBytes = (sha: string) => stored().bytes(sha);

async function storedBlobs(): Promise<string[]> {
  const out: string[] = [];
  for await (const sha of (await blobsOf(node.store)).list()) out.push(sha);
  return out.sort();
}

/** Uploads holding bytes outside a stored blob: temp files, or chunks no blob names. */
const pendingUploads = () => stored().pending();

function put(payload: Buffer | Readable | string, headers: Record<string, string> = {}) {
  return node.app.inject({ method: 'POST', url: '/api/cas', payload, headers: { 'content-type': 'application/octet-stream', ...headers } });
}

/** Flips one byte of a stored blob in place (the test plays bit rot). */
const corrupt = (sha: string, at = 0) => stored().corrupt(sha, at);

describe('POST /api/cas', () => {
  it('stores bytes and answers sha256, bytes, deduplicated, fetchUrl, note', async () => {
    const bytes = Buffer.from('hello, content store');
    const res = await put(bytes);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.sha256).toBe(sha256Hex(bytes));
    expect(body.bytes).toBe(bytes.length);
    expect(body.deduplicated).toBe(false);
    expect(body.fetchUrl).toMatch(new RegExp(`^https?://[^/]+/api/cas/${body.sha256}$`));
    expect(typeof body.note).toBe('string');
    expect(await storedBytes(body.sha256)).toEqual(bytes);
  });

  it('answers deduplicated true for identical bytes and writes nothing', async () => {
    const bytes = randomBytes(3000);
    const first = (await put(bytes)).json();
    const before = await stored().stamp(first.sha256);
    const again = await put(bytes, { 'content-type': 'text/plain' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ sha256: first.sha256, bytes: 3000, deduplicated: true });
    expect(await stored().stamp(first.sha256)).toBe(before);
    expect(await storedBlobs()).toEqual([first.sha256]);
    expect(await pendingUploads()).toBe(0);
  });

  it('dedupes a large (spilled to a temp file) upload without a second blob or a leftover temp file', async () => {
    const bytes = randomBytes(3 * MiB);
    const first = (await put(bytes)).json();
    const again = (await put(bytes)).json();
    expect(first.deduplicated).toBe(false);
    expect(again.deduplicated).toBe(true);
    expect(await storedBlobs()).toEqual([sha256Hex(bytes)]);
    expect(await pendingUploads()).toBe(0);
  });

  it('hashes any content type without parsing it (invalid JSON, no type, malformed type)', async () => {
    const notJson = Buffer.from('{"this is": not json');
    const asJson = await put(notJson, { 'content-type': 'application/json' });
    expect(asJson.statusCode).toBe(200);
    expect(asJson.json().sha256).toBe(sha256Hex(notJson));

    const noType = await node.app.inject({ method: 'POST', url: '/api/cas', payload: Buffer.from('untyped') });
    expect(noType.statusCode).toBe(200);
    expect(noType.json().sha256).toBe(sha256Hex('untyped'));

    const badType = await put(Buffer.from('odd type'), { 'content-type': 'not a media type' });
    expect(badType.statusCode).toBe(200);
    expect(badType.json().sha256).toBe(sha256Hex('odd type'));
  });

  it('leaves the JSON parser of the other routes alone', async () => {
    const res = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/register',
      payload: '{"promptId": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
  });

  it('refuses an empty body with 400 empty_body', async () => {
    for (const res of [await put(Buffer.alloc(0)), await node.app.inject({ method: 'POST', url: '/api/cas' }), await put(Readable.from([]))]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('empty_body');
    }
    expect(await storedBlobs()).toEqual([]);
  });

  it('stores a blob of exactly 10 MiB', async () => {
    const bytes = randomBytes(LIMIT);
    const res = await put(bytes);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sha256: sha256Hex(bytes), bytes: LIMIT, deduplicated: false });
    const get = await node.app.inject({ method: 'GET', url: `/api/cas/${sha256Hex(bytes)}` });
    expect(get.statusCode).toBe(200);
    expect(get.rawPayload.equals(bytes)).toBe(true);
  });

  it('refuses 10 MiB + 1 byte with 413 blob_too_large and stores nothing', async () => {
    const res = await put(randomBytes(LIMIT + 1));
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('blob_too_large');
    expect(await storedBlobs()).toEqual([]);
    expect(await pendingUploads()).toBe(0);
  });

  it('refuses a streamed upload (no Content-Length) as soon as it crosses 10 MiB, storing nothing', async () => {
    // 10 MiB in ten chunks, then the one byte too many (light-my-request sends a stream
    // without Content-Length, so only the running count can catch it).
    const chunk = randomBytes(MiB);
    const res = await put(Readable.from([...Array.from({ length: 10 }, () => chunk), Buffer.from([1])]));
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('blob_too_large');
    expect(await storedBlobs()).toEqual([]);
    expect(await pendingUploads()).toBe(0);
  });

  it('ends concurrent uploads of the same bytes with one stored blob and correct answers', async () => {
    for (const size of [2000, 3 * MiB]) {
      const bytes = randomBytes(size);
      const answers = await Promise.all(Array.from({ length: 8 }, () => put(bytes)));
      const sha = sha256Hex(bytes);
      for (const a of answers) {
        expect(a.statusCode).toBe(200);
        expect(a.json()).toMatchObject({ sha256: sha, bytes: size });
      }
      expect(answers.filter((a) => a.json().deduplicated === false)).toHaveLength(1);
      expect((await storedBytes(sha))!.equals(bytes)).toBe(true);
    }
    expect(await storedBlobs()).toHaveLength(2);
    expect(await pendingUploads()).toBe(0);
  });
});

describe('GET /api/cas/{hex}', () => {
  async function stored(size: number) {
    const bytes = randomBytes(size);
    const res = await put(bytes);
    expect(res.statusCode).toBe(200);
    return { bytes, sha: res.json().sha256 as string };
  }

  it('serves the bytes with the hash, immutable caching and the hash as ETag', async () => {
    for (const size of [100, 2 * MiB]) {
      const { bytes, sha } = await stored(size);
      const res = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['x-cas-sha256']).toBe(sha);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers.etag).toBe(`"${sha}"`);
      expect(Number(res.headers['content-length'])).toBe(size);
      expect(res.rawPayload.equals(bytes)).toBe(true);
    }
  });

  it('accepts the hash in upper case', async () => {
    const { sha } = await stored(50);
    const res = await node.app.inject({ method: 'GET', url: `/api/cas/${sha.toUpperCase()}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cas-sha256']).toBe(sha);
  });

  it('answers 304 on If-None-Match with the ETag', async () => {
    const { sha } = await stored(100);
    for (const inm of [`"${sha}"`, `W/"${sha}"`, `"other", "${sha}"`, '*']) {
      const res = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}`, headers: { 'if-none-match': inm } });
      expect(res.statusCode).toBe(304);
      expect(res.rawPayload.length).toBe(0);
      expect(res.headers.etag).toBe(`"${sha}"`);
    }
    const other = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}`, headers: { 'if-none-match': `"${'0'.repeat(64)}"` } });
    expect(other.statusCode).toBe(200);
  });

  it('honours Range requests', async () => {
    for (const size of [1000, 2 * MiB]) {
      const { bytes, sha } = await stored(size);
      const get = (range: string, extra: Record<string, string> = {}) =>
        node.app.inject({ method: 'GET', url: `/api/cas/${sha}`, headers: { range, ...extra } });

      const mid = await get('bytes=10-19');
      expect(mid.statusCode).toBe(206);
      expect(mid.headers['content-range']).toBe(`bytes 10-19/${size}`);
      expect(mid.rawPayload.equals(bytes.subarray(10, 20))).toBe(true);

      const open = await get(`bytes=${size - 5}-`);
      expect(open.statusCode).toBe(206);
      expect(open.rawPayload.equals(bytes.subarray(size - 5))).toBe(true);

      const suffix = await get('bytes=-7');
      expect(suffix.statusCode).toBe(206);
      expect(suffix.rawPayload.equals(bytes.subarray(size - 7))).toBe(true);

      const past = await get(`bytes=${size}-`);
      expect(past.statusCode).toBe(416);
      expect(past.headers['content-range']).toBe(`bytes */${size}`);

      const stale = await get('bytes=0-9', { 'if-range': '"something-else"' });
      expect(stale.statusCode).toBe(200);
      expect(stale.rawPayload.equals(bytes)).toBe(true);

      const several = await get('bytes=0-1,5-6');
      expect(several.statusCode).toBe(200);
    }
  });

  it('answers head=1 with {exists, bytes, fetchUrl}, exists false being a 200', async () => {
    const { sha } = await stored(123);
    const yes = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}?head=1` });
    expect(yes.statusCode).toBe(200);
    expect(yes.json()).toEqual({ exists: true, bytes: 123, fetchUrl: expect.stringMatching(new RegExp(`/api/cas/${sha}$`)) });
    const unknown = 'ab'.repeat(32);
    const no = await node.app.inject({ method: 'GET', url: `/api/cas/${unknown}?head=1` });
    expect(no.statusCode).toBe(200);
    expect(no.json()).toMatchObject({ exists: false, bytes: 0 });
  });

  it('answers 400 invalid_sha256 for malformed hex and 404 not_found for an unknown blob', async () => {
    for (const bad of ['abc', 'g'.repeat(64), 'a'.repeat(65), 'a'.repeat(63)]) {
      for (const q of ['', '?head=1']) {
        const res = await node.app.inject({ method: 'GET', url: `/api/cas/${bad}${q}` });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe('invalid_sha256');
      }
    }
    const res = await node.app.inject({ method: 'GET', url: `/api/cas/${'cd'.repeat(32)}` });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('never serves bytes that hash differently: 500 integrity_violation, while head=1 still answers', async () => {
    for (const size of [500, 2 * MiB]) {
      const { bytes, sha } = await stored(size);
      await corrupt(sha, size - 1);
      const res = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}` });
      expect(res.statusCode).toBe(500);
      expect(res.json().code).toBe('integrity_violation');
      expect(res.headers['cache-control']).not.toBe('public, max-age=31536000, immutable');
      const ranged = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}`, headers: { range: 'bytes=0-9' } });
      expect(ranged.statusCode).toBe(500);
      const head = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}?head=1` });
      expect(head.statusCode).toBe(200);
      expect(head.json()).toMatchObject({ exists: true, bytes: size });

      // Uploading the right bytes again repairs the blob.
      const again = await put(bytes);
      expect(again.json()).toMatchObject({ sha256: sha, deduplicated: false });
      const fixed = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}` });
      expect(fixed.statusCode).toBe(200);
      expect(fixed.rawPayload.equals(bytes)).toBe(true);
    }
  });

  it('answers HEAD with the headers and no body', async () => {
    const { sha } = await stored(4000);
    const res = await node.app.inject({ method: 'HEAD', url: `/api/cas/${sha}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cas-sha256']).toBe(sha);
    expect(Number(res.headers['content-length'])).toBe(4000);
    expect(res.rawPayload.length).toBe(0);
  });
});

describe('small blobs (inline on LevelDB, one chunk on PostgreSQL) and large ones (files, chunks)', () => {
  const K = INLINE_BLOB_BYTES;
  // Exactly at the threshold, one byte over it, a small blob and a large one.
  const cases: Array<[string, number, string, string]> = [
    ['exactly the inline threshold', K, 'inline', 'chunks:1'],
    ['one byte over it', K + 1, 'file', 'chunks:1'],
    ['1 KiB', 1024, 'inline', 'chunks:1'],
    ['2 MiB + 5', 2 * MiB + 5, 'file', 'chunks:3'],
  ];
  const get = (sha: string, headers: Record<string, string> = {}) => node.app.inject({ method: 'GET', url: `/api/cas/${sha}`, headers });

  for (const [label, size, level, pg] of cases) {
    it(`${label}: stored where its size says, read whole and in ranges, head=1, 304, deduplicated`, async () => {
      const bytes = randomBytes(size);
      const first = await put(bytes);
      expect(first.json()).toMatchObject({ sha256: sha256Hex(bytes), bytes: size, deduplicated: false });
      const sha = first.json().sha256 as string;
      expect(await stored().where(sha)).toBe(node.store.shared ? pg : level);
      expect((await storedBytes(sha))!.equals(bytes)).toBe(true);

      // Twice: the second read of a small blob is served from the cache of verified blobs.
      for (let i = 0; i < 2; i++) {
        const whole = await get(sha);
        expect(whole.statusCode).toBe(200);
        expect(Number(whole.headers['content-length'])).toBe(size);
        expect(whole.rawPayload.equals(bytes)).toBe(true);
        const part = await get(sha, { range: `bytes=${size - 300}-${size - 101}` });
        expect(part.statusCode).toBe(206);
        expect(part.headers['content-range']).toBe(`bytes ${size - 300}-${size - 101}/${size}`);
        expect(part.rawPayload.equals(bytes.subarray(size - 300, size - 100))).toBe(true);
      }
      const head = await node.app.inject({ method: 'GET', url: `/api/cas/${sha}?head=1` });
      expect(head.json()).toMatchObject({ exists: true, bytes: size });
      const notModified = await get(sha, { 'if-none-match': `"${sha}"` });
      expect(notModified.statusCode).toBe(304);

      const stamp = await stored().stamp(sha);
      const again = await put(bytes);
      expect(again.json()).toMatchObject({ sha256: sha, bytes: size, deduplicated: true });
      expect(await stored().stamp(sha)).toBe(stamp);
      expect(await storedBlobs()).toEqual([sha]);
      expect(await pendingUploads()).toBe(0);
    });

    it(`${label}: damaged, answers 500 integrity_violation, and a re-upload repairs it in place`, async () => {
      const bytes = randomBytes(size);
      const sha = (await put(bytes)).json().sha256 as string;
      await corrupt(sha, Math.floor(size / 2));
      for (const headers of [{}, { range: 'bytes=0-9' }] as Array<Record<string, string>>) {
        const res = await get(sha, headers);
        expect(res.statusCode).toBe(500);
        expect(res.json().code).toBe('integrity_violation');
      }
      const repaired = await put(bytes);
      expect(repaired.json()).toMatchObject({ sha256: sha, deduplicated: false });
      expect(await stored().where(sha)).toBe(node.store.shared ? pg : level);
      expect((await storedBytes(sha))!.equals(bytes)).toBe(true);
      const fixed = await get(sha);
      expect(fixed.statusCode).toBe(200);
      expect(fixed.rawPayload.equals(bytes)).toBe(true);
      expect(await storedBlobs()).toEqual([sha]);
      expect(await pendingUploads()).toBe(0);
    });
  }

  it('serves a small blob checked once from memory, while a re-upload still finds and repairs a stored copy damaged since', async () => {
    const bytes = randomBytes(3000);
    const sha = (await put(bytes)).json().sha256 as string;
    expect((await get(sha)).statusCode).toBe(200);
    await corrupt(sha, 10);
    // The bytes that entered the cache hashed to their name; they are still the right bytes.
    const cached = await get(sha);
    expect(cached.statusCode).toBe(200);
    expect(cached.rawPayload.equals(bytes)).toBe(true);
    // Whether a blob is stored, and sound, is asked of the store: the damage is found and repaired.
    const again = await put(bytes);
    expect(again.json()).toMatchObject({ sha256: sha, deduplicated: false });
    expect((await storedBytes(sha))!.equals(bytes)).toBe(true);
  });

  it('keeps large blobs out of the cache: damage after a read is refused at the next read', async () => {
    const bytes = randomBytes(K + 1);
    const sha = (await put(bytes)).json().sha256 as string;
    expect((await get(sha)).statusCode).toBe(200);
    await corrupt(sha, 10);
    const res = await get(sha);
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('integrity_violation');
  });

  it('ends concurrent uploads of the same small bytes with one creation, the others deduplicated', async () => {
    const bytes = randomBytes(K);
    const answers = await Promise.all(Array.from({ length: 16 }, () => put(bytes)));
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    expect(answers.filter((a) => a.json().deduplicated === false)).toHaveLength(1);
    expect(await storedBlobs()).toEqual([sha256Hex(bytes)]);
  });
});

describe('over a real socket', () => {
  let url: URL;
  beforeEach(async () => {
    url = new URL(await node.app.listen({ host: '127.0.0.1', port: 0 }));
  });

  /** Sends chunks with chunked transfer encoding (no Content-Length), pausing between them. */
  function chunkedUpload(chunks: number, chunkBytes: number): Promise<{ status: number; body: Record<string, unknown>; sent: number }> {
    return new Promise((resolve, reject) => {
      let sent = 0;
      const req = httpRequest(
        { host: url.hostname, port: url.port, method: 'POST', path: '/api/cas', headers: { 'content-type': 'application/octet-stream' } },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString()), sent });
          });
        },
      );
      req.on('error', reject);
      const chunk = randomBytes(chunkBytes);
      let i = 0;
      const next = () => {
        if (req.destroyed) return;
        if (i++ >= chunks) return void req.end();
        sent += chunk.length;
        req.write(chunk, () => setImmediate(next));
      };
      next();
    });
  }

  it('refuses a chunked upload over 10 MiB with 413 before the client has sent it all', async () => {
    const r = await chunkedUpload(40, MiB);
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('blob_too_large');
    expect(r.sent).toBeLessThan(40 * MiB);
    expect(await storedBlobs()).toEqual([]);
  });

  it('leaves no temp file behind when the client hangs up mid-upload', async () => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/api/cas', headers: { 'content-type': 'application/octet-stream' } });
    req.on('error', () => undefined);
    const chunk = randomBytes(MiB);
    for (let i = 0; i < 3; i++) await new Promise<void>((r) => req.write(chunk, () => r()));
    // Wait until the node has spilled the upload to a temp file, then hang up.
    await eventually(async () => (await pendingUploads()) > 0);
    expect(await pendingUploads()).toBe(1);
    req.destroy();
    await eventually(async () => (await pendingUploads()) === 0);
    expect(await pendingUploads()).toBe(0);
    expect(await storedBlobs()).toEqual([]);
    const after = await chunkedUpload(1, 1000);
    expect(after.status).toBe(200);
  });

  it('stores a chunked upload under the limit', async () => {
    const r = await chunkedUpload(3, MiB);
    expect(r.status).toBe(200);
    expect(r.body.bytes).toBe(3 * MiB);
    expect(await storedBlobs()).toEqual([r.body.sha256]);
  });
});
