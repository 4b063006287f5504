import { USES_CAP_PER_CLIENT } from '../../services/uses.js';
import { html } from '../html.js';
import { layout } from '../layout.js';

/** /about/metrics: exactly how uses are counted, what is stored and what is not. */
export function renderMetricsPage(): string {
  return layout(
    { title: 'How uses are counted' },
    html`<h1>How uses are counted</h1>
<p class="lead">A use is one client resolving a skill on one day (UTC). Uses are shown as <em>this week</em>
(the last 7 days, today included) and <em>all time</em>, on search results, skill pages, badges and in the API
(<code>uses: {week, total}</code> on <code>GET /v1/skills</code> and <code>GET /search</code>).</p>
<div class="panel">
<h2>What counts</h2>
<ul>
<li>Every successful resolution of a skill: <code>GET</code>, <code>HEAD</code> and <code>304 Not Modified</code>
answers of <code>/v1/skills/&lt;identity&gt;</code>, each skill of a <code>POST /v1/resolve</code> batch that is
<code>changed</code> or <code>unchanged</code>, <code>/v1/archive</code>, the compatibility routes
<code>/api/skills</code>, and the MCP tools <code>resolve_skill</code>, <code>read_skill_file</code> and
<code>resolve_batch</code>.</li>
<li>Not counted: menus, errors (not found, gone, over the cap), search, and people viewing pages on this site.</li>
</ul>
</div>
<div class="panel">
<h2>Distinct clients, not requests</h2>
<ul>
<li>Uses count people, not requests: a caller is its account when it sends a valid token, else its address.
Headers a caller picks freely (its user agent, a made-up credential) are no part of it, so one address adds at
most one use to a skill a day whatever headers it rotates. The account or address is hashed with a random
salt made fresh each day; only that salted hash is ever written, and the salt is kept only in memory or in
Redis for at most two days, so a stored hash can never be tied back to an address or account, nor matched
across days.</li>
<li>However often one client resolves a skill in a day, it adds at most one use to that skill that day.</li>
<li>One client adds to at most ${USES_CAP_PER_CLIENT} different skills a day; past that it counts nothing, so a
script that walks the index cannot inflate every skill.</li>
<li>With Redis, clients are counted with a HyperLogLog per skill and day (about 0.8% standard error); without
Redis, a table of today's salted hashes counts exactly and is emptied of past days. Only the daily number per
skill is kept for good.</li>
<li>Writes are batched every few seconds, off the request path; a use may take that long to show.</li>
</ul>
</div>
<div class="panel">
<h2>Who sees them</h2>
<p>Uses of a public skill are public. Uses of a private skill are shown only to those who may read the skill
(its team); everyone else gets the same 404 as for the skill itself.</p>
</div>
<div class="panel">
<h2>Ranking</h2>
<p>Search ranks by how well a skill matches first. Popularity is a bounded prior on top: it orders matches
of the same strength and never lifts a weak match over a strong one. With the Postgres search engine
(<code>SEARCH_ENGINE=postgres</code>) the prior is stars plus 50 per weekly use; the in-memory engine orders by
stars alone for now.</p>
</div>`,
  ).value;
}
