// A keyed Sigstore bundle v0.3 holding a DSSE envelope, checked offline under a key the auditor
// gives (PROTOCOL 16.4): the media type, exactly one DSSE signature, the key hint the envelope's
// keyid as the bundle spec asks, then the envelope as verifier/dsse.ts checks it. A bundle that
// carries Rekor entries, timestamps or certificates is not what akas checks: those are refused
// by name, never passed over (nothing unchecked counts as verified).
import type { KeyObject } from 'node:crypto';
import { Checks, type Report } from './report.js';
import { envelopeChecking } from './dsse.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const MEDIA_TYPES = [
  'application/vnd.dev.sigstore.bundle.v0.3+json',
  'application/vnd.dev.sigstore.bundle+json;version=0.3',
  'application/vnd.dev.sigstore.bundle+json;version=0.2',
];

export function verifySigstore(doc: unknown, key: KeyObject): Report & { statement?: Json } {
  const c = new Checks();
  const b = isObject(doc) ? doc : {};
  const media = b.mediaType;
  c.add('bundle.mediaType', 'input', 'a Sigstore bundle v0.3 (or v0.2)', MEDIA_TYPES.includes(media as string), `mediaType is ${JSON.stringify(media)}`);
  const vm = isObject(b.verificationMaterial) ? b.verificationMaterial : {};
  const env = b.dsseEnvelope;
  const keyed = isObject(vm.publicKey) && !vm.certificate && !vm.x509CertificateChain;
  c.add(
    'bundle.keyed',
    'input',
    'keyed verification material (a public key hint, no certificate)',
    keyed,
    keyed ? undefined : 'the bundle holds a certificate or no publicKey: keyless bundles are checked by Sigstore clients with a trusted root',
  );
  const extras = [
    ...(Array.isArray(vm.tlogEntries) && vm.tlogEntries.length ? ['tlogEntries'] : []),
    ...(isObject(vm.timestampVerificationData) &&
    Array.isArray(vm.timestampVerificationData.rfc3161Timestamps) &&
    vm.timestampVerificationData.rfc3161Timestamps.length
      ? ['rfc3161Timestamps']
      : []),
  ];
  c.add(
    'bundle.unchecked',
    'input',
    'no Rekor entry or timestamp this check would leave unverified',
    extras.length === 0,
    extras.length ? `it carries ${extras.join(' and ')}, which akas does not check: verify it with a Sigstore client and a trusted root` : undefined,
  );
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures : [];
  c.add('bundle.dsse', 'input', 'a DSSE envelope of exactly one signature', isObject(env) && sigs.length === 1, `${sigs.length} signature(s)`);
  const hint = isObject(vm.publicKey) ? vm.publicKey.hint : undefined;
  const keyid = isObject(sigs[0]) ? (sigs[0] as Json).keyid : undefined;
  c.add(
    'bundle.keyHint',
    'content',
    "the key hint is the envelope's keyid",
    hint === undefined || hint === '' || keyid === undefined || hint === keyid,
    `hint ${JSON.stringify(hint)}, keyid ${JSON.stringify(keyid)}`,
  );
  if (c.failed.length) return c.report();
  const statement = envelopeChecking(c, env, key);
  return { ...c.report(), ...(statement ? { statement } : {}) };
}
