import { parseIdentity, trimTrailingSlashes } from '@atskills/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpProblem } from '../../problems.js';
import { referenceBox, referenceText } from '../components.js';
import { formatCount, formatDate } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { sendPage } from '../send-page.js';
import { queryString, repositoryPageUrl, skillPageUrl } from '../urls.js';
import type { ErrorPageModel } from '../view-models.js';

/** A helpful error page: what went wrong and what to do instead (search, a sub-collection, a cached copy). */
export function renderErrorPage(model: ErrorPageModel): string {
  return layout(
    { title: model.title, noindex: true },
    html`<h1 class="skill-title">${model.title}</h1>
<p class="error-code">${model.status} · <code>${model.code}</code>${model.requestId ? html` · request <code>${model.requestId}</code>` : ''}</p>
${model.detail && !(model.status === 422 && model.subcollections) ? html`<p class="lead">${model.detail}</p>` : ''}
${advice(model)}`,
  ).value;
}

function advice(model: ErrorPageModel): SafeHtml {
  if (model.noRoute) return noRouteAdvice();
  if (model.status === 410) return goneAdvice(model);
  if (model.status === 422 && model.subcollections) return overCapAdvice(model);
  if (model.status === 404) return notFoundAdvice(model);
  if (model.status === 400) {
    return html`${model.reason ? html`<p>Rule broken: <code>${model.reason}</code></p>` : ''}<p>An identity looks like <code>gh:owner/repo/path/to/skill</code> or <code>hub:namespace/collection</code>.
Write a space as <code>%20</code> and a colon inside a path as <code>%3A</code>.</p>${searchHint(model.identity)}`;
  }
  if (model.status >= 500) {
    return html`<p>The hub could not answer just now. Try again in a moment; if it keeps failing, report the request id.</p>`;
  }
  return html``;
}

function goneAdvice(model: ErrorPageModel): SafeHtml {
  const lastSeen = formatDate(model.lastSeen);
  return html`<div class="panel"><dl class="facts">
${model.identity ? html`<dt>Identity</dt><dd><code>${model.identity}</code></dd>` : ''}
${model.lastRevision ? html`<dt>Last revision</dt><dd><code>${model.lastRevision}</code></dd>` : ''}
${lastSeen ? html`<dt>Last seen</dt><dd>${lastSeen}</dd>` : ''}
</dl></div>
<p>The skill was removed upstream. Copies already saved in a project or held in a client's cache keep working
(the client reports them as "upstream gone, cached copy from ${lastSeen ?? 'an earlier date'}").</p>
${model.identity && model.lastRevision ? html`<p><a href="${skillPageUrl(model.identity, { rev: model.lastRevision })}">View the last revision</a></p>` : ''}
${searchHint(model.identity)}`;
}

function overCapAdvice(model: ErrorPageModel): SafeHtml {
  const subs = model.subcollections ?? [];
  return html`<p>${model.identity ? html`<code>${model.identity}</code> holds` : 'This folder holds'} ${formatCount(model.count ?? 0)} skills, more than one reference may load
(128). Reference a smaller part instead:</p>
${
  subs.length === 0
    ? html`<p class="notice">No sub-collection fits under the cap; reference single skills (search below).</p>`
    : html`<ul class="menu">${subs.map((sub) => {
        const identity = sub.identity ?? subIdentity(model.identity, sub.path);
        return html`<li>${identity ? html`<a href="${skillPageUrl(identity)}"><code>${identity}</code></a>` : html`<code>${sub.path}</code>`} - ${formatCount(sub.skills)} skills${identity ? referenceBox(referenceText(identity)) : ''}</li>`;
      })}</ul>`
}
${allSkillsLink(model.identity)}
${searchHint(model.identity)}`;
}

/** For a GitHub repository or a folder of one: its repository page, which lists every skill it holds. */
function allSkillsLink(identity: string | undefined): SafeHtml {
  if (!identity) return html``;
  try {
    const id = parseIdentity(identity);
    const [owner = '', repo = ''] = id.path.split('/');
    if (id.source !== 'gh' || !owner || !repo) return html``;
    return html`<p><a href="${repositoryPageUrl(owner, repo)}">Every skill of ${owner}/${repo}</a>, one link each.</p>`;
  } catch {
    return html``;
  }
}

function noRouteAdvice(): SafeHtml {
  return html`<p>No page lives at this address. The hub's pages are <a href="/">search</a> and
<a href="/suggest">describe your task</a>, a skill or folder at <code>/s/&lt;identity&gt;</code>, a GitHub owner
at <code>/o/&lt;owner&gt;</code>, a hub namespace at <code>/n/&lt;namespace&gt;</code> and a repository's index
status at <code>/r/&lt;owner&gt;/&lt;repo&gt;</code>.</p>${searchHint(undefined)}`;
}

