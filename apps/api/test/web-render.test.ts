import { readFileSync } from 'node:fs';
import { parseIdentity } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { COPY_SCRIPT, STYLESHEET } from '../src/web/assets/index.js';
import { flagTitle } from '../src/web/components.js';
import { renderFeed } from '../src/web/feed.js';
import { formatBytes, shellQuote } from '../src/web/format.js';
import { escapeHtml, html } from '../src/web/html.js';
import { CONTENT_SECURITY_POLICY } from '../src/web/layout.js';
import { MAX_RENDERED_MARKDOWN, renderMarkdown } from '../src/web/markdown.js';
import { renderErrorPage } from '../src/web/pages/error-page.js';
import { renderMenuPage, subcollectionsOf } from '../src/web/pages/menu-page.js';
import { renderSearchPage } from '../src/web/pages/search-page.js';
import { renderSkillPage, resolveInside } from '../src/web/pages/skill-page.js';
import { skillPageUrl } from '../src/web/urls.js';
import type { SearchResultView, SkillPageModel } from '../src/web/view-models.js';

const HOSTILE = `<script>window.__pwned = 1</script><img src=x onerror="document.title='pwned'">"'\`&`;

/** Every <script> tag in a page; only the self-hosted copy script may appear. */
function scriptTags(page: string): string[] {
  return page.match(/<script\b[^>]*>/gi) ?? [];
}

/** Attributes that would run code if a browser saw them as markup. */
function eventHandlerAttributes(page: string): string[] {
  return page.match(/<[^>]+\son[a-z]+\s*=/gi) ?? [];
}

function assertInert(page: string): void {
  expect(scriptTags(page)).toEqual([`<script src="${COPY_SCRIPT.url}" defer>`]);
  expect(eventHandlerAttributes(page)).toEqual([]);
  expect(page).not.toMatch(/href\s*=\s*["']?\s*javascript:/i);
  expect(page).not.toContain('<iframe');
  expect(page).not.toMatch(/<[^>]+\sstyle\s*=/i);
}

const skill: SkillPageModel = {
  identity: 'gh:acme/tools/skills/deploy runbook',
  revision: 'a'.repeat(40),
  name: 'deploy-runbook',
  description: `Deploys things ${HOSTILE}`,
  frontmatter: { name: 'deploy-runbook', description: HOSTILE, metadata: { owner: '<b>ops</b>' } },
  body: [
    '# Runbook',
    '',
    'See [the script](scripts/run.sh), [outside](../../etc/passwd) and [site](https://example.com/a).',
    '',
    '<script>window.__pwned = 1; document.title = "pwned"</script>',
    '<img src="https://example.com/x.png" onerror="window.__pwned = 2">',
    '',
    '[click me](javascript:window.__pwned=3) <a href="JaVaScRiPt:alert(1)">x</a> [enc](jav&#x61;script:alert(1))',
    '',
    '<iframe src="https://evil.example"></iframe><div style="position:fixed" onclick="x()">styled</div>',
    '',
    '```sh',
    'echo "<b>not bold</b>"',
    '```',
  ].join('\n'),
  files: [
    { path: 'SKILL.md', size: 2048, sha256: 'b'.repeat(64) },
    { path: 'scripts/run.sh', size: 120, sha256: 'c'.repeat(64) },
  ],
  flags: [
    {
      rule: 'remote-exec',
      severity: 'high',
      message: 'Pipes a download into a shell',
      file: 'SKILL.md',
      line: 12,
      evidence: 'curl https://x.sh | sh "<script>"',
    },
  ],
  warnings: ['name-folder-mismatch'],
  stars: 1234,
  descriptionTokens: 17,
  bodyTokens: 230,
  lastSeen: '2026-11-01T10:00:00Z',
};

function result(overrides: Partial<SearchResultView> = {}): SearchResultView {
  return {
    kind: 'skill',
    identity: 'gh:acme/tools/skills/deploy',
    name: 'deploy',
    description: 'Deploy the app',
    source: 'gh',
    repository: 'acme/tools',
    path: 'skills/deploy',
    revision: 'r1',
    stars: 42,
    descriptionTokens: 5,
    bodyTokens: 300,
    flags: [],
    warnings: [],
    ...overrides,
  };
}

describe('html template', () => {
  it('escapes interpolated text but keeps nested fragments', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${`"x" & 'y'`}">${inner}${HOSTILE}</p>`.value).toBe(
      `<p title="&quot;x&quot; &amp; &#39;y&#39;"><b>&lt;i&gt;</b>${escapeHtml(HOSTILE)}</p>`,
    );
    expect(html`${[1, 'a<', null, undefined, false]}`.value).toBe('1a&lt;');
  });
});

