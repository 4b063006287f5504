import { createHash } from 'node:crypto';
import {
  isProtocolError,
  type SafetyFinding,
  SEARCH_MAX_QUERY,
  SEARCH_MAX_REPO_FILTER,
  SUGGEST_MAX_MESSAGE,
  SUGGEST_MAX_QUERY,
} from '@atskills/protocol';
import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { toProblem } from '../plugins/errors.js';
import { type HttpProblem, isHttpProblem, problem } from '../problems.js';
import type { SearchHitResponse, SkillView, StatsResponse } from '../schemas.js';
import { engineHeader } from '../search/engine.js';
import { getHomeOverview, getSkillHistory } from '../services/browse.js';
import { findingsOfHits } from '../services/flags.js';
import { getRepositoryReport, getStats } from '../services/index-info.js';
import { parseRepositoryName, repositoryStatusUrl } from '../services/indexing/index-requests.js';
import { withMissingGh } from '../services/indexing/missing-gh.js';
import { pick } from '../services/pick.js';
import { searchPageResponse, searchSkills } from '../services/search.js';
import { getSkillView } from '../services/skill-view.js';
import { suggestSkills } from '../services/suggest.js';
import { ASSETS } from '../web/assets/index.js';
import { renderUsesBadge } from '../web/badge.js';
import { wireFlagView } from '../web/components.js';
import { renderErrorPage } from '../web/pages/error-page.js';
import { renderMenuPage } from '../web/pages/menu-page.js';
import { renderMetricsPage } from '../web/pages/metrics-page.js';
import { renderRepositoryPage } from '../web/pages/repository-page.js';
import { renderSearchPage } from '../web/pages/search-page.js';
import { renderSkillPage } from '../web/pages/skill-page.js';
import { renderSuggestPage } from '../web/pages/suggest-page.js';
import { readSearchLimit, readSuggestLimit } from '../web/search-limit.js';
import { sendPage } from '../web/send-page.js';
import { repositoryPageUrl } from '../web/urls.js';
import type {
  CrawlStatusView,
  ErrorPageModel,
  SearchFilters,
  SearchPageModel,
  SearchResultView,
  SkillPageModel,
} from '../web/view-models.js';
import { ifNoneMatchHits } from './caching.js';
import { registerBrowseRoutes } from './web-browse.js';

// The server-rendered pages: `/` (search), `/s/<identity>` (a skill or a menu) and their static assets.
// Pages read through the same services as the JSON API, always with `request.viewer`, so a page never shows
// what the API would hide. Routes are hidden from the OpenAPI document: they are HTML for people.

const DEFAULT_LIMIT = 20;
const PAGE_PREFIX = '/s/';

function firstString(value: unknown): string | undefined {
  if (Array.isArray(value)) return firstString(value[0]);
  return typeof value === 'string' ? value : undefined;
}

/** Reads the search form's fields leniently: a page should explain a bad field, not answer JSON. */
function readSearchForm(query: Record<string, unknown>): {
  q: string;
  limit: number;
  cursor: string | undefined;
  filters: SearchFilters;
  error?: string;
} {
  const q = (firstString(query.q) ?? '').trim();
  const source = firstString(query.source)?.trim();
  const filters: SearchFilters = {};
  if (source === 'gh' || source === 'hub') filters.source = source;
  for (const key of ['owner', 'repo', 'namespace'] as const) {
    const value = firstString(query[key])?.trim();
    // As long as GET /v1/search takes (a repo filter holds owner/name).
    if (value) filters[key] = value.slice(0, key === 'repo' ? SEARCH_MAX_REPO_FILTER : 100);
  }
  const { limit, error: limitError } = readSearchLimit(firstString(query.limit));
  const cursor = firstString(query.cursor) || undefined;
  const form = { q: q.slice(0, SEARCH_MAX_QUERY), limit, cursor, filters };
  if (q.length > SEARCH_MAX_QUERY) {
    return { ...form, error: `The query is longer than ${SEARCH_MAX_QUERY} characters; shorten it.` };
  }
  // A source the API would refuse (400) is named, not dropped: the page would list every source's skills.
  if (source && !filters.source && q !== '') {
    return {
      ...form,
      error: `The source "${source.slice(0, 20)}" is neither gh nor hub; leave it out for both.`,
    };
  }
  // Without a query the home page lists no results: a limit there changes nothing.
  if (limitError && q !== '') return { ...form, error: limitError };
  return form;
}

/** What a search result row shows of a hit as it is. */
const RESULT_FIELDS = [
  'kind',
  'identity',
  'name',
  'description',
  'source',
  'repository',
  'path',
  'revision',
  'stars',
  'descriptionTokens',
  'bodyTokens',
  'warnings',
] as const satisfies readonly (keyof SearchHitResponse & keyof SearchResultView)[];

