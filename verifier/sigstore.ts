// A keyed Sigstore bundle v0.3 holding a DSSE envelope, checked offline (PROTOCOL 16.4): read as
// strict JSON and in the shape of sigstore_bundle.proto (sigstore/protobuf-specs) with no field
// it does not have, the media type, exactly one DSSE signature, the key hint the envelope's keyid
// as the bundle spec asks, then the envelope as verifier/dsse.ts checks it. A bundle that
// carries Rekor entries, timestamps or certificates is not what akas checks: those are refused
// by name, never passed over (nothing unchecked counts as verified). One implementation for Node
// (verifySigstore) and the browser build (verifySigstoreAsync), as verifier/dsse.ts.
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { Checks } from './report.js';
import { type DsseOptions, type DsseReport, type DsseSigner, envelopeChecking, readSupplyChainJson } from './dsse.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const MEDIA_TYPES = [
  'application/vnd.dev.sigstore.bundle.v0.3+json',
  'application/vnd.dev.sigstore.bundle+json;version=0.3',
  'application/vnd.dev.sigstore.bundle+json;version=0.2',
];

/**
 * The fields of each message akas reads (sigstore_bundle.proto, envelope.proto, and
 * sigstore_common.proto's PublicKeyIdentifier), by their JSON names. Any other field is refused:
 * proto JSON readers also take the proto's own names (`message_signature`), and a reader that
 * takes a field akas passes over could verify something else than akas did.
 */
const FIELDS = {
  Bundle: ['mediaType', 'verificationMaterial', 'dsseEnvelope', 'messageSignature'],
  VerificationMaterial: ['publicKey', 'x509CertificateChain', 'certificate', 'tlogEntries', 'timestampVerificationData'],
  TimestampVerificationData: ['rfc3161Timestamps'],
  PublicKeyIdentifier: ['hint'],
  Envelope: ['payload', 'payloadType', 'signatures'],
  Signature: ['sig', 'keyid'],
} as const;

/** What is wrong with the bundle's shape: unknown fields, a oneof holding two members, a repeated field that is not an array. */
function shapeProblems(b: Json): string[] {
  const out: string[] = [];
  const unknown = (o: Json, message: keyof typeof FIELDS, at: string) => {
    const extra = Object.keys(o).filter((k) => !(FIELDS[message] as readonly string[]).includes(k));
    if (extra.length) out.push(`${at} has ${extra.map((k) => JSON.stringify(k)).join(', ')}, which a ${message} does not`);
  };
  /** A oneof (sigstore_bundle.proto) holds one member: a reader given two takes the one it looks at first. */
  const oneof = (o: Json, name: string, members: string[], at: string) => {
    const set = members.filter((m) => o[m] !== undefined);
    if (set.length > 1) out.push(`${at} holds ${set.join(' and ')}: its ${name} is one of them (a oneof), and readers differ on which they take`);
  };
  unknown(b, 'Bundle', 'the bundle');
  oneof(b, 'content', ['dsseEnvelope', 'messageSignature'], 'the bundle');
  if (b.dsseEnvelope === undefined) out.push('the bundle holds no dsseEnvelope (akas checks DSSE bundles, not a messageSignature)');
  const vm = b.verificationMaterial;
  if (!isObject(vm)) out.push('verificationMaterial is not an object');
  else {
    unknown(vm, 'VerificationMaterial', 'verificationMaterial');
    oneof(vm, 'content', ['publicKey', 'x509CertificateChain', 'certificate'], 'verificationMaterial');
    if (vm.tlogEntries !== undefined && !Array.isArray(vm.tlogEntries)) out.push('verificationMaterial.tlogEntries is not an array (a repeated field)');
    const tvd = vm.timestampVerificationData;
    if (tvd !== undefined && !isObject(tvd)) out.push('verificationMaterial.timestampVerificationData is not an object');
    if (isObject(tvd)) {
      unknown(tvd, 'TimestampVerificationData', 'timestampVerificationData');
      if (tvd.rfc3161Timestamps !== undefined && !Array.isArray(tvd.rfc3161Timestamps))
        out.push('timestampVerificationData.rfc3161Timestamps is not an array (a repeated field)');
    }
    if (isObject(vm.publicKey)) {
      unknown(vm.publicKey, 'PublicKeyIdentifier', 'verificationMaterial.publicKey');
      if (vm.publicKey.hint !== undefined && typeof vm.publicKey.hint !== 'string') out.push('verificationMaterial.publicKey.hint is not a string');
    }
  }
  const env = b.dsseEnvelope;
  if (isObject(env)) {
    unknown(env, 'Envelope', 'dsseEnvelope');
    for (const [i, s] of (Array.isArray(env.signatures) ? env.signatures : []).entries())
      if (isObject(s)) unknown(s, 'Signature', `dsseEnvelope.signatures[${i}]`);
  }
  return out;
}

