// The calibration set a node uses (PROTOCOL 3.1, 4.2): its two calibration pools, with their
// expected answers, and its challenge bank, with each decoy's accepted answers. The set in
// data/ ships in the package, answers and all: it is the DEMO set, fine on a node of one's own
// and worthless on a public one (an agent that has the package reaches the top tier and knows
// every decoy). A public node runs its own private set: `akas calibration init DIR` makes one
// (calibration-generate.ts), `akas serve --calibration DIR` uses it, and `akas serve` on a
// non-loopback address refuses the demo set unless told otherwise.
//
// A private set is a folder of three files in the formats of data/: pool-A.json, pool-B.json
// and bank.json. It holds answer keys, so, like the node's key file, a folder or file others
// may read is refused. A set that reuses a question or a decoy of the demo set counts as demo.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkPool, loadPools, type PoolId, type Question } from './scoring.js';
import { bankOf, checkBank, loadChallengeBank, type ChallengeBank } from './bank.js';

export interface CalibrationSet {
  /** demo: the public set shipped in data/ (or one that reuses it); private: the operator's own. */
  source: 'demo' | 'private';
  /** The folder of a set given with --calibration. */
  dir?: string;
  /** Why a set given as private counts as demo. */
  demoReason?: string;
  pools: Record<PoolId, Question[]>;
  bank: ChallengeBank;
}

/** The files of a calibration set folder. */
export const CALIBRATION_FILES = ['pool-A.json', 'pool-B.json', 'bank.json'] as const;

/** A calibration set folder that cannot be used as it is (missing, malformed, readable by others). */
export class CalibrationSetError extends Error {
  override readonly name = 'CalibrationSetError';
}

let demo: CalibrationSet | undefined;

/** The demo set of data/ (public answers). */
export function demoCalibrationSet(): CalibrationSet {
  return (demo ??= { source: 'demo', pools: loadPools(), bank: loadChallengeBank() });
}

// Answer keys are secrets: like node-keys.json, a set others may read is refused, never
// re-chmodded (someone else may have read it already).
function assertOwnerOnly(path: string, what: 'folder' | 'file') {
  if (process.platform === 'win32') return;
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    const fix = what === 'folder' ? `chmod 700 ${path}` : `chmod 600 ${path}`;
    throw new CalibrationSetError(
      `${path} has mode ${mode.toString(8).padStart(4, '0')}: a calibration set holds answer keys and must be readable by its owner only (${fix}).`,
    );
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CalibrationSetError(`${path} is not readable JSON (${(e as Error).message})`);
  }
}

/** Reads and checks a private calibration set folder (CALIBRATION_FILES); throws CalibrationSetError. */
export function readCalibrationSet(dirIn: string): CalibrationSet {
  const dir = resolve(dirIn);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new CalibrationSetError(`${dir} is not a folder: make a calibration set with \`akas calibration init ${dirIn}\`.`);
  assertOwnerOnly(dir, 'folder');
  for (const f of CALIBRATION_FILES) {
    const path = join(dir, f);
    if (!existsSync(path))
      throw new CalibrationSetError(`${path} is missing: a calibration set holds ${CALIBRATION_FILES.join(', ')} (\`akas calibration init\` makes them).`);
    assertOwnerOnly(path, 'file');
  }
  let pools: Record<PoolId, Question[]>;
  let bank: ChallengeBank;
  const raw = Object.fromEntries(CALIBRATION_FILES.map((f) => [f, readJson(join(dir, f))])) as Record<(typeof CALIBRATION_FILES)[number], unknown>;
  try {
    const external = { fromOutside: true };
    pools = { A: checkPool(raw['pool-A.json'], join(dir, 'pool-A.json'), external), B: checkPool(raw['pool-B.json'], join(dir, 'pool-B.json'), external) };
    bank = bankOf(checkBank(raw['bank.json'], join(dir, 'bank.json')));
  } catch (e) {
    throw new CalibrationSetError((e as Error).message.replace(/^akas: /, ''));
  }
  if (bank.decoys.length === 0)
    throw new CalibrationSetError(`${join(dir, 'bank.json')} has no decoys: without them no agent is ever caught answering at random.`);
  if (bank.normal.length === 0) throw new CalibrationSetError(`${join(dir, 'bank.json')} has only decoys: an agent would answer every one right.`);
  const demoReason = reusesDemo(raw, pools, bank);
  return { source: demoReason ? 'demo' : 'private', dir, ...(demoReason ? { demoReason } : {}), pools, bank };
}

// A set marked demo, or holding a question or a decoy of the shipped set, is as public as it.
function reusesDemo(raw: Record<string, unknown>, pools: Record<PoolId, Question[]>, bank: ChallengeBank): string | undefined {
  const marked = Object.entries(raw).find(([, v]) => (v as { demo?: unknown })?.demo === true);
  if (marked) return `${marked[0]} is marked demo`;
  const d = demoCalibrationSet();
  const demoPrompts = new Set([...d.pools.A, ...d.pools.B].map((q) => q.userPrompt));
  const q = [...pools.A, ...pools.B].find((x) => demoPrompts.has(x.userPrompt));
  if (q) return `question ${q.id} is a question of the demo set (its answer ships in the package)`;
  const demoDecoys = new Set(d.bank.decoys.map((e) => e.userPrompt));
  const e = bank.decoys.find((x) => demoDecoys.has(x.userPrompt));
  if (e) return `decoy ${e.id} is a decoy of the demo set (its accepted answers ship in the package)`;
  return undefined;
}

const sets = new Map<string, CalibrationSet>();

/** The set a node runs with: its --calibration folder (read once per process), else the demo set. */
export function calibrationSetOf(config: { calibrationDir?: string }): CalibrationSet {
  if (!config.calibrationDir) return demoCalibrationSet();
  const dir = resolve(config.calibrationDir);
  let set = sets.get(dir);
  if (!set) sets.set(dir, (set = readCalibrationSet(dir)));
  return set;
}
