/**
 * Debian's Chromium (/usr/bin/chromium, installed by scripts/setup; never a browser download) under
 * playwright-core, for the web page's tests and benchmark: headless, a fresh profile, and the flags that
 * keep it from reaching out (without the background-networking ones its connections are refused here).
 * playwright-core is a dev dependency, imported only when a browser is launched.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a fresh profile (--user-data-dir); close() removes the profile too. */
export async function launchChromium(
  options: { acceptDownloads?: boolean } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run \`bash scripts/setup\` (it installs Debian's chromium)`);
  }
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'paramine-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
    acceptDownloads: options.acceptDownloads ?? false,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
