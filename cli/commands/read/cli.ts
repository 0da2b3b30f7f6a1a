// The CLI's reads verified (issue 50, 4): `akas node|brief|search|show` ask the node for the read
// with its full evidence, check it here (./verify.ts) and show the verdict with it: a section of
// the node's view, a column of a search's hits, lines under a proposal or an attestation, and the
// same `verification` object under --json. The exit code is the verdict's (PROTOCOL 8.6: 0
// verified, 1 not verified, 3 unanchored or status unknown). `--no-verify` reads as before and
// says the read was not checked.
import { exitOfVerdict } from '../../../verifier/report.js';
import type { Json } from '../../kit/index.js';
import type { Cli } from '../../program.js';
import type { Row, Section } from '../knowledge/view.js';
import { SKIPPED_BY_FLAG } from './skipped.js';
import { completeLine, ReadVerifier, type Verification } from './verify.js';

/** Verifies a read the node answered with ?evidence=full; notices about the pin go to stderr (under --json too). */
export function verifyForCli(cli: Cli, doc: Json): Promise<Verification> {
  const verifier = new ReadVerifier({ profile: cli.globals().profile, client: cli.client(), say: (line) => cli.io.stderr.write(`${line}\n`) });
  return verifier.verify(doc);
}

/** The exit code of a verified read. */
export const exitOfVerification = (v: Verification) => exitOfVerdict(v.verdict);

const WORDS = { verified: 'VERIFIED', 'not verified': 'NOT VERIFIED', unanchored: 'UNANCHORED', 'status unknown': 'STATUS UNKNOWN' } as const;

/** The rows of a verification: its verdict, where and under what, the decision, what failed, what happened to the pin. */
export function verificationRows(v: Verification): Row[] {
  const tone = v.verdict === 'verified' ? 'good' : v.verdict === 'not verified' ? 'bad' : 'weak';
  const rows: Row[] = [{ label: 'verdict', value: WORDS[v.verdict], tone }];
  if (v.checkpoint) rows.push({ label: 'checkpoint', value: `${v.checkpoint.size} entries, root ${v.checkpoint.root}` });
  if (v.anchoredOn) rows.push({ label: 'anchored on', value: v.anchoredOn });
  if (v.decision) rows.push({ label: 'decision', value: v.decision.why, tone: v.decision.holds ? 'good' : 'bad' });
  if (v.complete) rows.push({ label: 'complete', value: completeLine(v.complete), tone: 'good' });
  else if (v.complete === null && v.completeWhy) rows.push({ label: 'complete', value: v.completeWhy, tone: 'weak' });
  if (v.refused) {
    rows.push({ label: 'refused', value: `${v.refused.what}: ${v.refused.why}`, tone: 'bad' });
    if (v.refused.evidenceFile) rows.push({ label: 'evidence', value: `${v.refused.evidenceFile} (akas verify fork FILE --log-key KEY)` });
  }
  for (const u of v.unchecked ?? []) rows.push({ label: 'not checked', value: `${u.id}${u.why ? `: ${u.why}` : ''}`, tone: 'weak' });
  for (const f of v.failed) rows.push({ label: 'failed', value: `${f.id}${f.subject ? ` (${f.subject})` : ''}${f.why ? `: ${f.why}` : ''}`, tone: 'bad' });
  const event = v.trust?.event as Json | undefined;
  if (event) rows.push({ label: 'WARNING', value: `${event.message ?? event.why}`, tone: 'bad' });
  return rows;
}

/** A node or brief view's first section: how it was verified, or that it was not. */
export function verificationSection(v: Verification | undefined): Section {
  if (!v) return { title: 'not verified', note: SKIPPED_BY_FLAG.line, rows: [{ label: 'verdict', value: 'not checked (--no-verify)', tone: 'weak' }] };
  return {
    title: 'checked on this machine',
    note: 'checked with its full evidence under the keys this profile pinned (akas verify node does the same offline)',
    rows: verificationRows(v),
  };
}

/** The same as lines of plain text (under a search's hits, a proposal, an attestation). */
export function verificationText(v: Verification | undefined): string {
  if (!v) return SKIPPED_BY_FLAG.line;
  const rows = verificationRows(v);
  const w = Math.max(...rows.map((r) => r.label.length));
  return ['', 'checked on this machine', ...rows.map((r) => `  ${r.label.padEnd(w)}  ${r.value}`)].join('\n');
}

/** The verdict word of a search hit (its column). */
export const hitVerdict = (v: Verification | undefined, i: number) => (v?.hits?.[i] ? WORDS[v.hits[i].verdict] : v ? '-' : 'unchecked');