describe('renderMarkdown', () => {
  it('drops scripts, event handlers, frames, inline styles and javascript: URLs', () => {
    const out = renderMarkdown(skill.body).value;
    expect(out).toContain('<h1>Runbook</h1>');
    expect(out).not.toMatch(/<script|onerror|onclick|<iframe|style=|__pwned = 1/i);
    expect(out).not.toMatch(/href="[^"]*script:/i);
    // A javascript: link is not made a link at all: its Markdown stays text.
    expect(out).toContain('[click me](javascript:window.__pwned=3)');
    expect(out).not.toMatch(/<a[^>]*>click me/);
    // A raw-HTML image of another site is dropped: nothing loads from third parties when the page opens.
    expect(out).not.toContain('<img');
    expect(out).toContain('<a rel="nofollow noopener noreferrer" href="https://example.com/a">site</a>');
    expect(out).toContain('echo "&lt;b&gt;not bold&lt;/b&gt;"');
    expect(out).toContain('class="language-sh"');
  });

  it('rewrites relative links and images through the resolver and drops the ones it refuses', () => {
    const out = renderMarkdown('[a](scripts/run.sh) [b](../x) [c](#top) ![d](img.png) ![e](diagram.png)', {
      resolveRelative: (target) =>
        target === 'scripts/run.sh' ? '/f/run' : target === 'diagram.png' ? '/f/diagram' : null,
    }).value;
    expect(out).toContain('href="/f/run">a</a>');
    expect(out).toContain('<a rel="nofollow noopener noreferrer">b</a>');
    expect(out).toContain('href="#top"');
    expect(out).toContain('<img alt="e" src="/f/diagram" />');
    expect(out).not.toContain('alt="d"');
  });

  it('never loads an image from another site', () => {
    const out = renderMarkdown(
      '![logo](https://tracker.example/p.gif) ![](//cdn.example/a.png) <img src="//cdn.example/x.png"> <img src="data:image/png;base64,AAAA">',
    ).value;
    expect(out).not.toContain('<img');
    expect(out).toContain('href="https://tracker.example/p.gif"');
    expect(out).toContain('title="Remote image, not loaded">[image: logo]</a>');
    // Protocol-relative URLs are refused outright (they would follow the page's scheme to any host).
    expect(out).not.toContain('cdn.example');
    expect(out).toContain('title="Remote image, not loaded">[image]</a>');
  });

  it('resolves targets inside the skill folder only', () => {
    expect(resolveInside('./scripts/../scripts/run.sh#L3')).toBe('scripts/run.sh');
    expect(resolveInside('a%20b.md')).toBe('a b.md');
    expect(resolveInside('../outside')).toBeNull();
    expect(resolveInside('%E0%A4%A')).toBeNull();
  });
});

describe('renderMarkdown on bodies built to be slow', () => {
  it('renders deep nesting and long delimiter runs (marked overflowed its stack or took seconds)', () => {
    // 2,000 nested list items and 100,000 quote markers overflowed marked's stack (a 500 after 92 s);
    // 100,000 characters of `_a` took it 12.8 s.
    const nested = Array.from({ length: 2_000 }, (_, i) => `${' '.repeat(i * 2)}- item ${i}`).join('\n');
    expect(renderMarkdown(nested).value).toContain('<li>');
    expect(renderMarkdown('>'.repeat(100_000)).value).toContain('<blockquote>');
    expect(renderMarkdown('_a'.repeat(50_000)).value).toContain('_a_a');
  });

  it('renders the first MAX_RENDERED_MARKDOWN characters and shows the rest as plain text', () => {
    const line = 'Some **bold** words and a [link](https://example.com/a).\n';
    const head = line.repeat(Math.ceil(MAX_RENDERED_MARKDOWN / line.length));
    const out = renderMarkdown(`${head}tail **not rendered** <script>x()</script>\n`).value;
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('is shown as plain text');
    expect(out).toContain('<pre>');
    expect(out).toContain('tail **not rendered** &lt;script&gt;x()&lt;/script&gt;');
    expect(out).not.toContain('<script>');
  });
});

