// The answers of PROTOCOL 8 and 9 (credentials, node keys, attestations, the log), as
// documented in /openapi.json. The node keys answer is closed field by field: it sits next to
// private keys in memory and must never grow one.
import { Type } from 'typebox';
import { Any, Closed, Hex64, Ms, Nullable, Open } from '../schemas.js';

const Str = Type.String();
const Int = Type.Integer();

export const LogEntrySchema = Closed({
  id: Type.String({ description: 'att_ + the log index as 16 hex.' }),
  seq: Int,
  prevHash: Hex64,
  kind: Str,
  tier: Str,
  body: Open(),
  agent: Nullable(Str),
  attestedAt: Ms(),
  hash: Hex64,
  mac: Hex64,
  signingKeyId: Str,
  leafHash: Type.String({ description: 'base64 of SHA-256(0x00 || leaf).' }),
});

const Inclusion = Closed({ index: Int, size: Int, proof: Type.Array(Str) });

export const EntryWithProof = Closed(
  { entry: LogEntrySchema, inclusion: Inclusion, checkpoint: Str, logKey: Str },
  'The entry with its inclusion proof against a signed checkpoint that covers it (PROTOCOL 9.4).',
);

export const AttestAnswer = Closed({ ...LogEntrySchema.properties, url: Str, note: Str }, 'The log entry of the attestation (PROTOCOL 9.3).');

export const EntryList = Closed({ items: Type.Array(LogEntrySchema), nextCursor: Nullable(Str) }, 'Entries in log order, filtered (PROTOCOL 9.4).');

export const LogHead = Closed(
  { size: Int, lastHash: Str, lastId: Nullable(Str), checkpoint: Str, origin: Str, logKey: Str },
  'The size and last entry of the log, with the newest checkpoint (PROTOCOL 9.4).',
);

export const InclusionProof = Closed(
  { index: Int, size: Int, leafHash: Str, proof: Type.Array(Str), checkpoint: Type.Optional(Str) },
  'An RFC 9162 inclusion proof (base64 hashes; PROTOCOL 9.5).',
);

export const ConsistencyProof = Closed(
  { old: Int, new: Int, proof: Type.Array(Str), checkpoint: Type.Optional(Str) },
  'An RFC 9162 consistency proof (base64 hashes; PROTOCOL 9.5).',
);

export const EntryRange = Closed({ start: Int, end: Int, size: Int, entries: Type.Array(LogEntrySchema) }, 'At most 1,000 entries (PROTOCOL 9.5).');

export const DryRunAnswer = Type.Union(
  [
    Closed({ valid: Type.Literal(true), kind: Str, schemaVersion: Any, tier: Str, note: Str, schemaUrl: Str }),
    Closed({
      valid: Type.Literal(false),
      kind: Str,
      errors: Type.Array(Open({ instancePath: Str, schemaPath: Str, keyword: Str, params: Open(), message: Str, fieldDescription: Type.Optional(Str) }), {
        description: 'The first 50 errors (a candidate over a size limit: that limit alone, before its items are checked).',
      }),
      errorCount: Type.Integer({ description: 'How many errors there were in all.' }),
      hint: Str,
    }),
  ],
  { description: 'Whether the candidate fits its kind, with every error when it does not (PROTOCOL 9.2).' },
);

export const CatalogAnswer = Closed(
  {
    schemaVersion: Str,
    dryRunUrl: Str,
    attestUrl: Str,
    kinds: Type.Array(Closed({ kind: Str, tier: Str, schemaVersion: Str, schemaUrl: Str, description: Str })),
  },
  'The attestation kinds with their schemas (PROTOCOL 9.1).',
);

export const NodeKeysAnswer = Closed(
  {
    issuer: Closed({
      current: Str,
      keys: Type.Array(
        Closed({ did: Str, publicKeyMultibase: Str, validFrom: Ms(), validUntil: Nullable(Ms()), validFromIso: Str, validUntilIso: Nullable(Str) }),
      ),
      rotations: Type.Array(Closed({ type: Str, from: Str, to: Str, at: Ms(), signatures: Closed({ from: Str, to: Str }) })),
      note: Str,
    }),
    hmac: Type.Array(Closed({ signingKeyId: Str, createdAt: Ms(), current: Type.Boolean() })),
    log: Closed({
      origin: Str,
      verifierKey: Str,
      publicKey: Hex64,
      publicKeyMultibase: Str,
      endorsement: Closed({ type: Str, origin: Str, verifierKey: Str, issuer: Str, signature: Str }),
      note: Str,
    }),
  },
  'The public halves of the node keys: issuer did:keys with their windows and rotations, HMAC key ids, the log key (PROTOCOL 8.3).',
);

export const Credential = Open(
  {
    '@context': Type.Array(Str),
    type: Type.Array(Str),
    issuer: Str,
    validFrom: Str,
    credentialSubject: Open(),
    proof: Open(),
  },
  'A judgment credential: W3C VC 2.0 with an eddsa-jcs-2022 proof (PROTOCOL 8.1).',
);
