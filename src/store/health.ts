// Whether a store accepts writes, and if not, why (PROTOCOL 11.1, 13: storage_unavailable).
//
// A store that fails a write (a full disk, a folder turned read-only, an I/O error, a database
// gone) must never acknowledge a later write it cannot keep: on LevelDB a write that fails
// half-way leaves its write-ahead log in a state where the writes that follow are lost at the
// next open (ARCHITECTURE 2, "When the disk fails"). So the first failure closes the store to
// writes: every write answers 503 storage_unavailable, saying what failed and what the operator
// should do, until a probe write succeeds. Reads go on. One StorageHealth per store; the store
// and its blob files report into it, the HTTP layer reads it (/healthz) and logs its changes.
import { ServiceError } from '../core/index.js';

/** What failed underneath, in words an operator acts on. */
export type StorageCause = 'disk_full' | 'read_only' | 'io_error' | 'permission_denied' | 'unavailable' | 'failed';

export interface StorageStatus {
  /** true: writes are accepted. */
  ok: boolean;
  cause?: StorageCause;
  /** The system's own words for the failure (no paths). */
  detail?: string;
  /** Which part failed: the store, its blob files, or the database. */
  where?: 'store' | 'blobs' | 'database';
  /** When writes stopped being accepted (epoch ms). */
  since?: number;
  /** 'automatic': the node resumes writes by itself once a probe write succeeds. */
  recovery?: 'automatic';
  /** What the operator should do. */
  action?: string;
  /** Probe writes tried since the failure. */
  probes?: number;
}

/** The errno codes (and their texts, as LevelDB and PostgreSQL report them) that mean the storage failed. */
const CAUSES: Array<[StorageCause, string[], RegExp]> = [
  ['disk_full', ['ENOSPC', 'EDQUOT', 'EFBIG', '53100'], /no space left on device|disk quota exceeded|file too large|could not extend file/i],
  ['read_only', ['EROFS', '25006'], /read-only file system|read-only transaction/i],
  ['io_error', ['EIO', '58030'], /input\/output error|i\/o error/i],
  ['permission_denied', ['EACCES', 'EPERM'], /permission denied|operation not permitted/i],
  // PostgreSQL gone, restarting or unreachable (SQLSTATE classes 08 and 57P, the driver's own words).
  [
    'unavailable',
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006'],
    /connection terminated|connection refused|not queryable|the database system is (starting up|shutting down|in recovery)|terminating connection/i,
  ],
];

const ACTIONS: Record<StorageCause, string> = {
  disk_full: 'Free space on the disk that holds the data folder (or raise the quota); the node retries every second and accepts writes again by itself.',
  read_only:
    'Make the data folder writable again (remount the file system read-write, check the disk: a file system turns read-only after errors); ' +
    'the node retries every second and accepts writes again by itself.',
  io_error:
    'The disk reported an I/O error: check it (dmesg, smartctl) before anything else; the node retries every second and accepts writes ' +
    'again once writes succeed.',
  permission_denied:
    'Give the user running akas write access to the data folder and everything in it; the node retries every second and accepts writes again by itself.',
  unavailable: 'Bring the database back (is PostgreSQL running, reachable, with space left?); the node reconnects by itself.',
  failed: "Look at the node's log for the error; the node retries every second and accepts writes again once a write succeeds.",
};

/**
 * The cause of a storage error, or undefined when the error is not one (a bug, a refusal).
 * errno codes first, then the text LevelDB puts in its messages ("IO error: <file>: No space
 * left on device") and PostgreSQL's SQLSTATE codes.
 */
export function storageCause(e: unknown): StorageCause | undefined {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : '';
  for (const [cause, codes, text] of CAUSES) if (codes.includes(code) || text.test(message)) return cause;
  // LevelDB: a failed write or a background error it keeps (classic-level's codes).
  if (code === 'LEVEL_IO_ERROR' || code === 'LEVEL_CORRUPTION') return 'failed';
  return undefined;
}

/** The system's words for an error, without the paths it names (answers are public). */
export function storageDetail(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown; syscall?: unknown } | undefined;
  const message = typeof err?.message === 'string' ? err.message : String(e);
  // "IO error: /data/level/000003.log: No space left on device" -> "IO error: No space left on device";
  // "ENOSPC: no space left on device, write" -> "ENOSPC: no space left on device, write".
  return message
    .replace(/(?:'[^']*\/[^']*'|"[^"]*\/[^"]*"|(?:^|\s)\/\S*)/g, ' ')
    .replace(/\s*:\s*:/g, ':')
    .replace(/\s+,/g, ',')
    .replace(/\s{2,}/g, ' ')
    .trim()
    .slice(0, 200);
}

