// The attestation catalog (PROTOCOL 9.1): each kind with its tier, version, schema URL and what
// it attests, as JSON (/credentials/index.json) and as a page (/credentials).
import { attestationKinds } from '../../domain/log/index.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The catalog as served at /credentials/index.json. */
export function catalogView(origin: string) {
  return {
    schemaVersion: '1.0.0',
    dryRunUrl: `${origin}/api/credentials/dry-run`,
    attestUrl: `${origin}/api/attestations`,
    kinds: [...attestationKinds().values()].map((k) => ({
      kind: k.kind,
      tier: k.tier,
      schemaVersion: k.schemaVersion,
      schemaUrl: `${origin}/credentials/schemas/${k.kind}.json`,
      description: k.description,
    })),
  };
}

/** The catalog as a page (/credentials). */
export function catalogPage(origin: string): string {
  const rows = catalogView(origin)
    .kinds.map(
      (k) =>
        `<tr><td><a href="/credentials/schemas/${escapeHtml(k.kind)}.json"><code>${escapeHtml(k.kind)}</code></a></td><td>` +
        `${escapeHtml(k.tier)}</td><td>${escapeHtml(k.schemaVersion)}</td><td>${escapeHtml(k.description)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>akas attestation kinds</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
code{font-size:.9em}
</style>
</head><body>
<h1>Attestation kinds</h1>
<p>Each kind has a JSON Schema. Check a candidate with <code>POST /api/credentials/dry-run {"kind", "body"}</code> (no key needed),
record one with <code>POST /api/attestations {"kind", "body"}</code> (Bearer, calibrated). Every attestation is an entry of this node's
transparency log: <code>GET /api/attestations/{id}</code> answers it with its inclusion proof and a signed checkpoint.
The same list as JSON: <a href="/credentials/index.json">/credentials/index.json</a>.</p>
<table><thead><tr><th>kind</th><th>tier</th><th>version</th><th>what it attests</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}
