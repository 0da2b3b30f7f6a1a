// The Verify page: files dropped or chosen and JSON pasted, each recognised by its shape and
// checked with the verifier (bundles, presentations, credentials with their status read from
// this node, log proofs, node reads, proposal judgments, DSSE envelopes and Sigstore bundles;
// anything else hashed), under the keys given (the pinned ones by default, or a PEM key for an
// envelope someone else signed). Each result carries the verdict and the closing line of
// `akas verify` (verifier/report.ts), computed by the verifier, never here.
import type * as VerifierModule from '../../../verifier/browser.js';
import { $, el, type Json } from './dom.js';
import { nodeKeys } from './keys.js';
import { resultCard, type Check, type Report } from './results.js';
import { readStatus } from './status.js';
import { loadVerifier, type Verifier } from './verifier.js';

/** The lists a credential's status is read from, fetched from this node; none when even that failed (the verifier then says status unknown). */
async function statusSources(V: Verifier, credentials: Json[], trust: VerifierModule.IssuerTrust | undefined, issuers: string[]) {
  try {
    return (await readStatus(V, credentials, { trust, issuers })).sources;
  } catch {
    return undefined;
  }
}

/** A DSSE envelope (PROTOCOL 16.4: payload, payloadType, signatures), or a Sigstore bundle by its media type. */
const isEnvelope = (j: Json) => typeof j.payloadType === 'string' && 'payload' in j && Array.isArray(j.signatures);
const isSigstoreBundle = (j: Json) => typeof j.mediaType === 'string' && j.mediaType.startsWith('application/vnd.dev.sigstore.bundle');

/** What a check could not run on (not strict JSON, a key it cannot take), as a report of one failed check. */
const notCheckable = (id: 'input' | 'input.key', what: string, err: Error): Report => ({
  verified: false,
  anchored: true,
  unanchored: [],
  checks: [{ id, layer: 'input', what, valid: false, why: err.message }],
});

