// Revocations and suspensions of the watched agent's credentials (issue 34, 2; PROTOCOL 8.7).
// Every change of a status list is a `status-list.version.v1` log entry naming the list, its
// version and the sha256 of the list credential. For each one the monitor meets, it fetches that
// version (`<list>?version=N`), checks its sha256 against the entry and its proof as a list by
// the node's issuer (verifier/status-list.ts), then reads the bits of the watched agent's
// credentials and compares them with what the last version read said: a bit that turned on is
// an alert (the purpose, the entry's reason and time, the version and its log entry as
// evidence); a suspension lifted is an event; a revocation cleared, which PROTOCOL 8.7 says is
// final, an alert. A version that does not hash to its entry, that the node does not serve, or
// that is not the next of its list is an alert.
//
// Which credentials are watched: every judgment.recorded entry of the agent met in the log,
// kept in `<state>.credentials.jsonl` (appended, and fsynced before each save of the state, so
// an entry behind the saved index is never missing from it). A credential's status indexes are
// in the credential itself, signed by the issuer: it is fetched and checked the first time a
// list version is met, and its indexes appended to the same file.
import { readFileSync } from 'node:fs';
import { runNow } from '../../../src/core/checking.js';
import { judgmentUrn } from '../../../src/core/credential.js';
import { canonicalize, getStatusBit, isStatusPurpose, sha256Hex } from '../../../src/core/index.js';
import { parseStrictJson } from '../../../src/core/strict-json.js';
import type { IssuerTrust } from '../../../verifier/issuer-keys.js';
import { Checks } from '../../../verifier/report.js';
import { inflateList, statusEntries, statusListChecking } from '../../../verifier/status-list.js';
import { verifyCredential } from '../../../verifier/index.js';
import type { Json } from '../../kit/index.js';
import { isObject } from '../../../verifier/vc.js';
import { inflateNode } from '../verify/status-check.js';
import { appendDurably } from './output.js';
import { besideState, type MonitorState } from './state.js';

/** A GET of an absolute URL: its status and bytes (a failed connection throws). */
export type GetUrl = (url: string) => Promise<{ status: number; bytes: Buffer }>;

/** Reports one finding: an alert (counted), or an event with an id (printed once, like an alert). */
export type Report = (type: 'alert' | 'event', id: string, what: string, message: string, extra: Json) => void;

interface Watched {
  kind: string;
  proposalId: string;
  /** The credential's entries, by purpose, once read ({} for a credential issued before status lists). */
  status?: Record<string, { list: string; index: number }>;
}

export interface StatusDeps {
  getUrl: GetUrl;
  /** The judgment credential as the node serves it (GET /api/credentials/judgment/…), null when it answers 404. */
  credential?: (kind: string, proposalId: string, judgmentId: string) => Promise<unknown | null>;
  /** The node's issuer keys reached from the pinned one; absent, the lists' proofs are not checked (said as incomplete). */
  trust?: IssuerTrust;
  /**
   * The origins a list may be read from (the node's: the first is its API's); absent, any. A list
   * the log names on another origin is read from the first, at the same path, never from there.
   */
  origins?: string[];
}

const PURPOSE_WORD: Record<string, string> = { revocation: 'revoked', suspension: 'suspended' };

/**
 * Where a list the log names is read: where it says when that is one of `origins` (or none are
 * given), else the same path on the first of them; undefined for a name that is not a URL.
 */
function readAt(list: string, origins: string[] | undefined): string | undefined {
  if (!URL.canParse(list)) return undefined;
  const u = new URL(list);
  if (!origins?.length || origins.includes(u.origin)) return list;
  return `${origins[0]}${u.pathname}${u.search}`;
}

export class StatusWatch {
  private readonly path: string;
  private known?: Map<string, Watched>;
  private unsaved: string[] = [];

  constructor(
    statePath: string,
    private readonly state: MonitorState,
    private readonly deps: StatusDeps,
  ) {
    this.path = besideState(statePath, 'credentials.jsonl');
  }

