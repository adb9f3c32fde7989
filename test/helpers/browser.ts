/**
 * Headless Chromium for the web page's tests (src/testing/chromium.ts: Debian's, a fresh profile, no
 * network of its own), with its console errors and uncaught page errors collected so a test can assert
 * there were none, and screenshots saved as test artifacts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../src/testing/chromium.js';

/** Screenshots land here (git-ignored), one folder per test file. */
export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors since the last take(). */
  takeErrors(): string[];
  /** The whole page, or with `{ fullPage: false }` what the window shows. */
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(artifactDir: string): Promise<TestBrowser> {
  const browser = await launchChromium({ acceptDownloads: true });
  const { context } = browser;
  const page = context.pages()[0] ?? (await context.newPage());
  let errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  const dir = join(ARTIFACTS, artifactDir);
  mkdirSync(dir, { recursive: true });
  return {
    context,
    page,
    takeErrors() {
      const out = errors;
      errors = [];
      return out;
    },
    async screenshot(name, options = {}) {
      const path = join(dir, `${name}.png`);
      await page.screenshot({ path, fullPage: options.fullPage ?? true });
      return path;
    },
    close: () => browser.close(),
  };
}
