// The chaos harness's shared types (issue 49; /tmp/notes/chaos-design.md): the history the
// harness writes, the final state it hands the checker, and the checker's report. The harness
// (harness.ts, history.ts, run.ts) writes these; the checker (checker.ts) reads them.

/** A process of the run: n1, n2, n3. */
export type NodeName = string;

/** ok: the node acknowledged (2xx); fail: it definitely refused (a 4xx envelope: nothing happened); info: unknown (timeout, reset, 5xx, killed). */
export type Completion = 'ok' | 'fail' | 'info';

/**
 * The operations of a run (f). `wakeup` is GET /api/agent/v1/wakeup, the harness's bucket probe
 * (bursts from one IP over the three processes); `crash` a process the harness saw exit without
 * the nemesis killing it (client -1, one info line).
 */
export type OpName =
  | 'register'
  | 'calibrate'
  | 'propose'
  | 'judge'
  | 'withdraw'
  | 'cas-put'
  | 'attest'
  | 'revoke'
  | 'replay'
  | 'read-checkpoint'
  | 'wakeup'
  | 'nemesis'
  | 'crash';

/**
 * One line of history.jsonl (Jepsen-style): an invoke, then its completion with the same
 * client, f and node. `time` is ms since the run started (the harness's performance.now()).
 */
export interface HistoryEvent {
  i: number;
  type: 'invoke' | Completion;
  f: OpName;
  /** The logical client (one agent's sequential worker); nemesis events use -1. */
  client: number;
  node: NodeName;
  time: number;
  value?: Record<string, unknown>;
  /** A fail's code (the envelope's `code`), or what an info ran into. */
  error?: string;
  /**
   * Who the node saw (optional, on the invoke): the client address it reads (1.4: the socket's,
   * or X-Forwarded-For behind --trust-proxy) and the agent tag of the Bearer sent. The
   * checker's bucket and quota counts key on them; an operation without `ip` is not counted.
   */
  ip?: string;
  agent?: string;
}

/**
 * What an `ok` completion's value carries, per f: what the checker finds the write again by.
 * The invoke's value carries what was asked (kind, payloadSha256, idempotencyKey, ...).
 */
export interface OkValues {
  register: { tag: string };
  /** The calibrate answer's tier (3.3): the caps of 6.4 and 5.1 follow it. */
  calibrate: { tag: string; tier: string };
  propose: { proposalId: string; kind: string; tag?: string; contentSha256?: string };
  judge: { proposalId: string; judgmentId: string; tag: string };
  withdraw: { proposalId: string };
  /** bytes: the upload's length, counted against the quota of 5.1. */
  'cas-put': { sha256: string; bytes: number };
  /** The entry the node answered (9.3): its id and hash. */
  attest: { id: string; hash: string };
  /** `akas admin revoke --json`'s result (PROTOCOL 8.7). */
  revoke: {
    action: 'revoke' | 'suspend' | 'unsuspend';
    purpose: 'revocation' | 'suspension';
    version: number;
    changed: boolean;
    credentials: Array<{ judgmentId: string; changed: boolean }>;
  };
  /** The replay's own answer; its invoke's value holds {idempotencyKey, firstNode, firstAnswer}. */
  replay: RecordedAnswer;
  /** A checkpoint a client read (GET /api/log/checkpoint): the node, and the note as served. */
  'read-checkpoint': { node: NodeName; size: number; rootHash: string; note: string };
}

/** A whole answer as a client saw it: what an idempotent replay must give again verbatim (1.5). */
export interface RecordedAnswer {
  status: number;
  body: unknown;
}

/** The invoke value of a replay: the same request, sent again with its key to another process. */
export interface ReplayInvoke {
  idempotencyKey: string;
  firstNode: NodeName;
  firstAnswer: RecordedAnswer;
}

/** The limits the processes ran with (akas serve's flags; the defaults of PROTOCOL 1.4 and 14 when absent). */
export interface RunLimits {
  /** --rate-limit burst:perSecond (default 120:2). */
  burst?: number;
  refillPerSecond?: number;
  /** --registration-cap (default 20 per IP per UTC day). */
  registrationCap?: number;
  /** --cas-quota in MiB (default 100 per IP per UTC day; a calibrated agent's by tier: 5.1). */
  casQuotaMiB?: number;
  /** The largest clock skew the nemesis gives a process (ms): days and windows are read that loosely. */
  maxSkewMs?: number;
}

/** A process as the checker reads it once the nemesis has healed everything. */
export interface ProcessView {
  name: NodeName;
  /** Its base URL, e.g. http://127.0.0.1:40123. */
  url: string;
}

/** What the checker reads after the run (the harness waits for quiet first). */
export interface FinalState {
  processes: ProcessView[];
  /** The postgres:// store the processes share (`akas log check --store URL --json`). */
  store: string;
  /** AKAS_NODE_SECRET of the processes: the log check opens the node keys sealed in the store with it. */
  nodeSecret: string;
  /** Date.now() at time 0 of the history: the UTC days of the daily caps. */
  startedAt: number;
  limits?: RunLimits;
  /** The built CLI (default dist/bin/main.cjs). */
  cli?: string;
  /** A folder for the checker's own files (the monitor's state); default a fresh temp folder. */
  workDir?: string;
  /** The agents `akas monitor --once --agent TAG` watches (default: the judge with the most acknowledged judgments). */
  monitorAgents?: string[];
}

/** The checker's named checks, one per invariant of issue 49, item 3. */
export type CheckId =
  | 'writes-acknowledged'
  | 'ledger-conserved'
  | 'ledger-causal-order'
  | 'one-decision'
  | 'deposits-settled-once'
  | 'log-append-only'
  | 'events-logged'
  | 'checkpoints-monotonic'
  | 'checkpoints-consistent'
  | 'one-tree'
  | 'idempotent-replay'
  | 'buckets-bounded'
  | 'quotas-bounded'
  | 'status-versions'
  | 'monitor-quiet'
  // The harness's own (test/chaos/harness.ts): no process exits unasked; after the heal every
  // process answers and the log's outbox drains within the bound; every refusal a client got is
  // in an envelope of PROTOCOL 1.3 (a JSON body with a `code`).
  | 'processes-alive'
  | 'recovers'
  | 'envelopes';

export interface Violation {
  check: CheckId;
  message: string;
  evidence: unknown;
}

export interface CheckResult {
  id: CheckId;
  ok: boolean;
  /** What was checked (counts), or the first violation's message. */
  detail: string;
}

export interface CheckerReport {
  ok: boolean;
  checks: CheckResult[];
  violations: Violation[];
}
