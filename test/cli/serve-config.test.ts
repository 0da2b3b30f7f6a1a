// `akas serve`'s configuration read alone (cli/commands/serve/config.ts): flags and environment
// in, the node's start options or the usage error out, with no node, file or terminal.
import { describe, expect, it } from 'vitest';
import { type ServeOptions, serveConfig } from '../../cli/commands/serve/config.js';
import { generateKeyPair } from '../../src/core/index.js';
import { verifierKeyString } from '../../src/core/note.js';

const TTY = { stderrIsTTY: true };
/** A fresh Ed25519 note verifier key (NAME+KEYHASH+KEY), once per name in this file. */
const keys = new Map<string, string>();
const noteKey = (name: string) => {
  if (!keys.has(name)) keys.set(name, verifierKeyString(name, generateKeyPair().publicKey));
  return keys.get(name)!;
};
const witnessSpec = (name: string) => `${noteKey(name)}@http://127.0.0.1:7380`;
const PIPE = { stderrIsTTY: false };

/** serve's options as commander hands them over when nothing is given (the repeatable ones are lists). */
const flags = (o: Partial<ServeOptions> = {}): ServeOptions => ({ cosigner: [], witnessLog: [], ...o });

/** The configuration, failing the test with the usage error if there is one. */
function configOf(o: Partial<ServeOptions>, env: NodeJS.ProcessEnv = {}, context = PIPE) {
  const r = serveConfig(flags(o), env, context);
  if ('usage' in r) throw new Error(`unexpected usage error: ${r.usage}`);
  return r.config;
}

/** The usage error, failing the test if the configuration was accepted. */
function usageOf(o: Partial<ServeOptions>, env: NodeJS.ProcessEnv = {}, context = PIPE): string {
  const r = serveConfig(flags(o), env, context);
  if (!('usage' in r)) throw new Error('expected a usage error');
  return r.usage;
}

describe('serveConfig with nothing given', () => {
  it('listens on 127.0.0.1:7373 over the folder ./.akas, logging info, with the same-IP rule off on loopback', () => {
    const c = configOf({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 7373,
      location: { kind: 'folder', dataDir: './.akas', named: false },
      logLevel: 'info',
      check: false,
      demo: false,
      witnesses: [],
    });
    expect(c.sameIp.enforced).toBe(false);
    expect(c.node).toMatchObject({ trustProxy: false, sameIpCollusionCheck: false, allowAnonymousPropose: false, witnesses: [] });
    expect(c.node.rateLimit).toBeUndefined();
    expect(c.witnessFor).toBeUndefined();
  });

  it('logs pretty lines to a terminal and JSON lines to anything else', () => {
    expect(configOf({}, {}, TTY).logFormat).toBe('pretty');
    expect(configOf({}, {}, PIPE).logFormat).toBe('json');
    expect(configOf({ logFormat: 'json' }, {}, TTY).logFormat).toBe('json');
    expect(configOf({}, { AKAS_LOG_FORMAT: 'pretty' }, PIPE).logFormat).toBe('pretty');
  });
});

