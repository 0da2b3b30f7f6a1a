// Identities saved per profile and per node under $XDG_CONFIG_HOME/akas/, in files of mode 0600
// written atomically. A node is its issuer DID, found at its base URL: the identity in use at a
// URL is profiles/NAME/<url>.json (it records the issuer it was made on), and an identity of
// another node that answered at the same URL before is kept in profiles/NAME/kept/ under that
// node's issuer, to be taken back when that node answers there again (cli/commands/identity/node-identity.ts). Secrets are never printed again unless
// --show-secrets is given. Every change is a read-modify-write under a lock file, so two
// akas processes of one profile (two `akas propose` in parallel) never lose each other's
// additions.
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface SavedIdentity {
  baseUrl: string;
  /** The issuer DID of the node this identity was made on (absent in files saved before akas recorded it). */
  issuer?: string;
  tag: string;
  apiKey: string;
  recoveryToken: string;
  signing: { publicKey: string; privateKey: string };
  calibrationPoolId?: string;
  createdAt: number;
  /** claimSecrets of this identity's proposals, for recover channel B. */
  claimSecrets?: Record<string, string>;
  /** The challenge `akas tool` answers next (from `akas challenge` or the last tool call). */
  challenge?: { challengeId: string; expiresAt: number; challenge: Record<string, unknown> };
}

/**
 * AKAS_CONFIG_DIR, else the platform's config folder, by env-paths' rules (written out here:
 * loading the package cost 6 ms of a cold start budgeted at about 45 ms).
 */
export function configDir(): string {
  if (process.env.AKAS_CONFIG_DIR) return process.env.AKAS_CONFIG_DIR;
  const home = homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Preferences', 'akas');
  if (process.platform === 'win32') return join(process.env.APPDATA || join(home, 'AppData', 'Roaming'), 'akas', 'Config');
  return join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'akas');
}

const slug = (baseUrl: string) => baseUrl.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');

/**
 * The file a profile keeps for the node at baseUrl: the identity in the profile's folder, what
 * the reader keeps of the node (its pinned keys and checkpoints: cli/commands/trust/pins.ts) in
 * a folder of the profile's (`trust`), never beside the identities (those are listed by URL).
 */
export function profileFile(profile: string, baseUrl: string, folder?: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(profile)) throw new Error(`profile names are letters, digits, . _ -: ${profile}`);
  return join(configDir(), 'profiles', profile, ...(folder ? [folder] : []), `${slug(baseUrl)}.json`);
}

export function identityPath(profile: string, baseUrl: string): string {
  return profileFile(profile, baseUrl);
}

/**
 * The name a node's issuer gives its kept file. The issuer is what the node's /healthz said: a
 * did:key names it by its key (base58, as before), our own label (unknown-node-<time>) by
 * itself; anything else by a hash, never by text of the node's choosing (issue 54).
 */
function keptName(issuer: string): string {
  const did = /^did:key:(z[1-9A-HJ-NP-Za-km-z]{1,128})$/.exec(issuer);
  if (did) return did[1];
  if (/^unknown-node-[0-9]{1,16}$/.test(issuer)) return issuer.replaceAll('-', '_');
  return `sha256_${createHash('sha256').update(issuer).digest('hex').slice(0, 32)}`;
}

/** The file an identity of the node `issuer` is kept in while another node answers at its URL. */
export function keptPath(profile: string, baseUrl: string, issuer: string): string {
  return join(identityPath(profile, baseUrl), '..', 'kept', `${slug(baseUrl)}@${keptName(issuer)}.json`);
}

/**
 * Moves the identity in use at baseUrl aside, kept for its node (`issuer`: the node it was made
 * on, or a label when that is not known), so another can be made or taken back. Answers where it went.
 */
export function keepAside(profile: string, baseUrl: string, issuer: string): string {
  const from = identityPath(profile, baseUrl);
  const to = keptPath(profile, baseUrl, issuer);
  mkdirSync(join(to, '..'), { recursive: true, mode: 0o700 });
  return withFileLock(from, () => {
    if (existsSync(to)) renameSync(to, `${to}.${Date.now()}.old`);
    renameSync(from, to);
    return to;
  });
}

/** Puts the identity kept for `issuer` back in use at baseUrl (the one in use, if any, kept for its node first). */
export function takeBack(profile: string, baseUrl: string, issuer: string, current?: SavedIdentity): boolean {
  const kept = keptPath(profile, baseUrl, issuer);
  if (!existsSync(kept)) return false;
  if (current) keepAside(profile, baseUrl, current.issuer ?? `unknown-node-${current.createdAt}`);
  const to = identityPath(profile, baseUrl);
  mkdirSync(join(to, '..'), { recursive: true, mode: 0o700 });
  withFileLock(to, () => renameSync(kept, to));
  return true;
}

