// `akas serve`'s configuration: its flags and environment read into what the node is started
// with, or the usage error that stops it before anything is opened. A pure function (no file,
// no clock, no process state: the terminal and the cosigners file are handed in), so every
// rule of the flags is tested alone (test/cli/serve-config.test.ts). Loaded by the action
// with the node's door (src/node/index.ts), whose parsers it shares.
import { isIP } from 'node:net';
import { parseWitnessSpec, sameIpPolicy, type StartOptions } from '../../../src/node/index.js';
import { logKeysByOrigin } from '../../../src/witness/index.js';
import { CliError, type NodeLocation, nodeLocation, usageError } from '../../kit/index.js';

export interface ServeOptions {
  port?: string;
  host?: string;
  data?: string;
  store?: string;
  nodeSecretFile?: string;
  publicUrl?: string;
  trustProxy?: boolean | string;
  allowSameIp?: boolean;
  issuerDidWeb?: boolean;
  allowAnonymousPropose?: boolean;
  registrationCap?: string;
  rateLimit?: string;
  casQuota?: string;
  traversalTtl?: string;
  calibration?: string;
  allowDemoCalibration?: boolean;
  logLevel?: string;
  logFormat?: string;
  rotateIssuerKey?: boolean;
  rotateHmacKey?: boolean;
  check?: boolean;
  cosigner: string[];
  cosigners?: string;
  logOrigin?: string;
  witnessLog: string[];
  witnessKey?: string;
  witnessName?: string;
  demo?: boolean;
}

/** What serveConfig reads besides flags and environment: whether stderr is a terminal, and the lines of --cosigners FILE. */
export interface ServeContext {
  stderrIsTTY: boolean;
  cosignerList?: string[];
}

/** The node to start, as the flags and environment say. */
export interface ServeConfig {
  host: string;
  port: number;
  location: NodeLocation;
  logOrigin?: string;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  publicUrl?: string;
  sameIp: { enforced: boolean; reason: string };
  witnesses: NonNullable<StartOptions['config']['witnesses']>;
  witnessFor?: StartOptions['witnessFor'];
  rotate: { issuer?: boolean; hmac?: boolean };
  allowDemoCalibration: boolean;
  check: boolean;
  demo: boolean;
  /** The node's own settings (StartOptions.config). */
  node: StartOptions['config'];
}

/** The configuration, or the usage error (exit 2) that refuses the start. */
export function serveConfig(opts: ServeOptions, env: NodeJS.ProcessEnv, context: ServeContext): { config: ServeConfig } | { usage: string } {
  try {
    return { config: readServeConfig(opts, env, context) };
  } catch (e) {
    if (CliError.is(e) && e.body.code === 'usage') return { usage: e.message };
    throw e;
  }
}

/** pino's levels: anything else is refused before anything starts. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readServeConfig(opts: ServeOptions, env: NodeJS.ProcessEnv, context: ServeContext): ServeConfig {
  const port = Number(opts.port ?? env.AKAS_PORT ?? 7373);
  const host = opts.host ?? env.AKAS_HOST ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0..65535, got ${opts.port}`);
  const location = nodeLocation(opts, env);
  const cap = opts.registrationCap !== undefined ? Number(opts.registrationCap) : undefined;
  if (cap !== undefined && (!Number.isInteger(cap) || cap < 0)) throw usageError('--registration-cap must be a whole number');
  const logLevel = opts.logLevel ?? env.AKAS_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw usageError(`unknown --log-level ${logLevel}: use one of ${LOG_LEVELS.join(', ')}`);
  // A person at a terminal reads lines; anything else (a pipe, a file, a log collector) gets JSON.
  const logFormat = opts.logFormat ?? env.AKAS_LOG_FORMAT ?? (context.stderrIsTTY ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty') throw usageError(`--log-format is json or pretty, got ${logFormat}`);
  const rateLimit = parseRateLimit(opts.rateLimit ?? env.AKAS_RATE_LIMIT);
  const trustProxy = parseTrustProxy(opts.trustProxy ?? env.AKAS_TRUST_PROXY);
  const publicUrlArg = opts.publicUrl ?? env.AKAS_PUBLIC_URL;
  const publicUrl = publicUrlArg === undefined ? undefined : parsePublicUrl(publicUrlArg);
  // Behind a proxy the listen address is not where clients are, and no request header may
  // say where they are (X-Forwarded-Host is the client's to write, and a cache in front
  // keeps what it writes): the operator names the origin.
  if (trustProxy !== false && !publicUrl) {
    throw usageError(
      `${opts.trustProxy === undefined ? 'AKAS_TRUST_PROXY (--trust-proxy)' : '--trust-proxy'} needs --public-url URL, the origin ` +
        `clients reach the node at through the proxy (e.g. --public-url https://akas.example.org): the node names it in its documents ` +
        `and links, and never takes it from a request header such as X-Forwarded-Host`,
    );
  }
  const casQuotaMib = positive(opts.casQuota ?? env.AKAS_CAS_QUOTA, '--cas-quota is a number of MiB above 0');
  const ttlHours = positive(opts.traversalTtl ?? env.AKAS_TRAVERSAL_TTL, '--traversal-ttl is a number of hours above 0');
  if (opts.logOrigin !== undefined && !/^[^\s+]+$/u.test(opts.logOrigin))
    throw usageError(`--log-origin is non-empty text with no space and no '+' (e.g. example.com/akas), got ${JSON.stringify(opts.logOrigin)}`);
  const witnesses = parseCosigners([...opts.cosigner, ...(context.cosignerList ?? [])]);
  const witnessFor = witnessLogs(opts, location);
  const sameIp = sameIpPolicy({ host, trustProxy: trustProxy !== false, allowSameIp: Boolean(opts.allowSameIp) });
  const calibrationDir = opts.calibration ?? env.AKAS_CALIBRATION;
  demoRules(opts, calibrationDir, sameIp.enforced);
  return {
    host,
    port,
    location,
    ...(opts.logOrigin !== undefined ? { logOrigin: opts.logOrigin } : {}),
    logLevel,
    logFormat,
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    sameIp,
    witnesses,
    ...(witnessFor ? { witnessFor } : {}),
    rotate: { issuer: opts.rotateIssuerKey, hmac: opts.rotateHmacKey },
    allowDemoCalibration: Boolean(opts.allowDemoCalibration),
    check: Boolean(opts.check),
    demo: Boolean(opts.demo),
    node: {
      publicUrl,
      trustProxy,
      sameIpCollusionCheck: sameIp.enforced,
      sameIpReason: sameIp.reason,
      allowAnonymousPropose: Boolean(opts.allowAnonymousPropose),
      ...(opts.issuerDidWeb ? { issuerDidWeb: true } : {}),
      ...(cap !== undefined ? { registrationCapPerIp: cap } : {}),
      ...(rateLimit ? { rateLimit } : {}),
      ...(casQuotaMib !== undefined ? { casQuotaBytes: Math.round(casQuotaMib * 1048576) } : {}),
      ...(ttlHours !== undefined ? { traversalTtlMs: Math.round(ttlHours * 3_600_000) } : {}),
      ...(calibrationDir ? { calibrationDir } : {}),
      witnesses,
    },
  };
}

/** --rate-limit BURST:PER_SECOND (or AKAS_RATE_LIMIT). */
function parseRateLimit(value: string | undefined): { burst: number; refillPerSecond: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+):(\d+(?:\.\d+)?)$/.exec(value);
  if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) throw usageError(`--rate-limit is BURST:PER_SECOND (e.g. 120:2), got ${value}`);
  return { burst: Number(m[1]), refillPerSecond: Number(m[2]) };
}

