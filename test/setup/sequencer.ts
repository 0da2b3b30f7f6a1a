// The order vitest starts the test files in. On 2 workers the run ends when the last file does:
// vitest's own order ran the projects by name (the PostgreSQL suites, the slowest per test,
// came last, and a 40 s file started last kept one core idle for 40 s), and on a fresh clone,
// with no results of a previous run, it orders files by size, which says little of how long a
// file drives child processes. Here:
// - the projects one after the other (a worker that changes project imports everything again,
//   which is what the level and postgres projects' isolate: false saves; mixing them cost 25 s
//   of imports), the project whose files are longest on average first, so that the many short
//   files of the level project fill both workers at the end;
// - in a project, the longest file first.
// How long a file took comes from vitest's cache of the last run here when it has the file
// (node_modules/.vite/vitest), else from test/setup/file-seconds.json, which a fresh clone
// has: `npm run test:durations` writes it from the cache after a run. A file known to neither
// (a new one) counts as the median, and ties go to the larger file.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const committed = JSON.parse(readFileSync(new URL('./file-seconds.json', import.meta.url), 'utf8')) as Record<string, number>;

/** The key vitest's cache and file-seconds.json use for a file: `project:path`. */
export function fileKey(spec: TestSpecification, root: string): string {
  return `${spec.project.name}:${relative(root, spec.moduleId).split('\\').join('/')}`;
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const cache = this.ctx.cache;
    const known = new Map<TestSpecification, number>();
    for (const spec of files) {
      const key = fileKey(spec, root);
      const last = cache.getFileTestResults(key)?.duration;
      const seconds = last !== undefined ? last / 1000 : committed[key];
      if (seconds !== undefined) known.set(spec, seconds);
    }
    const sorted = [...known.values()].sort((a, b) => a - b);
    const median = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0;
    const seconds = (spec: TestSpecification) => known.get(spec) ?? median;
    const size = (spec: TestSpecification) => cache.getFileStats(fileKey(spec, root))?.size ?? 0;
    const perProject = new Map<string, number[]>();
    for (const spec of files) perProject.set(spec.project.name, [...(perProject.get(spec.project.name) ?? []), seconds(spec)]);
    const meanOf = new Map([...perProject].map(([name, xs]) => [name, xs.reduce((a, b) => a + b, 0) / xs.length]));
    const mean = (spec: TestSpecification) => meanOf.get(spec.project.name)!;
    return [...files].sort(
      (a, b) =>
        mean(b) - mean(a) || (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : 0) || seconds(b) - seconds(a) || size(b) - size(a),
    );
  }
}
