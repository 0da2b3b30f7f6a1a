// The status part of an offline bundle (PROTOCOL 8.4, 8.7): the current version of each status
// list, and every version that changed the bit of one of the bundle's credentials (what it
// changed, when and why), each with its log entry; bundle.ts proves the entries against the
// bundle's one checkpoint. Version 0, the empty list, is never logged and carries no entry.
import { STATUS_LIST_EVENT_KIND, STATUS_PURPOSES, type LogEntry } from '../core/index.js';
import type { Ctx } from '../domain/context.js';
import type { StoredCredential } from '../domain/credentials/credentials.js';
import { entriesOf, statusListVersion, statusListVersions, versionView, type StatusListVersion } from '../domain/credentials/status-lists.js';
import type { TransparencyLog } from '../domain/log/index.js';
import { entryView } from './views.js';

/** The log entries of status list versions, by `purpose:version` (a node makes few: they are read whole). */
async function versionEntries(log: TransparencyLog): Promise<Map<string, LogEntry>> {
  const out = new Map<string, LogEntry>();
  for (let after: number | undefined; ; ) {
    const page = await log.byIndex(`kind:${STATUS_LIST_EVENT_KIND}:`, 1000, after);
    for (const e of page) out.set(`${String(e.body.purpose)}:${String(e.body.version)}`, e);
    if (page.length < 1000) return out;
    after = page[page.length - 1].seq;
  }
}

type Proven = { entry: ReturnType<typeof entryView>; inclusion: { index: number; size: number; proof: string[] } };

/**
 * What the bundle's status part holds, with a function that proves each logged version against
 * the checkpoint the bundle carries (of `size` entries, at least `minSize`).
 */
export async function statusPart(ctx: Ctx, log: TransparencyLog, judgmentIds: string[], credentials: StoredCredential[]) {
  await log.drain();
  // The URL the bundle's credentials name for each list (an empty list staples under it).
  const named = (purpose: string) => credentials.flatMap(entriesOf).find((e) => e.statusPurpose === purpose)?.statusListCredential;
  const entries = await versionEntries(log);
  const ids = new Set(judgmentIds);
  const picked: Array<{ v: StatusListVersion; current: boolean; entry?: LogEntry }> = [];
  for (const purpose of STATUS_PURPOSES) {
    const current = (await statusListVersion(ctx, purpose, undefined, named(purpose)))!;
    picked.push({ v: current, current: true, entry: entries.get(`${purpose}:${current.version}`) });
    for (let from = 1; from < current.version; ) {
      const page = await statusListVersions(ctx, purpose, from, 100);
      if (!page.length) break;
      for (const v of page) {
        if (v.version < current.version && v.changes.some((ch) => ids.has(ch.judgmentId)))
          picked.push({ v, current: false, entry: entries.get(`${purpose}:${v.version}`) });
      }
      from = page[page.length - 1].version + 1;
    }
  }
  const minSize = Math.max(0, ...picked.map((p) => (p.entry ? p.entry.seq + 1 : 0)));
  const prove = async (entry: LogEntry | undefined, size: number): Promise<Proven | undefined> => {
    if (!entry || entry.seq >= size) return undefined;
    const proof = await log.inclusion(entry.seq, size);
    return { entry: entryView(entry), inclusion: { index: entry.seq, size, proof: proof.map((b) => b.toString('base64')) } };
  };
  return {
    minSize,
    /** The part itself, its entries proven against a checkpoint of `size` entries. */
    async build(size: number) {
      const lists = [];
      const versions = [];
      for (const p of picked) {
        const proven = await prove(p.entry, size);
        if (p.current) lists.push({ purpose: p.v.purpose, version: p.v.version, credential: p.v.credential, ...(proven ?? {}) });
        if (p.v.changes.some((ch) => ids.has(ch.judgmentId))) versions.push({ ...versionView(p.v), ...(proven ?? {}) });
      }
      return { lists, versions };
    },
  };
}
