import { parseIdentity, trimTrailingSlashes } from '@atskills/protocol';
import { LRUCache } from 'lru-cache';
import { stringify } from 'yaml';
import { flagBadges, flagTitle, referenceBox, referenceText } from '../components.js';
import {
  formatBytes,
  formatCount,
  formatDate,
  formatDateTime,
  shellQuote,
  shortRevision,
} from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { badgeUrl, ownerFeedUrl, repositoryPageUrl, skillFileUrl, skillPageUrl } from '../urls.js';
import type { FlagView, SkillFileView, SkillPageModel } from '../view-models.js';
import { sourceLinks } from './search-page.js';

/**
 * Rendered bodies by identity and revision (a revision's body and files never change), least recently
 * shown evicted first: rendering is up to half a second of the event loop for a large hostile body, and a
 * page is opened again and again. At most 16 Mi characters of HTML are kept.
 */
const renderedBodies = new LRUCache<string, SafeHtml>({
  maxSize: 16 * 2 ** 20,
  sizeCalculation: (body) => Math.max(1, body.value.length),
});

/** The skill's body as sanitized HTML, its relative links to its own files resolved. */
function renderedBody(model: Pick<SkillPageModel, 'identity' | 'revision' | 'body' | 'files'>): SafeHtml {
  const key = `${model.identity}\0${model.revision}`;
  const kept = renderedBodies.get(key);
  if (kept) return kept;
  const fileSet = new Set(model.files.map((f) => f.path));
  const body = renderMarkdown(model.body, {
    resolveRelative: (target) => {
      const file = resolveInside(target);
      return file !== null && fileSet.has(file) ? skillFileUrl(model.identity, file) : null;
    },
  });
  renderedBodies.set(key, body);
  return body;
}

/** The page of one skill: what it is, whether it is flagged, how to use it, its files and its rendered body. */
export function renderSkillPage(model: SkillPageModel): string {
  const id = parseIdentity(model.identity);
  const [first = '', second = ''] = id.path.split('/');
  const body = renderedBody(model);
  return layout(
    {
      title: model.name || model.identity,
      noindex: model.pinned === true,
      ...(id.source === 'gh' || id.source === 'hub'
        ? {
            feeds: [
              {
                title: `New and updated skills of ${id.source}:${first}`,
                href: ownerFeedUrl(id.source, first),
              },
            ],
          }
        : {}),
    },
    html`<h1 class="skill-title">${model.name || model.identity} ${flagBadges(model.flags)}</h1>
<p class="lead">${model.description}</p>
${model.pinned ? html`<p class="notice">This page shows the pinned revision <code>${model.revision}</code>. <a href="${skillPageUrl(model.identity)}">Show the current revision</a>.</p>` : ''}
<dl class="facts">
<dt>Identity</dt><dd><code>${model.identity}</code></dd>
${id.source === 'gh' || id.source === 'hub' ? html`<dt>Source</dt><dd>${sourceLinks({ source: id.source, repository: `${first}/${second}` })}</dd>` : ''}
${id.source === 'gh' ? html`<dt>Index status</dt><dd><a href="${repositoryPageUrl(first, second)}">why skills of ${first}/${second} are or are not listed</a></dd>` : ''}
<dt>Revision</dt><dd><code title="${model.revision}">${shortRevision(model.revision)}</code></dd>
${formatDate(model.lastSeen) ? html`<dt>Last seen</dt><dd>${formatDate(model.lastSeen)}</dd>` : ''}
${model.stars !== undefined ? html`<dt>Stars</dt><dd>★ ${formatCount(model.stars)}</dd>` : ''}
${model.uses ? html`<dt>Uses</dt><dd>${formatCount(model.uses.week)} this week · ${formatCount(model.uses.total)} all time (<a href="/about/metrics">how uses are counted</a>)</dd>` : ''}
${tokenFacts(model)}
</dl>
${flagsPanel(model.flags, model.identity, model.revision)}
${model.warnings.length > 0 ? html`<div class="panel"><h2>Frontmatter warnings</h2><ul>${model.warnings.map((w) => html`<li><code>${w}</code></li>`)}</ul></div>` : ''}
${usagePanel(model.identity, model.hubUrl)}
${badgePanel(model.identity, model.hubUrl)}
${frontmatterPanel(model.frontmatter)}
${filesPanel(model.identity, model.files)}
${historyPanel(model)}
<article class="markdown" aria-label="SKILL.md">${body}</article>`,
  ).value;
}

/** The stored revisions with the date each was first indexed, newest first, each a link to that revision. */
function historyPanel(model: SkillPageModel): SafeHtml {
  const history = model.history ?? [];
  if (history.length === 0) return html``;
  return html`<section class="panel" aria-labelledby="history-title">
<h2 id="history-title">Revision history (${formatCount(history.length)}${history.length >= 20 ? ', latest' : ''})</h2>
<ol class="history">${history.map((h) => {
    const current = h.current;
    const shown = h.revision === model.revision;
    const link = skillPageUrl(model.identity, current ? undefined : { rev: h.revision });
    return html`<li${shown ? html` aria-current="page"` : ''}><a href="${link}"><code title="${h.revision}">${shortRevision(h.revision)}</code></a>
<span class="meta">${formatDateTime(h.createdAt) ?? ''}${current ? ' · current' : ''}${shown && !current ? ' · shown' : ''}${h.commit ? html` · from <code title="${h.commit}">${shortRevision(h.commit)}</code>` : ''}</span></li>`;
  })}</ol>
</section>`;
}

