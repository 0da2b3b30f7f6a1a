// `npm run bench`: every benchmark, or those named on the command line
// (e.g. `npm run bench -- crypto cas`).
const benches: Record<string, () => Promise<unknown>> = {
  crypto: () => import('./crypto.js').then((m) => m.run()),
};

const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(benches)) {
  if (wanted.length && !wanted.includes(name)) continue;
  await load();
}
