import { parseIdentity, SEARCH_MAX_QUERY } from '@atskills/protocol';
import { readForm, wordsAt } from '../../search/relevance/analyze.js';
import { flagBadges, referenceBox, referenceText } from '../components.js';
import { formatCount, formatDateTime } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { githubUrl, ownerPageUrl, queryString, skillPageUrl } from '../urls.js';
import type {
  CrawlStatusView,
  HomeBrowseView,
  SearchFilters,
  SearchPageModel,
  SearchResultView,
} from '../view-models.js';
import { browseSection, containerItem, ownerItem, skillItem } from './browse-lists.js';

/** The home page: search form, results (when a query was given), pagination and the crawl status. */
export function renderSearchPage(model: SearchPageModel): string {
  const title = model.query ? `${model.query} - search` : 'Browse and search skills';
  const home = !model.results && !model.error;
  return layout(
    {
      title,
      noindex: model.continued === true,
      feeds: [{ title: 'New and updated skills', href: '/feed.xml' }],
    },
    html`<h1${home ? html` class="home-title"` : html` class="visually-hidden"`}>${home ? 'Find a skill' : 'Search results'}</h1>
${searchForm(model.query, model.filters, { autofocus: home })}
${model.error ? html`<p class="notice" role="alert">${model.error}</p>` : ''}
${
  model.status?.skills === 0
    ? emptyIndexHint()
    : model.results
      ? resultsSection(model)
      : html`${intro()}${statusSection(model.status)}${model.browse ? browseSections(model.browse) : ''}`
}
${home && model.status?.skills !== 0 ? '' : statusSection(model.status)}
${home ? agentLinks() : ''}`,
  ).value;
}

/** The home page's lists: most used this week, what is new, and who holds what. */
function browseSections(browse: HomeBrowseView): SafeHtml {
  return html`<div class="browse">
${browseSection(
  'most-used',
  'Most used this week',
  browse.mostUsed.map((s) => skillItem(s, 'uses')),
  'No uses counted in the last 7 days yet.',
)}
${browseSection(
  'recently-added',
  'Recently added',
  browse.added.map((s) => skillItem(s, 'added')),
  'Nothing yet.',
)}
${browseSection(
  'recently-updated',
  'Recently updated',
  browse.updated.map((s) => skillItem(s, 'updated')),
  'Nothing yet.',
)}
${browseSection('by-owner', 'By owner', browse.owners.map(ownerItem), 'No owners yet.')}
${browseSection(
  'by-repository',
  'By repository',
  browse.repositories.map((c) => containerItem(c)),
  'No GitHub repositories indexed yet.',
)}
${browseSection(
  'by-collection',
  'By hub collection',
  browse.collections.map((c) => containerItem(c)),
  'No collections published yet.',
)}
</div>
<p class="feed-note">Follow new and updated skills: <a href="/feed.xml">Atom feed</a> (each owner page has its own).</p>`;
}

/**
 * The search form with every filter GET /search takes. The owner, repository and namespace fields sit in a
 * <details> (open when one is set), so the box stays one line on a phone and still needs no script.
 */