/** The README badge of the skill (name and weekly uses) as Markdown to copy. */
function badgePanel(identity: string, hubUrl: string | undefined): SafeHtml {
  const base = trimTrailingSlashes(hubUrl ?? '');
  const markdown = `[![${identity}](${base}${badgeUrl(identity)})](${base}${skillPageUrl(identity)})`;
  return html`<div class="panel"><h2>README badge</h2>
<p><img src="${badgeUrl(identity)}" alt="Badge: name and uses this week"></p>
${referenceBox(markdown)}
</div>`;
}

function tokenFacts(model: SkillPageModel): SafeHtml {
  if (model.descriptionTokens === undefined && model.bodyTokens === undefined) return html``;
  return html`<dt>Token cost</dt><dd>${
    model.descriptionTokens !== undefined
      ? html`<span title="Loaded in every session once installed">${formatCount(model.descriptionTokens)} tokens resident (description)</span>`
      : ''
  }${model.descriptionTokens !== undefined && model.bodyTokens !== undefined ? ' · ' : ''}${
    model.bodyTokens !== undefined
      ? html`<span title="Loaded when the skill fires">${formatCount(model.bodyTokens)} tokens body</span>`
      : ''
  }</dd>`;
}

/**
 * The safety findings of this revision with rule, file, line and excerpt, one row per hit; flags whose
 * dispute hub administrators accepted stay listed, marked as suppressed; and how to dispute or report.
 */
export function flagsPanel(flags: readonly FlagView[], identity = '', revision = ''): SafeHtml {
  if (flags.length === 0) return html``;
  const report = `curl -X POST -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"kind":"dispute","rule":"<rule>","revision":"${revision}","note":"why it is wrong"}' <hub>/v1/skills/${identity}/reports`;
  return html`<section class="panel flags-panel" aria-labelledby="flags-title">
<h2 id="flags-title">Safety flags</h2>
<p>The hub's scanner found content worth reading before an agent acts on this skill (revision <code>${shortRevision(revision)}</code>).</p>
<table class="data stack"><thead><tr><th>Rule</th><th>Severity</th><th>Where</th><th>Excerpt</th><th>Why</th><th>Status</th></tr></thead>
<tbody>${flags.map(
    (f) =>
      html`<tr title="${flagTitle(f)}"${f.suppressedBy !== undefined ? html` class="suppressed"` : ''}><td data-label="Rule"><code>${f.rule}</code></td><td data-label="Severity">${f.severity}</td><td data-label="Where">${f.file ? html`<code>${f.file}${f.line !== undefined ? `:${f.line}` : ''}</code>` : ''}</td><td data-label="Excerpt">${f.evidence ? html`<code>${f.evidence}</code>` : ''}</td><td data-label="Why">${f.message}</td><td data-label="Status">${f.suppressedBy !== undefined ? `dispute accepted (report ${f.suppressedBy}): suppressed for this content` : 'active'}</td></tr>`,
  )}</tbody></table>
<p>A flag is wrong, or the skill is malicious? Report it (any hub token): <code>${report}</code> (<code>"kind":"malicious"</code> without a rule to report the skill).</p>
</section>`;
}

/** How to reference, save and install the skill, with the CLI equivalents (the client installs from this hub). */
export function usagePanel(identity: string, hubUrl?: string): SafeHtml {
  const quoted = shellQuote(identity);
  return html`<section class="panel usage" aria-labelledby="usage-title">
<h2 id="usage-title">Use it</h2>
<p>Paste into a message to an agent to load it once:</p>
${referenceBox(referenceText(identity))}
<p>Save a copy into the project's <code>.atskills/</code> (it becomes an ordinary project file with a <code>.source</code> stamp):</p>
${referenceBox(referenceText(identity, { save: true }))}
<p>Install it, so its name and description load at every session start (one line in <code>.atskills/.autotrigger</code>):</p>
${referenceBox(referenceText(identity, { install: true }))}
<p>From a terminal, with the <code>atskills</code> client (install it once: <code>npm install -g ${hubUrl ?? '<this hub>'}/cli/atskills.tgz</code>, Node 20):</p>
<pre><code>atskills get ${quoted}
atskills save ${quoted}
atskills install ${quoted}</code></pre>
</section>`;
}

function frontmatterPanel(frontmatter: Record<string, unknown>): SafeHtml {
  if (Object.keys(frontmatter).length === 0) return html``;
  return html`<details class="panel"><summary>Frontmatter</summary><pre class="frontmatter"><code>${stringify(frontmatter)}</code></pre></details>`;
}

function filesPanel(identity: string, files: readonly SkillFileView[]): SafeHtml {
  if (files.length === 0) return html``;
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const archive = `/v1/archive/${skillPageUrl(identity).slice('/s/'.length)}`;
  return html`<section class="panel" aria-labelledby="files-title">
<h2 id="files-title">Files (${formatCount(files.length)}, ${formatBytes(total)})</h2>
<table class="data"><thead><tr><th>Path</th><th>Size</th><th>sha256</th></tr></thead>
<tbody>${files.map(
    (f) =>
      html`<tr><td><a href="${skillFileUrl(identity, f.path)}"><code>${f.path}</code></a></td><td class="num">${formatBytes(f.size)}</td><td><code title="${f.sha256}">${f.sha256.slice(0, 12)}</code></td></tr>`,
  )}</tbody></table>
<p><a href="${archive}">Download the folder (tar.gz)</a></p>
</section>`;
}

/** Normalizes a Markdown link target relative to the skill folder; null when it leaves the folder. */
export function resolveInside(target: string): string | null {
  const [withoutFragment = ''] = target.split(/[?#]/, 1);
  let decoded: string;
  try {
    decoded = decodeURIComponent(withoutFragment);
  } catch {
    return null;
  }
  const out: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(segment);
  }
  return out.length === 0 ? null : out.join('/');
}
