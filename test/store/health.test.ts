// The write health of a store (src/store/health.ts): what a storage error is called, what the
// 503 says, and the probe that ends it.
import { describe, expect, it } from 'vitest';
import { StorageHealth, storageCause, storageDetail } from '../../src/store/index.js';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('storage errors', () => {
  it('are named by their cause, from errno codes, LevelDB texts and PostgreSQL codes', () => {
    expect(storageCause({ code: 'LEVEL_IO_ERROR', message: 'IO error: /d/level/000003.log: No space left on device' })).toBe('disk_full');
    expect(storageCause(errno('ENOSPC', 'ENOSPC: no space left on device, write'))).toBe('disk_full');
    expect(storageCause({ code: 'LEVEL_IO_ERROR', message: 'IO error: /d/level/000007.log: Read-only file system' })).toBe('read_only');
    expect(storageCause(errno('EIO', 'EIO: i/o error, fsync'))).toBe('io_error');
    expect(storageCause(errno('EACCES', "EACCES: permission denied, open '/d/blobs/tmp/x'"))).toBe('permission_denied');
    expect(storageCause(errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe('unavailable');
    expect(storageCause(errno('57P01', 'terminating connection due to administrator command'))).toBe('unavailable');
    expect(storageCause(errno('53100', 'could not extend file: No space left on device'))).toBe('disk_full');
    expect(storageCause({ code: 'LEVEL_CORRUPTION', message: 'Corruption: bad block' })).toBe('failed');
    // Not a storage error: a bug, a refusal.
    expect(storageCause(new TypeError('x is undefined'))).toBeUndefined();
    expect(storageCause(errno('not_found', 'No blob'))).toBeUndefined();
  });

  it('are told without the paths they name (answers are public)', () => {
    expect(storageDetail({ message: 'IO error: /srv/akas/level/000003.log: No space left on device' })).toBe('IO error: No space left on device');
    expect(storageDetail(errno('EROFS', "EROFS: read-only file system, open '/srv/akas/blobs/tmp/1f.tmp'"))).toBe('EROFS: read-only file system, open');
  });
});

describe('StorageHealth', () => {
  it('fails once, refuses every write with the 503 of its cause, and recovers when the probe succeeds', async () => {
    let fixed = false;
    const health = new StorageHealth(
      async () => {
        if (!fixed) throw errno('ENOSPC', 'ENOSPC: no space left on device, write');
      },
      60_000,
      () => 1234,
    );
    const seen: boolean[] = [];
    health.onChange((s) => seen.push(s.ok));
    expect(health.status()).toEqual({ ok: true });
    const refusal = health.fail(errno('ENOSPC', 'ENOSPC: no space left on device, write'));
    expect(refusal).toMatchObject({
      code: 'storage_unavailable',
      status: 503,
      extra: { retryAfter: 5, storage: { ok: false, cause: 'disk_full', since: 1234, recovery: 'automatic' } },
    });
    expect(refusal.extra.hint).toMatch(/free space/i);
    expect(() => health.check()).toThrow(expect.objectContaining({ code: 'storage_unavailable' }));
    expect(await health.tryProbe()).toBe(false);
    expect(health.status()).toMatchObject({ ok: false, probes: 1 });
    fixed = true;
    expect(await health.tryProbe()).toBe(true);
    expect(health.status()).toEqual({ ok: true });
    expect(() => health.check()).not.toThrow();
    expect(seen).toEqual([false, true]);
    health.close();
  });
});
