// The work of `akas verify manifest`, loaded only when it runs. A manifest's signature is an
// HMAC-SHA256 under a key only the node holds (L3): no one else can check it, so the node is
// asked (PROTOCOL 10.3, 10.4). What can be checked here, offline, is checked here: that the
// brief in the file hashes to the manifest's contentSha256, and that an artifact's or an
// eval's fields in the file are the ones its manifest signs.
import { createHash } from 'node:crypto';
import { canonicalize } from '../../../src/core/jcs.js';
import { type AkasClient, CliError, type Json } from '../../kit/index.js';

export type ManifestKind = 'brief' | 'artifact' | 'eval';

export interface LocalCheck {
  check: string;
  ok: boolean;
  detail: string;
}

export interface ManifestReport {
  valid: boolean;
  kind: ManifestKind;
  /** Who checked the signature: always the node (an HMAC). */
  signatureCheckedBy: string;
  node: Json;
  /** Checks made here, offline, on what the file carries beside the manifest. */
  local: LocalCheck[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The manifest in a file: a bare manifest, or a node, brief or eval-proposal answer that carries one. */
export function findManifest(doc: unknown): { manifest: Json; kind: ManifestKind; around: Json | null } {
  const around = isObject(doc) && isObject(doc.manifest) ? doc : null;
  const manifest = around ? around.manifest : doc;
  if (!isObject(manifest) || typeof manifest.signature !== 'string') {
    throw new CliError(
      'not_a_manifest',
      'No manifest here: give a manifest, or a node, brief or eval-proposal answer that carries one (its `manifest` field).',
    );
  }
  // An eval manifest names its artifactPath too: the eval proposal id decides first.
  const kind: ManifestKind | null =
    typeof manifest.briefId === 'string'
      ? 'brief'
      : typeof manifest.proposalId === 'string' && manifest.proposalId.startsWith('eprop_')
        ? 'eval'
        : typeof manifest.artifactPath === 'string'
          ? 'artifact'
          : null;
  if (!kind) throw new CliError('not_a_manifest', 'Not a manifest this node signs: it names no briefId, artifactPath or eval proposalId.');
  return { manifest, kind, around };
}

const same = (a: unknown, b: unknown) => {
  try {
    return canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
};

/** What the file carries beside the manifest, checked against it (offline). */
export function localChecks(kind: ManifestKind, manifest: Json, around: Json | null): LocalCheck[] {
  if (!around) return [];
  if (kind === 'brief' && isObject(around.brief)) {
    const actual = createHash('sha256').update(canonicalize(around.brief)).digest('hex');
    const ok = actual === manifest.contentSha256;
    return [
      {
        check: 'content',
        ok,
        detail: ok
          ? 'the brief in the file hashes to contentSha256'
          : `the brief in the file hashes to ${actual}, not contentSha256 ${manifest.contentSha256}: it was changed`,
      },
    ];
  }
  if (kind === 'artifact' && isObject(around.payload)) {
    const fields = ['uri', 'mediaType', 'sha256', 'artifactKind', 'provenance', 'bytes'];
    const differ = fields.filter((f) => !same(around.payload[f], manifest[f]));
    const pathDiffers = typeof around.path === 'string' && around.path !== manifest.artifactPath;
    const ok = differ.length === 0 && !pathDiffers;
    return [
      {
        check: 'payload',
        ok,
        detail: ok
          ? 'the payload in the file is what the manifest signs'
          : `the file's ${[...differ.map((f) => `payload.${f}`), ...(pathDiffers ? ['path'] : [])].join(', ')} differ from the manifest`,
      },
    ];
  }
  if (kind === 'eval' && isObject(around.payload)) {
    const differ = Object.keys(around.payload).filter((f) => f in manifest && !same(around.payload[f], manifest[f]));
    const ok = differ.length === 0;
    return [
      {
        check: 'payload',
        ok,
        detail: ok ? 'the eval in the file is what the manifest signs' : `the file's ${differ.map((f) => `payload.${f}`).join(', ')} differ from the manifest`,
      },
    ];
  }
  return [];
}

/** Asks the node about the manifest, and checks what the file carries beside it. */
export async function checkManifest(client: AkasClient, doc: unknown): Promise<ManifestReport> {
  const { manifest, kind, around } = findManifest(doc);
  const local = localChecks(kind, manifest, around);
  const route = kind === 'artifact' ? '/api/knowledge/artifact/verify' : '/api/knowledge/verify';
  const node = await client.post<Json>(route, { manifest });
  return { valid: node.valid === true && local.every((c) => c.ok), kind, signatureCheckedBy: client.url(route), node, local };
}

/** What a manifest is about, in a few words. */
export function subject(kind: ManifestKind, m: Json): string {
  if (kind === 'brief') return `brief manifest of ${m.briefId} (level ${m.level}, version ${m.version})`;
  if (kind === 'artifact') return `artifact manifest of ${m.artifactPath} (sha256 ${String(m.sha256).slice(0, 16)}…)`;
  return `eval manifest of ${m.proposalId} (${m.metric} ${m.score} on ${m.artifactPath})`;
}