describe('serveConfig reads flags over the environment', () => {
  it('takes AKAS_PORT, AKAS_HOST, AKAS_DATA and AKAS_LOG_LEVEL when no flag names them', () => {
    const env = { AKAS_PORT: '7400', AKAS_HOST: '127.0.0.2', AKAS_DATA: '/srv/akas', AKAS_LOG_LEVEL: 'warn' };
    expect(configOf({}, env)).toMatchObject({
      port: 7400,
      host: '127.0.0.2',
      location: { kind: 'folder', dataDir: '/srv/akas', named: true },
      logLevel: 'warn',
    });
    expect(configOf({ port: '0', host: '::1', data: '/d', logLevel: 'error' }, env)).toMatchObject({
      port: 0,
      host: '::1',
      location: { dataDir: '/d' },
      logLevel: 'error',
    });
  });

  it('opens a shared store from --store or AKAS_STORE, which --data alone overrides', () => {
    const url = 'postgres://akas@db/akas';
    expect(configOf({ store: url }).location).toMatchObject({ kind: 'store', store: url });
    expect(configOf({}, { AKAS_STORE: url }).location).toMatchObject({ kind: 'store', store: url });
    expect(configOf({ data: '/d' }, { AKAS_STORE: url }).location).toEqual({ kind: 'folder', dataDir: '/d', named: true });
    expect(configOf({ store: url, nodeSecretFile: '/run/secret' }, { AKAS_NODE_SECRET_FILE: '/elsewhere' }).location).toMatchObject({
      secretFile: '/run/secret',
    });
  });

  it('turns the limits into the node settings: rate limit, registration cap, content-store quota, traversal time', () => {
    const c = configOf({ rateLimit: '60:1.5', registrationCap: '3', casQuota: '2', traversalTtl: '0.5', allowAnonymousPropose: true });
    expect(c.node).toMatchObject({
      rateLimit: { burst: 60, refillPerSecond: 1.5 },
      registrationCapPerIp: 3,
      casQuotaBytes: 2 * 1048576,
      traversalTtlMs: 1_800_000,
      allowAnonymousPropose: true,
    });
    expect(configOf({}, { AKAS_RATE_LIMIT: '10:2', AKAS_CAS_QUOTA: '1', AKAS_TRAVERSAL_TTL: '2' }).node).toMatchObject({
      rateLimit: { burst: 10, refillPerSecond: 2 },
      casQuotaBytes: 1048576,
      traversalTtlMs: 7_200_000,
    });
  });

  it('trusts a proxy only with the public URL named, and then holds the same-IP rule', () => {
    const c = configOf({ trustProxy: true, publicUrl: 'https://akas.example.org/' });
    expect(c.publicUrl).toBe('https://akas.example.org');
    expect(c.node).toMatchObject({ trustProxy: 1, publicUrl: 'https://akas.example.org', sameIpCollusionCheck: true });
    expect(configOf({ host: '0.0.0.0' }).sameIp.enforced).toBe(true);
    expect(configOf({ host: '0.0.0.0', allowSameIp: true }).sameIp.enforced).toBe(false);
  });

  it('parses the cosigners given and those of the --cosigners file, and the logs it witnesses', () => {
    const c = configOf({ cosigner: [witnessSpec('w.example/a')], witnessLog: [noteKey('example.com/log')], witnessKey: '/k' }, {}, PIPE);
    expect(c.witnesses.map((w) => w.name)).toEqual(['w.example/a']);
    const listed = serveConfig(flags({ cosigner: [witnessSpec('w.example/a')] }), {}, { ...PIPE, cosignerList: [witnessSpec('w.example/b')] });
    expect('config' in listed && listed.config.node.witnesses?.map((w) => w.name)).toEqual(['w.example/a', 'w.example/b']);
    expect(c.witnessFor).toEqual({ logs: [noteKey('example.com/log')], keyFile: '/k', name: undefined });
  });

  it('keeps the rotation, check, demo and log origin it was given', () => {
    expect(configOf({ rotateIssuerKey: true, check: true, logOrigin: 'example.com/akas' })).toMatchObject({
      rotate: { issuer: true },
      check: true,
      logOrigin: 'example.com/akas',
    });
    expect(configOf({ demo: true })).toMatchObject({ demo: true });
  });
});

describe('serveConfig refuses, as a usage error (exit 2), before anything opens', () => {
  it.each([
    [{ port: '70000' }, {}, /^--port must be 0\.\.65535/],
    [{ port: 'x' }, {}, /^--port/],
    [{ store: 'mysql://db' }, {}, /^--store takes a postgres:\/\/ URL/],
    [{ store: 'postgres://db', data: '/d' }, {}, /^--data and --store exclude each other/],
    [{ registrationCap: '1.5' }, {}, /^--registration-cap/],
    [{ logLevel: 'loud' }, {}, /^unknown --log-level loud/],
    [{ logFormat: 'xml' }, {}, /^--log-format is json or pretty/],
    [{ rateLimit: '0:1' }, {}, /^--rate-limit is BURST:PER_SECOND/],
    [{ trustProxy: '0' }, {}, /^--trust-proxy/],
    [{ trustProxy: true }, {}, /^--trust-proxy needs --public-url/],
    [{}, { AKAS_TRUST_PROXY: '1' }, /^AKAS_TRUST_PROXY \(--trust-proxy\) needs --public-url/],
    [{ publicUrl: 'ftp://x' }, {}, /^--public-url/],
    [{ casQuota: '0' }, {}, /^--cas-quota is a number of MiB above 0/],
    [{ traversalTtl: '-1' }, {}, /^--traversal-ttl is a number of hours above 0/],
    [{ logOrigin: 'a b' }, {}, /^--log-origin/],
    [{ cosigner: ['not a witness'] }, {}, /^--cosigner: /],
    [{ witnessLog: ['nonsense'] }, {}, /^--witness-log: /],
    [{ demo: true, calibration: '/srv/cal' }, {}, /^--demo calibrates/],
    [{ demo: true }, { AKAS_CALIBRATION: '/srv/cal' }, /^--demo calibrates/],
    [{ demo: true, host: '0.0.0.0' }, {}, /^--demo seeds the tree .* add --allow-same-ip and --allow-demo-calibration/],
  ] as Array<[Partial<ServeOptions>, NodeJS.ProcessEnv, RegExp]>)('%j %j', (o, env, message) => {
    expect(usageOf(o, env)).toMatch(message);
  });

  it('asks for a witness key file when a node on a shared store witnesses other logs (no folder to keep one in)', () => {
    const witnessing = { witnessLog: [noteKey('example.com/log')] };
    expect(usageOf({ ...witnessing, store: 'postgres://db' })).toMatch(/^with --store, --witness-log needs --witness-key FILE/);
    expect(configOf({ ...witnessing, store: 'postgres://db', witnessKey: '/k' }).witnessFor?.keyFile).toBe('/k');
    expect(configOf(witnessing).witnessFor?.keyFile).toBeUndefined();
  });
});
