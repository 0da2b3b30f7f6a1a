// The shape rules of the W3C Verifiable Credentials Data Model 2.0 (VC DM 2.0) that a verifier
// honours without JSON-LD processing: contexts, identifiers, types, issuer, subjects, validity
// dates, holders. Each function answers why a value breaks its rule, or null; the section of
// VC DM 2.0 it follows is named beside it. Shared by credentials and presentations.
import { VC_V2_CONTEXT, isDateTimeStamp, timeOf } from '../src/core/credential.js';

type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 120);

// URL code points never include white space, controls or these; the WHATWG parser would
// silently drop or escape some of them, so they are refused before it runs.
const NOT_URL_TEXT = /[\s\x00-\x1f\x7f<>"{}|\\^`]/;

/**
 * Whether a value is an absolute URL (VC DM 2.0 §2, Terminology: a URL as the WHATWG URL
 * Standard defines it): a string the URL parser reads with no base, with a scheme, and no
 * character a URL cannot hold (white space, controls, <>"{}|\^`). `did:`, `urn:` and
 * `https:` URLs pass; `https ://x` and `fake-issuer` do not. Hierarchical schemes
 * (http, https, ws, wss, ftp, file) must name a host.
 */
export function isUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || NOT_URL_TEXT.test(value)) return false;
  if (opaqueUrl(value)) return true;
  // Issuers and contexts repeat across thousands of credentials: remember recent answers.
  const known = recentUrls.get(value);
  if (known !== undefined) return known;
  const answer = parseUrl(value);
  if (recentUrls.size >= 256) recentUrls.clear();
  recentUrls.set(value, answer);
  return answer;
}

const recentUrls = new Map<string, boolean>();

/** The schemes the URL Standard calls special: what follows their colon is parsed as a host and path. */
const SPECIAL_SCHEMES = new Set(['ftp', 'file', 'http', 'https', 'ws', 'wss']);

/**
 * Whether text with no character a URL cannot hold is a URL the parser reads as a scheme and an
 * opaque path (a `urn:`, `did:` or `mailto:` URL), told without it: a scheme (an ASCII letter,
 * then letters, digits, +, - or .) up to the first colon, not a special one, and no / after the
 * colon (which would make an authority to parse). The URL Standard's opaque path state takes
 * any code point after that. False leaves the answer to the parser (parseUrl): every
 * credential names its own subject (urn:...), which a memo of answers never holds.
 */
function opaqueUrl(value: string): boolean {
  const colon = value.indexOf(':');
  if (colon < 1 || value.charCodeAt(colon + 1) === 0x2f /* / */) return false;
  for (let i = 0; i < colon; i++) {
    const c = value.charCodeAt(i);
    const letter = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
    if (!letter && (i === 0 || !((c >= 0x30 && c <= 0x39) || c === 0x2b /* + */ || c === 0x2d /* - */ || c === 0x2e)) /* . */) return false;
  }
  return colon > 5 || !SPECIAL_SCHEMES.has(value.slice(0, colon).toLowerCase());
}

function parseUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (!/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return false;
  if (['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(url.protocol) && (url.host === '' || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value))) return false;
  return true;
}

/**
 * §4.3 Contexts: `@context` MUST be present, an ordered set whose first item is
 * https://www.w3.org/ns/credentials/v2; every later item MUST be a URL or an object
 * (an embedded context).
 */
export function contextProblem(context: unknown): string | null {
  if (context === undefined) return '@context is missing';
  if (!Array.isArray(context)) return `@context is ${show(context)}, not an ordered set (an array)`;
  if (context[0] !== VC_V2_CONTEXT) return `the first @context item is ${show(context[0])}, not ${VC_V2_CONTEXT}`;
  for (let i = 1; i < context.length; i++)
    if (!isUrl(context[i]) && !isObject(context[i])) return `@context item ${i} is ${show(context[i])}: neither a URL nor an object`;
  return null;
}

/** §4.4 Identifiers: an `id`, when present, MUST be a single URL. */
export function idProblem(id: unknown, what: string): string | null {
  if (id === undefined) return null;
  return isUrl(id) ? null : `${what} id ${show(id)} is not a single URL`;
}

/**
 * §4.5 Types: `type` MUST be present, one or more terms or absolute URLs (non-empty strings),
 * and include the base type (VerifiableCredential, VerifiablePresentation).
 */
export function typeProblem(type: unknown, base: string): string | null {
  const types = Array.isArray(type) ? type : [type];
  if (type === undefined || types.length === 0) return 'type is missing';
  if (!types.every((t) => typeof t === 'string' && t !== '')) return `type is ${show(type)}: every type is a term or a URL (a non-empty string)`;
  return types.includes(base) ? null : `type is ${show(type)}, without ${base}`;
}

/** §4.7 Issuer: `issuer` MUST be a URL, or an object whose `id` is a URL. Answers the issuer URL or why not. */
export function issuerOf(issuer: unknown): { id: string } | { problem: string } {
  if (issuer === undefined) return { problem: 'issuer is missing' };
  const id = isObject(issuer) ? issuer.id : issuer;
  if (isUrl(id)) return { id };
  return { problem: isObject(issuer) ? `issuer.id ${show(id)} is not a URL` : `issuer ${show(issuer)} is neither a URL nor an object with a URL id` };
}

/**
 * §4.8 Credential Subject: `credentialSubject` MUST be present; its value is a set of objects
 * (one object, or an array of them), each the subject of one or more claims (an object with
 * no property at all makes none) and each `id`, when present, a URL (§4.4).
 */
export function subjectsOf(subject: unknown): { subjects: Json[] } | { problem: string } {
  if (subject === undefined) return { problem: 'credentialSubject is missing' };
  const list = Array.isArray(subject) ? subject : [subject];
  if (list.length === 0) return { problem: 'credentialSubject is an empty set' };
  for (let i = 0; i < list.length; i++) {
    const s = list[i];
    const where = Array.isArray(subject) ? `credentialSubject[${i}]` : 'credentialSubject';
    if (!isObject(s)) return { problem: `${where} is ${show(s)}, not an object` };
    if (!hasMember(s)) return { problem: `${where} is {}: a subject that makes no claim` };
    const idBad = idProblem(s.id, where);
    if (idBad) return { problem: idBad };
  }
  return { subjects: list as Json[] };
}

/** Whether an object has a member of its own (for...in stops at the first, where Object.keys lists them all). */
function hasMember(o: Json): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

/**
 * §4.9 Validity Period: `validFrom` and `validUntil`, when present, MUST be XML Schema
 * dateTimeStamps, and validFrom MUST NOT be later than validUntil.
 */
export function validityProblem(doc: Json): string | null {
  const fromBad = doc.validFrom !== undefined && !isDateTimeStamp(doc.validFrom);
  const untilBad = doc.validUntil !== undefined && !isDateTimeStamp(doc.validUntil);
  if (fromBad && untilBad) return `not a dateTimeStamp: validFrom ${show(doc.validFrom)}, validUntil ${show(doc.validUntil)}`;
  if (fromBad) return `not a dateTimeStamp: validFrom ${show(doc.validFrom)}`;
  if (untilBad) return `not a dateTimeStamp: validUntil ${show(doc.validUntil)}`;
  if (doc.validFrom !== undefined && doc.validUntil !== undefined && timeOf(doc.validFrom) > timeOf(doc.validUntil))
    return `validFrom ${doc.validFrom} is later than validUntil ${doc.validUntil}`;
  return null;
}

/** §4.13 Verifiable Presentations: `holder`, when present, is a URL or an object whose `id` is a URL. */
export function holderOf(holder: unknown): { id?: string } | { problem: string } {
  if (holder === undefined) return {};
  const id = isObject(holder) ? holder.id : holder;
  if (isUrl(id)) return { id };
  return { problem: `holder ${show(holder)} is neither a URL nor an object with a URL id` };
}