function toResultView(hit: SearchHitResponse, storedFlags: SafetyFinding[] | undefined): SearchResultView {
  return {
    ...pick(hit, RESULT_FIELDS),
    ...(hit.uses ? { uses: hit.uses } : {}),
    ...(hit.skillCount !== undefined ? { skillCount: hit.skillCount } : {}),
    // The stored findings carry the evidence excerpt for the badge's hover text; the wire flags do not.
    flags: storedFlags ?? hit.flags.map(wireFlagView),
  };
}

function toCrawlStatus(stats: StatsResponse): CrawlStatusView {
  return {
    skills: stats.skills,
    repositories: stats.repositories,
    collections: stats.collections,
    lastCrawlAt: stats.lastCrawl?.finishedAt ?? stats.lastCrawl?.startedAt ?? null,
    lastCrawlStatus: stats.lastCrawl?.status ?? null,
  };
}

/** Suggestions a page lists by default, and the most it lists (the API's range, SPEC 2.7). */
const SUGGEST_PAGE_LIMIT = 5;

/**
 * `/suggest`: the "describe your task" box and the suggestions for what was typed (SPEC 2.7). The form posts
 * (a message of up to SUGGEST_MAX_MESSAGE characters, pasted logs included, stays out of URLs, request logs
 * and browser history); `GET /suggest?q=` answers links of up to SUGGEST_MAX_QUERY characters. A longer
 * message is refused with a notice, never cut: a cut drops the ask, which usually comes last.
 */
async function suggestPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const fields = (request.method === 'POST' ? request.body : request.query) as Record<string, unknown> | null;
  const raw = (firstString(fields?.q) ?? '').trim();
  const max = request.method === 'POST' ? SUGGEST_MAX_MESSAGE : SUGGEST_MAX_QUERY;
  const { limit, error: limitError } = readSuggestLimit(firstString(fields?.limit));
  const form = { message: raw, ...(limit !== SUGGEST_PAGE_LIMIT ? { limit } : {}) };
  if (!raw) return sendPage(reply, 200, renderSuggestPage({ message: '' }));
  if (limitError) return sendPage(reply, 400, renderSuggestPage({ ...form, error: limitError }));
  // Counted as the API's schema counts (code points: an emoji is one character).
  if ([...raw].length > max) {
    const error = `The message is longer than ${max.toLocaleString('en-US')} characters; shorten it${
      request.method === 'POST' ? '' : ' or send it through the form'
    }.`;
    return sendPage(
      reply,
      400,
      renderSuggestPage({ ...form, message: raw.slice(0, SUGGEST_MAX_MESSAGE), error }),
    );
  }
  try {
    const answer = await suggestSkills(app.suggestEngine, request.viewer, raw, limit);
    return sendPage(reply, 200, renderSuggestPage({ ...form, answer }));
  } catch (err) {
    if (!isHttpProblem(err)) throw err;
    for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
    // A build that failed (no retry time) says why to the operator, in the logs and on /metrics, not here.
    const error =
      err.status === 503 && err.headers['retry-after'] === undefined
        ? 'Suggestions are not available on this hub right now.'
        : (err.detail ?? 'Suggestions are not available right now.');
    return sendPage(reply, err.status, renderSuggestPage({ ...form, error }));
  }
}

async function searchPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const form = readSearchForm(request.query as Record<string, unknown>);
  const status = await getStats(app.db, request.viewer, app.searchEngine.name).then(
    toCrawlStatus,
    (err: unknown) => {
      // The status box is a nicety; a failing stats query must not take the search page down with it.
      request.log.warn({ err }, 'crawl status unavailable');
      return null;
    },
  );
  // The default limit stays out of page links so they remain short.
  const model: SearchPageModel = {
    query: form.q,
    filters: form.filters,
    status,
    ...(form.limit !== DEFAULT_LIMIT ? { limit: form.limit } : {}),
  };
  if (form.error) return sendPage(reply, 400, renderSearchPage({ ...model, error: form.error }));
  if (form.q === '') {
    // Browsing needs a non-empty index; an empty one keeps the hint on how to fill it.
    // Like the status box, the lists must not take the search box down with them.
    const browse =
      status && status.skills > 0
        ? await getHomeOverview(app.db, request.viewer).catch((err: unknown) => {
            request.log.warn({ err }, 'browse lists unavailable');
            return undefined;
          })
        : undefined;
    return sendPage(reply, 200, renderSearchPage({ ...model, ...(browse ? { browse } : {}) }));
  }
  try {
    const outcome = await searchSkills(
      app.searchEngine,
      request.viewer,
      {
        q: form.q,
        limit: form.limit,
        cursor: form.cursor,
        filters: form.filters,
      },
      app.db,
    );
    reply.header('x-search-engine', engineHeader(outcome.engine));
    const page = searchPageResponse(outcome);
    const evidence = await findingsOfHits(app.db, request.viewer, page.results);
    return sendPage(
      reply,
      200,
      renderSearchPage({
        ...model,
        results: page.results.map((hit) => toResultView(hit, evidence.get(hit.identity))),
        nextCursor: page.nextCursor,
        continued: form.cursor !== undefined,
        ...(page.corrected ? { corrected: page.corrected } : {}),
        ...(page.ignored ? { ignored: page.ignored } : {}),
      }),
    );
  } catch (err) {
    if (isProtocolError(err) && err.code === 'bad-cursor') {
      return sendPage(
        reply,
        400,
        renderSearchPage({
          ...model,
          error:
            'That page link is malformed or out of date. Showing the first page would need a new search.',
        }),
      );
    }
    throw err;
  }
}

