// W3C Bitstring Status List v1.0 (REC 2025-05-15; PROTOCOL 8.7): the shapes a node issues and a
// verifier reads, with no I/O. The bitstring is GZIP-compressed by whoever holds a gzip (node:zlib
// on the node and in the CLI, DecompressionStream in a browser: verifier/status-list.ts).
import { VC_V2_CONTEXT } from './credential.js';
import { canonicalize } from './jcs.js';

/** §2.2: "The uncompressed bitstring MUST be at least 16KB in size": 131,072 entries, the herd a credential hides in. */
export const STATUS_LIST_LENGTH = 131_072;
/** The purposes akas issues an entry for on every judgment credential (§2.1: revocation is final, suspension reversible). */
export const STATUS_PURPOSES = ['revocation', 'suspension'] as const;
export type StatusPurpose = (typeof STATUS_PURPOSES)[number];
export const isStatusPurpose = (v: unknown): v is StatusPurpose => v === 'revocation' || v === 'suspension';

export const STATUS_LIST_CREDENTIAL_TYPE = 'BitstringStatusListCredential';
export const STATUS_LIST_TYPE = 'BitstringStatusList';
export const STATUS_ENTRY_TYPE = 'BitstringStatusListEntry';
/** The log entry kind of a new version of a status list (PROTOCOL 9.3). */
export const STATUS_LIST_EVENT_KIND = 'status-list.version.v1';
/** How long a verifier may cache a list before asking again (ms; §2.2 `ttl`): the Cache-Control max-age too. */
export const STATUS_LIST_TTL_MS = 5 * 60 * 1000;

/** Where a node serves a list: its stable URL (the newest version) under the node's origin. */
export const statusListPath = (purpose: StatusPurpose) => `/credentials/status/${purpose}`;

/** One credentialStatus entry (§2.1); statusListIndex is a base-10 string, as the spec says. */
export interface StatusEntry {
  id: string;
  type: typeof STATUS_ENTRY_TYPE;
  statusPurpose: StatusPurpose;
  statusListIndex: string;
  statusListCredential: string;
}

/** The entry of a credential at `index` of the list at `listUrl`; its id (the list URL and the index) MUST NOT be the list's URL. */
export const statusEntry = (listUrl: string, purpose: StatusPurpose, index: number): StatusEntry => ({
  id: `${listUrl}#${index}`,
  type: STATUS_ENTRY_TYPE,
  statusPurpose: purpose,
  statusListIndex: String(index),
  statusListCredential: listUrl,
});

export interface UnsignedStatusListCredential {
  '@context': string[];
  id: string;
  type: string[];
  issuer: string;
  validFrom: string;
  credentialSubject: { id: string; type: typeof STATUS_LIST_TYPE; statusPurpose: StatusPurpose; encodedList: string; ttl: number };
}

/**
 * The unsigned list credential of one version (§2.2, Example 3): its id is the list's stable
 * URL (what entries name), its subject the list itself; validFrom is when the version was made.
 */
export function statusListCredential(f: {
  listUrl: string;
  issuer: string;
  purpose: StatusPurpose;
  encodedList: string;
  validFrom: string;
}): UnsignedStatusListCredential {
  return {
    '@context': [VC_V2_CONTEXT],
    id: f.listUrl,
    type: ['VerifiableCredential', STATUS_LIST_CREDENTIAL_TYPE],
    issuer: f.issuer,
    validFrom: f.validFrom,
    credentialSubject: { id: `${f.listUrl}#list`, type: STATUS_LIST_TYPE, statusPurpose: f.purpose, encodedList: f.encodedList, ttl: STATUS_LIST_TTL_MS },
  };
}

/** The bit of `index` (§2.2: index 0 is the left-most bit, the high bit of byte 0). */
export const getStatusBit = (bits: Uint8Array, index: number) => ((bits[index >> 3] >> (7 - (index & 7))) & 1) === 1;

/** Sets or clears the bit of `index`, in place. */
export function setStatusBit(bits: Uint8Array, index: number, value: boolean): void {
  const mask = 0x80 >> (index & 7);
  bits[index >> 3] = value ? bits[index >> 3] | mask : bits[index >> 3] & ~mask;
}

/** The bytes of an encodedList once multibase-decoded ('u' + base64url, no padding), still GZIP-compressed; undefined when malformed. */
export function multibaseBase64url(encodedList: unknown): Uint8Array | undefined {
  if (typeof encodedList !== 'string' || !encodedList.startsWith('u') || !/^u[A-Za-z0-9_-]+$/.test(encodedList)) return undefined;
  const b64 = encodedList.slice(1).replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** 'u' + base64url (no padding) of GZIP-compressed bytes: an encodedList. */
export function toMultibaseBase64url(gzipped: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < gzipped.length; i++) bin += String.fromCharCode(gzipped[i]);
  return `u${btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** The type of a status head (PROTOCOL 8.7): the issuer's word on which version of each list is the newest at a log size. */
export const STATUS_HEAD_TYPE = 'akas.status-head.v1';
/** Where a node serves its status head, at its newest checkpoint. */
export const STATUS_HEAD_PATH = '/credentials/status/head';

/** One list as a status head names it: its newest version logged at the head's tree size. */
export interface StatusHeadList {
  purpose: StatusPurpose;
  /** The list's URL (what credentials name). */
  list: string;
  version: number;
  /** sha256 hex of the JCS of that version's list credential (what its log entry names). */
  credentialSha256: string;
  /** The log index of that version's `status-list.version.v1` entry. */
  index: number;
}

/**
 * A status head: at tree size `treeSize` of the log `origin` (root `rootHash`, base64), the newest
 * version of each list logged there; `at` is when the issuer said so (ms). Signed by the issuer's
 * key over statusHeadStatement. A list version counts only as of the checkpoint that logged it:
 * a verifier holding a head refuses a list older than the one the head names.
 */
export interface StatusHead {
  type: typeof STATUS_HEAD_TYPE;
  issuer: string;
  origin: string;
  treeSize: number;
  rootHash: string;
  lists: StatusHeadList[];
  at: number;
  nodeSignature?: { algorithm: 'Ed25519'; issuer: string; signature: string };
}

/** The JCS string a status head's signature covers: its fields without nodeSignature. */
export function statusHeadStatement(h: Omit<StatusHead, 'nodeSignature'>): string {
  return canonicalize({ type: h.type, issuer: h.issuer, origin: h.origin, treeSize: h.treeSize, rootHash: h.rootHash, lists: h.lists, at: h.at });
}
