// "All evals of" an artifact, proven (issue 51, 2; PROTOCOL 9.3, 9.10, 12.5): a leaf-artifact
// read's independentEvals held against the lookup of its payload's sha256 under the pinned log
// key (index.complete: every eval the log records of its path and bytes is shown; index.recorded:
// each shown is one the log records, as recorded). The checks are the verifier's
// (verifier/complete.ts), which the explorer's artifact page runs in the reader's browser too;
// this reads the lookups through the CLI's client.
import { artifactEvalsComplete } from '../../../verifier/complete.js';
import type { Trust } from '../../../verifier/index.js';
import type { AkasClient, Json } from '../../kit/index.js';
import { type Completeness, lookupReader } from './complete.js';

/** Holds a leaf-artifact read's evals against every one the log records of its bytes (null for a read that is no artifact's). */
export async function evalsComplete(client: AkasClient, trust: Trust, doc: Json): Promise<Completeness | null> {
  const r = await artifactEvalsComplete(doc, lookupReader(client), trust.policy.logs);
  if (!r) return null;
  // The verified read says as of which log size (its checkpoint is the read's own, PROTOCOL 12.5).
  const { checkpoint: _checkpoint, ...said } = r;
  return said;
}
