// The node as a did:web (W3C did:web method; PROTOCOL 8.10): its DID is did:web of its public
// URL's host, its document at /.well-known/did.json lists every issuer key it has had as a
// Multikey verification method (with the window it was the issuer's), and names its log key and
// witness policy as services. A verifier never resolves did:web over the network by itself: it
// reads the document from a trust file that pinned it (made by an explicit fetch).
import { publicKeyFromMultibase } from './didkey.js';

export const DID_V1_CONTEXT = 'https://www.w3.org/ns/did/v1';
export const MULTIKEY_CONTEXT = 'https://w3id.org/security/multikey/v1';

/** did:web of an origin (https://host[:port][/path]): the host, a port percent-encoded (did:web §3.1.1: "%3A"), path segments joined by ':'. */
export function didWebOf(origin: string): string {
  const u = new URL(origin);
  const path = u.pathname.split('/').filter(Boolean).map(encodeURIComponent);
  return ['did:web', encodeURIComponent(u.host).replace(/%3A/gi, '%3A'), ...path].join(':');
}

export interface DidWebKey {
  publicKeyMultibase: string;
  validFrom: number;
  validUntil: number | null;
}

/** The node's DID document. */
export function didWebDocument(f: {
  did: string;
  origin: string;
  issuers: DidWebKey[];
  log: { origin: string; verifierKey: string };
  /** C2SP tlog-policy text: the log, the witnesses it asks, the quorum. */
  policy: string;
}) {
  const methods = f.issuers.map((k) => ({
    id: `${f.did}#${k.publicKeyMultibase}`,
    type: 'Multikey',
    controller: f.did,
    publicKeyMultibase: k.publicKeyMultibase,
    validFrom: new Date(k.validFrom).toISOString(),
    validUntil: k.validUntil === null ? null : new Date(k.validUntil).toISOString(),
  }));
  return {
    '@context': [DID_V1_CONTEXT, MULTIKEY_CONTEXT],
    id: f.did,
    alsoKnownAs: f.issuers.map((k) => `did:key:${k.publicKeyMultibase}`),
    verificationMethod: methods,
    assertionMethod: methods.map((m) => m.id),
    service: [
      {
        id: `${f.did}#log`,
        type: 'AkasTransparencyLog',
        serviceEndpoint: `${f.origin}/api/log/checkpoint`,
        origin: f.log.origin,
        verifierKey: f.log.verifierKey,
      },
      { id: `${f.did}#witness-policy`, type: 'AkasWitnessPolicy', serviceEndpoint: `${f.origin}/.well-known/did.json`, policy: f.policy },
    ],
  };
}

/** A pinned did:web document read back: its DID, and each Ed25519 Multikey method with its did:key and window (ms). */
export function didWebMethods(doc: unknown): { did: string; methods: Array<{ id: string; didKey: string; validFrom: number; validUntil: number }> } | null {
  if (typeof doc !== 'object' || doc === null) return null;
  const d = doc as { id?: unknown; verificationMethod?: unknown };
  if (typeof d.id !== 'string' || !d.id.startsWith('did:web:') || !Array.isArray(d.verificationMethod)) return null;
  const methods = [];
  for (const m of d.verificationMethod as Array<Record<string, unknown>>) {
    const mb = m?.publicKeyMultibase;
    if (m?.type !== 'Multikey' || m.controller !== d.id || typeof m.id !== 'string' || typeof mb !== 'string' || !publicKeyFromMultibase(mb)) continue;
    if (m.id !== `${d.id}#${mb}`) continue;
    const from = typeof m.validFrom === 'string' ? Date.parse(m.validFrom) : Number.NEGATIVE_INFINITY;
    const until = typeof m.validUntil === 'string' ? Date.parse(m.validUntil) : Number.POSITIVE_INFINITY;
    methods.push({
      id: m.id,
      didKey: `did:key:${mb}`,
      validFrom: Number.isNaN(from) ? Number.NEGATIVE_INFINITY : from,
      validUntil: Number.isNaN(until) ? Number.POSITIVE_INFINITY : until,
    });
  }
  return { did: d.id, methods };
}
