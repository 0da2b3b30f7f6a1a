// Judging throughput on the domain layer (no HTTP): judgments recorded per second, each one a
// v2 signature verify (akas.judgment.v2, over the proposal's contentSha256: PROTOCOL 7.2) plus
// an atomic durable write (group commit) with its log event, as a ratio to raw Ed25519
// verify/s (src/core, cached KeyObject) in the same run; and how that rate holds from 1,000
// to 100,000 stored proposals. Each judgment also issues its JudgmentCredential (L1,
// eddsa-jcs-2022 through @digitalbazaar/vc) in the same transaction. Targets: judging with
// issuing >= 0.2 of verify/s; the rate at 100,000 stored proposals within 20 percent of the
// rate at 1,000.
import { canonicalize, cryptoRandom, FakeClock, hmacSha256Hex, sha256Hex, sign, verify } from '../src/core/index.js';
import { defaultDomainConfig, type Ctx } from '../src/domain/context.js';
import { strategiesFor } from '../src/node/strategies.js';
import { register } from '../src/domain/identity/identity.js';
import { issueJudgmentCredential } from '../src/domain/credentials/credentials.js';
import { judge, signingPayload } from '../src/domain/proposals/judging.js';
import { propose } from '../src/domain/proposals/proposals.js';
import { Agents, Proposals, type AgentRecord, type ProposalRecord, type Scores } from '../src/domain/records.js';
import { openTempStore, space } from '../src/store/index.js';
import { benchKeys, briefPayload, calibrateForBench, header, line, perSec, rate, type Rate } from './lib.js';

const JUDGING_TARGET = 0.2;
const FLAT_WITHIN = 0.2;
const CONCURRENCY = 32;
const PROPOSERS = 64;
const JUDGES = 150;
/** Fresh proposals per measured run; each gets 3 judgments. */
const PER_RUN = 300;
const RUNS = 5;
const SMALL = 1_000;
const LARGE = 100_000;
const BULK_BATCH = 1_000;
const Solo = space<{ n: number }>('bench-solo');

const HIGH: Scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
const LOW: Scores = { accuracy: 0.2, clarity: 0.3, compression: 0.4, sources: 0.1 };
const RATIONALE =
  'Accurate and well sourced; the core section answers the question directly and the deep section cites the paper it relies on. Minor: the ' +
  'tldr repeats the title.';

interface BenchAgent {
  record: AgentRecord;
  privateKey: string;
  ip: string;
}

interface Task {
  proposalId: string;
  judge: BenchAgent;
  scores: Scores;
  signature: string;
  contentSha256: string;
}

/** Registers n agents calibrated at score, each on its own IP, funded with credits minted through the ledger. */
async function makeAgents(ctx: Ctx, n: number, score: number, credits: number, net: number): Promise<BenchAgent[]> {
  const agents: BenchAgent[] = [];
  for (let i = 0; i < n; i++) {
    const ip = `10.${net}.${i >> 8}.${i & 255}`;
    const r = await register(ctx, { ip });
    const record = await calibrateForBench(ctx, r.agent.tag, score, credits);
    // The node made the keypair here (no ownKey), so it handed the private key out.
    agents.push({ record, privateKey: r.signing.privateKey!, ip });
  }
  return agents;
}

/** Runs fn over items with `concurrency` calls in flight. */
async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

class Bench {
  stored = 0;
  private round = 0;
  constructor(
    readonly ctx: Ctx,
    readonly proposers: BenchAgent[],
    readonly judges: BenchAgent[],
  ) {}

  /** n fresh pending proposals through propose() (untimed), and their 3 x n signed judgments. */
  async prepare(n: number): Promise<Task[]> {
    const base = this.round;
    this.round += n;
    const ids: string[] = new Array(n);
    const contents: string[] = new Array(n);
    await pool([...Array(n).keys()], CONCURRENCY, async (i) => {
      const p = this.proposers[(base + i) % this.proposers.length];
      const r = await propose(this.ctx, { kind: 'brief', payload: briefPayload('bench-retries'), agent: p.record, ip: p.ip });
      ids[i] = r.proposal.proposalId;
      contents[i] = r.proposal.contentSha256;
    });
    this.stored += n;
    // Round-major order: the three judgments of one proposal are far apart in the queue,
    // so the 32 in flight mostly hold disjoint locks and can share one sync write.
    const tasks: Task[] = [];
    for (let k = 0; k < 3; k++) {
      for (let i = 0; i < n; i++) {
        const j = this.judges[(3 * (base + i) + k) % this.judges.length];
        const scores = i % 2 === 0 ? HIGH : LOW;
        // The judge signs the content it read (v2), as akas judge does.
        const signature = sign(j.privateKey, canonicalize(signingPayload('brief', ids[i], j.record.tag, scores, RATIONALE, contents[i])));
        tasks.push({ proposalId: ids[i], judge: j, scores, signature, contentSha256: contents[i] });
      }
    }
    return tasks;
  }

