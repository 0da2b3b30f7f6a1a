// An attestation as an in-toto Statement v1 (PROTOCOL 16.1 and 16.2): its subject is the digests
// its body names as what it is about, by kind (the table below); its predicateType akas's own
// versioned URI, since no vetted in-toto predicate says what these kinds say (16.2 gives the
// reason per near miss). A body that names none of its kind's subject digests has no Statement:
// in-toto matches subjects by digest alone, and akas does not invent one.
import { AKAS_PREDICATE_BASE, type LogEntry, type ResourceDescriptor, ServiceError, type Statement, STATEMENT_TYPE } from '../../core/index.js';

/**
 * Per kind, the body fields whose sha256 is what the attestation is about, in subject order.
 * `outputs[]` takes the sha256 of each item. Every other digest of a body (a dataset, a
 * harness, evidence, inputs) stays in the predicate, where it describes how, not what.
 */
export const SUBJECT_FIELDS: Record<string, string[]> = {
  'alignment.attestation.v1': ['subjectSha256'],
  'attestation.event.v1': ['contentSha256'],
  'bi.cited_number.attestation.v1': ['querySha256', 'datasetSha256'],
  'embedding.response.v1': ['inputSha256', 'vectorSha256'],
  'eval.run.attestation.v1': ['subjectSha256'],
  'experiment.receipt.v1': ['checkpointSha256'],
  'governance.compliance.v1': ['subjectSha256'],
  'high-risk-classification.v1': ['subjectSha256'],
  'label.attestation.v1': ['itemSha256'],
  'leaderboard.receipt.v1': ['subjectSha256'],
  'legal.citation.attestation.v1': ['sourceSha256'],
  'pipeline.facet.v1': ['outputs[]'],
  'retrieval.citation.attestation.v1': ['sourceSha256', 'answerSha256'],
  'review.attestation.v1': ['subjectSha256'],
  'robot.action.attestation.v1': ['telemetrySha256'],
  'sandbox.run.attestation.v1': ['codeSha256'],
  'serious-incident.v1': ['subjectSha256'],
  'support.resolution.attestation.v1': ['transcriptSha256'],
  'synthetic.media.attestation.v1': ['mediaSha256'],
  'translation.attestation.v1': ['sourceSha256', 'targetSha256'],
  'tutorial.citation.attestation.v1': ['tutorialSha256'],
  'vulnerability.disclosure.v1': ['subjectSha256'],
};

const SHA256 = /^[0-9a-f]{64}$/;

/** akas's predicate type of a kind: `https://akas.dev/attestation/<kind without .vN>/vN`. */
export function predicateTypeOf(kind: string): string {
  const m = /^(.*)\.v(\d+)$/.exec(kind);
  return m ? `${AKAS_PREDICATE_BASE}${m[1]}/v${m[2]}` : `${AKAS_PREDICATE_BASE}${kind}/v1`;
}

/** The subject descriptors a body names for its kind (possibly none). */
export function subjectsOf(kind: string, body: Record<string, unknown>): ResourceDescriptor[] {
  const out: ResourceDescriptor[] = [];
  for (const field of SUBJECT_FIELDS[kind] ?? []) {
    if (field.endsWith('[]')) {
      const name = field.slice(0, -2);
      const items = Array.isArray(body[name]) ? (body[name] as Array<Record<string, unknown>>) : [];
      items.forEach((item, i) => {
        if (typeof item?.sha256 === 'string' && SHA256.test(item.sha256))
          out.push({ name: typeof item.uri === 'string' ? item.uri : `${name}[${i}]`, digest: { sha256: item.sha256 } });
      });
    } else if (typeof body[field] === 'string' && SHA256.test(body[field] as string)) {
      // A node event's content is named by its path where it has one (16.1), else by the field.
      const name = field === 'contentSha256' && typeof body.path === 'string' ? body.path : field;
      out.push({ name, digest: { sha256: body[field] as string } });
    }
  }
  return out;
}

/** The Statement of a log entry, or 409 not_exportable when its body names no subject digest. */
export function attestationStatement(entry: LogEntry, origin: string): Statement {
  const subject = subjectsOf(entry.kind, entry.body);
  if (subject.length === 0) {
    const fields = SUBJECT_FIELDS[entry.kind] ?? [];
    throw new ServiceError(
      'not_exportable',
      `${entry.id} (${entry.kind}) names no digest to be its in-toto subject: ${fields.length ? `${fields.join(', ')} is absent` : 'its kind names none'}.`,
      {
        hint: 'in-toto matches a Statement to artifacts by subject digest alone, so akas does not invent one; export it --format akas instead.',
      },
    );
  }
  return {
    _type: STATEMENT_TYPE,
    subject,
    predicateType: predicateTypeOf(entry.kind),
    predicate: {
      kind: entry.kind,
      tier: entry.tier,
      body: entry.body,
      attestedBy: entry.agent,
      attestedAt: new Date(entry.attestedAt).toISOString(),
      log: { origin, id: entry.id, index: entry.seq, hash: entry.hash },
    },
  };
}