/** A profile file others can read (or write) is refused: it holds an api key and a private key. */
export class ProfileModeError extends Error {}

export function loadIdentity(profile: string, baseUrl: string): SavedIdentity | undefined {
  const path = identityPath(profile, baseUrl);
  if (!existsSync(path)) return undefined;
  if (process.platform !== 'win32') {
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) {
      throw new ProfileModeError(
        `${path} has mode ${mode.toString(8).padStart(4, '0')}: it holds your api key and private key and must be readable by you only. Run: chmod 600 ${path}`,
      );
    }
  }
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ProfileFileError(path, baseUrl, (e as Error).message);
  }
  const s = saved as Partial<SavedIdentity> | null;
  if (!s || typeof s !== 'object' || typeof s.tag !== 'string' || typeof s.apiKey !== 'string' || typeof s.signing?.privateKey !== 'string') {
    throw new ProfileFileError(path, baseUrl, 'it lacks the tag, apiKey or signing key of an identity');
  }
  return s as SavedIdentity;
}

/** A profile file that cannot be read as an identity: says which file, and how to get going again. */
export class ProfileFileError extends Error {
  constructor(
    readonly path: string,
    baseUrl: string,
    why: string,
  ) {
    super(
      [
        `${path} is not a readable profile (${why}).`,
        `It should hold your identity at ${baseUrl}. If you have a copy (a backup, or the secrets akas printed), put it back.`,
        `Otherwise move it aside (mv ${path} ${path}.broken), then get an identity again:`,
        `  akas recover --tag TAG --token RECOVERY_TOKEN   keeps your tag, balance and reputation (the recovery token was saved in that file)`,
        `  akas register                                  a new agent`,
      ].join('\n'),
    );
    this.name = 'ProfileFileError';
  }
}

/** A lock file this old was left by a process that died while holding it (a change takes milliseconds). */
const STALE_LOCK_MS = 30_000;
/** How long a change waits for another process's lock: past the stale age, so a dead holder's lock is taken over, not waited out. */
const LOCK_WAIT_MS = STALE_LOCK_MS + 15_000;
/** Open errors that mean "someone else holds it" (EPERM, EACCES: Windows, while a lock file is being deleted). */
const BUSY = new Set(['EEXIST', 'EPERM', 'EACCES']);

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs fn while holding <path>.lock (created exclusively; removed afterwards): every change of
 * a profile's files (identities, the reader's pins) is a read-modify-write under it.
 */
export function withFileLock<T>(path: string, fn: () => T): T {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if (!BUSY.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) {
        // Taken over by renaming it away: of several waiters, one rename wins and the
        // others find no file (ENOENT) and simply try again.
        const away = `${lock}.${process.pid}.${Math.random().toString(36).slice(2)}.stale`;
        renameSync(lock, away);
        rmSync(away, { force: true });
        continue;
      }
    } catch {
      continue; // released or taken over between the calls
    }
    if (Date.now() > deadline) throw new Error(`the profile file is locked by another akas process (${lock}); remove the lock file if none is running`);
    sleepSync(10 + Math.random() * 20);
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function writeIdentity(path: string, identity: SavedIdentity) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(identity, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
}

/**
 * Changes the saved identity of this profile and node: change() gets what is saved right now
 * (read under the lock) and answers what to save, or undefined to leave it as it is. Answers
 * the file's path when something was saved.
 */
export function updateIdentity(
  profile: string,
  baseUrl: string,
  change: (current: SavedIdentity | undefined) => SavedIdentity | undefined,
): string | undefined {
  const path = identityPath(profile, baseUrl);
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  return withFileLock(path, () => {
    const next = change(loadIdentity(profile, baseUrl));
    if (!next) return undefined;
    writeIdentity(path, next);
    return path;
  });
}

/** Saves a whole identity (register), replacing what was saved for its node. */
export function saveIdentity(profile: string, identity: SavedIdentity): string {
  return updateIdentity(profile, identity.baseUrl, () => identity)!;
}

/**
 * Runs a save whose failure must not lose what the node showed once (new keys, a
 * claimSecret): answers where it was saved, or why it could not be, for the caller to print
 * the secrets instead.
 */
export function trySave(save: () => string | undefined): { path?: string; error?: string } {
  try {
    return { path: save() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