  /** Judges every task with CONCURRENCY in flight; answers judgments per second. */
  async judgeAll(name: string, tasks: Task[]): Promise<Rate> {
    const start = performance.now();
    await pool(tasks, CONCURRENCY, async (t) => {
      const r = await judge(this.ctx, {
        routeKind: 'brief',
        proposalId: t.proposalId,
        judge: t.judge.record,
        ip: t.judge.ip,
        scores: t.scores,
        rationale: RATIONALE,
        signature: t.signature,
        contentSha256: t.contentSha256,
        dryRun: false,
      });
      if (r.dryRun) throw new Error('unexpected dry run');
    });
    const ms = performance.now() - start;
    // Every proposal must be decided, or the rate counted refusals.
    for (const id of new Set(tasks.map((t) => t.proposalId))) {
      const p = await this.ctx.store.get(Proposals, id);
      if (!p || p.status === 'pending' || p.judgments.length !== 3) throw new Error(`proposal ${id} not decided after judging`);
    }
    return { name, opsPerSec: (tasks.length / ms) * 1000, ops: tasks.length, ms };
  }

  /**
   * Writes decided proposals (copies of a real judged one under random ids) straight into the
   * store until it holds `target` proposals. Only the proposal records: their judgment-index
   * and ledger entries would triple the fill time and are never read by judging.
   */
  async fillTo(target: number, template: ProposalRecord) {
    while (this.stored < target) {
      const n = Math.min(BULK_BATCH, target - this.stored);
      const random = cryptoRandom(8 * 4 * n).toString('hex');
      const id = (i: number) => random.slice(16 * i, 16 * i + 16);
      await this.ctx.store.transact(
        ['bench-bulk'],
        async (tx) => {
          for (let i = 0; i < n; i++) {
            const proposalId = `prop_${id(4 * i)}`;
            const judgments = template.judgments.map((j, k) => ({ ...j, judgmentId: `jdg_${id(4 * i + 1 + k)}` }));
            tx.put(Proposals, proposalId, { ...template, proposalId, judgments });
          }
        },
        { durable: false },
      );
      this.stored += n;
    }
  }
}

async function openBench(): Promise<{ bench: Bench; dispose: () => Promise<void> }> {
  const { store, dispose } = await openTempStore();
  const ctx: Ctx = {
    store,
    clock: new FakeClock(),
    random: cryptoRandom,
    keys: benchKeys(),
    config: { ...defaultDomainConfig, sameIpCollusionCheck: false, registrationCapPerIp: 1_000_000 },
    strategies: strategiesFor(store),
  };
  // Frontier proposers (deposit 1, 200 proposals per kind per day each); strong judges.
  const proposers = await makeAgents(ctx, PROPOSERS, 0.95, 1_000, 1);
  const judges = await makeAgents(ctx, JUDGES, 0.8, 0, 2);
  return { bench: new Bench(ctx, proposers, judges), dispose };
}

