// A node for bench/search.ts in a process of its own: startNode (what `akas serve` runs) on a
// data folder, with the token bucket opened wide so a load generator is never refused. It
// reports, over the IPC channel, how long it took to listen and then to answer its first
// search (which waits for the index the node rebuilds from the store in the background), and
// its memory; later, on request, its memory again (after the benches loaded it). Spawned with
// --expose-gc so that "memory" is what stays after a collection, not garbage not yet collected.
//
// Usage: node --expose-gc search-node.js DATA_DIR   (spawned with an 'ipc' stdio channel)
import { startNode } from '../src/http/server.js';

const memory = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssMiB: m.rss / 1024 / 1024, heapMiB: m.heapUsed / 1024 / 1024, heapTotalMiB: m.heapTotal / 1024 / 1024, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
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