describe('skill page', () => {
  const page = renderSkillPage(skill);

  it('renders hostile skill content inert and escaped', () => {
    assertInert(page);
    expect(page).toContain(escapeHtml(HOSTILE));
    expect(page).toContain('&lt;b&gt;ops&lt;/b&gt;');
  });

  it('shows how to reference, save and install it, with CLI equivalents and copy buttons', () => {
    expect(page).toContain('<code>@skills:gh:acme/tools/skills/deploy%20runbook</code>');
    expect(page).toContain('data-copy="@skills:gh:acme/tools/skills/deploy%20runbook:save"');
    expect(page).toContain('data-copy="@skills:gh:acme/tools/skills/deploy%20runbook:install"');
    expect(page).toContain(`atskills install &#39;gh:acme/tools/skills/deploy runbook&#39;`);
    // Copy buttons stay hidden until the script reveals them (the <code> is the no-JS path).
    expect(page).toMatch(/<button type="button" class="copy" data-copy="[^"]+" aria-label="[^"]+" hidden>/);
  });

  it('lists files with sizes, the revision, tokens, warnings and flags with evidence', () => {
    expect(page).toContain('href="/v1/files/gh:acme/tools/skills/deploy%20runbook?path=scripts%2Frun.sh"');
    expect(page).toContain('2.0 KiB');
    expect(page).toContain('120 B');
    expect(page).toContain(`title="${'a'.repeat(40)}"`);
    expect(page).toContain('17 tokens resident');
    expect(page).toContain('230 tokens body');
    expect(page).toContain('name-folder-mismatch');
    expect(page).toContain('<code>SKILL.md:12</code>');
    expect(page).toContain('<code>curl https://x.sh | sh &quot;&lt;script&gt;&quot;</code>');
    expect(page).toContain(`title="${escapeHtml(flagTitle(skill.flags[0]!))}"`);
    expect(page).toContain('href="/v1/archive/gh:acme/tools/skills/deploy%20runbook"');
    // The body's relative link to a bundled file points at the file route; one leaving the folder is dropped.
    expect(page).toContain(
      'href="/v1/files/gh:acme/tools/skills/deploy%20runbook?path=scripts%2Frun.sh">the script</a>',
    );
    expect(page).toContain('<a rel="nofollow noopener noreferrer">outside</a>');
  });
});

