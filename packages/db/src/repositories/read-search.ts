import { type SQL, sql } from 'drizzle-orm';
import { type Database, executeWithSettings } from '../client.js';
import type { StoredFlag } from '../schema/skills.js';
import { type ReadScope, visibleTo } from './read-scope.js';

/** Filters of a search (all optional, combined with AND). */
export interface SearchFiltersInput {
  source?: 'gh' | 'hub';
  owner?: string;
  repo?: string;
  namespace?: string;
}

/** Keyset position: the last row of the previous page. */
export interface SearchKeyset {
  /** The row's score as Postgres prints a numeric (exact, so equality survives the round trip). */
  score: string;
  identity: string;
}

export interface SearchSkillsInput {
  /** The user's query text (1..256 characters). */
  query: string;
  filters: SearchFiltersInput;
  scope: ReadScope;
  limit: number;
  after?: SearchKeyset;
}

/** A search row: a skill, or a folder holding several skills (kind 'collection'). */
export interface SearchRow {
  kind: 'skill' | 'collection';
  identity: string;
  source: 'gh' | 'hub';
  owner: string;
  container: string;
  path: string;
  name: string;
  description: string;
  revision: string;
  stars: number;
  descriptionTokens: number;
  bodyTokens: number;
  warnings: string[];
  flags: StoredFlag[];
  skillCount: number | null;
  /** Exact numeric score as text: relevance (4 decimals) * 1e7 + stars, so popularity only breaks ties. */
  score: string;
}

