import { renderMenu } from '@atskills/protocol';
import { flagBadges, referenceBox, referenceText } from '../components.js';
import { formatCount, shortRevision } from '../format.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { skillPageUrl } from '../urls.js';
import type { MenuPageModel } from '../view-models.js';
import { usagePanel } from './skill-page.js';

/** A folder without SKILL.md: the menu an agent would get, with a link and a reference per skill. */
export function renderMenuPage(model: MenuPageModel): string {
  const count = model.items.length;
  return layout(
    { title: model.identity },
    html`<h1 class="skill-title"><code>${model.identity}</code></h1>
<p class="lead">A collection of ${formatCount(count)} skill${count === 1 ? '' : 's'}. Referencing it gives the agent a menu, one line per
skill; the agent then loads the ones it needs.</p>
<dl class="facts"><dt>Revision</dt><dd><code title="${model.revision}">${shortRevision(model.revision)}</code></dd></dl>
${count === 0 ? html`<p class="notice">This folder holds no skills.</p>` : ''}
<ul class="menu">${model.items.map(
      (
        item,
      ) => html`<li><a href="${skillPageUrl(item.identity)}">${item.name || item.identity}</a> ${flagBadges(item.flags ?? [])}
<div>${item.description}</div>${referenceBox(referenceText(item.identity))}</li>`,
    )}</ul>
${usagePanel(model.identity, model.hubUrl)}
<details class="panel"><summary>The menu as an agent sees it</summary><pre><code>${renderMenu(
      model.items.map((i) => ({ identity: i.identity, name: i.name, description: i.description })),
    )}</code></pre></details>`,
  ).value;
}