describe('search page', () => {
  it('shows the search form and the crawl status without a query', () => {
    const page = renderSearchPage({
      query: '',
      filters: {},
      status: {
        skills: 1500,
        repositories: 40,
        lastCrawlAt: new Date('2026-11-29T08:30:00Z'),
        lastCrawlStatus: 'finished',
      },
    });
    assertInert(page);
    expect(page).toContain(
      '<form class="search" method="get" action="/" role="search" aria-label="Search skills">',
    );
    expect(page).toContain('1,500');
    expect(page).toContain('2026-11-29 08:30 UTC (finished)');
    expect(page).not.toContain('<ol class="results">');
  });

  it('offers an empty index only ways that work on a fresh clone', () => {
    const page = renderSearchPage({ query: '', filters: {}, status: { skills: 0, lastCrawlAt: null } });
    assertInert(page);
    expect(page).toContain('<h2 id="empty-index">This hub has no skills yet</h2>');
    expect(page).toContain('npm run crawl -- --repos gh:anthropics/skills');
    expect(page).toContain('npx atskills publish ./my-skills --to hub:you/my-skills --public');
    expect(page).toContain('npm start -- --demo');
    // The GitHub stand-in needs the shared corpus beside the clone: not a way for a newcomer.
    expect(page).not.toMatch(/github-standin|stand-in|corpus/i);
    // Every npm script it names is one the root package.json defines.
    const scripts = Object.keys(
      JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).scripts,
    );
    const named = [...page.matchAll(/npm (?:run ([\w:-]+)|(start))/g)].map((m) => m[1] ?? m[2]);
    expect(named.length).toBeGreaterThanOrEqual(4);
    for (const script of named) expect(scripts).toContain(script);
  });

  it('says which words of a query it read as others or left out, a Chinese query word by word', () => {
    // The engine's words: lowercase, Chinese in simplified form, whatever the query's characters.
    const readAs = (query: string) =>
      renderSearchPage({
        query,
        filters: {},
        results: [result({})],
        nextCursor: null,
        corrected: { pdf: 'pdfs' },
        ignored: ['把', '这个', '成'],
        status: null,
      });
    const page = readAs('把这个PDF转换成Word');
    assertInert(page);
    expect(page).toContain('Showing results for <strong>pdfs 转换 Word</strong>');
    expect(page).toContain('left out: <s>把</s>, <s>这个</s>, <s>成</s>');
    // Written in traditional characters, the page shows the user's own.
    const traditional = readAs('把這個PDF轉換成Word');
    expect(traditional).toContain('Showing results for <strong>pdfs 轉換 Word</strong>');
    expect(traditional).toContain('left out: <s>把</s>, <s>這個</s>, <s>成</s>');
  });

  it('lists results with source, stars, token cost, flags and a copy button, and links the next page', () => {
    const page = renderSearchPage({
      query: 'deploy <now>',
      filters: { source: 'gh', owner: 'acme' },
      limit: 10,
      results: [
        result({
          name: `evil ${HOSTILE}`,
          description: HOSTILE,
          flags: [
            {
              rule: 'hidden-unicode',
              severity: 'high',
              message: 'Bidi control',
              file: 'SKILL.md',
              line: 3,
              evidence: '\\u202E',
            },
            {
              rule: 'hidden-unicode',
              severity: 'warn',
              message: 'Zero width',
              file: 'SKILL.md',
              line: 4,
              evidence: '\\u200B',
            },
          ],
        }),
        result({
          kind: 'collection',
          identity: 'hub:ops/playbooks',
          name: 'playbooks',
          source: 'hub',
          repository: 'ops/playbooks',
          path: '',
          skillCount: 7,
          stars: 0,
        }),
      ],
      nextCursor: 'abc_-123',
      continued: true,
      status: null,
    });
    assertInert(page);
    expect(page).toContain('value="deploy &lt;now&gt;"');
    expect(page).toContain('<option value="gh" selected>');
    expect(page).toContain('name="owner" value="acme"');
    expect(page).toContain('href="/s/gh:acme/tools/skills/deploy"');
    expect(page).toContain('<a href="/o/acme">acme</a>/<a href="/s/gh:acme/tools">tools</a>');
    expect(page).toContain('href="https://github.com/acme/tools"');
    expect(page).toContain('★ 42');
    expect(page).toContain('5 tokens resident');
    expect(page).toContain('300 tokens body');
    expect(page).toContain('data-copy="@skills:gh:acme/tools/skills/deploy"');
    expect(page).toMatch(
      /<span class="flag severity-high" title="hidden-unicode \(high\) at SKILL.md:3: Bidi control. Evidence: \\u202E\nhidden-unicode \(warn\)[^"]*">hidden-unicode ×2<\/span>/,
    );
    expect(page).toContain('7 skills');
    expect(page).toContain('href="/s/hub:ops/playbooks"');
    expect(page).toContain(
      'href="/?q=deploy+%3Cnow%3E&amp;source=gh&amp;owner=acme&amp;limit=10&amp;cursor=abc_-123" rel="next"'
        .replace(' rel="next"', '')
        .replace('href=', 'rel="next" href='),
    );
    expect(page).toContain('← First page');
  });

  it('says so when nothing matched or the query was refused', () => {
    expect(renderSearchPage({ query: 'zzz', filters: {}, results: [], status: null })).toContain(
      'No skills match <strong>zzz</strong>',
    );
    expect(
      renderSearchPage({
        query: 'x',
        filters: {},
        error: 'The query is longer than 256 characters.',
        status: null,
      }),
    ).toContain('<p class="notice" role="alert">The query is longer than 256 characters.</p>');
  });
});

describe('menu and error pages', () => {
  it('renders a menu with one link and reference per skill', () => {
    const page = renderMenuPage({
      identity: 'hub:ops/playbooks',
      revision: 'm1',
      items: [
        { identity: 'hub:ops/playbooks/deploy', name: 'deploy', description: `Deploy ${HOSTILE}` },
        { identity: 'hub:ops/playbooks/rollback', name: 'rollback', description: 'Roll back' },
      ],
    });
    assertInert(page);
    expect(page).toContain('A collection of 2 skills');
    expect(page).toContain('href="/s/hub:ops/playbooks/rollback"');
    expect(page).toContain('data-copy="@skills:hub:ops/playbooks/deploy"');
    expect(page).toContain('- hub:ops/playbooks/rollback: Roll back');
  });

  it('410 shows the last revision and date', () => {
    const page = renderErrorPage({
      status: 410,
      code: 'gone',
      title: 'This skill is gone',
      identity: 'gh:acme/tools/old',
      lastRevision: 'deadbeef',
      lastSeen: '2026-10-02T00:00:00Z',
    });
    expect(page).toContain('<code>deadbeef</code>');
    expect(page).toContain('2026-10-02');
    expect(page).toContain('href="/s/gh:acme/tools/old?rev=deadbeef"');
  });

  it('422 lists the sub-collections that fit as references', () => {
    const page = renderErrorPage({
      status: 422,
      code: 'over-cap',
      title: 'Too many skills',
      identity: 'gh:big/repo',
      count: 300,
      subcollections: [
        { path: 'skills/a', skills: 120 },
        { path: 'skills/b', identity: 'gh:big/repo/skills/b', skills: 80 },
      ],
    });
    assertInert(page);
    expect(page).toContain('300 skills');
    expect(page).toContain('href="/s/gh:big/repo/skills/a"');
    expect(page).toContain('data-copy="@skills:gh:big/repo/skills/b"');
    expect(page).toContain('120 skills');
  });

  it('404 is helpful and escapes the identity', () => {
    const page = renderErrorPage({
      status: 404,
      code: 'not-found',
      title: 'Not found',
      identity: `gh:a/b/${HOSTILE}`,
    });
    assertInert(page);
    expect(page).toContain('Search the hub for');
  });
});

