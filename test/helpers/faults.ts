// Faults a test puts under a running node: a small file system to fill (a tmpfs it mounts as
// root, else an ext4 image through fuse2fs), a folder turned read-only (a read-only bind mount
// over it, as root), and the checks every fault test ends with (every acknowledged write is
// in the store, the node's own audit is clean).
import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { openVerifiedBlob } from '../../src/domain/cas/cas.js';
import { LogEntries, seqKey, seqOfId } from '../../src/domain/log/index.js';
import { Agents, ApiKeys, JudgmentIndex, Ledger, Proposals } from '../../src/domain/records.js';
import { openLevelStore, type Store } from '../../src/store/index.js';
import { openPgStore } from '../../src/store/postgres/index.js';
import type { Acked } from '../../bench/workload.js';
import { runCli } from './e2e.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/**
 * mount(8), tried again a few times: two test files mounting at once (they run in parallel)
 * can make one mount fail for a moment (util-linux locks its table of mounts).
 */
async function mount(args: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run('mount', args);
      return;
    } catch (e) {
      if (attempt >= 6) throw new Error(`${(e as Error).message.split('\n')[0]} ${String((e as { stderr?: string }).stderr ?? '').trim()}`);
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

async function which(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/sbin'])) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

export interface SmallFs {
  /** The mounted folder. */
  dir: string;
  /** How: 'tmpfs' or 'fuse2fs'. */
  kind: string;
  unmount(): Promise<void>;
}

/**
 * A file system of `mib` MiB mounted at `dir` (created): a tmpfs when running as root, else an
 * ext4 image mounted with fuse2fs when that is installed. Answers why not otherwise (the
 * caller skips, saying so).
 */
export async function mountSmallFs(dir: string, mib: number): Promise<SmallFs | { skip: string }> {
  mkdirSync(dir, { recursive: true });
  if (isRoot) {
    try {
      await mount(['-t', 'tmpfs', '-o', `size=${mib}m,mode=0700`, 'tmpfs', dir]);
      return { dir, kind: 'tmpfs', unmount: () => unmount(dir) };
    } catch (e) {
      if (!(await which('fuse2fs'))) return { skip: `cannot mount a tmpfs (${(e as Error).message.split('\n')[0]}) and fuse2fs is not installed` };
    }
  }
  const fuse2fs = await which('fuse2fs');
  const mkfs = await which('mkfs.ext4');
  if (!fuse2fs || !mkfs) return { skip: 'not root (no tmpfs), and fuse2fs or mkfs.ext4 is not installed: no small file system to fill' };
  const image = `${dir}.img`;
  try {
    await run('truncate', ['-s', `${mib}M`, image]);
    await run(mkfs, ['-q', '-F', image]);
    await run(fuse2fs, [image, dir, '-o', 'fakeroot']);
  } catch (e) {
    rmSync(image, { force: true });
    return { skip: `fuse2fs could not mount an ext4 image (${(e as Error).message.split('\n')[0]})` };
  }
  return {
    dir,
    kind: 'fuse2fs',
    unmount: async () => {
      await run((await which('fusermount3')) ?? (await which('fusermount')) ?? 'fusermount', ['-u', dir]).catch(() => run('umount', ['-l', dir]));
      rmSync(image, { force: true });
    },
  };
}

async function unmount(dir: string) {
  await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
}

/**
 * Makes `dir` read-only under whoever uses it, as root: a read-only bind mount of the folder
 * over itself. Files already open for writing keep writing (as on a disk remounted read-only
 * once they are closed); every new file, folder or rename fails with EROFS. Answers the undo.
 */
export async function bindReadOnly(dir: string): Promise<(() => Promise<void>) | { skip: string }> {
  if (!isRoot) return { skip: 'not root: cannot bind-mount a folder read-only' };
  try {
    await mount(['--bind', dir, dir]);
  } catch (e) {
    return { skip: `cannot bind-mount (${(e as Error).message.split('\n')[0]})` };
  }
  try {
    await mount(['-o', 'remount,bind,ro', dir]);
  } catch (e) {
    await unmount(dir);
    return { skip: `cannot remount read-only (${(e as Error).message.split('\n')[0]})` };
  }
  // Lazily: the node may hold files open through the read-only mount (a blob it reads).
  return () => run('umount', ['-l', dir]).then(() => undefined);
}

/** Fills the file system holding `dir` with one file until it refuses (ENOSPC); answers its path. */
export function fillDisk(dir: string): string {
  const path = join(dir, 'ballast');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(256 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    // The last few KiB: the file system must be truly full.
    const small = Buffer.alloc(4096);
    try {
      for (;;) writeSync(fd, small);
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code !== 'ENOSPC') throw e2;
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Polls until check() holds (at most ms), failing with what was awaited. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every acknowledged write is in the stopped node's store (a data folder, or a postgres:// URL),
 * and every acknowledged blob hashes to its name.
 */
export async function assertAcknowledgedPresent(where: string, acked: Acked) {
  const store: Store = where.startsWith('postgres://') ? await openPgStore(where, { migrate: false }) : await openLevelStore(where, { createIfMissing: false });
  const missing: string[] = [];
  try {
    for (const a of acked.agents) {
      const key = await store.get(ApiKeys, sha256Hex(a.apiKey));
      if (key?.tag !== a.tag || !(await store.get(Agents, a.tag))) missing.push(`agent ${a.tag}`);
    }
    for (const c of acked.calibrations) {
      const score = (await store.get(Agents, c.tag))?.calibration.score ?? -1;
      if (score < c.score) missing.push(`calibration of ${c.tag} (${c.score}, stored ${score})`);
    }
    const spends = new Set<string>();
    for await (const [, e] of store.iterate(Ledger)) if (e.type === 'spend' && e.ref) spends.add(e.ref);
    for (const t of acked.toolCalls) if (!spends.has(t.challengeId)) missing.push(`tool call ${t.challengeId}`);
    for (const p of acked.proposals) if (!(await store.get(Proposals, p.proposalId))) missing.push(`proposal ${p.proposalId}`);
    for (const j of acked.judgments) {
      const at = await store.get(JudgmentIndex, j.judgmentId);
      const p = await store.get(Proposals, j.proposalId);
      if (at?.proposalId !== j.proposalId || !p?.judgments.some((x) => x.judgmentId === j.judgmentId)) missing.push(`judgment ${j.judgmentId}`);
    }
    for (const a of acked.attestations) {
      const e = await store.get(LogEntries, seqKey(seqOfId(a.id)!));
      if (e?.hash !== a.hash) missing.push(`attestation ${a.id}`);
    }
    for (const b of acked.blobs) {
      try {
        const blob = await openVerifiedBlob({ store }, b.sha256);
        if (blob.bytes !== b.bytes) missing.push(`blob ${b.sha256} (${blob.bytes} bytes, acknowledged ${b.bytes})`);
        await blob.close();
      } catch (e) {
        missing.push(`blob ${b.sha256}: ${(e as Error).message}`);
      }
    }
  } finally {
    await store.close();
  }
  expect(missing, 'acknowledged writes lost').toEqual([]);
}

/** `akas log check --data DIR --json` on a stopped node (or `--store URL`, with the node secret in env): its exit code and report. */
export async function logCheck(where: string, env?: NodeJS.ProcessEnv) {
  const target = where.startsWith('postgres://') ? ['--store', where] : ['--data', where];
  const r = await runCli(['log', 'check', ...target, '--json'], { timeoutMs: 60_000, env });
  let report: any;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    report = undefined;
  }
  return { code: r.code, report, stdout: r.stdout, stderr: r.stderr };
}

/** The node's own audit holds, and counts at least what the load had acknowledged. */
export async function assertAuditClean(where: string, acked: Acked, env?: NodeJS.ProcessEnv) {
  const check = await logCheck(where, env);
  expect(check.code, `akas log check: ${check.stdout}${check.stderr}`).toBe(0);
  expect(check.report.records.agents).toBeGreaterThanOrEqual(acked.agents.length);
  expect(check.report.records.blobs.acknowledged).toBeGreaterThanOrEqual(new Set(acked.blobs.map((b) => b.sha256)).size);
  expect(check.report.records.incidents).toBe(0);
}
