// The page.evaluate callbacks run in Chromium, so this file needs the DOM types.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Chromium (playwright-core) over the listening app with the browse data: a person browses home -> owner ->
// repository -> skill, searches with filters, searches by keyboard alone, and every page type fits a 375 px
// phone with nothing wider than the screen. Screenshots of each page type, desktop and phone, go to
// $WEB_SCREENSHOTS or the git-ignored .screenshots/web/ for a person to look at; under CI (nobody looks, and
// the 56 PNGs took 13 s of this file's 51 s on the serial path) only when WEB_SCREENSHOTS asks.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSession, findChromium, launchBrowser } from '../../../test/support/browser.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedBrowseFixtures } from './web-browse-fixtures.js';

const chromiumFound = await findChromium();
if (chromiumFound.path === null) console.warn(`Skipping the browse browser test: ${chromiumFound.reason}`);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every page type, with the status it answers. */
const PAGE_TYPES: ReadonlyArray<{ name: string; url: string; status: number }> = [
  { name: 'home', url: '/', status: 200 },
  { name: 'search', url: '/?q=deploy&source=gh', status: 200 },
  { name: 'owner', url: '/o/acme', status: 200 },
  { name: 'namespace', url: '/n/pubteam', status: 200 },
  { name: 'repository', url: '/r/acme/tools', status: 200 },
  { name: 'collection', url: '/s/hub:pubteam/guides', status: 200 },
  { name: 'menu', url: '/s/gh:acme/tools', status: 200 },
  { name: 'over-cap', url: '/s/gh:bigco/mono/packs', status: 422 },
  { name: 'skill', url: '/s/gh:acme/tools/skills/deploy-runbook', status: 200 },
  { name: 'flagged-skill', url: '/s/gh:acme/tools/skills/installer', status: 200 },
  { name: 'gone-skill', url: '/s/gh:acme/tools/skills/legacy-deploy', status: 410 },
  { name: 'not-found', url: '/s/gh:nobody/nothing/here', status: 404 },
  { name: 'about-metrics', url: '/about/metrics', status: 200 },
  { name: 'docs', url: '/docs', status: 200 },
];