/** The identity text of a /s/ URL, still percent-encoded (parseIdentity decodes it exactly once). */
function identityFromUrl(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  return path.startsWith(PAGE_PREFIX) ? path.slice(PAGE_PREFIX.length) : '';
}

/** GET /badge/<identity>.svg: name and weekly uses, for READMEs; read with the viewer like the skill. */
async function badge(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const path = (request.raw.url ?? request.url).split('?', 1)[0] ?? '';
  const text = path.slice('/badge/'.length).replace(/\.svg$/, '');
  const result = await getSkillView(app.db, request.viewer, text);
  if (result.kind !== 'skill')
    throw problem('not-a-skill', `${result.view.identity} is a menu; badges are for skills`);
  const svg = renderUsesBadge(result.view.name || result.view.identity, result.view.uses.week);
  const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`;
  // Counts move every few seconds at most; an hour's cache keeps README views off the hub. Private: no shared cache.
  reply
    .header('etag', etag)
    .header('vary', 'Authorization')
    .header('cache-control', result.resolved.private ? 'private, no-cache' : 'public, max-age=3600');
  if (ifNoneMatchHits(request.headers['if-none-match'], etag.slice(1, -1))) return reply.code(304).send();
  return reply.header('content-type', 'image/svg+xml; charset=utf-8').send(svg);
}

/** What the skill page shows of GET /v1/skills' view (flags come with their evidence, from the row). */
const SKILL_PAGE_FIELDS = [
  'identity',
  'revision',
  'name',
  'description',
  'frontmatter',
  'body',
  'files',
  'warnings',
  'stars',
  'uses',
  'descriptionTokens',
  'bodyTokens',
  'lastSeen',
] as const satisfies readonly (keyof SkillView & keyof SkillPageModel)[];

async function skillPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const text = identityFromUrl(request.raw.url ?? request.url);
  // `/s/` alone names nothing: the search page is where to find an identity.
  if (text === '') return reply.redirect('/', 302);
  const rev = firstString((request.query as Record<string, unknown>).rev) || undefined;
  const result = await withMissingGh(app, request, text, () =>
    getSkillView(app.db, request.viewer, text, rev),
  );
  if (result.kind === 'menu') {
    // A row's flag codes are the API's; a refused row already carries no text of its skill.
    const items = result.view.items.map(({ flags: _flags, refused: _refused, ...item }) => item);
    return sendPage(reply, 200, renderMenuPage({ ...result.view, items, hubUrl: app.config.publicUrl }));
  }
  const { view, resolved } = result;
  const history = await getSkillHistory(app.db, request.viewer, resolved.skillId);
  return sendPage(
    reply,
    200,
    renderSkillPage({
      ...pick(view, SKILL_PAGE_FIELDS),
      hubUrl: app.config.publicUrl,
      pinned: resolved.pinned,
      // The stored findings, evidence included: the page escapes it, and people need it to judge the flag.
      flags: resolved.flags,
      history,
    }),
  );
}

/** /r/<owner>/<repo>: the index status of a repository as a page (the same answer as GET /v1/repos/...). */
async function repositoryPage(
  app: FastifyInstance,
  request: FastifyRequest<{ Params: { owner: string; repo: string } }>,
  reply: FastifyReply,
) {
  const { owner, repo } = parseRepositoryName(`${request.params.owner}/${request.params.repo}`);
  const report = await getRepositoryReport(app.db, owner, repo, request.viewer);
  if ('movedTo' in report)
    return reply.redirect(repositoryPageUrl(report.movedTo.owner, report.movedTo.name), 301);
  return sendPage(
    reply,
    200,
    renderRepositoryPage({
      ...report,
      statusUrl: repositoryStatusUrl(app.config.publicUrl, report.owner, report.name),
    }),
  );
}

const TITLES: Record<number, string> = {
  301: 'This repository moved',
  400: 'That identity is not valid',
  404: 'No skill here',
  410: 'This skill is gone upstream',
  422: 'Too many skills to list here',
  503: 'The hub is unavailable',
};

function errorModel(p: HttpProblem, request: FastifyRequest, identity: string | undefined): ErrorPageModel {
  const ext = p.extensions as {
    identity?: unknown;
    reason?: unknown;
    lastRevision?: unknown;
    lastSeen?: unknown;
    count?: unknown;
    subcollections?: unknown;
  };
  const model: ErrorPageModel = {
    status: p.status,
    code: p.code,
    // The titles name what a skill page's URL holds; another page's 400 (a NUL in a form field) is no identity.
    title:
      (p.status === 400 && !request.url.startsWith(PAGE_PREFIX) ? undefined : TITLES[p.status]) ??
      (p.status >= 500 ? 'Something went wrong' : 'That request could not be answered'),
    requestId: request.id,
  };
  // 5xx detail may hold internals (the errors plugin keeps only its own 503 text); 4xx detail is ours.
  if (p.detail !== undefined && (p.status < 500 || p.code === 'unavailable')) model.detail = p.detail;
  const shownIdentity = typeof ext.identity === 'string' ? ext.identity : identity;
  if (shownIdentity) model.identity = shownIdentity;
  if (typeof ext.reason === 'string') model.reason = ext.reason;
  if (typeof ext.lastRevision === 'string') model.lastRevision = ext.lastRevision;
  if (typeof ext.lastSeen === 'string') model.lastSeen = ext.lastSeen;
  if (typeof ext.count === 'number') model.count = ext.count;
  if (Array.isArray(ext.subcollections)) model.subcollections = ext.subcollections;
  return model;
}

/** The identity as the person typed it, decoded for display only (never for lookups). */
function displayIdentity(request: FastifyRequest): string | undefined {
  const text = identityFromUrl(request.raw.url ?? request.url);
  if (text === '') return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Serves the web pages and their assets; registered by buildApp after the API routes. */
export default fp(
  async function webRoutes(app: FastifyInstance) {
    // Encapsulated: only this plugin's routes answer errors as HTML pages; the API keeps problem+json.
    await app.register(async (web) => {
      web.setErrorHandler((err, request, reply) => {
        const p = toProblem(err);
        if (p.status >= 500) request.log.error({ err, code: p.code }, 'page failed');
        else request.log.warn({ code: p.code, status: p.status, detail: p.detail }, 'page refused');
        for (const [name, value] of Object.entries(p.headers)) reply.header(name, value);
        const identity = request.url.startsWith(PAGE_PREFIX) ? displayIdentity(request) : undefined;
        return sendPage(reply, p.status, renderErrorPage(errorModel(p, request, identity)));
      });
      web.get('/', { schema: { hide: true } }, (request, reply) => searchPage(web, request, reply));
      web.get('/s/*', { schema: { hide: true } }, (request, reply) => skillPage(web, request, reply));
      // The suggest form's body (application/x-www-form-urlencoded): read in this encapsulated context only,
      // so the API's routes still refuse a form body.
      // Percent-encoded, a character of the message is up to 9 bytes (three of UTF-8, each as %XX).
      await web.register(formBody, { bodyLimit: 10 * SUGGEST_MAX_MESSAGE + 1024 });
      web.get('/suggest', { schema: { hide: true } }, (request, reply) => suggestPage(web, request, reply));
      web.post('/suggest', { schema: { hide: true } }, (request, reply) => suggestPage(web, request, reply));
      web.get('/r/:owner/:repo', { schema: { hide: true } }, (request, reply) =>
        repositoryPage(web, request as FastifyRequest<{ Params: { owner: string; repo: string } }>, reply),
      );
      registerBrowseRoutes(web, sendPage);
      web.get('/badge/*', { schema: { hide: true } }, (request, reply) => badge(web, request, reply));
      web.get('/about/metrics', { schema: { hide: true } }, (_request, reply) =>
        sendPage(reply, 200, renderMetricsPage()),
      );
      web.get('/assets/:file', { schema: { hide: true } }, (request, reply) => {
        const asset = ASSETS.get(request.url.split('?', 1)[0] ?? '');
        if (!asset) {
          return sendPage(
            reply,
            404,
            renderErrorPage({ status: 404, code: 'not-found', title: 'No such file', requestId: request.id }),
          );
        }
        if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
        return reply
          .header('content-type', asset.contentType)
          .header('etag', asset.etag)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(asset.body);
      });
    });
  },
  { name: 'atskills-web', dependencies: ['atskills-database', 'atskills-search', 'atskills-viewer'] },
);
