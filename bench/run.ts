// `npm run bench`: every benchmark, or those named on the command line
// (e.g. `npm run bench -- crypto cas`).
const benches: Record<string, () => Promise<unknown>> = {
  tools: () => import('./tools.js').then((m) => m.run()),
  crypto: () => import('./crypto.js').then((m) => m.run()),
  cas: () => import('./cas.js').then((m) => m.run()),
  http: () => import('./http.js').then((m) => m.run()),
  coldstart: () => import('./coldstart.js').then((m) => m.run()),
  judging: () => import('./judging.js').then((m) => m.run()),
  credentials: () => import('./credentials.js').then((m) => m.run()),
  log: () => import('./log.js').then((m) => m.run()),
  usetool: () => import('./usetool.js').then((m) => m.run()),
  mcp: () => import('./mcp.js').then((m) => m.run()),
  search: () => import('./search.js').then((m) => m.run()),
  'search-pg': () => import('./search-pg.js').then((m) => m.run()),
  load: () => import('./load.js').then((m) => m.run()),
  postgres: () => import('./postgres.js').then((m) => m.run()),
  explorer: () => import('./explorer.js').then((m) => m.run()),
  events: () => import('./events.js').then((m) => m.run()),
  bodies: () => import('./bodies.js').then((m) => m.run()),
  interop: () => import('./interop.js').then((m) => m.run()),
  monitor: () => import('./monitor.js').then((m) => m.run()),
  'verified-reads': () => import('./verified-reads.js').then((m) => m.run()),
};
// Run only when named: it takes minutes.
const onDemand: Record<string, () => Promise<unknown>> = {
  soak: () => import('./load.js').then((m) => m.soak()),
  // The verifiable index at N entries (`npm run bench -- index [N]`, 1,000,000 by default).
  index: () => import('./lookup.js').then((m) => m.run()),
};

// A bare number is an argument of the benchmarks named (the index's N), not a name.
const wanted = process.argv.slice(2).filter((a) => !/^\d+$/.test(a));
for (const name of wanted)
  if (!(name in benches) && !(name in onDemand)) throw new Error(`no benchmark ${name}: ${[...Object.keys(benches), ...Object.keys(onDemand)].join(', ')}`);
for (const [name, load] of Object.entries({ ...benches, ...onDemand })) {
  if (wanted.length ? !wanted.includes(name) : name in onDemand) continue;
  await load();
}
