// Issue 30, finding 8: the explorer's script is the node's word. The pinned keys protect a
// reader from forged data, not from a node serving another page script or verifier. Now, over
// real HTTP against a node listening on 127.0.0.1: the pages' script and stylesheet tags carry
// Subresource Integrity matching the bytes served, the page script carries the verifier's (it
// loads it only through a modulepreload with that hash), and `akas node-keys` (in-process CLI)
// names the sha256 of this package's files and whether the node serves the same bytes.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

const ROOT = new URL('../../', import.meta.url);
const FILES = ['dist/explorer/explorer.js', 'dist/explorer/explorer.css', 'dist/akas-verify.browser.js'];
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sri = (b: Buffer) => `sha384-${createHash('sha384').update(b).digest('base64')}`;
const packageFile = (f: string) => readFileSync(new URL(f, ROOT));

let h: CliHarness;
beforeAll(async () => {
  h = await cliHarness();
});
afterAll(async () => h?.close());

const get = async (url: string) => {
  const res = await fetch(url, { headers: { accept: 'text/html' } });
  expect(res.status, url).toBe(200);
  return Buffer.from(await res.arrayBuffer());
};

/** The script, stylesheet and verifier a page names, with the integrity on its tags. */
function tagsOf(html: string) {
  const script = /<script type="module" src="([^"]+)" integrity="([^"]+)"><\/script>/.exec(html);
  const style = /<link rel="stylesheet" href="([^"]+)" integrity="([^"]+)">/.exec(html);
  const verifier = /data-verifier="([^"]+)"/.exec(html);
  return { script: script && { url: script[1], integrity: script[2] }, style: style && { url: style[1], integrity: style[2] }, verifier: verifier?.[1] };
}

describe('finding 8: Subresource Integrity on the explorer, and the hashes akas node-keys names', () => {
  it("puts on every page's script and stylesheet tags the integrity of the bytes served, and the script carries the verifier's", async () => {
    for (const path of ['/', '/explore/tree', '/explore/verify', '/explore/proposals/cprop_0000000000000000']) {
      const res = await fetch(`${h.baseUrl}${path}`, { headers: { accept: 'text/html' } });
      const html = await res.text();
      const tags = tagsOf(html);
      expect(tags.script, path).not.toBeNull();
      expect(tags.style, path).not.toBeNull();
      expect(tags.verifier, path).toBeDefined();
      const [js, css, verifier] = await Promise.all([get(h.baseUrl + tags.script!.url), get(h.baseUrl + tags.style!.url), get(h.baseUrl + tags.verifier!)]);
      expect(tags.script!.integrity, path).toBe(sri(js));
      expect(tags.style!.integrity, path).toBe(sri(css));
      // The verifier is loaded by the script alone, through a modulepreload carrying this hash.
      expect(js.toString('utf8'), path).toContain(JSON.stringify(sri(verifier)));
      expect(js.toString('utf8')).toContain('modulepreload');
      // The policy still allows no inline script and scripts from the node only.
      expect(res.headers.get('content-security-policy'), path).toMatch(/script-src 'self'(;|$)/);
    }
    // The bytes served are the package's.
    const tags = tagsOf((await get(`${h.baseUrl}/`)).toString('utf8'));
    expect(sha256(await get(h.baseUrl + tags.script!.url))).toBe(sha256(packageFile('dist/explorer/explorer.js')));
    expect(sha256(await get(h.baseUrl + tags.verifier!))).toBe(sha256(packageFile('dist/akas-verify.browser.js')));
  });

  it('akas node-keys names the sha256 of dist/explorer/* and the browser verifier, matching the files, and says the node serves the same', async () => {
    const j = await h.akas(['--json', 'node-keys']);
    expect(j.code, j.stderr).toBe(0);
    const { explorer, issuer } = j.json();
    expect(issuer.current).toBe(h.node.keys.issuer.did);
    expect(explorer.files.map((f: { file: string }) => f.file)).toEqual(FILES);
    for (const f of explorer.files) {
      expect(f.sha256, f.file).toBe(sha256(packageFile(f.file)));
      expect(f.integrity, f.file).toBe(sri(packageFile(f.file)));
      expect(f.served, f.file).toMatchObject({ sha256: f.sha256, same: true });
    }
    // The build's own record says the same.
    const record = JSON.parse(packageFile('dist/explorer/integrity.json').toString('utf8')).files;
    for (const f of explorer.files) expect(record[f.file], f.file).toEqual({ sha256: f.sha256, integrity: f.integrity });
    const human = await h.akas(['node-keys']);
    for (const file of FILES) expect(human.stdout).toMatch(new RegExp(`${file.replace(/\./g, '\\.')}\\s+${sha256(packageFile(file))}  served: the same`));
  });

  it("akas node-keys says so when a node serves a verifier other than the package's", async () => {
    // In front of the node, a pass-through that serves the verifier with one line added.
    const altered: Server = createServer(async (req, res) => {
      const upstream = await fetch(`${h.baseUrl}${req.url}`, { headers: { accept: String(req.headers.accept ?? '*/*') } });
      let body = Buffer.from(await upstream.arrayBuffer());
      if (req.url?.includes('/akas-verify.')) body = Buffer.concat([body, Buffer.from('\n// served by someone else\n')]);
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    });
    await new Promise<void>((resolve) => altered.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(altered.address() as AddressInfo).port}`;
      const j = await h.akas(['--json', '--base-url', url, 'node-keys']);
      expect(j.code, j.stderr).toBe(0);
      const files = j.json().explorer.files as Array<{ file: string; served: { same: boolean; sha256: string } }>;
      expect(files.map((f) => [f.file, f.served.same])).toEqual([
        ['dist/explorer/explorer.js', true],
        ['dist/explorer/explorer.css', true],
        ['dist/akas-verify.browser.js', false],
      ]);
      const human = await h.akas(['--base-url', url, 'node-keys']);
      expect(human.stdout).toMatch(/dist\/akas-verify\.browser\.js\s+[0-9a-f]{64} {2}served: OTHER BYTES \([0-9a-f]{64}\): not this package's/);
    } finally {
      await new Promise<void>((resolve) => altered.close(() => resolve()));
    }
  });
});