export type StorageListener = (status: StorageStatus, error?: unknown) => void;

/** The write health of one store (and its blob files). */
export class StorageHealth {
  private failure?: { status: StorageStatus; error: unknown };
  private readonly listeners = new Set<StorageListener>();
  private probeTimer?: NodeJS.Timeout;
  private probing: Promise<boolean> | null = null;

  /**
   * @param probe a write that proves the storage works again (and whatever the store must do to
   * resume: LevelDB reopens); it throws while the storage still fails. Tried every probeMs.
   */
  constructor(
    private readonly probe?: () => Promise<void>,
    private readonly probeMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  get failed(): boolean {
    return this.failure !== undefined;
  }

  status(): StorageStatus {
    return this.failure ? { ...this.failure.status } : { ok: true };
  }

  /** Calls listener at each change (failed, still failing for another reason, recovered). */
  onChange(listener: StorageListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * Records a storage failure (the first one sets `since`; a later one updates the cause) and
   * starts probing. Answers the 503 the failed write answers.
   */
  fail(e: unknown, where: StorageStatus['where'] = 'store'): ServiceError {
    const cause = storageCause(e) ?? 'failed';
    const detail = storageDetail(e);
    const prior = this.failure?.status;
    const status: StorageStatus = {
      ok: false,
      cause,
      detail,
      where,
      since: prior?.since ?? this.now(),
      recovery: 'automatic',
      action: ACTIONS[where === 'database' && cause === 'failed' ? 'unavailable' : cause],
      probes: prior?.probes ?? 0,
    };
    this.failure = { status, error: e };
    if (!prior || prior.cause !== cause || prior.detail !== detail) this.emit(status, e);
    this.startProbing();
    return this.error();
  }

  /** Throws the 503 when writes are not accepted (a write about to start). */
  check(): void {
    if (this.failure) throw this.error();
  }

  /** The 503 of a write refused now. */
  error(): ServiceError {
    const s = this.status();
    return storageUnavailable(s);
  }

  /** Writes are accepted again (a probe, or on a shared database any successful commit). */
  recovered(): void {
    if (!this.failure) return;
    const was = this.failure.status;
    this.failure = undefined;
    this.stopProbing();
    this.emit({ ok: true, since: was.since, probes: was.probes });
  }

  private emit(status: StorageStatus, error?: unknown) {
    for (const l of this.listeners) {
      try {
        l(status, error);
      } catch {
        // a listener that throws must not stop the store
      }
    }
  }

  private startProbing() {
    if (!this.probe || this.probeTimer) return;
    this.probeTimer = setInterval(() => void (this.probing ?? this.tryProbe()), this.probeMs);
    this.probeTimer.unref();
  }

  private stopProbing() {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  /**
   * One probe now (the timer runs it too); answers whether writes are accepted after it. A
   * probe already running is waited for first (it may have started before the cause was fixed).
   */
  async tryProbe(): Promise<boolean> {
    if (this.probing) await this.probing;
    if (!this.failure) return true;
    if (!this.probe) return false;
    const run = this.runProbe();
    this.probing = run;
    try {
      return await run;
    } finally {
      if (this.probing === run) this.probing = null;
    }
  }

  private async runProbe(): Promise<boolean> {
    try {
      if (this.failure) this.failure.status.probes = (this.failure.status.probes ?? 0) + 1;
      await this.probe!();
      this.recovered();
      return true;
    } catch (e) {
      // Still failing (perhaps for another reason now: a full disk freed but read-only).
      if (this.failure && storageCause(e)) this.fail(e, this.failure.status.where);
      return false;
    }
  }

  /** Stops probing (the store is closing). */
  close() {
    this.stopProbing();
  }
}

/** PROTOCOL 13: 503 storage_unavailable, with what failed and what the operator should do. */
export function storageUnavailable(status: StorageStatus): ServiceError {
  const what: Record<StorageCause, string> = {
    disk_full: 'its disk is full',
    read_only: 'its data folder is read-only',
    io_error: 'its disk reported an I/O error',
    permission_denied: 'it may not write its data folder',
    unavailable: 'its database is unavailable',
    failed: 'a write to its storage failed',
  };
  const cause = status.cause ?? 'failed';
  return new ServiceError('storage_unavailable', `The node cannot write to its storage: ${what[cause]}. Nothing was written; reads still work.`, {
    storage: status,
    retryAfter: 5,
    hint: `Retry later: the node accepts writes again once its storage does. For the operator: ${status.action ?? ACTIONS[cause]}`,
  });
}
