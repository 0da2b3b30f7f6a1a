// Debian's chromium driven by playwright-core (never a browser download), as the browser tests
// launch it: headless, its network chatter off, a fresh profile. Loopback only: the pages a
// test opens are served by the test itself on 127.0.0.1.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
