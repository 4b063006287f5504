import {
  byLikelihood,
  SEARCH_MAX_QUERY,
  SUGGEST_MAX_MESSAGE,
  UNLIKELY_SUGGESTION_BELOW,
} from '@atskills/protocol';
import type { SuggestPageResponse } from '../../schemas.js';
import { flagBadges, referenceBox, wireFlagView } from '../components.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { queryString, skillPageUrl } from '../urls.js';

/** What the "describe your task" page shows: the message typed, and the hub's answer when there is one. */
export interface SuggestPageModel {
  message: string;
  /** Suggestions asked for, when not the page's default (kept by the form). */
  limit?: number;
  answer?: SuggestPageResponse;
  error?: string;
}

/**
 * A score as the page shows it: two decimals, rounded down, so that a score listed under
 * UNLIKELY_SUGGESTION_BELOW never reads as that floor (0.097 as "0.09", not "0.10").
 */
function shownScore(score: number): string {
  return (Math.floor(score * 100 + 1e-9) / 100).toFixed(2);
}

type SuggestHit = SuggestPageResponse['results'][number];

/**
 * One suggested skill: its page, score, description, the words it answers, flags and reference; its title a
 * level under the list's heading when the list has one (the less likely ones, under theirs).
 */
function suggestionItem(r: SuggestHit, underHeading: boolean) {
  const title = html`<a href="${skillPageUrl(r.identity)}">${r.name}</a> <span class="score" title="Estimated chance that this skill helps">${`score ${shownScore(r.score)}`}</span>`;
  return html`<li class="result">
${underHeading ? html`<h3>${title}</h3>` : html`<h2>${title}</h2>`}
<p>${r.description}</p>
<p class="matched">For: <q>${r.matched}</q></p>
${flagBadges(r.flags.map(wireFlagView))}
${referenceBox(r.reference)}
</li>`;
}

/** The hub's suggestions, those scored under UNLIKELY_SUGGESTION_BELOW in a list of their own after the others. */
function suggestionLists(results: readonly SuggestHit[]) {
  const { likely, unlikely } = byLikelihood(results);
  const floor = UNLIKELY_SUGGESTION_BELOW.toFixed(2);
  return html`${likely.length > 0 ? html`<ol class="results suggest-results">${likely.map((r) => suggestionItem(r, false))}</ol>` : ''}
${
  unlikely.length > 0
    ? html`<section class="suggest-unlikely">
<h2>${likely.length > 0 ? 'Less likely to help' : 'None of these is likely to help'}</h2>
<p>${`Scored under ${floor}: on the hub's judged messages, about 6 in 100 such suggestions helped. Agents' prompt hooks leave them out.`}</p>
<ol class="results suggest-results">${unlikely.map((r) => suggestionItem(r, true))}</ol>
</section>`
    : ''
}`;
}

/**
 * The message as a search query: whole when it fits the search's limit, else up to the last space that does
 * (a search page link must not answer 400).
 */
function searchQueryOf(message: string): string {
  const text = message.trim().replace(/\s+/g, ' ');
  if (text.length <= SEARCH_MAX_QUERY) return text;
  const cut = text.slice(0, SEARCH_MAX_QUERY + 1);
  const space = cut.lastIndexOf(' ');
  return space > 0 ? cut.slice(0, space) : text.slice(0, SEARCH_MAX_QUERY);
}

/** `/suggest`: a "describe your task" box and the skills the hub suggests for it, with their scores. */
export function renderSuggestPage(model: SuggestPageModel): string {
  const { answer } = model;
  const title = model.error
    ? 'Suggestions unavailable'
    : !answer
      ? 'Describe your task'
      : answer.abstained
        ? 'No skill fits'
        : 'Suggested skills';
  return layout(
    { title, noindex: true },
    html`<h1>Describe your task</h1>
<form method="post" action="/suggest" class="suggest-form">
<label for="suggest-q">What are you working on? Write it as you would to your agent.</label>
<textarea id="suggest-q" name="q" rows="6" maxlength="${SUGGEST_MAX_MESSAGE}" required placeholder="the CI on my PR keeps failing on lint, pull the Actions logs and fix it">${model.message}</textarea>
${model.limit !== undefined ? html`<input type="hidden" name="limit" value="${String(model.limit)}">` : ''}
<button type="submit">Suggest skills</button>
</form>
${model.error ? html`<p class="notice" role="alert">${model.error}</p>` : ''}
${
  !answer
    ? html`<p>The hub reads the message the way it reads an agent's (code, logs and quoted text are set aside) and suggests the skills that would help. The score is the estimated chance that a skill helps, the same meaning for every message.</p>`
    : answer.abstained
      ? html`<p class="notice">No skill fits this well enough. The hub says nothing rather than suggest a wrong skill.</p>
<p><a href="/${queryString({ q: searchQueryOf(model.message) })}">Search the hub for these words</a> to browse the closest skills yourself.</p>`
      : suggestionLists(answer.results)
}`,
  ).value;
}
