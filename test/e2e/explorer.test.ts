// The explorer as the package serves it: the built `akas serve` finds its page script, its
// stylesheet and the verifier's browser build beside its bundle (dist/), and serves them hashed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningNode } from '../helpers/e2e.js';

let node: RunningNode;
beforeAll(async () => {
  node = await startServe();
});
afterAll(() => node?.stop());

describe('akas serve (the built binary)', () => {
  it('serves the explorer at / with its files from the package', async () => {
    const res = await fetch(`${node.url}/`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const page = await res.text();
    const files = [...page.matchAll(/(?:src|href|data-verifier)="(\/explore\/assets\/[a-z-]+\.[0-9a-f]{16}\.(?:js|css))"/g)].map((m) => m[1]);
    expect(files).toHaveLength(3);
    for (const f of files) {
      const asset = await fetch(`${node.url}${f}`);
      expect(asset.status, f).toBe(200);
      expect(asset.headers.get('content-type'), f).toMatch(f.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect((await asset.arrayBuffer()).byteLength, f).toBeGreaterThan(1000);
    }
    expect(node.stderr()).not.toContain('explorer: built files missing');
  });
});
