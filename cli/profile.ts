// Identities saved per profile and per node (base URL) under $XDG_CONFIG_HOME/akas/, in
// files of mode 0600 written atomically. Secrets are never printed again unless
// --show-secrets is given.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface SavedIdentity {
  baseUrl: string;
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

export function identityPath(profile: string, baseUrl: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(profile)) throw new Error(`profile names are letters, digits, . _ -: ${profile}`);
  return join(configDir(), 'profiles', profile, `${slug(baseUrl)}.json`);
}

export function loadIdentity(profile: string, baseUrl: string): SavedIdentity | undefined {
  const path = identityPath(profile, baseUrl);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as SavedIdentity;
}

export function saveIdentity(profile: string, identity: SavedIdentity): string {
  const path = identityPath(profile, identity.baseUrl);
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(identity, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
  return path;
}
