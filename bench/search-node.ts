// A node for bench/search.ts in a process of its own: startNode (what `akas serve` runs) on a
// data folder, with the token bucket opened wide so a load generator is never refused. It
// reports, over the IPC channel, how long it took to listen and then to answer its first
// search (which waits for the index the node rebuilds from the store in the background), and
// its memory; later, on request, its memory again (after the benches loaded it). Spawned with
// --expose-gc so that the main thread's heap is what stays after a collection, not garbage not
// yet collected (the index's worker thread is not collected: its heap is as it stands).
//
// Memory: RSS (the target), the main thread's heap, the worker threads' heaps (the index's,
// src/domain/knowledge/search.ts, from the diagnostic report), and on Linux what is resident by kind
// (/proc/self/smaps_rollup): anonymous (heaps, malloc) and file-backed (the node binary and
// LevelDB's memory-mapped tables).
//
// Usage: node --expose-gc search-node.js DATA_DIR   (spawned with an 'ipc' stdio channel)
import { readFileSync } from 'node:fs';
import { startNode } from '../src/node/index.js';

const mib = (bytes: number) => bytes / 1024 / 1024;

/** Resident memory by kind, in MiB (Linux only; NaN elsewhere). */
function resident() {
  let rollup = '';
  try {
    rollup = readFileSync('/proc/self/smaps_rollup', 'utf8');
  } catch {
    // Not Linux.
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  return { anonMiB: kb('Anonymous') / 1024, fileMiB: (kb('Rss') - kb('Anonymous')) / 1024 };
}

const memory = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const workers = (process.report.getReport() as { workers?: Array<{ javascriptHeap: { usedMemory: number; totalMemory: number } }> }).workers ?? [];
  const sum = (f: (h: { usedMemory: number; totalMemory: number }) => number) => mib(workers.reduce((t, w) => t + f(w.javascriptHeap), 0));
  return {
    rssMiB: mib(m.rss),
    heapMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    workerHeapMiB: sum((h) => h.usedMemory),
    workerHeapTotalMiB: sum((h) => h.totalMemory),
    ...resident(),
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  };
};

const start = performance.now();
const node = await startNode({
  dataDir: process.argv[2],
  host: '127.0.0.1',
  port: 0,
  logLevel: 'silent',
  config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 }, sameIpCollusionCheck: false, registrationCapPerIp: 1e6 },
});
const listenMs = performance.now() - start;
const first = await node.app.inject({ url: '/api/knowledge/search?q=warm' });
if (first.statusCode !== 200) throw new Error(`the first search answered ${first.statusCode}: ${first.body}`);
const indexedMs = performance.now() - start;
process.send!({ type: 'listening', url: node.url, listenMs, indexedMs, ...memory() });
process.on('message', (m: { type: string }) => {
  if (m.type === 'memory') process.send!({ type: 'memory', ...memory() });
  if (m.type === 'stop') void node.close().then(() => process.exit(0));
});
