// Debian's chromium driven by playwright-core (never a browser download), as the browser tests
// launch it: headless, its network chatter off, a fresh profile. Loopback only: the pages a
// test opens are served by the test itself on 127.0.0.1.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/**
 * A browser with a fresh profile (playwright's persistent context: its own --user-data-dir), and
 * a function that closes it and removes the profile; null without chromium (an error in CI).
 */
export async function launchChromium(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> } | null> {
  if (!CHROMIUM) {
    if (process.env.CI === 'true') throw new Error("chromium is not installed (.ci/run installs Debian's chromium)");
    return null;
  }
  const profile = mkdtempSync(join(tmpdir(), 'akas-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: options.viewport ?? { width: 1280, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A page on 127.0.0.1 (port 0) that loads a browser build of the verifier as a module and hands
 * it to the test as window.akas, with the files of `fixtures` under /fixtures/NAME (JSON).
 */
export async function serveVerifierPage(title: string, build: string, fixtures: string): Promise<{ url: string; close: () => Promise<void> }> {
  const page = `<!doctype html><meta charset="utf-8"><title>${title}</title>
<script type="module">import * as akas from '/akas-verify.browser.js'; window.akas = akas;</script>`;
  const server = createServer((req, res) => {
    const p = decodeURIComponent((req.url ?? '/').split('?')[0]);
    if (p === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    const file = p === '/akas-verify.browser.js' ? build : p.startsWith('/fixtures/') ? join(fixtures, p.slice(10).replace(/[/\\]/g, '')) : null;
    if (!file || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/json' }).end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
