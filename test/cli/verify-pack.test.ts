// Reports packed for the hand-off between the verifier's threads (cli/commands/verify/pack.ts): what is
// unpacked is what was packed, check for check and field for field, in order; a check shared
// by the batch is held once, and one about each report's own subject once for the batch too.
import { describe, expect, it } from 'vitest';
import { ReportPacker, unpackReports, type PackTables, type PoolReport } from '../../cli/commands/verify/pack.js';
import type { Check, CheckId } from '../../verifier/report.js';

const check = (id: CheckId, valid: boolean | null, extra: Partial<Check> = {}): Check => ({ id, layer: 'L1', what: `the ${id} check`, valid, ...extra });

function report(i: number, status: boolean): PoolReport {
  const subject = `urn:akas:judgment:jdg_${i}`;
  const checks = [check('shape', true), check('proof.signature', true)];
  if (i % 3 === 0) checks.push(check('dates', false, { why: `not a dateTimeStamp: validFrom "x${i}"` }));
  if (status) checks.push(check('status.revocation', true, { why: 'not revoked as of 2026-01-02T00:00:00.000Z', subject }));
  // A check about another subject than the report's stays as it is.
  if (i === 4) checks.push(check('status.list', false, { why: 'the list does not verify', subject: 'https://example.org/list' }));
  return { verified: i % 3 !== 0, anchored: true, unanchored: [], checks, issuer: 'did:key:z6Mkissuer', subject };
}

describe('packed reports', () => {
  it('unpack to the reports packed, in order, with the report subject back on its own checks', () => {
    const packer = new ReportPacker();
    const tables: PackTables = { checks: [], strings: [] };
    const reports = Array.from({ length: 10 }, (_, i) => report(i, i !== 7));
    const out: PoolReport[] = new Array(reports.length);
    for (const [k, r] of reports.entries()) {
      packer.add(r);
      if (k % 4 === 3) unpackReports(packer.take(k - 3), tables, out);
    }
    unpackReports(packer.take(8), tables, out);
    expect(out).toEqual(reports);
    // Key order too (the JSON a user reads): the subject where it was.
    expect(JSON.stringify(out)).toBe(JSON.stringify(reports));
    // Held once: json, signature, the status check without its subject, four distinct dates failures, the list check.
    expect(tables.checks).toHaveLength(3 + 4 + 1);
  });
});
