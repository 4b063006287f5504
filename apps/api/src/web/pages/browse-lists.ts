import { MENU_CAP } from '@atskills/protocol';
import { formatCount, formatDate } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { containerPageUrl, ownerPageUrl, repositoryPageUrl, skillPageUrl } from '../urls.js';
import type { ContainerLinkView, OwnerLinkView, SkillLinkView } from '../view-models.js';

// The lists the browsing pages share (home, owner pages): plain links with counts, readable at 375 px.

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A titled list section; an empty list says so instead of leaving a bare heading. */
export function browseSection(
  id: string,
  title: string,
  items: readonly SafeHtml[],
  empty: string,
): SafeHtml {
  return html`<section class="browse-list" aria-labelledby="${id}">
<h2 id="${id}">${title}</h2>
${items.length === 0 ? html`<p class="meta">${empty}</p>` : html`<ol class="links">${items}</ol>`}
</section>`;
}

/** An owner or namespace with what it holds. */
export function ownerItem(owner: OwnerLinkView): SafeHtml {
  const containers =
    owner.source === 'gh'
      ? plural(owner.containers, 'repository', 'repositories')
      : plural(owner.containers, 'collection', 'collections');
  return html`<li><a href="${ownerPageUrl(owner.source, owner.owner)}">${owner.source}:${owner.owner}</a>
<span class="meta">${plural(owner.skills, 'skill', 'skills')} · ${containers}</span></li>`;
}

/**
 * A repository or collection: its page (the menu of its skills), size and last change. A GitHub repository
 * holding more skills than a menu may list (MENU_CAP) links to its repository page, which lists them all:
 * its menu page is a 422.
 */
export function containerItem(c: ContainerLinkView, options: { showOwner?: boolean } = {}): SafeHtml {
  const label = options.showOwner === false ? c.container : `${c.owner}/${c.container}`;
  const updated = formatDate(c.updatedAt);
  const href =
    c.source === 'gh' && c.skills > MENU_CAP
      ? repositoryPageUrl(c.owner, c.container)
      : containerPageUrl(c.source, c.owner, c.container);
  return html`<li><a href="${href}">${label}</a>
<span class="meta">${plural(c.skills, 'skill', 'skills')}${updated ? ` · updated ${updated}` : ''}${
    c.source === 'gh' ? html` · <a href="${repositoryPageUrl(c.owner, c.container)}">index status</a>` : ''
  }</span></li>`;
}

/** A skill with its description and what the list is about (uses this week, or a date). */
export function skillItem(skill: SkillLinkView, show: 'uses' | 'added' | 'updated'): SafeHtml {
  const fact =
    show === 'uses'
      ? plural(skill.weekUses ?? 0, 'use this week', 'uses this week')
      : `${show} ${formatDate(show === 'added' ? skill.firstSeenAt : skill.updatedAt) ?? ''}`;
  return html`<li><a href="${skillPageUrl(skill.identity)}">${skill.name || skill.identity}</a>
<span class="meta">${fact} · <code>${skill.identity}</code></span>
${skill.description ? html`<span class="desc">${skill.description}</span>` : ''}</li>`;
}
