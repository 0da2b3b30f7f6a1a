#!/usr/bin/env node
// A VC-API front over a REAL akas node, for the W3C Bitstring Status List test suite
// (docs/W3C-SUITES.md). Not part of akas: a harness that plays the "implementation" the suite
// talks to, made of akas's own flows only.
//
// The suite issues every credential it tests through the implementation's issuer (VC-API
// `POST /credentials/issue`) and reads the status lists the credential names over https. akas
// issues credentials only as the record of a judgment (PROTOCOL 8.1), so here an issuance is a
// judging: a proposal by one calibrated agent, judged by three others through the CLI, and the
// answer is the node's judgment credential, as the node serves it, with its two status entries.
// The caller's credential is not what is issued (its claims are not signed); one that brings status
// entries of its own (`credentialStatus`, `statusEntry`) is refused, 400, since the node assigns
// its own. `POST /credentials/status` ({credentialId, credentialStatus: [{statusPurpose, status}]},
// VC-API "Update Status") revokes, suspends or unsuspends through `akas admin revoke`.
//
// Everything runs on this machine: a TLS front on https://localhost:PORT (a self-signed
// certificate made by `openssl req -x509` in the work folder, which the suite and `akas verify
// serve` trust through NODE_EXTRA_CA_CERTS) that answers
//   POST /credentials/issue, /credentials/status   here, over the node's flows;
//   POST /credentials/verify, /presentations/verify   by `akas verify serve --issuer <node DID>`;
//   GET anything else                                   from the node (its status lists and head),
// and the node itself, `akas serve --public-url https://localhost:PORT`, so its credentials name
// their lists on the front's origin.
//
//   node docs/interop/bsl-issuer.mjs [--port 40443] [--akas "node dist/bin/main.cjs"] [--work DIR]
//
// prints the front's URL, the node's issuer DID and the certificate to trust, then serves until
// Ctrl-C (which stops the node and the verifier too). The work folder (a new temp folder unless
// given) holds the node's data, the CLI's profiles, the certificate and its key.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '40443' },
    akas: { type: 'string', default: `${process.execPath} ${join(root, 'dist/bin/main.cjs')}` },
    work: { type: 'string' },
  },
});
const [akasBin, ...akasPre] = args.akas.split(' ');
const work = args.work ?? mkdtempSync(join(tmpdir(), 'akas-bsl-'));
mkdirSync(work, { recursive: true, mode: 0o700 });
const dataDir = join(work, 'data');
const port = Number(args.port);
const front = `https://localhost:${port}`;
const MAX_BODY = 1 << 20;

// The certificate: localhost and 127.0.0.1, one day, its key beside it (mode 0600 by openssl).
const cert = join(work, 'cert.pem');
const key = join(work, 'key.pem');
execFileSync('openssl', [
  'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
  '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert,
], { stdio: 'ignore' });

// The CLI's environment: its own profiles and state folder, and the certificate trusted.
const env = { ...process.env, AKAS_CONFIG_DIR: join(work, 'config'), XDG_STATE_HOME: join(work, 'state'), NODE_EXTRA_CA_CERTS: cert, NO_COLOR: '1' };
for (const k of Object.keys(env)) if (k.startsWith('AKAS_') && k !== 'AKAS_CONFIG_DIR') delete env[k];
const children = [];

/** Starts a long-running akas command; answers the URL it prints after `listening on`. */
function start(argv) {
  const child = spawn(akasBin, [...akasPre, ...argv], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`akas ${argv[0]} exited ${code}: ${out}`)));
  });
}

/** Runs one akas CLI command to its end; answers its stdout (throws on a non-zero exit). */
function akas(argv) {
  return new Promise((ok, fail) => {
    const child = spawn(akasBin, [...akasPre, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`akas ${argv.join(' ')} exited ${code}: ${out}${err}`))));
  });
}

// The front listens first: the node names its origin in every credential.
const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => void route(req, res));
await new Promise((ok) => server.listen(port, '127.0.0.1', ok));

const nodeUrl = await start(['serve', '--data', dataDir, '--port', '0', '--public-url', front, '--allow-demo-calibration', '--allow-same-ip', '--log-level', 'warn']);
const issuer = (await (await fetch(`${nodeUrl}/healthz`)).json()).issuer;

// Four agents, calibrated with the demo set's public answers (the node runs the demo set).
const profiles = ['issuer1', 'judge1', 'judge2', 'judge3'];
for (const profile of profiles) {
  await akas(['--base-url', nodeUrl, '--profile', profile, '--json', 'register']);
  const dir = join(env.AKAS_CONFIG_DIR, 'profiles', profile);
  const saved = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))), 'utf8'));
  const pool = JSON.parse(readFileSync(join(root, 'data/calibration', `pool-${saved.calibrationPoolId}.json`), 'utf8'));
  const answers = join(work, `answers-${profile}.json`);
  writeFileSync(answers, JSON.stringify(Object.fromEntries(pool.questions.map((q) => [q.id, q.expected]))));
  await akas(['--base-url', nodeUrl, '--profile', profile, '--json', 'calibrate', '--answers', answers]);
}