async function readInputs(form: HTMLFormElement): Promise<Array<{ name: string; bytes: Uint8Array }>> {
  const out: Array<{ name: string; bytes: Uint8Array }> = [];
  const files = ($('input[type=file]', form) as HTMLInputElement).files;
  for (const f of files ? [...files] : []) out.push({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
  for (const f of dropped) out.push(f);
  const text = ($('textarea', form) as HTMLTextAreaElement).value.trim();
  if (text) out.push({ name: 'pasted JSON', bytes: new TextEncoder().encode(text) });
  return out;
}

let dropped: Array<{ name: string; bytes: Uint8Array }> = [];

/** A knowledge node read or a brief read (PROTOCOL 10.2, 10.3), as akas node/brief --json save them. */
const isNodeRead = (j: Json) =>
  typeof j.evidence === 'object' ||
  (typeof j.path === 'string' && typeof j.kind === 'string' && /^(branch|leaf-)/.test(j.kind)) ||
  (typeof j.brief === 'object' && typeof j.manifest === 'object');

function parseJson(bytes: Uint8Array): Json | null {
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

/** A proposal detail's judgments (akas verify judgments) as checks: the content shown, then each judgment. */
function judgmentChecks(r: VerifierModule.JudgmentsReport): Report {
  const checks: Check[] = [];
  if (r.content) {
    checks.push({
      id: 'content.hash',
      layer: 'content',
      what: `the content shown hashes to the contentSha256 stated${
        r.content.binding === 'store' ? ' (stored before content binding: bound ' + "by the node's store)" : ''
      }`,
      valid: r.content.ok,
      why: r.content.ok ? r.content.contentSha256 : r.content.problems.join('; '),
    } as Check);
  }
  for (const c of r.checks) {
    checks.push(
      {
        id: 'judgment.content',
        layer: 'content',
        what: `${c.agentTag} judged the content shown`,
        valid: c.signed === 'v2' ? c.contentSigned === true : null,
        why:
          c.signed === 'v2'
            ? c.contentSigned
              ? 'signed over its contentSha256 (akas.judgment.v2)'
              : c.problems[0]
            : "not checked: a v1 judgment signs no content: bound by the node's word only",
        subject: c.judgmentId,
      } as Check,
      {
        id: 'judgment.payload',
        layer: 'L2',
        what: `${c.agentTag}: the shown fields are what the judge signed`,
        valid: c.payloadMatches,
        subject: c.judgmentId,
      } as Check,
      { id: 'judgment.signature', layer: 'L2', what: `${c.agentTag}'s Ed25519 signature`, valid: c.signatureValid, subject: c.judgmentId } as Check,
    );
  }
  // A judge's key not tied to the judge by its profile anchors nothing (issue 32): said, not verified.
  return { verified: r.ok && r.anchored, anchored: r.anchored, unanchored: r.unanchored, checks };
}

/** The Verify page's form: drop and choose files, paste JSON, and check them all on submit. */
export function verifyForm(form: HTMLFormElement) {
  const results = $('[data-verify-results]')!;
  const drop = $('[data-drop]', form);
  if (drop) {
    drop.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      drop.classList.add('over');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', async (ev) => {
      ev.preventDefault();
      drop.classList.remove('over');
      const files = (ev as DragEvent).dataTransfer?.files;
      dropped = [];
      for (const f of files ? [...files] : []) dropped.push({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
      drop.querySelector('.muted')!.textContent =
        `${dropped.length} file${dropped.length === 1 ? '' : 's'} dropped: ${dropped.map((d) => d.name).join(', ')}. Press Check.`;
    });
  }
  void nodeKeys().then(
    (k) => {
      // The pinned keys, when this browser has some, are the default to check against.
      ($('[name=issuer]', form) as HTMLInputElement).value = k.issuer;
      ($('[name=logKey]', form) as HTMLInputElement).value = k.logKey;
    },
    () => undefined,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    results.replaceChildren(el('p', { class: 'muted' }, 'Checking…'));
    try {
      const V = await loadVerifier();
      const issuer = ($('[name=issuer]', form) as HTMLInputElement).value.trim();
      const logKey = ($('[name=logKey]', form) as HTMLInputElement).value.trim();
      const expected = ($('[name=sha256]', form) as HTMLInputElement).value.trim();
      const pem = ($('[name=pem]', form) as HTMLTextAreaElement | null)?.value.trim() ?? '';
      const issuerKeys = (await nodeKeys().catch(() => null))?.issuerKeys;
      const inputs = await readInputs(form);
      if (!inputs.length) return results.replaceChildren(el('p', {}, 'Choose or drop a file, or paste JSON, first.'));
      const docs = inputs.map((i) => ({ ...i, json: parseJson(i.bytes) }));
      // Files that are not JSON documents are bytes: a bundle's blobs, or files to hash.
      const blobs = new Map<string, Uint8Array>();
      const bytesOnly = docs.filter(
        (d) =>
          !d.json ||
          !(
            d.json.format ||
            d.json.proof ||
            d.json.entry ||
            d.json.judgments ||
            d.json.type ||
            isNodeRead(d.json) ||
            isEnvelope(d.json) ||
            isSigstoreBundle(d.json)
          ),
      );
      const hashed = await Promise.all(bytesOnly.map(async (d) => ({ d, r: await V.verifyCas(d.bytes, expected || undefined, d.name) })));
      for (const { d, r } of hashed) blobs.set(r.sha256, d.bytes);
      // The issuer keys: the pinned DID, followed through the node's signed rotations (credentials, envelopes).
      const trust = issuer ? await V.trustIssuerKeys(issuer, issuerKeys) : undefined;
      const onIssuer = issuer ? `issuer ${issuer}` : null;
      const cards: HTMLElement[] = [];
      for (const d of docs) {
        try {
          const j = d.json;
          if (j && typeof j.format === 'string' && j.format.startsWith('akas.bundle')) {
            const r = await V.verifyBundle(d.bytes, { issuer: issuer || undefined, issuerKeys, logKey: logKey || undefined, blobs });
            const anchoredOn = [onIssuer, logKey ? `log key ${logKey}` : null].filter(Boolean).join(', ') || null;
            // The status a bundle speaks for is the lists it staples (PROTOCOL 8.7).
            const stapled = r.status
              ? {
                  checked: !r.checks.some((c) => c.id.startsWith('status') && c.valid === null),
                  source: 'stapled' as const,
                  lists:
                    (r.status as { lists?: VerifierModule.StatusSummary['lists'] }).lists ??
                    Object.entries(r.status.asOf).map(([purpose, at]) => ({ purpose, at })),
                }
              : null;
            cards.push(resultCard(V, d.name, 'bundle', r, anchoredOn, stapled));
          } else if (j && (isEnvelope(j) || isSigstoreBundle(j))) {
            // PROTOCOL 16.4: under the PEM given (akas verify dsse --key), else the issuer's keys in their windows (--trust).
            const kind = isEnvelope(j) ? 'dsse' : 'sigstore';
            const signer = pem || trust;
            if (!signer) {
              cards.push(
                resultCard(
                  V,
                  d.name,
                  kind,
                  notCheckable('input.key', 'a key to check the signature with', new Error('give the issuer above, or a PEM key')),
                  null,
                ),
              );
              continue;
            }
            const check = kind === 'dsse' ? V.verifyDsse : V.verifySigstore;
            const r = await check(d.bytes, signer).catch((err: Error) =>
              notCheckable(pem && !(err instanceof V.NotCheckableError) ? 'input.key' : 'input', pem ? 'the key and the file can be read' : 'strict JSON', err),
            );
            cards.push(resultCard(V, d.name, kind, r, pem ? 'the key given (PEM)' : onIssuer));
          } else if (j && V.isPresentation(j)) {
            const carried = ([] as unknown[]).concat(j.verifiableCredential ?? []).filter((c): c is Json => typeof c === 'object' && c !== null);
            const status = await statusSources(V, carried, trust, issuer ? [issuer] : []);
            const r = await V.verifyPresentation(d.bytes, { issuer: issuer || undefined, trust, status });
            cards.push(resultCard(V, d.name, 'presentation', r, onIssuer, r.status ?? null));
          } else if (j?.proof && j.credentialSubject) {
            // Its status, read from this node's lists as akas verify credential --status reads them (PROTOCOL 8.7): unread, it is status unknown.
            const issuers = issuer ? [issuer] : typeof j.issuer === 'string' ? [j.issuer] : [];
            const status = await statusSources(V, [j], trust, issuers);
            const report = await V.verifyCredential(d.bytes, { issuer: issuer || undefined, trust, checkJudgeSignature: true, status });
            cards.push(resultCard(V, d.name, 'credential', report, onIssuer, report.status ?? null));
          } else if (j?.map && j.root && Array.isArray(j.indices)) {
            // akas lookup KEY --json: every entry about a key, proven complete (PROTOCOL 9.10), as akas verify lookup checks it.
            cards.push(resultCard(V, d.name, 'lookup', await V.verifyLookup(j, logKey), logKey ? `log key ${logKey}` : null));
          } else if (j?.entry && j.inclusion) {
            cards.push(resultCard(V, d.name, 'log proof', await V.verifyLogProof(j, logKey), logKey ? `log key ${logKey}` : null));
          } else if (j && isNodeRead(j)) {
            // akas node PATH --json, akas brief ID --json: the same checks as akas verify node.
            const r = await V.verifyNode(d.bytes, { issuer: issuer || undefined, issuerKeys: issuer ? issuerKeys : undefined, logKey: logKey || undefined });
            cards.push(resultCard(V, d.name, 'node', r, onIssuer));
          } else if (j && Array.isArray(j.judgments) && typeof j.proposalId === 'string') {
            cards.push(resultCard(V, d.name, 'proposal judgments', judgmentChecks(await V.verifyProposalJudgments(j)), "the judges' public profiles"));
          } else {
            const h = hashed.find((x) => x.d === d);
            const r = h ? h.r : await V.verifyCas(d.bytes, expected || undefined, d.name);
            cards.push(resultCard(V, `${d.name} (sha256 ${r.sha256}, ${r.bytes} bytes)`, 'file', r, expected ? `the sha256 given` : null));
          }
        } catch (err) {
          // Input the verifier cannot read (not strict JSON: a key twice, a lone surrogate) has no verdict: said on its own card (PROTOCOL 8.8).
          if (!(err instanceof V.NotCheckableError)) throw err;
          cards.push(resultCard(V, d.name, 'input', notCheckable('input', 'the input is strict JSON of the kind checked', err), null));
        }
      }
      results.replaceChildren(...cards);
    } catch (err) {
      results.replaceChildren(el('p', { class: 'v', 'data-state': 'bad' }, el('span', { class: 'v-text' }, `could not check: ${(err as Error).message}`)));
    }
  });
}
