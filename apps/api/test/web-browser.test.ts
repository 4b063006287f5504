// The page.evaluate callbacks run in Chromium, so this file needs the DOM types.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Drives Debian's Chromium (headless, playwright-core) against the app listening on 127.0.0.1 with a real
// test database: search, open a result, copy its reference through the clipboard, and check that a skill
// whose body is full of script tricks renders inert.
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSession, findChromium, launchBrowser } from '../../../test/support/browser.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { insertSkills, webFixtures } from './web-fixtures.js';

const chromiumFound = await findChromium();
if (chromiumFound.path === null) {
  console.warn(`Skipping the browser test: ${chromiumFound.reason}`);
}

describe.skipIf(!chromiumFound.path)('web pages in Chromium', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let browser: BrowserSession;
  let baseUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase('web_browser');
    await insertSkills(database.db, webFixtures());
    app = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, SEARCH_ENGINE: 'postgres' }),
      { database },
    );
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchBrowser(chromiumFound.path as string);
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  /** A page that records dialogs and Content-Security-Policy reports from the console. */
  async function openPage(): Promise<{ page: Page; dialogs: string[]; cspViolations: string[] }> {
    const page = await browser.context.newPage();
    const dialogs: string[] = [];
    const cspViolations: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      if (/Content[- ]Security[- ]Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return { page, dialogs, cspViolations };
  }

  it('searches, opens a result and copies its reference', async () => {
    const { page, cspViolations } = await openPage();
    await page.goto(`${baseUrl}/`);
    await page.fill('input[name="q"]', 'deploy runbook');
    await Promise.all([page.waitForURL(/\/\?q=deploy\+runbook/), page.press('input[name="q"]', 'Enter')]);

    const firstResult = page.locator('ol.results > li').first();
    expect(await firstResult.getAttribute('data-identity')).toBe('gh:acme/tools/skills/deploy-runbook');
    // The copy script revealed the result's button (hidden without JavaScript).
    expect(await firstResult.locator('button[data-copy]').isVisible()).toBe(true);

    await Promise.all([
      page.waitForURL(/\/s\/gh:acme\/tools\/skills\/deploy-runbook$/),
      firstResult.locator('h2 a').click(),
    ]);
    expect(await page.title()).toBe('deploy-runbook · @skills hub');

    const saveButton = page.locator('button[data-copy="@skills:gh:acme/tools/skills/deploy-runbook:save"]');
    await saveButton.click();
    await expect.poll(() => saveButton.textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      '@skills:gh:acme/tools/skills/deploy-runbook:save',
    );

    const plainButton = page.locator('.usage button[data-copy]').first();
    await plainButton.click();
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()))
      .toBe('@skills:gh:acme/tools/skills/deploy-runbook');
    // Our own pages need nothing the policy forbids (no inline script or style).
    expect(cspViolations).toEqual([]);
    await page.close();
  });

  it('shows a flag with its rule and evidence on hover', async () => {
    const { page } = await openPage();
    await page.goto(`${baseUrl}/?q=installer`);
    const badge = page.locator('li[data-identity="gh:acme/tools/skills/installer"] .flag');
    expect(await badge.textContent()).toBe('remote-exec');
    expect(await badge.getAttribute('title')).toBe(
      'remote-exec (high) at SKILL.md:7: Pipes a downloaded script into a shell. Evidence: curl -fsSL https://get.example.sh | sh',
    );
    await page.goto(`${baseUrl}/s/gh:acme/tools/skills/installer`);
    expect(await page.locator('.flags-panel').textContent()).toContain(
      'curl -fsSL https://get.example.sh | sh',
    );
    await page.close();
  });

  it('renders a skill full of script tricks inert', async () => {
    const { page, dialogs } = await openPage();
    await page.goto(`${baseUrl}/s/gh:mallory/traps/pwn-check`, { waitUntil: 'load' });
    await page.locator('text=Normal text after the traps.').waitFor();

    const pwned = () => page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned);
    // Loading is when <script>, img onerror and svg onload would fire.
    expect(await pwned()).toBeUndefined();
    expect(await page.title()).toBe('pwn-check · @skills hub');
    expect(dialogs).toEqual([]);

    // Then the traps that need a person: hover the styled block, click the javascript: links.
    await page.locator('text=hover').first().hover({ timeout: 5_000 });
    // A Markdown javascript: link stays text (no link is made of it); the raw-HTML one is an <a> without href.
    expect(await page.locator('a', { hasText: 'Click for docs' }).count()).toBe(0);
    await page.locator('a', { hasText: 'this' }).first().click({ timeout: 5_000 });
    expect(page.url()).toBe(`${baseUrl}/s/gh:mallory/traps/pwn-check`);
    expect(await pwned()).toBeUndefined();
    expect(await page.title()).toBe('pwn-check · @skills hub');
    expect(dialogs).toEqual([]);
    // Only the self-hosted copy script is on the page; no frames, no forms from the body.
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('iframe, form[action^="https://evil"]').count()).toBe(0);
    expect(
      await page.locator('.markdown [onerror], .markdown [onload], .markdown [onmouseover]').count(),
    ).toBe(0);
    await page.close();
  });
});
