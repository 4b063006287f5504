import { MENU_CAP } from '@atskills/protocol';
import { formatDateTime, shortRevision } from '../format.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { containerPageUrl, githubUrl, ownerPageUrl, skillPageUrl } from '../urls.js';

/** What the repository page shows: GET /v1/repos/<owner>/<repo>'s status, skills and problems. */
export interface RepositoryPageModel {
  owner: string;
  name: string;
  status: string;
  headRevision: string | null;
  lastCrawledAt: string | null;
  skills: readonly string[];
  problems: readonly { path: string; code: string; message: string; line?: number }[];
  statusUrl: string;
}

const STATUS_TEXT: Record<string, string> = {
  queued: 'Queued: a crawl will start shortly.',
  crawling: 'Being crawled now.',
  indexed: 'Indexed.',
  failed: 'The last crawl failed; the problems below say why.',
  'not-indexed': 'Not indexed yet.',
};

/** The hub's base URL, read off a repository's status URL (`<hub>/v1/repos/<owner>/<name>`). */
function hubBase(statusUrl: string): string {
  const at = statusUrl.indexOf('/v1/repos/');
  return at < 0 ? statusUrl : statusUrl.slice(0, at);
}

/** One repository's index status, so an author sees exactly why a skill is or is not listed (SPEC 2.6). */
export function renderRepositoryPage(model: RepositoryPageModel): string {
  const full = `${model.owner}/${model.name}`;
  return layout(
    { title: `${full}: index status`, noindex: true },
    html`<h1 class="skill-title"><code>gh:${full}</code></h1>
<p class="lead">${STATUS_TEXT[model.status] ?? model.status}</p>
<dl class="facts">
<dt>Status</dt><dd><code>${model.status}</code></dd>
<dt>Source</dt><dd><a href="${githubUrl(model.owner, model.name)}" rel="noopener noreferrer">GitHub</a></dd>
<dt>Owner</dt><dd><a href="${ownerPageUrl('gh', model.owner)}">gh:${model.owner}</a></dd>
${
  // A folder of more skills than a menu may list reads as its sub-collections, not as one collection.
  model.skills.length > 0 && model.skills.length <= MENU_CAP
    ? html`<dt>Browse</dt><dd><a href="${containerPageUrl('gh', model.owner, model.name)}">the skills of ${full} as a collection</a></dd>`
    : ''
}
${model.headRevision ? html`<dt>Head</dt><dd><code title="${model.headRevision}">${shortRevision(model.headRevision)}</code></dd>` : ''}
${model.lastCrawledAt ? html`<dt>Last crawled</dt><dd>${formatDateTime(model.lastCrawledAt)}</dd>` : ''}
<dt>As JSON</dt><dd><a href="${model.statusUrl}"><code>GET /v1/repos/${full}</code></a></dd>
</dl>
${model.status === 'not-indexed' ? html`<p class="notice">Ask for it: <code>curl -X POST -H 'content-type: application/json' -d '{"repo":"${full}"}' ${hubBase(model.statusUrl)}/v1/index-requests</code></p>` : ''}
<div class="panel"><h2>Problems (${model.problems.length})</h2>
${
  model.problems.length === 0
    ? html`<p>None found.</p>`
    : html`<table class="data stack"><thead><tr><th>File</th><th>Code</th><th>Reason</th></tr></thead><tbody>${model.problems.map(
        (p) =>
          html`<tr><td data-label="File"><code>${p.path || '(repository)'}${p.line ? `:${p.line}` : ''}</code></td><td data-label="Code"><code>${p.code}</code></td><td data-label="Reason">${p.message}</td></tr>`,
      )}</tbody></table>`
}</div>
<div class="panel"><h2>Listed skills (${model.skills.length})</h2>
<ul class="menu">${model.skills.map((identity) => html`<li><a href="${skillPageUrl(identity)}"><code>${identity}</code></a></li>`)}</ul></div>`,
  ).value;
}
