import { formatCount } from '../format.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { ownerFeedUrl } from '../urls.js';
import type { OwnerPageModel } from '../view-models.js';
import { browseSection, containerItem, skillItem } from './browse-lists.js';
import { searchForm } from './search-page.js';

/** A GitHub owner (/o/<owner>) or hub namespace (/n/<namespace>): its repositories or collections. */
export function renderOwnerPage(model: OwnerPageModel): string {
  const gh = model.source === 'gh';
  const kind = gh ? 'repositories' : 'collections';
  const feed = ownerFeedUrl(model.source, model.owner);
  return layout(
    {
      title: `${model.source}:${model.owner}`,
      feeds: [{ title: `New and updated skills of ${model.source}:${model.owner}`, href: feed }],
    },
    html`<h1 class="skill-title"><code>${model.source}:${model.owner}</code></h1>
<p class="lead">${gh ? 'A GitHub owner' : 'A hub namespace'}: ${formatCount(model.skills)} skill${model.skills === 1 ? '' : 's'} in
${formatCount(model.containerCount)} ${model.containerCount === 1 ? (gh ? 'repository' : 'collection') : kind}.</p>
<dl class="facts">
${gh ? html`<dt>On GitHub</dt><dd><a href="https://github.com/${encodeURIComponent(model.owner)}" rel="nofollow noopener noreferrer">github.com/${model.owner} ↗</a></dd>` : ''}
<dt>Feed</dt><dd><a href="${feed}">Atom feed of new and updated skills</a></dd>
</dl>
${searchForm('', gh ? { owner: model.owner } : { namespace: model.owner }, { autofocus: false, showActive: false })}
<div class="browse">
${browseSection(
  'containers',
  gh ? 'Repositories' : 'Collections',
  model.containers.map((c) => containerItem(c, { showOwner: false })),
  'None.',
)}
${browseSection(
  'recently-updated',
  'Recently updated',
  model.updated.map((s) => skillItem(s, 'updated')),
  'Nothing yet.',
)}
</div>`,
  ).value;
}