describe.skipIf(!chromiumFound.path)('browsing in Chromium', () => {
  let hub: TestHub;
  let browser: BrowserSession;
  let baseUrl: string;
  let shots: string | undefined;

  beforeAll(async () => {
    hub = await createTestHub('web_browse_browser');
    await seedBrowseFixtures(hub.app, hub.db.db);
    baseUrl = await hub.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchBrowser(chromiumFound.path as string);
    shots =
      process.env.WEB_SCREENSHOTS ?? (process.env.CI ? undefined : path.join(ROOT, '.screenshots', 'web'));
    if (shots) await mkdir(shots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.close();
  });

  async function open(url: string, width = 1280): Promise<Page> {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${baseUrl}${url}`);
    return page;
  }

  it('browses home -> owner -> repository -> skill by links', async () => {
    const page = await open('/');
    await Promise.all([
      page.waitForURL(/\/o\/acme$/),
      page.locator('#by-owner ~ ol a', { hasText: 'gh:acme' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).toBe('gh:acme');
    await Promise.all([
      page.waitForURL(/\/s\/gh:acme\/tools$/),
      page.locator('#containers ~ ol a', { hasText: /^tools$/ }).click(),
    ]);
    expect(await page.locator('h1').textContent()).toBe('gh:acme/tools');
    await Promise.all([
      page.waitForURL(/\/s\/gh:acme\/tools\/skills\/deploy-runbook$/),
      page.locator('ul.menu a', { hasText: 'deploy-runbook' }).click(),
    ]);
    expect(await page.title()).toBe('deploy-runbook · @skills hub');
    await expect(page.locator('#history-title').textContent()).resolves.toContain('Revision history (1)');
    await page.close();
  });

  it('searches with the namespace and source filters', async () => {
    const page = await open('/');
    await page.locator('details.filters summary').click();
    await page.fill('#filter-namespace', 'pubteam');
    await page.selectOption('#source', 'hub');
    await page.fill('#q', 'guide');
    await Promise.all([page.waitForURL(/namespace=pubteam/), page.press('#q', 'Enter')]);
    const identities = await page
      .locator('ol.results > li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-identity')));
    expect(identities.length).toBeGreaterThan(0);
    for (const identity of identities) expect(identity).toMatch(/^hub:pubteam\/guides/);
    // The filters stay open and filled on the results page, and clearing them is one link.
    expect(await page.locator('details.filters').getAttribute('open')).toBe('');
    expect(await page.inputValue('#filter-namespace')).toBe('pubteam');
    await page.locator('a', { hasText: 'clear filters' }).click();
    await page.waitForURL((url) => !url.search.includes('namespace='));
    await page.close();
  });

  it('searches and opens a result by keyboard alone', async () => {
    const page = await open('/');
    // The search box has the focus on arrival; Tab reaches the source, the button and the filters in order.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('q');
    await page.keyboard.type('rollback');
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      order.push(
        await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName || ''),
      );
    }
    expect(order).toEqual(['source', 'BUTTON', 'SUMMARY']);
    await page.keyboard.press('Enter');
    expect(await page.locator('details.filters').getAttribute('open')).toBe('');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-owner');
    await page.keyboard.type('acme');
    await Promise.all([page.waitForURL(/q=rollback.*owner=acme/), page.keyboard.press('Enter')]);
    // The first Tab on a new page offers to skip the header; following it lands in the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // Tab on until the first result's link has the focus, then follow it.
    let focused = '';
    for (let i = 0; i < 40 && !focused.includes('/s/gh:acme/tools/skills/rollback'); i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => (document.activeElement as HTMLAnchorElement | null)?.href ?? '');
    }
    expect(focused).toContain('/s/gh:acme/tools/skills/rollback');
    // The focus is visible: the outline the stylesheet draws for keyboard focus.
    const outline = await page.evaluate(
      () => getComputedStyle(document.activeElement as Element).outlineStyle,
    );
    expect(outline).toBe('solid');
    await Promise.all([
      page.waitForURL(/\/s\/gh:acme\/tools\/skills\/rollback$/),
      page.keyboard.press('Enter'),
    ]);
    await page.close();
  });

  it('reads the feeds as well-formed Atom', async () => {
    const page = await open('/');
    const hrefs = await page
      .locator('link[rel="alternate"][type="application/atom+xml"]')
      .evaluateAll((links) => links.map((l) => l.getAttribute('href')));
    expect(hrefs).toEqual(['/feed.xml']);
    for (const feed of ['/feed.xml', '/o/acme/feed.xml', '/n/pubteam/feed.xml']) {
      const answer = await page.request.get(`${baseUrl}${feed}`);
      expect(answer.headers()['content-type'], feed).toBe('application/atom+xml; charset=utf-8');
      // The page's policy allows no fetch, so the feed is read by the test and parsed by the browser's XML parser.
      const parsed = await page.evaluate(
        (text) => {
          const doc = new DOMParser().parseFromString(text, 'application/xml');
          const ns = 'http://www.w3.org/2005/Atom';
          return {
            error: doc.querySelector('parsererror')?.textContent ?? null,
            root: doc.documentElement.namespaceURI,
            entries: doc.getElementsByTagNameNS(ns, 'entry').length,
            complete: [...doc.getElementsByTagNameNS(ns, 'entry')].every((e) =>
              ['id', 'title', 'updated', 'link'].every(
                (tag) => e.getElementsByTagNameNS(ns, tag).length === 1,
              ),
            ),
          };
        },
        await answer.text(),
      );
      expect(parsed, feed).toMatchObject({
        error: null,
        root: 'http://www.w3.org/2005/Atom',
        complete: true,
      });
      expect(parsed.entries, feed).toBeGreaterThan(0);
    }
    await page.close();
  });

  it('labels every control, orders headings and keeps text contrast at AA, light and dark, on our page types', async () => {
    // /docs is the API reference's own page (Swagger UI), checked for width only.
    // One tab per colour scheme, sent to each page type in turn (a new tab costs about 0.3 s here).
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await browser.context.newPage();
      await page.emulateMedia({ colorScheme });
      for (const { url } of PAGE_TYPES.filter((p) => p.name !== 'docs')) {
        await page.goto(`${baseUrl}${url}`);
        const report = await page.evaluate(() => {
          const unlabelled = [
            ...document.querySelectorAll('input:not([type=hidden]), select, button, summary'),
          ]
            .filter((el) => {
              if ((el as HTMLElement).hidden) return false;
              const id = el.getAttribute('id');
              const label = id ? document.querySelector(`label[for="${id}"]`)?.textContent?.trim() : '';
              return !(label || el.getAttribute('aria-label') || el.textContent?.trim());
            })
            .map((el) => el.outerHTML.slice(0, 80));
          // The skill's own Markdown body keeps its author's headings; the page's outline is ours.
          const levels = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
            .filter((h) => !h.closest('.markdown'))
            .map((h) => Number(h.tagName[1]));
          const jumps = levels.filter((level, i) => i > 0 && level > (levels[i - 1] as number) + 1);
          const luminance = (rgb: number[]) => {
            const [r, g, b] = rgb.map((v) => {
              const c = v / 255;
              return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
            }) as [number, number, number];
            return 0.2126 * r + 0.7152 * g + 0.0722 * b;
          };
          const parse = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
          const background = (el: Element | null): number[] => {
            for (let e = el; e; e = e.parentElement) {
              const c = parse(getComputedStyle(e).backgroundColor);
              if (c.length >= 3 && (c[3] ?? 1) > 0) return c.slice(0, 3);
            }
            return [255, 255, 255];
          };
          const lowContrast: string[] = [];
          for (const el of document.querySelectorAll('body *')) {
            const text = [...el.childNodes].some(
              (n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== '',
            );
            if (!text || el.getClientRects().length === 0) continue;
            const style = getComputedStyle(el);
            const fg = luminance(parse(style.color).slice(0, 3));
            const bg = luminance(background(el));
            const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
            const large =
              Number.parseFloat(style.fontSize) >= 24 ||
              (Number.parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
            if (ratio < (large ? 3 : 4.5))
              lowContrast.push(`${el.tagName.toLowerCase()}.${el.className} ${ratio.toFixed(2)}`);
          }
          return {
            unlabelled,
            h1: levels.filter((l) => l === 1).length,
            jumps,
            lowContrast: lowContrast.slice(0, 5),
          };
        });
        expect(report, `${url} (${colorScheme})`).toEqual({
          unlabelled: [],
          h1: 1,
          jumps: [],
          lowContrast: [],
        });
      }
      await page.close();
    }
  });

  it('fits every page type on a 375 px screen, and screenshots each at both widths', async () => {
    // One tab per width, sent to each page type in turn (a fresh document each time).
    for (const width of [1280, 375]) {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      for (const { name, url, status } of PAGE_TYPES) {
        const res = await page.goto(`${baseUrl}${url}`);
        expect(res?.status(), url).toBe(status);
        if (shots) {
          await page.screenshot({ path: path.join(shots, `${name}-${width}.png`), fullPage: true });
          // The first screenful as well, at full resolution, for reading the details.
          await page.screenshot({ path: path.join(shots, `${name}-${width}-top.png`) });
        }
        // Table headers are single words: none is split over lines (a column squashed to a letter or two).
        const splitHeaders = await page.evaluate(() =>
          [...document.querySelectorAll('th')]
            .filter((th) => th.getBoundingClientRect().width > 1)
            .filter((th) => {
              const range = document.createRange();
              range.selectNodeContents(th);
              return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
            })
            .map((th) => th.textContent),
        );
        expect(splitHeaders, `${url} at ${width}`).toEqual([]);
        if (width === 375) {
          const wider = await page.evaluate(() =>
            [...document.querySelectorAll('body *')]
              .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
              .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
              .slice(0, 5),
          );
          expect(wider, url).toEqual([]);
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          expect(overflow, url).toBeLessThanOrEqual(0);
          // Nothing squashed to a sliver: every shown table cell with text is at least 4 characters wide.
          const slivers = await page.evaluate(() =>
            [...document.querySelectorAll('td, th')]
              .filter((c) => {
                if (c.getClientRects().length === 0) return false;
                const width = c.getBoundingClientRect().width;
                return (c.textContent ?? '').trim().length > 3 && width < 40;
              })
              .map((c) => (c.textContent ?? '').trim().slice(0, 20)),
          );
          expect(slivers, url).toEqual([]);
        }
      }
      await page.close();
    }
    // 14 page types x 2 widths, with 2 screenshots each: about 20 s on a quiet machine; a loaded 2-core one took
    // 60 s when each page had a tab of its own.
  }, 180_000);
});