  /** The watched credentials: the file's lines merged by judgment id (read once). */
  private credentials(): Map<string, Watched> {
    if (this.known) return this.known;
    const known = new Map<string, Watched>();
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const line of text.split('\n')) {
      let l: Json;
      try {
        l = JSON.parse(line);
      } catch {
        continue; // a line cut by a crash: its entry is behind no saved index, and is met again
      }
      const w: Watched = known.get(l.judgmentId) ?? { kind: l.kind, proposalId: l.proposalId };
      if (l.status) w.status = l.status;
      known.set(l.judgmentId, w);
    }
    this.known = known;
    return known;
  }

  private keep(judgmentId: string, line: Json) {
    this.unsaved.push(JSON.stringify({ judgmentId, ...line }));
  }

  /** A judgment.recorded entry of the watched agent. */
  judgment(body: Json): void {
    const judgmentId = String(body.judgmentId);
    const known = this.credentials();
    if (known.has(judgmentId) || typeof body.kind !== 'string' || typeof body.proposalId !== 'string') return;
    known.set(judgmentId, { kind: body.kind, proposalId: body.proposalId });
    this.keep(judgmentId, { kind: body.kind, proposalId: body.proposalId });
  }

  /** Makes what was met durable: called before every save of the state. */
  flush(): void {
    if (!this.unsaved.length) return;
    appendDurably(this.path, `${this.unsaved.join('\n')}\n`);
    this.unsaved = [];
  }

  /** The status entries of a credential, read and checked once; undefined when it cannot be (said in `incomplete`). */
  private async entriesOf(judgmentId: string, w: Watched, incomplete: (why: string) => void): Promise<Watched['status']> {
    if (w.status) return w.status;
    if (!this.deps.credential) {
      incomplete(`the credential of ${judgmentId} cannot be read without the node's API`);
      return undefined;
    }
    const doc = await this.deps.credential(w.kind, w.proposalId, judgmentId);
    // Checked at its own validFrom: what matters here is that the issuer signed these status
    // entries for this judgment, not whether this machine's clock has reached its window (a
    // process whose clock runs ahead issues credentials "not yet valid" here: the chaos harness's skew).
    const from = isObject(doc) ? Date.parse(String(doc.validFrom)) : Number.NaN;
    const at = Number.isFinite(from) ? from : undefined;
    const report =
      doc === null ? undefined : verifyCredential(doc, { ...(this.deps.trust ? { trust: this.deps.trust } : {}), ...(at !== undefined ? { at } : {}) });
    const broken = report?.checks.filter((k) => k.valid === false) ?? [];
    if (!report || broken.length || report.subject !== judgmentUrn(judgmentId)) {
      const why = !report ? 'the node answers 404' : broken.length ? broken.map((k) => k.why ?? k.id).join('; ') : `its subject is ${report.subject}`;
      incomplete(`the credential of ${judgmentId} cannot be checked (${why}): its status is not watched`);
      return undefined;
    }
    const status: NonNullable<Watched['status']> = {};
    for (const e of statusEntries(doc) as Json[]) {
      const index = Number(e?.statusListIndex);
      if (isStatusPurpose(e?.statusPurpose) && typeof e.statusListCredential === 'string' && Number.isSafeInteger(index))
        status[e.statusPurpose] = { list: e.statusListCredential, index };
    }
    w.status = status;
    this.keep(judgmentId, { status });
    return status;
  }

  /**
   * A status-list version entry at log index `seq` (`evidence` gives its entry, inclusion proof
   * and checkpoint): the alerts and events it makes, through `report`.
   */
  async version(seq: number, body: Json, evidence: () => Promise<Json>, report: Report, incomplete: (why: string) => void): Promise<void> {
    const { list, purpose, version } = body;
    if (typeof list !== 'string' || !isStatusPurpose(purpose) || !Number.isSafeInteger(version) || version < 0) {
      report('alert', `status-entry:${seq}`, 'status-list-invalid', `entry ${seq} is a status-list version naming no list, purpose or version`, {
        ...(await evidence()),
      });
      return;
    }
    const where = { list, purpose, version, logIndex: seq };
    const versions = (this.state.listVersions ??= {});
    const last = versions[list];
    // A version read before (--from went back): checked again, but the bits are compared only going forward.
    const reread = last !== undefined && version <= last;
    if (last !== undefined && version > last + 1)
      report('alert', `status-gap:${list}:${version}`, 'status-list-gap', `version ${version} of the ${purpose} list follows version ${last} in the log`, {
        ...where,
        previous: last,
        ...(await evidence()),
      });
    // The log is the node's word: it never sends this reader to a third party. A list it names on
    // another origin (the node's --public-url, say) is read from the node itself at the same path;
    // the entry's sha256 says which document it must be.
    const at = readAt(list, this.deps.origins);
    if (at === undefined) {
      incomplete(`version ${version} of the ${purpose} list is not read: ${JSON.stringify(list)} is not a URL`);
      return;
    }
    const url = `${at}${at.includes('?') ? '&' : '?'}version=${version}`;
    const res = await this.deps.getUrl(url);
    if (res.status === 404) {
      report(
        'alert',
        `status-missing:${list}:${version}`,
        'status-list-missing',
        `the log names version ${version} of the ${purpose} list, which ${list} does not serve`,
        {
          ...where,
          ...(await evidence()),
        },
      );
      return;
    }
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    const parsed = parseStrictJson(new Uint8Array(res.bytes));
    const served = parsed.ok ? sha256Hex(canonicalize(parsed.value)) : null;
    if (!parsed.ok || served !== body.credentialSha256) {
      report(
        'alert',
        `status-hash:${list}:${version}`,
        'status-list-mismatch',
        `version ${version} of the ${purpose} list is not the list its log entry names ` +
          `(sha256 ${served ?? 'of no JSON'}, the entry says ${body.credentialSha256})`,
        { ...where, logged: body.credentialSha256, served, ...(await evidence()) },
      );
      return;
    }
    const doc = parsed.value as Json;
    let bits: Uint8Array;
    if (this.deps.trust) {
      const c = new Checks();
      // Checked as of the time the log says this version was made (not this machine's clock: see entriesOf).
      const madeAt = Number.isSafeInteger(body.at) ? (body.at as number) : undefined;
      const read = runNow(statusListChecking(c, doc, { trust: this.deps.trust, inflate: inflateNode, ...(madeAt !== undefined ? { at: madeAt } : {}) }));
      const problem = !read
        ? c.list.map((k) => k.why).join('; ')
        : read.url !== list || read.purpose !== purpose
          ? `it is the ${read.purpose} list ${read.url}, not the ${purpose} list ${list}`
          : undefined;
      if (!read || problem) {
        report('alert', `status-proof:${list}:${version}`, 'status-list-invalid', `version ${version} of the ${purpose} list does not verify: ${problem}`, {
          ...where,
          ...(await evidence()),
        });
        return;
      }
      bits = read.bits;
    } else {
      incomplete(`the proof of version ${version} of the ${purpose} list is not checked: the node's issuer keys are unknown`);
      const inflated = inflateList((doc.credentialSubject as Json | undefined)?.encodedList, inflateNode);
      if (typeof inflated === 'string') {
        report('alert', `status-proof:${list}:${version}`, 'status-list-invalid', `version ${version} of the ${purpose} list: ${inflated}`, {
          ...where,
          ...(await evidence()),
        });
        return;
      }
      bits = inflated;
    }
    if (reread) return;
    versions[list] = version;
    await this.compare(bits, where, body, evidence, report, incomplete);
  }

  // The watched credentials' bits in this version against those of the last one read.
  private async compare(
    bits: Uint8Array,
    where: { list: string; purpose: string; version: number; logIndex: number },
    body: Json,
    evidence: () => Promise<Json>,
    report: Report,
    incomplete: (why: string) => void,
  ) {
    const { list, purpose, version } = where;
    const set = new Set(this.state.statusSet ?? []);
    for (const [judgmentId, w] of this.credentials()) {
      const entry = (await this.entriesOf(judgmentId, w, incomplete))?.[purpose];
      if (!entry || entry.list !== list || entry.index >= bits.length * 8) continue;
      const key = `${judgmentId}:${purpose}`;
      const on = getStatusBit(bits, entry.index);
      if (on === set.has(key)) continue;
      const what = { judgmentId, ...where, index: entry.index, action: body.action, reason: body.reason, at: new Date(Number(body.at)).toISOString() };
      const id = `status:${judgmentId}:${purpose}:${version}`;
      if (on) {
        set.add(key);
        report(
          'alert',
          id,
          purpose === 'revocation' ? 'credential-revoked' : 'credential-suspended',
          `the credential of ${judgmentId} was ${PURPOSE_WORD[purpose]} at ${what.at} ` +
            `(version ${version} of the list, log entry ${where.logIndex}): ${String(body.reason)}`,
          { ...what, ...(await evidence()) },
        );
      } else {
        set.delete(key);
        // Revocation is final (PROTOCOL 8.7): a revoked credential made good again is the node breaking its own rule.
        if (purpose === 'revocation')
          report('alert', id, 'revocation-cleared', `the revocation of ${judgmentId} was cleared at ${what.at}, though revocation is final`, {
            ...what,
            ...(await evidence()),
          });
        else report('event', id, 'suspension-lifted', `the suspension of ${judgmentId} was lifted at ${what.at}: ${String(body.reason)}`, what);
      }
    }
    this.state.statusSet = [...set];
  }
}
