// Verify: drop a credential, a bundle, a log proof, a DSSE envelope or Sigstore bundle, or any
// file; the page checks it in the browser with the verifier's own build (the same verdicts as
// `akas verify`, layer by layer, and the same closing line), offline once loaded, under keys you
// pin here or the ones this node publishes (a PEM key for envelopes others signed).
import { html } from '../html.js';
import { code, page, type Assets } from '../layout.js';

export interface VerifyData {
  issuer: string;
  logKey: string;
}

export function verifyPage(d: VerifyData, assets: Assets): string {
  const body = html`<h1>Verify</h1>
<p class="lede">Drop a judgment credential, a proposal bundle, a saved log entry with its proof, a DSSE envelope or Sigstore bundle \
(<code>akas export ID --format dsse|sigstore</code>), or any file. The checks run in this page with the verifier's browser build \
(WebCrypto Ed25519 and ECDSA P-256, RFC 9162 proofs, JCS), the same checks and verdicts as <code>akas verify</code>; nothing you drop \
is sent anywhere. A credential's status is read from this node's status lists and checked here.</p>
<form class="verify" data-verify-form>
<fieldset><legend>Keys to check against</legend>
<p><label for="v-issuer">Issuer did:key</label><br><input id="v-issuer" name="issuer" class="wide" value="${d.issuer}" maxlength="200" spellcheck="false"></p>
<p><label for="v-logkey">Log key (C2SP verifier key)</label><br><input id="v-logkey" name="logKey" class="wide" value="${d.logKey}" \
maxlength="300" spellcheck="false"></p>
<p class="muted small">Filled in with what this node publishes (or what your browser pinned on your first visit). Paste keys you got \
elsewhere to check against those instead.</p>
<p><label for="v-pem">Signer's public key, SPKI PEM (optional: a DSSE envelope or Sigstore bundle someone else signed, Ed25519 or \
ECDSA P-256; without it, the issuer's keys above)</label><br><textarea id="v-pem" name="pem" rows="3" class="wide" spellcheck="false" \
maxlength="4000"></textarea></p>
</fieldset>
<fieldset><legend>What to check</legend>
<div class="drop" data-drop><p><label for="v-files">Files</label> <input id="v-files" name="files" type="file" multiple></p><p \
class="muted small">or drop them here. A bundle is checked with any other dropped file as the bytes it names (by sha256).</p></div>
<p><label for="v-text">or paste JSON</label><br><textarea id="v-text" name="text" rows="6" class="wide" spellcheck="false"></textarea></p>
<p><label for="v-sha">Expected sha256 of a dropped file (optional)</label><br><input id="v-sha" name="sha256" class="wide" maxlength="64" \
spellcheck="false" pattern="[0-9a-fA-F]{64}"></p>
<p><button type="submit">Check</button></p>
</fieldset>
</form>
<section aria-labelledby="results" aria-live="polite"><h2 id="results">Results</h2><div data-verify-results><p class="muted">Nothing \
checked yet.</p></div></section>
<noscript><p>This page needs JavaScript to check in your browser. Offline, the same checks: ${code(
    'akas verify credential FILE --issuer ' + 'DID',
  )}, ${code('akas verify bundle FILE --issuer DID')}, ${code('akas verify log-proof FILE --log-key KEY')}, ${code(
    'akas verify dsse FILE --key PEM',
  )}, ${code('akas verify sigstore FILE --trust FILE')}, ${code('akas verify cas ' + 'FILE --sha256 HASH')}.</p></noscript>`;
  return page({ title: 'Verify', section: 'verify', assets, body });
}