function notFoundAdvice(model: ErrorPageModel): SafeHtml {
  return html`<p>No public skill or collection lives at this identity. GitHub paths keep their case
(<code>gh:Owner/Repo/Skill</code> differs from <code>gh:owner/repo/skill</code>); hub names are lowercase.
The crawler may not have indexed a new repository yet.</p>${searchHint(model.identity)}`;
}

function searchHint(identity: string | undefined): SafeHtml {
  const word = identity?.split(/[/:]/).filter(Boolean).at(-1);
  if (!word) return html`<p><a href="/">Search the hub</a></p>`;
  return html`<p><a href="/${queryString({ q: word })}">Search the hub for “${word}”</a></p>`;
}

/** The identity of a sub-collection given as a path relative to the refused identity's repository/collection. */
function subIdentity(identity: string | undefined, path: string): string | null {
  if (!identity) return null;
  try {
    const id = parseIdentity(identity);
    const [first = '', second = ''] = id.path.split('/');
    const relative = path.startsWith(`${first}/${second}/`) ? path : `${first}/${second}/${path}`;
    return parseIdentity(`${id.source}:${relative.split('/').map(encodeURIComponent).join('/')}`).identity;
  } catch {
    return null;
  }
}

/**
 * The paths of HTML pages (search, skill and menu pages, owner, namespace and repository pages, suggest,
 * about): a request to one that the router refuses before any route (a malformed percent-encoding, a segment
 * over maxParamLength) is answered with a page too, not the API's problem+json.
 */
const PAGE_PATH = /^\/(?:$|[?#]|[sonr]\/|suggest(?:$|[/?#])|about\/)/;

/** True when `url` is the path of an HTML page. */
export function isPagePath(url: string): boolean {
  return PAGE_PATH.test(url);
}

// Where the API lives: a URL under these that no route takes stays a problem+json 404, whoever asks.
const API_PATH =
  /^\/(?:v1|api|admin|mcp|openapi\.json|docs|search|healthz|readyz|metrics|cli|hub|\.well-known)(?:$|[/?#])/;

/** True when `url` is under one of the API's paths (not a page's). */
export function isApiPath(url: string): boolean {
  return API_PATH.test(url);
}

/** True when the client asks for HTML and not for JSON: a browser's navigation, never an API client's. */
export function prefersPage(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    /\btext\/html\b/i.test(accept) &&
    !/\bapplication\/(?:problem\+)?json\b/i.test(accept)
  );
}

/**
 * Answers a browser's request that no route takes: a page URL written with trailing slashes goes to the
 * page (308), anything else is a "No page here" page with where the pages are.
 */
export function sendNoPage(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const at = request.url.indexOf('?');
  const path = at < 0 ? request.url : request.url.slice(0, at);
  const canonical = trimTrailingSlashes(path);
  // The trimmed path still starts with a page prefix (`/o/`, `/about/`...), never `//`: no other host.
  if (
    (request.method === 'GET' || request.method === 'HEAD') &&
    canonical !== path &&
    isPagePath(canonical)
  ) {
    // Only browsers are sent here (an API client gets a problem): a shared cache must not replay it to one.
    return reply
      .header('cache-control', 'no-cache')
      .header('vary', 'Accept')
      .redirect(at < 0 ? canonical : canonical + request.url.slice(at), 308);
  }
  request.log.warn({ url: request.url }, 'no such page');
  const model: ErrorPageModel = {
    status: 404,
    code: 'not-found',
    title: 'No page here',
    requestId: request.id,
    noRoute: true,
  };
  return sendPage(reply, 404, renderErrorPage(model), 'Authorization, Accept');
}

/** Answers a request to a page path that no route could take (FST_ERR_BAD_URL and the like) as an error page. */
export function sendRefusedPage(
  request: FastifyRequest,
  reply: FastifyReply,
  refused: HttpProblem,
): FastifyReply {
  const reason = refused.extensions.reason;
  const onSkillPage = request.url.startsWith('/s/');
  const model: ErrorPageModel = {
    status: refused.status,
    code: refused.code,
    title:
      refused.status === 400 && onSkillPage
        ? 'That identity is not valid'
        : refused.status === 404
          ? 'No page here'
          : 'That request could not be answered',
    requestId: request.id,
  };
  // The router's own words quote the whole URL (5,000 characters of it, at times): not shown.
  if (onSkillPage && refused.detail) model.detail = refused.detail;
  if (typeof reason === 'string') model.reason = reason;
  // Refused before any route, so before the security plugin's hooks: nosniff is set here.
  return sendPage(reply.header('x-content-type-options', 'nosniff'), refused.status, renderErrorPage(model));
}