/** A number above 0, or undefined when not given. */
function positive(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(Number.isFinite(n) && n > 0)) throw usageError(`${what}, got ${value}`);
  return n;
}

/** --cosigner and --cosigners: the witnesses this node asks to cosign its checkpoints. */
function parseCosigners(specs: string[]): ServeConfig['witnesses'] {
  try {
    return specs.map(parseWitnessSpec);
  } catch (e) {
    throw usageError(`--cosigner: ${(e as Error).message}`);
  }
}

/** --witness-log: the logs this node witnesses too, their keys checked now. */
function witnessLogs(opts: ServeOptions, location: NodeLocation): ServeConfig['witnessFor'] {
  if (!opts.witnessLog.length) return undefined;
  try {
    logKeysByOrigin(opts.witnessLog);
  } catch (e) {
    throw usageError(`--witness-log: ${(e as Error).message}`);
  }
  if (location.kind === 'store' && !opts.witnessKey)
    throw usageError('with --store, --witness-log needs --witness-key FILE (there is no data folder to keep it in)');
  return { logs: opts.witnessLog, keyFile: opts.witnessKey, name: opts.witnessName };
}

/**
 * Everything --demo needs is said at once: four agents on one address, calibrated with the demo
 * set's public answers (a node others can reach refuses that set by default).
 */
function demoRules(opts: ServeOptions, calibrationDir: string | undefined, sameIpEnforced: boolean) {
  if (!opts.demo) return;
  if (calibrationDir) {
    throw usageError(
      "--demo calibrates its four agents with the demo set's public answers: start it without --calibration (or AKAS_CALIBRATION); a " +
        "demo node's tiers mean nothing",
    );
  }
  if (sameIpEnforced) {
    const flags = ['--allow-same-ip', ...(opts.allowDemoCalibration ? [] : ['--allow-demo-calibration'])];
    throw usageError(
      `--demo seeds the tree with four demo agents from this one address, calibrated with the demo set's public answers: run it on a ` +
        `loopback node (the default --host), or add ${flags.join(' and ')} for a demo node others can reach (its tiers mean nothing)`,
    );
  }
}

/** The names proxy-addr knows for address ranges (PROTOCOL 1.4). */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * --trust-proxy (or AKAS_TRUST_PROXY): absent, no proxy is trusted; alone (or `true`), one hop;
 * a whole number, that many hops; otherwise a comma-separated list of the proxies' addresses,
 * CIDRs (10.0.0.0/8, fd00::/8) or range names (loopback, linklocal, uniquelocal).
 */
export function parseTrustProxy(value: boolean | string | undefined): boolean | number | string[] {
  if (value === undefined || value === false || value === '' || value === 'false') return false;
  if (value === true || value === 'true') return 1;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1) throw usageError("--trust-proxy takes a number of hops from 1, or the proxies' addresses");
    return hops;
  }
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const item of list) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address);
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(RANGE_NAMES.includes(item) || (family !== 0 && okBits && extra === undefined))) {
      throw usageError(`--trust-proxy: ${item} is not an address, a CIDR or one of ${RANGE_NAMES.join(', ')} (or give a number of hops)`);
    }
  }
  if (!list.length) throw usageError("--trust-proxy takes a number of hops, or the proxies' addresses");
  return list;
}

/**
 * --public-url: an http(s) origin, optionally with a path the proxy serves the node under; no
 * credentials, query or fragment (it is joined with paths into every absolute URL). Answered
 * without a trailing slash.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`--public-url is the URL clients reach the node at, such as https://akas.example.org; got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--public-url is an http:// or https:// URL, got ${JSON.stringify(value)}`);
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw usageError(`--public-url takes no user, password, query or fragment (it starts every absolute URL the node hands out), got ${JSON.stringify(value)}`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
