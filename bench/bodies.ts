// Bodies against their routes' bounds (issue 30, PROTOCOL 1.1 and 14): the CPU time the node
// spends on one request whose body is many keys, against a body of the same bytes as one
// string, each sent in-process (app.inject) to the propose dry run, which anyone may call.
// Before the bounds, a 760 KB object of 90,000 keys cost this route about 26 times its string
// (the review measured 14 over HTTP: JSON.parse, the strict scan, validation and the idempotency
// fingerprint each walked every key); now it is
// refused after one counting pass over its text. The most the dry run takes (members enough for a
// graph's 32 conditions of 500 values, spent as objects as wide as it takes) is measured too:
// what one token buys at most.
//
// CPU time per request (process.cpuUsage, not wall time, so a busy machine does not inflate
// it), the cases alternating in rounds, the median round taken; ratios to the string body.
import { strategiesFor } from '../src/node/strategies.js';
import { createApp } from '../src/http/app.js';
import { openTempStore } from '../src/store/index.js';
import { benchKeys, header, line } from './lib.js';

const ROUNDS = 7;
const PER_ROUND = 20;

/** An object of n distinct keys, from `from` on. */
function object(n: number, from = 0): string {
  const keys: string[] = [];
  for (let i = from; i < from + n; i++) keys.push(`"${i.toString(36)}":0`);
  return `{${keys.join(',')}}`;
}

/** A dry-run body whose payload is one object of n keys. */
const manyKeys = (n: number) => `{"kind":"graph","payload":${object(n)}}`;

/** A dry-run body whose payload is `count` objects of `width` distinct keys each. */
const manyObjects = (count: number, width: number) =>
  `{"kind":"graph","payload":[${Array.from({ length: count }, (_, j) => object(width, j * width)).join(',')}]}`;

/** A dry-run body of `bytes` whose payload is one string. */
const oneString = (bytes: number) => `{"kind":"graph","payload":{"s":"${'x'.repeat(bytes - 40)}"}}`;

export async function run() {
  const { store, dispose } = await openTempStore();
  const app = await createApp({ store, strategies: strategiesFor(store), keys: benchKeys(), config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } } });
  await app.ready();
  const bounds = app.akas.routes.find((r) => r.url === '/api/knowledge/proposals/dry-run')!.config.bodyBounds!;
  const many = manyKeys(90_000);
  // Objects one key short of the widest the route takes, as many as its members allow.
  const width = bounds.keys - 1;
  const count = Math.floor((bounds.members - 10) / (width + 1));
  const most = manyObjects(count, width);
  const cases = [
    { name: `one string, ${Math.round(many.length / 1000)} KB (taken: the baseline)`, body: oneString(many.length), status: 200 },
    { name: `90,000 keys, ${Math.round(many.length / 1000)} KB (refused before parsing)`, body: many, status: 413 },
    { name: `${count} objects of ${width} keys, ${Math.round(most.length / 1000)} KB (the most it takes)`, body: most, status: 200 },
    { name: `one string, ${Math.round(most.length / 1000)} KB (the same bytes)`, body: oneString(most.length), status: 200 },
  ];
  const send = async (body: string, status: number) => {
    const r = await app.inject({ method: 'POST', url: '/api/knowledge/proposals/dry-run', payload: body, headers: { 'content-type': 'application/json' } });
    if (r.statusCode !== status) throw new Error(`bench bodies: expected ${status}, got ${r.statusCode} ${r.body.slice(0, 200)}`);
  };
  header(`bodies: CPU time of the node per request to the propose dry run (in-process, ${PER_ROUND} requests a case a round, median of ${ROUNDS} rounds)`);
  for (const c of cases) for (let i = 0; i < 3; i++) await send(c.body, c.status); // warm-up
  const rounds: number[][] = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, c] of cases.entries()) {
      const before = process.cpuUsage();
      for (let k = 0; k < PER_ROUND; k++) await send(c.body, c.status);
      const used = process.cpuUsage(before);
      rounds[i].push((used.user + used.system) / PER_ROUND);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const us = rounds.map(median);
  for (const [i, c] of cases.entries()) line(c.name, `${(us[i] / 1000).toFixed(2)} ms`, us[i] / us[0]);
  line('the most the dry run takes, against its own bytes as a string', '', us[2] / us[3]);
  await app.close();
  await dispose();
}
