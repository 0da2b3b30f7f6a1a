// The index rebuilt with its leaves read on worker threads (cli/commands/monitor/index-rebuild-worker.ts):
// the same map and the same roots compared as the rebuild on one thread, in the log's order
// whichever worker answers first, and a leaf that is not JSON refused.
import { describe, expect, it } from 'vitest';
import { IndexRebuildInWorker } from '../../cli/commands/monitor/index-rebuild-worker.js';
import { LOOKUP_ROOT_KIND } from '../../src/core/lookup.js';
import { IndexRebuild } from '../../verifier/index-rebuild.js';

/** n entries about a few agents, paths and artifacts, with a root entry every 40 (its root from a one-thread rebuild, one of them wrong). */
function entries(n: number) {
  const out: Array<{ seq: number; kind: string; agent: string | null; body: Record<string, unknown> }> = [];
  const truth = new IndexRebuild();
  for (let seq = 0; seq < n; seq++) {
    const e =
      seq % 40 === 39
        ? { seq, kind: LOOKUP_ROOT_KIND, agent: null, body: { schemaVersion: '1.0.0', size: seq - 3, root: '', keys: 0 } }
        : {
            seq,
            kind: 'pipeline.facet.v1',
            agent: `ak_a${seq % 7}`,
            body: { step: `s${seq}`, path: `/p/${seq % 13}`, subjectSha256: (seq % 50).toString(16).padStart(64, '0') },
          };
    if (e.kind === LOOKUP_ROOT_KIND) {
      // The root of the entries below its size, as the one-thread rebuild computes it (entry 159's made wrong).
      const probe = new IndexRebuild();
      for (const before of out.slice(0, e.body.size as number)) probe.add(before);
      e.body.root = seq === 159 ? '00'.repeat(32) : probe.root();
    }
    out.push(e);
    truth.add(e);
  }
  return { out, truth };
}

function bundles(list: ReturnType<typeof entries>['out'], width: number) {
  const out: Array<{ bytes: Buffer; starts: number[]; ends: number[] }> = [];
  for (let i = 0; i < list.length; i += width) {
    const leaves = list.slice(i, i + width).map((e) => Buffer.from(JSON.stringify(e)));
    const starts: number[] = [];
    const ends: number[] = [];
    let at = 0;
    for (const l of leaves) {
      starts.push(at);
      ends.push((at += l.length));
    }
    out.push({ bytes: Buffer.concat(leaves), starts, ends });
  }
  return out;
}

describe('the index rebuilt on worker threads', () => {
  it('gives the map and the roots compared that one thread gives, the wrong root among them', async () => {
    const { out, truth } = entries(400);
    for (const threads of [1, 2, 3]) {
      const reading = new IndexRebuildInWorker(threads);
      for (const b of bundles(out, 9)) await reading.add(b.bytes, b.starts, b.ends);
      const rebuilt = await reading.finish();
      expect(rebuilt.root()).toBe(truth.root());
      expect(rebuilt.roots).toEqual(truth.roots);
      expect(rebuilt.roots.filter((r) => r.held === false).map((r) => r.seq)).toEqual([159]);
    }
  });

  it('refuses a leaf that is not the JSON of an entry', async () => {
    const { out } = entries(30);
    const [first, second] = bundles(out, 16);
    const reading = new IndexRebuildInWorker();
    await reading.add(first.bytes, first.starts, first.ends);
    const broken = Buffer.from(second.bytes);
    broken[second.starts[2]] = 0x7b + 1;
    await reading.add(broken, second.starts, second.ends);
    await expect(reading.finish()).rejects.toThrow(/not the JSON/);
  });
});
