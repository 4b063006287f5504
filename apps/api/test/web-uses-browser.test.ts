// The page.evaluate callbacks run in Chromium, so this file needs the DOM types.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Chromium (playwright-core) over the listening app: the uses facts and README badge on a skill page, the
// /about/metrics page and the empty-index hint, each at a 375 px phone width with nothing wider than the
// screen; screenshots go to $WEB_SCREENSHOTS (a temp dir) for a person to look at.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSession, findChromium, launchBrowser } from '../../../test/support/browser.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { insertSkills, webFixtures } from './web-fixtures.js';

const chromiumFound = await findChromium();
const DEPLOY = 'gh:acme/tools/skills/deploy-runbook';

async function hubOn(database: TestDatabase): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, SEARCH_ENGINE: 'postgres' }),
    { database },
  );
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

/** Widest element beyond the viewport (0 when everything fits). */
async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

describe.skipIf(!chromiumFound.path)('uses and the empty index in Chromium', () => {
  let full: TestDatabase;
  let empty: TestDatabase;
  let hubs: Array<{ app: FastifyInstance; url: string }>;
  let browser: BrowserSession;
  let shots: string;

  beforeAll(async () => {
    full = await createTestDatabase('web_uses_full');
    empty = await createTestDatabase('web_uses_empty');
    await insertSkills(full.db, webFixtures());
    hubs = [await hubOn(full), await hubOn(empty)];
    browser = await launchBrowser(chromiumFound.path as string);
    shots = process.env.WEB_SCREENSHOTS ?? (await mkdtemp(path.join(tmpdir(), 'web-shots-')));
  });

  afterAll(async () => {
    await browser?.close();
    for (const hub of hubs ?? []) await hub.app.close();
    await full?.drop();
    await empty?.drop();
  });

  async function phonePage(url: string, name: string): Promise<Page> {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 375, height: 800 });
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
    const widest = await page.evaluate(() =>
      [...document.querySelectorAll('main *')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth)
        .map((e) => `${e.tagName}.${e.className}`)
        .slice(0, 5),
    );
    expect(widest).toEqual([]);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    return page;
  }

  it('shows uses and the badge on a skill page', async () => {
    const [hub] = hubs;
    for (const n of [1, 2]) {
      await hub?.app.inject({
        method: 'GET',
        url: `/v1/skills/${DEPLOY}`,
        remoteAddress: `198.51.100.${n}`,
      });
    }
    await hub?.app.uses.flush();
    const page = await phonePage(`${hub?.url}/s/${DEPLOY}`, 'skill-uses');
    await expect(page.locator('dd', { hasText: 'this week' }).textContent()).resolves.toContain(
      '2 this week · 2 all time',
    );
    const badgeWidth = await page
      .locator('img[alt="Badge: name and uses this week"]')
      .evaluate((img: HTMLImageElement) => img.naturalWidth);
    expect(badgeWidth).toBeGreaterThan(50);
    await page.close();
  });

  it('explains how uses are counted', async () => {
    const page = await phonePage(`${hubs[0]?.url}/about/metrics`, 'about-metrics');
    await expect(page.locator('h1').textContent()).resolves.toBe('How uses are counted');
    await page.close();
  });

  it('tells an empty hub how to fill its index, also when a search was typed', async () => {
    for (const url of ['/', '/?q=pdf']) {
      const page = await phonePage(`${hubs[1]?.url}${url}`, url === '/' ? 'empty-home' : 'empty-search');
      await expect(page.locator('#empty-index').textContent()).resolves.toBe('This hub has no skills yet');
      await expect(page.locator('main').textContent()).resolves.toContain('npm start -- --demo');
      expect(await page.locator('main').textContent()).not.toContain('No skills match');
      await page.close();
    }
  });
});
