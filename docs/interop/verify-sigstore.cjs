// An akas Sigstore bundle checked by sigstore-js (@sigstore/verify 3.1.1, the last major for
// Node 20) with keyed trust material only: an empty trusted root, the given key for the bundle's
// hint, no Rekor entry or timestamp required (akas's log evidence is the tlog-proof beside it).
// Usage: npm install @sigstore/verify@3.1.1 && node verify-sigstore.cjs BUNDLE.json KEY.pem
const { createPublicKey } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const bundle = bundleFromJSON(JSON.parse(readFileSync(process.argv[2], 'utf8')));
const key = createPublicKey(readFileSync(process.argv[3], 'utf8'));
const root = {
  mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
  tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [],
};
const trust = toTrustMaterial(root, () => ({ publicKey: key, validFor: () => true }));
new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(bundle)); // throws on a bad signature
// sigstore-js checks the signature only: the payload type and the subject digests are the caller's.
const envelope = bundle.content.dsseEnvelope;
if (envelope.payloadType !== 'application/vnd.in-toto+json') throw new Error(`not an in-toto Statement: ${envelope.payloadType}`);
const statement = JSON.parse(envelope.payload.toString('utf8'));
console.log('verified', statement.predicateType, statement.subject.map((s) => `${s.name} sha256:${s.digest.sha256}`).join(', '));
