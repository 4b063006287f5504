import { parseIdentity, renderMenu } from '@atskills/protocol';
import { flagBadges, referenceBox, referenceText } from '../components.js';
import { formatCount, shellQuote, shortRevision } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { ownerFeedUrl, ownerPageUrl, repositoryPageUrl, skillPageUrl } from '../urls.js';
import type { MenuPageModel } from '../view-models.js';

/** A folder without SKILL.md: the menu an agent would get, with a link and a reference per skill. */
export function renderMenuPage(model: MenuPageModel): string {
  const count = model.items.length;
  return layout(
    { title: model.identity, feeds: ownerFeeds(model.identity) },
    html`<h1 class="skill-title"><code>${model.identity}</code></h1>
<p class="lead">A collection of ${formatCount(count)} skill${count === 1 ? '' : 's'}. Referencing it gives the agent a menu, one line per
skill; the agent then loads the ones it needs.</p>
<dl class="facts">${ownerFact(model.identity)}<dt>Revision</dt><dd><code title="${model.revision}">${shortRevision(model.revision)}</code></dd></dl>
${count === 0 ? html`<p class="notice">This folder holds no skills.</p>` : ''}
${subcollectionsPanel(model)}
<h2 class="list-title" id="skills-title">Skills (${formatCount(count)})</h2>
<ul class="menu" aria-labelledby="skills-title">${model.items.map(
      (
        item,
      ) => html`<li><a href="${skillPageUrl(item.identity)}">${item.name || item.identity}</a> ${flagBadges(item.flags ?? [])}
<div>${item.description}</div>${referenceBox(referenceText(item.identity))}</li>`,
    )}</ul>
${menuUsagePanel(model.identity, model.hubUrl)}
<details class="panel"><summary>The menu as an agent sees it</summary><pre><code>${renderMenu(
      model.items.map((i) => ({ identity: i.identity, name: i.name, description: i.description })),
    )}</code></pre></details>`,
  ).value;
}

/** The owner's feed as a `<link rel="alternate">`. */
function ownerFeeds(identity: string): { title: string; href: string }[] {
  const { source, path } = parseIdentity(identity);
  if (source !== 'gh' && source !== 'hub') return [];
  const owner = path.split('/')[0] ?? '';
  return [{ title: `New and updated skills of ${source}:${owner}`, href: ownerFeedUrl(source, owner) }];
}

/** Links to the owner's page and, for a GitHub repository, its index status. */
function ownerFact(identity: string): SafeHtml {
  const { source, path } = parseIdentity(identity);
  if (source !== 'gh' && source !== 'hub') return html``;
  const [owner = '', container = ''] = path.split('/');
  return html`<dt>Owner</dt><dd><a href="${ownerPageUrl(source, owner)}">${source}:${owner}</a>${
    source === 'gh'
      ? html` · <a href="${repositoryPageUrl(owner, container)}">index status of ${owner}/${container}</a>`
      : ''
  }</dd>`;
}

/**
 * The folders directly below this one that hold skills, with how many each holds: each is a smaller
 * collection to reference. Counted from the menu's own items, so it always agrees with the list.
 */
export function subcollectionsOf(identity: string, items: readonly { identity: string }[]) {
  const base = parseIdentity(identity);
  const prefix = `${base.path}/`;
  const counts = new Map<string, number>();
  for (const item of items) {
    const { path } = parseIdentity(item.identity);
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length).split('/');
    if (rest.length < 2) continue;
    const folder = rest[0] as string;
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts].map(([folder, skills]) => ({
    identity: parseIdentity(
      `${base.source}:${`${base.path}/${folder}`.split('/').map(encodeURIComponent).join('/')}`,
    ).identity,
    folder,
    skills,
  }));
}

function subcollectionsPanel(model: MenuPageModel): SafeHtml {
  const subs = subcollectionsOf(model.identity, model.items);
  if (subs.length === 0) return html``;
  return html`<section class="panel" aria-labelledby="subcollections-title">
<h2 id="subcollections-title">Sub-collections (${formatCount(subs.length)})</h2>
<ul class="menu">${subs.map(
    (sub) =>
      html`<li><a href="${skillPageUrl(sub.identity)}"><code>${sub.folder}/</code></a> <span class="meta">${formatCount(sub.skills)} skill${sub.skills === 1 ? '' : 's'}</span></li>`,
  )}</ul>
</section>`;
}

/**
 * How to use a folder, offering only what the client does with one: load the menu, or install the whole
 * folder as one `.autotrigger` line (`@<identity>/`, every skill of the menu within K). A folder is never
 * saved as a whole (the client refuses and lists its skills), so `:save` is offered per skill above.
 */
function menuUsagePanel(identity: string, hubUrl?: string): SafeHtml {
  const quoted = shellQuote(identity);
  return html`<section class="panel usage" aria-labelledby="usage-title">
<h2 id="usage-title">Use it</h2>
<p>Paste into a message to an agent to give it this menu once:</p>
${referenceBox(referenceText(identity))}
<p>Install the whole folder, so every skill in it is resident at each session start (one line,
<code>@${identity}/</code>, in <code>.atskills/.autotrigger</code>):</p>
${referenceBox(referenceText(identity, { install: true }))}
<p>To save a copy, save the skills one by one (each has its own page). From a terminal, with the
<code>atskills</code> client (install it once: <code>npm install -g ${hubUrl ?? '<this hub>'}/cli/atskills.tgz</code>, Node 20):</p>
<pre><code>atskills get ${quoted}
atskills install ${quoted}</code></pre>
</section>`;
}