/**
 * `akas verify sigstore FILE --key PEM | --trust FILE`: one keyed bundle (its text, bytes or
 * parsed value) checked under the signer given. Throws NotCheckableError for text that is not strict JSON.
 */
export function verifySigstore(input: unknown, signer: DsseSigner, options: DsseOptions = {}): DsseReport {
  return runNow(sigstoreChecking(input, signer, options));
}

/** verifySigstore where signatures are asynchronous (WebCrypto in a browser); the same checks. */
export function verifySigstoreAsync(input: unknown, signer: DsseSigner, options: DsseOptions = {}): Promise<DsseReport> {
  return runAsync(sigstoreChecking(input, signer, options));
}

/** The checks of verifySigstore, as a generator of the signatures they need. */
export function* sigstoreChecking(input: unknown, signer: DsseSigner, options: DsseOptions = {}): Checking<DsseReport> {
  const doc = readSupplyChainJson(input, 'Sigstore bundle');
  const c = new Checks();
  const b = isObject(doc) ? doc : {};
  const media = b.mediaType;
  c.add({
    id: 'bundle.mediaType',
    what: 'a Sigstore bundle v0.3 (or v0.2)',
    valid: MEDIA_TYPES.includes(media as string),
    why: `mediaType is ${JSON.stringify(media)}`,
  });
  const problems = isObject(doc) ? shapeProblems(b) : ['the bundle is not a JSON object'];
  c.add({
    id: 'bundle.shape',
    what: 'the fields of a Sigstore bundle, each of its type, one content (sigstore_bundle.proto)',
    valid: problems.length === 0,
    why: problems.length ? problems.join('; ') : undefined,
  });
  const vm = isObject(b.verificationMaterial) ? b.verificationMaterial : {};
  const env = b.dsseEnvelope;
  const keyed = isObject(vm.publicKey) && vm.certificate === undefined && vm.x509CertificateChain === undefined;
  c.add({
    id: 'bundle.keyed',
    what: 'keyed verification material (a public key hint, no certificate)',
    valid: keyed,
    why: keyed ? undefined : 'the bundle holds a certificate or no publicKey: keyless bundles are checked by Sigstore clients with a trusted root',
  });
  const extras = [
    ...(Array.isArray(vm.tlogEntries) && vm.tlogEntries.length ? ['tlogEntries'] : []),
    ...(isObject(vm.timestampVerificationData) &&
    Array.isArray(vm.timestampVerificationData.rfc3161Timestamps) &&
    vm.timestampVerificationData.rfc3161Timestamps.length
      ? ['rfc3161Timestamps']
      : []),
  ];
  c.add({
    id: 'bundle.unchecked',
    what: 'no Rekor entry or timestamp this check would leave unverified',
    valid: extras.length === 0,
    why: extras.length ? `it carries ${extras.join(' and ')}, which akas does not check: verify it with a Sigstore client and a trusted root` : undefined,
  });
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures : [];
  c.add({ id: 'bundle.dsse', what: 'a DSSE envelope of exactly one signature', valid: isObject(env) && sigs.length === 1, why: `${sigs.length} signature(s)` });
  const hint = isObject(vm.publicKey) ? vm.publicKey.hint : undefined;
  const keyid = isObject(sigs[0]) ? (sigs[0] as Json).keyid : undefined;
  c.add({
    id: 'bundle.keyHint',
    what: "the key hint is the envelope's keyid",
    valid: hint === undefined || hint === '' || keyid === undefined || hint === keyid,
    why: `hint ${JSON.stringify(hint)}, keyid ${JSON.stringify(keyid)}`,
  });
  if (c.failed.length) return c.report();
  const statement = yield* envelopeChecking(c, env, signer, undefined, options);
  return { ...c.report(), ...(statement ? { statement } : {}) };
}
