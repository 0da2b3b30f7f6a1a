// The monitor's rebuild of the verifiable index (verifier/index-rebuild.ts): every root a log
// holds is compared with the map of exactly its size, also when roots are logged out of the order
// of their sizes, as processes sharing a store log them (one paused logs a root of a size that
// another's root, logged before it, has passed).
import { describe, expect, it } from 'vitest';
import { LOOKUP_ROOT_KIND } from '../../src/core/lookup.js';
import { IndexRebuild, REBUILD_WINDOW } from '../../verifier/index-rebuild.js';

type Entry = { seq: number; kind: string; agent: string | null; body: Record<string, unknown> };

const facet = (seq: number): Entry => ({
  seq,
  kind: 'pipeline.facet.v1',
  agent: `ak_a${seq % 5}`,
  body: { step: `s${seq}`, subjectSha256: (seq % 7).toString(16).padStart(64, '0') },
});

/** The map's root over the log's first `size` entries, from a rebuild of those alone. */
function rootAt(log: Entry[], size: number): string {
  const r = new IndexRebuild();
  for (const e of log.slice(0, size)) r.add(e);
  return r.root();
}

/** A log whose root entries are at `at` (their index), each of the size given, with the root the entries below it give. */
function logWithRoots(n: number, roots: Array<{ at: number; size: number; wrong?: boolean }>): Entry[] {
  const log: Entry[] = [];
  for (let seq = 0; seq < n; seq++) {
    const r = roots.find((x) => x.at === seq);
    if (!r) log.push(facet(seq));
    else
      log.push({
        seq,
        kind: LOOKUP_ROOT_KIND,
        agent: null,
        body: { schemaVersion: '1.0.0', size: r.size, root: r.wrong ? '00'.repeat(32) : rootAt(log, r.size), keys: 0 },
      });
  }
  return log;
}

describe('the index rebuilt from the log', () => {
  it('compares every root with the map of its size, roots logged out of the order of their sizes among them', () => {
    // Entry 60 holds a root of size 58; entry 63 one of size 50 (a process that was paused), entry 70 a wrong one of size 55.
    const log = logWithRoots(80, [
      { at: 60, size: 58 },
      { at: 63, size: 50 },
      { at: 70, size: 55, wrong: true },
    ]);
    const rebuild = new IndexRebuild();
    for (const e of log) rebuild.add(e);
    expect(rebuild.root()).toBe(rootAt(log, 80));
    expect(rebuild.roots.map((r) => [r.seq, r.size, r.held])).toEqual([
      [60, 58, true],
      [63, 50, true],
      [70, 55, false],
    ]);
    expect(rebuild.roots[2].rebuilt).toBe(rootAt(log, 55));
  });

  it('says a root further behind its entry than the window was not compared, never that it held', () => {
    const n = REBUILD_WINDOW + 40;
    const log = logWithRoots(n, [{ at: n - 1, size: 10 }]);
    const rebuild = new IndexRebuild();
    for (const e of log) rebuild.add(e);
    rebuild.root();
    expect(rebuild.roots).toEqual([expect.objectContaining({ seq: n - 1, size: 10, held: null, why: expect.stringContaining('not compared') })]);
  });
});
