import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
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

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function filterConditions(filters: SearchFiltersInput): SQL {
  const parts: SQL[] = [sql`true`];
  if (filters.source) parts.push(sql`s.source = ${filters.source}`);
  if (filters.owner) parts.push(sql`lower(s.owner) = lower(${filters.owner})`);
  if (filters.repo) parts.push(sql`lower(s.container) = lower(${filters.repo})`);
  if (filters.namespace) parts.push(sql`(s.source = 'hub' and s.owner = lower(${filters.namespace}))`);
  return sql.join(parts, sql` and `);
}

/**
 * Postgres full-text search over skills and the folders that hold several of them. Ranking: exact name,
 * then name prefix, then ts_rank over the weighted `search` column (A name, B description, D body), then
 * trigram similarity of the name (typos); stars break ties. Gone and unparsable skills are excluded;
 * private rows only reach scopes that may read them. Keyset pagination on (score desc, identity asc).
 */
export async function searchSkills(db: Database, input: SearchSkillsInput): Promise<SearchRow[]> {
  const text = input.query.trim().toLowerCase();
  const words = queryWords(text);
  // The last word may be unfinished (search-as-you-type): match it as a prefix too.
  const prefixQuery =
    words.length > 0 ? words.map((w, i) => (i === words.length - 1 ? `${w}:*` : w)).join(' & ') : null;
  const likePrefix = `${escapeLike(text)}%`;
  // Folders are only considered when their path shares the first three letters of the query's first word:
  // grouping every skill per query would not scale, and three letters still tolerate most typos.
  const folderHint = (words[0] ?? text).slice(0, 3);
  const visible = visibleTo(input.scope, sql.raw('s.visibility'), sql.raw('s.owner'));
  const filters = filterConditions(input.filters);
  const tsq = prefixQuery
    ? sql`(websearch_to_tsquery('simple', ${text}) || websearch_to_tsquery('english', ${text}) || to_tsquery('simple', ${prefixQuery}))`
    : sql`(websearch_to_tsquery('simple', ${text}) || websearch_to_tsquery('english', ${text}))`;
  const after = input.after
    ? sql`where (score < ${input.after.score}::numeric or (score = ${input.after.score}::numeric and identity collate "C" > ${input.after.identity}))`
    : sql``;

  const result = (await db.execute(sql`
    with q as (select ${text}::text as text, ${likePrefix}::text as like_prefix, ${tsq} as tsq),
    skill_hits as (
      select 'skill'::text as kind, s.identity, s.source, s.owner, s.container, s.path, s.name, s.description,
        s.revision, s.stars, s.description_tokens, s.body_tokens, s.warnings, s.flags, null::int as skill_count,
        (case when lower(s.name) = q.text then 1000 else 0 end
          + case when s.name ilike q.like_prefix and lower(s.name) <> q.text then 500 else 0 end
          + ts_rank(s.search, q.tsq) * 100
          + similarity(s.name, q.text) * 50) as relevance
      from skills s, q
      where s.gone_at is null and s.parse_error is null and ${visible} and ${filters}
        and (s.search @@ q.tsq or s.name % q.text or s.name ilike q.like_prefix)
    ),
    folders as (
      select s.source, s.owner, s.container,
        array_to_string((string_to_array(s.path, '/'))[1:n], '/') as path,
        count(*)::int as skill_count, max(s.stars) as stars,
        encode(sha256(convert_to(string_agg(s.identity || '@' || s.revision, E'\n' order by s.identity collate "C"), 'UTF8')), 'hex') as revision
      from skills s cross join lateral generate_series(0, cardinality(string_to_array(s.path, '/')) - 1) as n
      where s.gone_at is null and ${visible} and ${filters}
        and strpos(lower(s.container || '/' || s.path), ${folderHint}) > 0
      group by 1, 2, 3, 4
      having count(*) >= 2
    ),
    named_folders as (
      select f.*, case when f.path = '' then f.container else regexp_replace(f.path, '^.*/', '') end as name
      from folders f
    ),
    folder_hits as (
      select 'collection'::text as kind,
        f.source || ':' || f.owner || '/' || f.container || case when f.path = '' then '' else '/' || f.path end as identity,
        f.source, f.owner, f.container, f.path, f.name, ''::text as description, f.revision, f.stars,
        0 as description_tokens, 0 as body_tokens, '[]'::jsonb as warnings, '[]'::jsonb as flags, f.skill_count,
        (case when lower(f.name) = q.text then 1000 else 0 end
          + case when f.name ilike q.like_prefix and lower(f.name) <> q.text then 500 else 0 end
          + case when strpos(lower(f.name), q.text) > 0 then 20 else 0 end
          + similarity(f.name, q.text) * 50) as relevance
      from named_folders f, q
      where lower(f.name) = q.text or f.name ilike q.like_prefix or f.name % q.text or strpos(lower(f.name), q.text) > 0
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
  `)) as unknown as { rows: Record<string, unknown>[] };
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