const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run() {
  header(
    `judging: judgments recorded/s (verify + atomic durable write, ${CONCURRENCY} in flight) vs raw Ed25519 verify/s; ` +
      `${SMALL.toLocaleString('en-US')} vs ${LARGE.toLocaleString('en-US')} stored proposals`,
  );
  const t0 = performance.now();
  // Two stores, one filled to SMALL and one to LARGE, measured alternately so that drift on a
  // shared machine hits both sizes alike.
  const small = await openBench();
  const large = await openBench();
  try {
    // Warm-up (JIT, LevelDB caches), and a real judged proposal to copy for the bulk fill.
    const warm = await small.bench.prepare(100);
    await small.bench.judgeAll('warm-up', warm);
    await large.bench.judgeAll('warm-up', await large.bench.prepare(100));
    const template = (await small.bench.ctx.store.get(Proposals, warm[0].proposalId))!;
    const templateBytes = JSON.stringify(template).length;

    const j0 = small.bench.judges[0];
    const payload = signingPayload('brief', template.proposalId, j0.record.tag, HIGH, RATIONALE, template.contentSha256);
    const message = canonicalize(payload);
    const sig = sign(j0.privateKey, message);
    if (!verify(j0.record.signing.publicKey, message, sig)) throw new Error('verify failed');
    const verifyOnce = () => rate('raw Ed25519 verify (src/core, cached KeyObject)', () => verify(j0.record.signing.publicKey, message, sig), 0.5);

    await small.bench.fillTo(SMALL, template);
    const fillStart = performance.now();
    await large.bench.fillTo(LARGE, template);
    const fillMs = performance.now() - fillStart;
    const smallFrom = small.bench.stored;
    const largeFrom = large.bench.stored;

    // Each round runs both stores, in alternating order. verify/s is measured before every
    // run and after the last, and each run's ratio is taken against the mean of the verify
    // rates just before and just after it, so both see the same state of the machine.
    const verifies: number[] = [(await verifyOnce()).opsPerSec];
    const smalls: Rate[] = [];
    const larges: Rate[] = [];
    const smallRatios: number[] = [];
    const largeRatios: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const order = i % 2 === 0 ? [small, large] : [large, small];
      for (const b of order) {
        const r = await b.bench.judgeAll('judge', await b.bench.prepare(PER_RUN));
        const before = verifies[verifies.length - 1];
        const after = (await verifyOnce()).opsPerSec;
        verifies.push(after);
        (b === small ? smalls : larges).push(r);
        (b === small ? smallRatios : largeRatios).push(r.opsPerSec / ((before + after) / 2));
      }
    }
    const v = mid(verifies);
    const s = mid(smalls.map((r) => r.opsPerSec));
    const l = mid(larges.map((r) => r.opsPerSec));
    const r1 = mid(smallRatios);
    const r2 = mid(largeRatios);
    const flat = mid(larges.map((r, i) => r.opsPerSec / smalls[i].opsPerSec));
    const ps = (x: number) => perSec({ name: '', opsPerSec: x, ops: 0, ms: 0 });
    const n = (x: number) => x.toLocaleString('en-US');
    console.log(
      `  (${RUNS} rounds of ${PER_RUN} fresh proposals (propose(), untimed) x 3 judgments on each store, alternating which goes first, ` +
        `verify/s measured for 0.5 s between runs; rates are medians, ratios medians of per-run ratios;` +
        ` ${PROPOSERS} proposers, ${JUDGES} judges per store; bulk records ${n(templateBytes)} B (a real decided proposal); fill of ` +
        `${n(LARGE - SMALL)} in ${(fillMs / 1000).toFixed(1)} s)`,
    );
    console.log(
      `  per-round judgments/s: ${smalls.map((r) => ps(r.opsPerSec)).join(', ')} (small); ${larges.map((r) => ps(r.opsPerSec)).join(', ')} ` +
        `(large); verify ${verifies.map(ps).join(', ')}`,
    );
    line('raw Ed25519 verify (src/core, cached KeyObject)', ps(v), 1);
    line(`judge, ${n(smallFrom)} → ${n(small.bench.stored)} stored proposals`, ps(s), r1, `>= ${JUDGING_TARGET}`, r1 >= JUDGING_TARGET);
    line(`judge, ${n(largeFrom)} → ${n(large.bench.stored)} stored proposals`, ps(l), r2, `>= ${JUDGING_TARGET}`, r2 >= JUDGING_TARGET);
    line(`rate at ${n(LARGE)} / rate at ${n(SMALL)}`, `${flat.toFixed(2)}x`, flat, `${1 - FLAT_WITHIN}..${1 + FLAT_WITHIN}`, Math.abs(flat - 1) <= FLAT_WITHIN);

    // Where one judgment's time goes: each part alone, one call at a time (microseconds per call).
    const store = small.bench.ctx.store;
    const record = (await store.get(Proposals, template.proposalId))!;
    const hmacKey = small.bench.ctx.keys.hmac[0].key;
    const parts: Rate[] = [
      await rate('canonicalize(signing payload)', () => canonicalize(payload), 0.4),
      await rate('sha256 + HMAC of the payload', () => (sha256Hex(message), hmacSha256Hex(hmacKey, message)), 0.4),
      await rate(
        'issue the judgment credential (@digitalbazaar/vc)',
        () => issueJudgmentCredential(small.bench.ctx.keys, record.kind, record.proposalId, record.judgments[0]),
        0.4,
      ),
      await rate(`structuredClone(decided proposal, ${n(templateBytes)} B) (tx.put)`, () => structuredClone(record), 0.4),
      await rate(`JSON.stringify(decided proposal) (batch encoding)`, () => JSON.stringify(record), 0.4),
      await rate('store.get(Proposals) (read twice per judgment)', () => store.get(Proposals, template.proposalId), 0.4),
      await rate('store.get(Agents)', () => store.get(Agents, j0.record.tag), 0.4),
      await rate('durable transact, 1 put, alone (one fsync)', () => store.transact(['bench-solo'], async (tx) => tx.put(Solo, 'x', { n: 1 })), 0.4),
    ];
    console.log('  per-part costs, one call at a time:');
    line('raw verify', `${(1e6 / v).toFixed(1)} µs`);
    for (const p of parts) line(p.name, `${(1e6 / p.opsPerSec).toFixed(1)} µs`);
    line(`one judgment, ${CONCURRENCY} in flight (wall / judgments, small store)`, `${(1e6 / s).toFixed(1)} µs`);
    console.log(`  (total ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } finally {
    await small.dispose();
    await large.dispose();
  }
}
