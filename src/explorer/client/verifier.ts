// The verifier's browser build, loaded once, from the node, and only if it is the package's.
// import() takes no integrity, so the verifier is first fetched by a modulepreload link that
// carries the hash this script was built with (scripts/build-explorer.mjs): the browser refuses
// other bytes, and the import then takes the module the preload checked (issue 30: a node
// serving another verifier would otherwise have its own checks shown as the package's). A
// refusal leaves every check "not checked", never verified.
import type * as VerifierModule from '../../../verifier/browser.js';

export type Verifier = typeof VerifierModule;

/** The Subresource Integrity of the package's browser verifier, built in by scripts/build-explorer.mjs. */
declare const AKAS_VERIFIER_INTEGRITY: string;

function preloadVerifier(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const link = document.createElement('link');
    if (!link.relList.supports('modulepreload'))
      return reject(new Error('this browser cannot check the integrity of the verifier it would load (no modulepreload)'));
    link.rel = 'modulepreload';
    link.integrity = AKAS_VERIFIER_INTEGRITY;
    link.addEventListener('load', () => resolve(), { once: true });
    link.addEventListener('error', () => reject(new Error("the verifier this node serves is not the package's (its Subresource Integrity does not match)")), {
      once: true,
    });
    link.href = url;
    document.head.append(link);
  });
}

let verifier: Promise<Verifier> | null = null;

/** The verifier named by the page (body data-verifier), checked against the package's hash. */
export function loadVerifier(): Promise<Verifier> {
  const url = document.body.dataset.verifier;
  if (!url) return Promise.reject(new Error("the verifier's browser build is not on this node"));
  return (verifier ??= preloadVerifier(url).then(() => import(/* @vite-ignore */ url) as Promise<Verifier>));
}