export function searchForm(
  query: string,
  filters: SearchFilters,
  options: { autofocus?: boolean; showActive?: boolean } = {},
): SafeHtml {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${(filters.source ?? '') === value ? html` selected` : ''}>${label}</option>`;
  const field = (key: 'owner' | 'repo' | 'namespace', label: string, hint: string) =>
    html`<div class="field"><label for="filter-${key}">${label}</label>
<input type="text" id="filter-${key}" name="${key}" value="${filters[key] ?? ''}" maxlength="100" placeholder="${hint}" autocomplete="off" spellcheck="false"></div>`;
  const anySet = Boolean(filters.owner || filters.repo || filters.namespace);
  return html`<form class="search" method="get" action="/" role="search" aria-label="Search skills">
<div class="search-row">
<label for="q" class="visually-hidden">Search skills</label>
<input type="search" id="q" name="q" value="${query}" maxlength="${SEARCH_MAX_QUERY}" placeholder="Search skills by name, description or content"${options.autofocus === false ? '' : html` autofocus`}>
<label for="source" class="visually-hidden">Source</label>
<select id="source" name="source">${option('', 'All sources')}${option('gh', 'GitHub (gh:)')}${option('hub', 'Hub (hub:)')}</select>
<button type="submit">Search</button>
</div>
<details class="filters"${anySet ? html` open` : ''}><summary>Filters: owner, repository, namespace</summary>
<div class="filter-fields">
${field('owner', 'Owner', 'GitHub owner or namespace')}
${field('repo', 'Repository', 'name or owner/name')}
${field('namespace', 'Hub namespace', 'hub: namespace')}
</div>
</details>
</form>
${options.showActive === false ? '' : activeFilters(query, filters)}`;
}

function activeFilters(query: string, filters: SearchFilters): SafeHtml {
  const named = (['owner', 'repo', 'namespace'] as const).filter((key) => filters[key]);
  if (named.length === 0) return html``;
  return html`<p class="meta">Filtered by ${named.map((key, i) => html`${i > 0 ? ', ' : ''}${key} <code>${filters[key]}</code>`)} · <a href="/${queryString({ q: query, source: filters.source })}">clear filters</a></p>`;
}

/**
 * What an empty index shows instead of "no skills match": ways to fill it that work on a fresh clone
 * (on the embedded default `npm run crawl` has this running hub do the crawl).
 */
function emptyIndexHint(): SafeHtml {
  return html`<section class="panel" aria-labelledby="empty-index">
<h2 id="empty-index">This hub has no skills yet</h2>
<p>Fill the index one of these ways (in the hub's folder, in another terminal while it runs), then reload this page:</p>
<ol>
<li>Crawl public GitHub repositories: <code>npm run crawl -- --repos gh:anthropics/skills</code>
(several: comma-separated). It shows the crawl's progress; a <code>GITHUB_TOKEN</code> raises GitHub's rate limit.</li>
<li>Publish a folder of your own skills with the client: create a user and a token (printed once), log in with
the address of this page, publish.
<pre><code>npm run hub -- admin create-user you
npm run hub -- admin create-token you --scopes read,publish
npx atskills login --hub &lt;address of this page&gt;
npx atskills publish ./my-skills --to hub:you/my-skills --public</code></pre></li>
<li>Restart the hub with the demo collections (no network needed): <code>npm start -- --demo</code></li>
</ol>
</section>`;
}

function intro(): SafeHtml {
  return html`<p class="lead">Search public skills crawled from GitHub and collections published to this hub. Each result is a
reference you can paste into a message to an agent.</p>`;
}

/** Where agents start (SPEC 2.5): the client, SKILLS.md, /llms.txt and the MCP server. */
function agentLinks(): SafeHtml {
  return html`<p class="agent-links">For agents: <a href="/cli/atskills.tgz">the atskills client</a> (<code>npm install -g &lt;this hub&gt;/cli/atskills.tgz</code>),
<a href="/SKILLS.md">SKILLS.md</a> (any agent with a shell), <a href="/llms.txt">/llms.txt</a>, and the MCP server at <a href="/mcp">/mcp</a>.</p>`;
}

function resultsSection(model: SearchPageModel): SafeHtml {
  const results = model.results ?? [];
  if (results.length === 0) {
    return html`<p class="notice">No skills match <strong>${model.query}</strong>${model.continued ? ' on this page' : ''}. Try fewer or shorter words.</p>`;
  }
  const next = model.nextCursor
    ? html`<a rel="next" href="/${queryString({ q: model.query, ...model.filters, limit: model.limit, cursor: model.nextCursor })}">Next page →</a>`
    : '';
  const first = model.continued
    ? html`<a href="/${queryString({ q: model.query, ...model.filters, limit: model.limit })}">← First page</a>`
    : '';
  return html`<h2 class="visually-hidden">Results</h2>
${readAs(model)}
<ol class="results">${results.map(resultItem)}</ol>
${next || first ? html`<nav class="pager" aria-label="Pages">${first}${next}</nav>` : ''}`;
}

/** "Showing results for ..." when the engine corrected or left out words of the query. */
function readAs(model: SearchPageModel): SafeHtml {
  const corrected = model.corrected ?? {};
  const ignored = model.ignored ?? [];
  if (Object.keys(corrected).length === 0 && ignored.length === 0) return html``;
  const dropped = new Set(ignored);
  // The query's words as the engine split them (a Chinese query is several words, not one run of letters),
  // shown as the user wrote them: the engine's words are read forms (lowercase, Chinese in simplified form).
  const words = wordsAt(model.query).map((w) => ({ written: w.word, read: readForm(w.word) }));
  const writtenOf = new Map(words.map((w) => [w.read, w.written]));
  const shown = words.filter((w) => !dropped.has(w.read)).map((w) => corrected[w.read] ?? w.written);
  const parts: SafeHtml[] = [];
  if (Object.keys(corrected).length > 0) {
    parts.push(html`Showing results for <strong>${shown.join(' ')}</strong>`);
  }
  if (ignored.length > 0) {
    parts.push(
      html`${parts.length ? ' · ' : ''}left out: ${ignored.map((w, i) => html`${i > 0 ? ', ' : ''}<s>${writtenOf.get(w) ?? w}</s>`)}`,
    );
  }
  return html`<p class="meta read-as">${parts}</p>`;
}

function resultItem(result: SearchResultView): SafeHtml {
  const tokens = html`<span title="Description tokens: what the skill costs in every session once installed">${formatCount(result.descriptionTokens)} tokens resident</span>${
    result.bodyTokens !== undefined
      ? html`<span title="Body tokens: loaded when the skill fires">${formatCount(result.bodyTokens)} tokens body</span>`
      : ''
  }`;
  return html`<li class="result" data-identity="${result.identity}">
<div class="result-head">
${result.kind === 'collection' ? html`<span class="kind">collection</span>` : ''}
<h2><a href="${skillPageUrl(result.identity)}">${result.name || result.path || result.identity}</a></h2>
${flagBadges(result.flags)}
</div>
<p class="result-desc">${result.description || (result.kind === 'collection' ? `A folder of ${formatCount(result.skillCount ?? 0)} skills; referencing it gives a menu.` : '')}</p>
<div class="meta">
${sourceLinks(result)}
${result.path ? html`<span>path <code>${result.path}</code></span>` : ''}
<span title="Popularity (GitHub stars where known)">★ ${formatCount(result.stars)}</span>
${result.uses ? html`<span title="Distinct clients that resolved it in the last 7 days (see /about/metrics)">${formatCount(result.uses.week)} uses this week</span>` : ''}
${result.kind === 'collection' && result.skillCount !== undefined ? html`<span>${formatCount(result.skillCount)} skills</span>` : tokens}
${result.warnings.length > 0 ? html`<span class="warning-list" title="Frontmatter warnings">warnings: ${result.warnings.join(', ')}</span>` : ''}
</div>
${referenceBox(referenceText(result.identity))}
</li>`;
}

/** "gh · owner/repo" linking to the repository's menu on this hub, plus the GitHub page; "hub · ns/coll". */
export function sourceLinks(result: Pick<SearchResultView, 'source' | 'repository'>): SafeHtml {
  const [first = '', second = ''] = result.repository.split('/');
  const containerIdentity = safeIdentity(`${result.source}:${result.repository}`);
  const local = containerIdentity
    ? html`<a href="${skillPageUrl(containerIdentity)}">${second}</a>`
    : html`${second}`;
  const outbound =
    result.source === 'gh'
      ? html` <a href="${githubUrl(first, second)}" rel="nofollow noopener noreferrer">GitHub ↗</a>`
      : '';
  return html`<span>${result.source} · <a href="${ownerPageUrl(result.source, first)}">${first}</a>/${local}${outbound}</span>`;
}

function safeIdentity(text: string): string | null {
  try {
    return parseIdentity(text).identity;
  } catch {
    return null;
  }
}

function statusSection(status: CrawlStatusView | null): SafeHtml {
  if (!status) return html``;
  const lastCrawl = formatDateTime(status.lastCrawlAt);
  return html`<section class="status" aria-labelledby="status-title">
<h2 id="status-title">Index status</h2>
<dl>
<dt>Skills</dt><dd>${formatCount(status.skills)}</dd>
${status.repositories !== undefined ? html`<dt>Repositories</dt><dd>${formatCount(status.repositories)}</dd>` : ''}
${status.collections !== undefined ? html`<dt>Hub collections</dt><dd>${formatCount(status.collections)}</dd>` : ''}
<dt>Last crawl</dt><dd>${lastCrawl ?? 'never'}${status.lastCrawlStatus ? ` (${status.lastCrawlStatus})` : ''}</dd>
</dl>
</section>`;
}