const verifierUrl = await start(['verify', 'serve', '--port', '0', '--issuer', issuer]);

const issued = new Map(); // the credential's id → its judgment id
let made = 0;

/** One issuance: a proposal judged by three agents; the first judgment's credential. */
async function issue() {
  const n = ++made;
  const file = join(work, `capability-${n}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      path: `/tools/bsl-suite-${process.pid}-${n}`,
      title: `Bitstring Status List suite issuance ${n}`,
      spec: 'A capability proposed so that its judgment credential can be issued to the W3C suite.',
      payload: { trigger: 'the suite asks for a credential', alternative: 'none', cost: 'one judging', whenNot: 'never in production', recipe: ['akas judge'] },
    }),
  );
  const proposalId = JSON.parse(await akas(['--base-url', nodeUrl, '--profile', 'issuer1', '--json', 'propose', 'capability', '--file', file])).proposalId;
  for (const judge of profiles.slice(1)) {
    await akas(['--base-url', nodeUrl, '--profile', judge, '--json', 'judge', proposalId, '--accuracy', '0.9', '--clarity', '0.8', '--compression', '0.7', '--sources', '0.8', '--rationale', 'Issued for the W3C Bitstring Status List suite.']);
  }
  const { judgments } = await (await fetch(`${nodeUrl}/api/knowledge/proposals/${proposalId}`)).json();
  const credential = await (await fetch(`${nodeUrl}${judgments[0].credentialUrl}`)).json();
  // VC-API names a credential by its id; a judgment credential's is its subject's (urn:akas:judgment:jdg_...).
  for (const id of [credential.id, credential.credentialSubject?.id, judgments[0].judgmentId]) if (typeof id === 'string') issued.set(id, judgments[0].judgmentId);
  return credential;
}

const json = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};
const problem = (res, status, title, detail) => json(res, status, { errors: [{ type: 'about:blank', title, detail }] });

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Forwards a request to an http origin on this machine, as its own client (Host of that origin, no Origin). */
function forward(req, res, base, body) {
  const target = new URL(req.url, base);
  const headers = { accept: req.headers.accept ?? '*/*', ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}) };
  const out = httpRequest(target, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', (e) => problem(res, 502, 'bad gateway', e.message));
  out.end(body);
}

async function route(req, res) {
  try {
    const path = new URL(req.url, front).pathname;
    if (req.method === 'POST' && (path === '/credentials/verify' || path === '/presentations/verify')) {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      return forward(req, res, verifierUrl, Buffer.concat(chunks));
    }
    if (req.method === 'POST' && path === '/credentials/issue') {
      const body = await readJson(req);
      const credential = body?.credential;
      if (typeof credential !== 'object' || credential === null || Array.isArray(credential))
        return problem(res, 400, 'invalid request', 'the body is {credential, options} with credential a JSON object');
      if ('credentialStatus' in credential || 'statusEntry' in credential)
        return problem(res, 400, 'status assigned by the issuer', 'akas assigns every credential its own status entries (PROTOCOL 8.7): a credential may not bring its own');
      return json(res, 201, { verifiableCredential: await issue() });
    }
    if (req.method === 'POST' && path === '/credentials/status') {
      const body = await readJson(req);
      const judgmentId = issued.get(body?.credentialId);
      if (!judgmentId) return problem(res, 404, 'not found', 'no credential of that id was issued here');
      for (const s of Array.isArray(body.credentialStatus) ? body.credentialStatus : [body.credentialStatus]) {
        const purpose = s?.statusPurpose;
        const set = s?.status !== false;
        if (purpose === 'revocation' && !set) return problem(res, 400, 'revocation is final', 'a revoked credential is never reinstated (PROTOCOL 8.7)');
        if (purpose !== 'revocation' && purpose !== 'suspension') return problem(res, 400, 'invalid request', 'statusPurpose is revocation or suspension');
        const how = purpose === 'revocation' ? [] : [set ? '--suspend' : '--unsuspend'];
        await akas(['admin', 'revoke', judgmentId, ...how, '--reason', 'VC-API status update from the W3C suite', '--data', dataDir]);
      }
      return json(res, 200, {});
    }
    if (req.method === 'GET' || req.method === 'HEAD') return forward(req, res, nodeUrl);
    return problem(res, 405, 'method not allowed', 'GET (the node), or POST /credentials/issue, /credentials/status, /credentials/verify, /presentations/verify');
  } catch (e) {
    problem(res, 500, 'internal error', e.message);
  }
}

process.stdout.write(
  `bsl-issuer: listening on ${front}\n  node ${nodeUrl} (data ${dataDir}), issuer ${issuer}\n  verifier ${verifierUrl} (akas verify serve --issuer ${issuer})\n` +
    `  trust the certificate: NODE_EXTRA_CA_CERTS=${cert}\n`,
);
const stop = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  server.close();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