/** Words of the query usable in a tsquery: letters and digits only, so nothing can inject tsquery syntax. */
export function queryWords(query: string): string[] {
  return (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

/**
 * The query as websearch_to_tsquery may read it: a `-` that negates nothing (a run of hyphens, or one
 * before a space or the end) stacks an operator without an operand, and 33 of them overflow the tsquery
 * stack (a 500). Such hyphens are spaces; a run before a word negates it once.
 */
export function websearchText(text: string): string {
  return text.replace(/-+(?![\p{L}\p{N}])/gu, ' ').replace(/-{2,}/g, '-');
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function filterConditions(filters: SearchFiltersInput, alias: 's' | 'f'): SQL {
  const a = sql.raw(alias);
  const parts: SQL[] = [sql`true`];
  if (filters.source) parts.push(sql`${a}.source = ${filters.source}`);
  if (filters.owner) parts.push(sql`lower(${a}.owner) = lower(${filters.owner})`);
  if (filters.repo) parts.push(sql`lower(${a}.container) = lower(${filters.repo})`);
  if (filters.namespace) parts.push(sql`(${a}.source = 'hub' and ${a}.owner = lower(${filters.namespace}))`);
  return sql.join(parts, sql` and `);
}

/**
 * Candidates per arm (name trigram/prefix, name+description text, body text). Bounding each arm keeps a
 * very common word from ranking every skill in the index; results past this depth are not paginated to
 * (as in other search engines' result windows).
 */
const ARM_LIMIT = 1000;

/**
 * Name and description matches taken, the most popular first. ts_rank costs tens of microseconds a row, so
 * it is computed for these candidates only, not for every skill a common word appears in.
 */
const HEAD_ARM_LIMIT = 300;

/** Shortest last word matched as a prefix. */
const MIN_PREFIX_LETTERS = 3;

/** The body arm runs only when names and descriptions give fewer candidates than this (a few pages). */
const BODY_ARM_THRESHOLD = 100;

/**
 * Body-only matches taken when the body arm runs. Unordered, so the bitmap heap scan stops after this many
 * rows instead of reading every match of a common word; they rank below name and description matches.
 */
const BODY_ARM_LIMIT = 200;

/**
 * Postgres full-text search over skills and the folders that hold several of them. Ranking: exact name,
 * then name prefix, then ts_rank over name and description (`search_head`: A name, B description), then
 * trigram similarity of the name (typos); stars break ties. Candidates come from three bounded arms over
 * the indexes (name prefix btree and trigrams, `search_head` by popularity, then the body-inclusive `search`
 * without prefix matching, only when the first two are thin); ranking reads only the small inline
 * `search_head`, never the body's toasted vector.
 * Folders come from `skill_folders` (kept by a trigger), matched by name for one-word queries (folder names
 * hold no spaces). Gone and unparsable skills are excluded;
 * private rows only reach scopes that may read them. Keyset pagination on (score desc, identity asc).
 */
export async function searchSkills(db: Database, input: SearchSkillsInput): Promise<SearchRow[]> {
  const text = input.query.trim().toLowerCase();
  const words = queryWords(text);
  // The last word may be unfinished (search-as-you-type): match it as a prefix too, from 3 letters on (a
  // 1-2 letter prefix such as `re:*` matches a large share of all lexemes and costs tens of milliseconds).
  const last = words[words.length - 1];
  const prefixQuery =
    last && last.length >= MIN_PREFIX_LETTERS
      ? words.map((w, i) => (i === words.length - 1 ? `${w}:*` : w)).join(' & ')
      : null;
  const likePrefix = `${escapeLike(text)}%`;
  const likeInfix = `%${escapeLike(text)}%`;
  // Typo tolerance compares trigrams of the whole query with names; for a phrase of several words that
  // is slow and pointless (names have no spaces; phrases match through the text arms instead).
  const singleToken = !/\s/.test(text);
  const visible = visibleTo(input.scope, sql.raw('s.visibility'), sql.raw('s.owner'));
  const folderVisible = visibleTo(input.scope, sql.raw('f.visibility'), sql.raw('f.owner'));
  const filters = filterConditions(input.filters, 's');
  const folderFilters = filterConditions(input.filters, 'f');
  const web = websearchText(text);
  const wordsQuery = () =>
    sql`(websearch_to_tsquery('simple', ${web}) || websearch_to_tsquery('english', ${web}))`;
  const tsq = () =>
    prefixQuery
      ? sql`(websearch_to_tsquery('simple', ${web}) || websearch_to_tsquery('english', ${web}) || to_tsquery('simple', ${prefixQuery}))`
      : wordsQuery();
  const after = input.after
    ? sql`where (score < ${input.after.score}::numeric or (score = ${input.after.score}::numeric and identity collate "C" > ${input.after.identity}))`
    : sql``;

  // The planner's cost model ignores the price of detoasting the body's tsvector, so for a word found in
  // many bodies it prefers a sequential scan that detoasts every row (seconds at 50k skills) over the GIN
  // bitmap scan (milliseconds). Every arm here is index-driven and bounded, so sequential scans are off for
  // this one statement.
  const statement = sql`
    with name_arm as materialized (
      select s.id from skills s
      where s.gone_at is null and s.parse_error is null and ${visible} and ${filters}
        and (lower(s.name) like ${likePrefix}${singleToken ? sql` or s.name % ${text}` : sql``})
      limit ${ARM_LIMIT}
    ),
    head_arm as materialized (
      select s.id from skills s
      where s.gone_at is null and s.parse_error is null and ${visible} and ${filters}
        and s.search_head @@ ${tsq()}
      order by s.stars desc nulls last
      limit ${HEAD_ARM_LIMIT}
    ),
    body_arm as materialized (
      select s.id from skills s
      where (select count(*) from head_arm) + (select count(*) from name_arm) < ${BODY_ARM_THRESHOLD}
        and s.gone_at is null and s.parse_error is null and ${visible} and ${filters}
        and s.search @@ ${wordsQuery()}
      limit ${BODY_ARM_LIMIT}
    ),
    candidates as (
      select id from name_arm union select id from head_arm union select id from body_arm
    ),
    skill_hits as (
      select 'skill'::text as kind, s.identity, s.source, s.owner, s.container, s.path, s.name, s.description,
        s.revision, s.stars, s.description_tokens, s.body_tokens, s.warnings, s.flags, null::int as skill_count,
        (case when lower(s.name) = ${text} then 1000 else 0 end
          + case when lower(s.name) like ${likePrefix} and lower(s.name) <> ${text} then 500 else 0 end
          + ts_rank(s.search_head, ${tsq()}) * 100
          + similarity(s.name, ${text}) * 50) as relevance
      from skills s
      where s.id = any(array(select id from candidates))
    ),
    folder_hits as (
      select 'collection'::text as kind,
        f.source || ':' || f.owner || '/' || f.container || case when f.path = '' then '' else '/' || f.path end as identity,
        f.source, f.owner, f.container, f.path, f.name, ''::text as description, f.revision, f.stars,
        0 as description_tokens, 0 as body_tokens, '[]'::jsonb as warnings, '[]'::jsonb as flags, f.skill_count,
        (case when lower(f.name) = ${text} then 1000 else 0 end
          + case when f.name ilike ${likePrefix} and lower(f.name) <> ${text} then 500 else 0 end
          + case when f.name ilike ${likeInfix} then 20 else 0 end
          + similarity(f.name, ${text}) * 50) as relevance
      from skill_folders f
      where ${singleToken ? sql`true` : sql`false`} and ${folderVisible} and ${folderFilters}
        and (f.name ilike ${likeInfix} or f.name % ${text})
    ),
    hits as (
      select h.*, (round(h.relevance::numeric, 4) * 10000000 + least(h.stars, 9999999))::numeric as score
      from (select * from skill_hits union all select * from folder_hits) h
    )
    select kind, identity, source, owner, container, path, name, description, revision, stars,
      description_tokens, body_tokens, warnings, flags, skill_count, score::text as score
    from hits
    ${after}
    order by hits.score desc, identity collate "C" asc
    limit ${input.limit}
`;
  // Each arm is small, so starting parallel workers would cost more than it saves. Custom plans always: a
  // generic plan cannot know whether a word is rare (bitmap scan of its matches) or common (walk the
  // popularity index), and either choice made blind costs tens of milliseconds on the other kind.
  const result = await executeWithSettings(
    db,
    { enable_seqscan: 'off', max_parallel_workers_per_gather: '0', plan_cache_mode: 'force_custom_plan' },
    statement,
  );
  return result.rows.map((r) => ({
    kind: r.kind as SearchRow['kind'],
    identity: String(r.identity),
    source: r.source as SearchRow['source'],
    owner: String(r.owner),
    container: String(r.container),
    path: String(r.path),
    name: String(r.name),
    description: String(r.description),
    revision: String(r.revision),
    stars: Number(r.stars),
    descriptionTokens: Number(r.description_tokens),
    bodyTokens: Number(r.body_tokens),
    warnings: (r.warnings ?? []) as string[],
    flags: (r.flags ?? []) as StoredFlag[],
    skillCount: r.skill_count === null || r.skill_count === undefined ? null : Number(r.skill_count),
    score: String(r.score),
  }));
}