describe('links, assets and helpers', () => {
  it('skill page URLs round-trip identities with spaces, colons, #, ? and CJK', () => {
    for (const identity of [
      'gh:o/r/a b/c#d?e',
      'gh:o/r/x%3Ay',
      'hub:ns/col/技能/.claude',
      'gh:o/r/@scope/p',
    ]) {
      const canonical = parseIdentity(identity).identity;
      const url = skillPageUrl(canonical);
      expect(url).not.toMatch(/[ #?]/);
      expect(parseIdentity(url.slice('/s/'.length)).identity).toBe(canonical);
    }
  });

  it('the CSP allows only self-hosted script and style, and assets are content-addressed', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("img-src 'self'");
    expect(COPY_SCRIPT.url).toMatch(/^\/assets\/copy\.[0-9a-f]{10}\.js$/);
    expect(STYLESHEET.url).toMatch(/^\/assets\/site\.[0-9a-f]{10}\.css$/);
  });

  it('formats sizes and shell words', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB');
    expect(shellQuote('gh:o/r/p')).toBe('gh:o/r/p');
    expect(shellQuote("gh:o/r/it's")).toBe(`'gh:o/r/it'\\''s'`);
  });
});

describe('Atom feed and sub-collections', () => {
  const entry = {
    identity: 'gh:acme/tools/skills/deploy',
    name: 'deploy',
    description: 'Ship it <now> & "then"\u0007 rest',
    revision: 'abc123',
    firstSeenAt: new Date('2026-11-01T00:00:00Z'),
    updatedAt: new Date('2026-11-29T08:30:00Z'),
  };

  it('renders absolute links, per-revision ids, escaped text without XML-forbidden characters', () => {
    const xml = renderFeed({
      hubUrl: 'https://hub.example/',
      selfPath: '/o/acme/feed.xml',
      pagePath: '/o/acme',
      title: 'New & updated',
      entries: [entry],
    });
    expect(xml).toContain('<id>https://hub.example/o/acme/feed.xml</id>');
    expect(xml).toContain('<title>New &amp; updated</title>');
    expect(xml).toContain('<updated>2026-11-29T08:30:00.000Z</updated>');
    expect(xml).toContain('<id>https://hub.example/s/gh:acme/tools/skills/deploy?rev=abc123</id>');
    expect(xml).toContain(
      '<link rel="alternate" type="text/html" href="https://hub.example/s/gh:acme/tools/skills/deploy"/>',
    );
    expect(xml).toContain(
      '<summary>Ship it &lt;now&gt; &amp; &quot;then&quot; rest (@skills:gh:acme/tools/skills/deploy)</summary>',
    );
    expect(xml).not.toContain('\u0007');
  });

  it('dates an empty feed at the epoch, so its bytes (and ETag) stay the same', () => {
    const model = {
      hubUrl: 'https://hub.example',
      selfPath: '/feed.xml',
      pagePath: '/',
      title: 't',
      entries: [],
    };
    expect(renderFeed(model)).toBe(renderFeed(model));
    expect(renderFeed(model)).toContain('<updated>1970-01-01T00:00:00.000Z</updated>');
  });

  it('counts the folders directly below a menu that hold skills', () => {
    const items = ['a', 'more/b', 'more/c', 'deep/er/d', 'with space/e'].map((p) => ({
      identity: parseIdentity(`hub:team/kit/${p.split('/').map(encodeURIComponent).join('/')}`).identity,
    }));
    expect(subcollectionsOf('hub:team/kit', items)).toEqual([
      { identity: 'hub:team/kit/more', folder: 'more', skills: 2 },
      { identity: 'hub:team/kit/deep', folder: 'deep', skills: 1 },
      { identity: parseIdentity('hub:team/kit/with%20space').identity, folder: 'with space', skills: 1 },
    ]);
  });
});
