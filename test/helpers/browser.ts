/**
 * Headless Chromium for the web page's tests: Debian's /usr/bin/chromium (installed by scripts/setup)
 * driven by playwright-core, with a fresh profile and the flags that keep it from reaching out (without
 * the background-networking ones its connections are refused here). Console errors and uncaught page
 * errors are collected so a test can assert there were none.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

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
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run \`bash scripts/setup\` (it installs Debian's chromium)`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'paramine-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
    acceptDownloads: true,
  });
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
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
