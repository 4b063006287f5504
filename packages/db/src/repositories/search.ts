import type { SafetyFinding } from '@atskills/protocol';
import { type SQL, sql } from 'drizzle-orm';
import { type Database, type Executor, executeWithSettings } from '../client.js';
import { type ReadScope, visibleTo } from './scope.js';

// Search reads over `skills`, `skill_folders` and `skill_uses`: the Postgres engine's query, what an
// in-process engine loads and catches up with, and the upkeep of the indexes they read.

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
  /**
   * The words that matter (the engine's plan: stop words out, typos corrected); default: every word of
   * `query`. A skill matching some of them is a result (relaxation), more of them ranking higher.
   */
  terms?: string[];
  /** Extra words that count like the terms at a lower weight (synonyms, abbreviations). */
  alternatives?: string[];
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
  flags: SafetyFinding[];
  skillCount: number | null;
  /**
   * Exact numeric score as text: relevance (4 decimals) * 1e7 + the prior (stars + weekly uses weighted by
   * USES_STAR_WEIGHT, capped below 1e7), so popularity only breaks ties between equally strong matches.
   */
  score: string;
}

/** Words of the query usable in a tsquery: letters and digits only, so nothing can inject tsquery syntax. */
export function queryWords(query: string): string[] {
  return (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length <= 40).slice(0, 16);
}

/** The query as Postgres text may hold it: no NUL or other control characters. */
function cleanText(query: string): string {
  return query
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .trim()
    .toLowerCase();
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

/** Shortest last word matched as a prefix. */
const MIN_PREFIX_LETTERS = 3;

/**
 * Body matches taken, whatever the other arms found: a body arm that ran only while names and descriptions
 * gave few candidates dropped every body-only result once rows matching those were added, also between the
 * pages of one search (no gaps for rows that existed before: docs/search.md). Unordered, so the bitmap heap
 * scan stops after this many rows instead of reading every match of a common word (in heap order: rows
 * added later mostly come after those already there); they rank below name and description matches.
 */
const BODY_ARM_LIMIT = 200;

/**
 * What one distinct client a week weighs in the search prior, in stars (uses are per skill, stars per
 * repository). Exported: the in-memory engine weighs uses the same (apps/api/src/search/tuning.ts).
 */
export const USES_STAR_WEIGHT = 50;

/** Candidates taken per query word (most popular first), so a rare word's skills are never crowded out. */
const WORD_ARM_LIMIT = 150;

/** Shortest word matched by trigram similarity on names (typos in multi-word queries). */
const MIN_TYPO_LETTERS = 4;

/**
 * Postgres full-text search over skills and the folders that hold several of them. Ranking: exact name,
 * then a name the query starts with an unfinished word of, then how many of the query's words the name
 * and description hold (relaxation: a skill need not hold every word), then ts_rank over name and
 * description (`search_head`: A name, B description, length-normalised), then trigram similarity of the
 * name to the query and to each word (typos); stars break ties. Candidates come from bounded arms over the
 * indexes: name prefix btree and trigrams (per word too), `search_head` per word by popularity, then the
 * body-inclusive `search` without prefix matching (the first BODY_ARM_LIMIT matches); ranking reads only the
 * small inline `search_head`, never the body's toasted vector.
 * Folders come from `skill_folders` (kept by a trigger), matched by name for one-word queries (folder names
 * hold no spaces). Gone and unparsable skills are excluded;
 * private rows only reach scopes that may read them. Keyset pagination on (score desc, identity asc).
 */
export async function searchSkills(db: Database, input: SearchSkillsInput): Promise<SearchRow[]> {
  const text = cleanText(input.query);
  const terms = (input.terms ?? queryWords(text)).flatMap(queryWords).slice(0, 16);
  const alternatives = (input.alternatives ?? []).flatMap(queryWords).slice(0, 8);
  // Emoji, punctuation or operators only: nothing to search for, an empty page (SPEC 2.1).
  if (terms.length === 0 && alternatives.length === 0) return [];
  // The last word may be unfinished (search-as-you-type): match it as a prefix too, from 3 letters on (a
  // 1-2 letter prefix such as `re:*` matches a large share of all lexemes and costs tens of milliseconds).
  const last = terms[terms.length - 1];
  const prefixed = last && last.length >= MIN_PREFIX_LETTERS ? last : null;
  const wordQuery = (w: string, prefix: boolean) =>
    prefix
      ? sql`(to_tsquery('simple', ${`${w}:*`}) || to_tsquery('english', ${w}))`
      : sql`(to_tsquery('simple', ${w}) || to_tsquery('english', ${w}))`;
  const everyWord = [...terms, ...alternatives];
  const anyWord = everyWord.join(' | ');
  const anyQuery = () =>
    prefixed
      ? sql`(to_tsquery('simple', ${`${anyWord} | ${prefixed}:*`}) || to_tsquery('english', ${anyWord}))`
      : sql`(to_tsquery('simple', ${anyWord}) || to_tsquery('english', ${anyWord}))`;
  const bodyQuery = () => sql`(to_tsquery('simple', ${anyWord}) || to_tsquery('english', ${anyWord}))`;
  const likePrefix = `${escapeLike(text)}%`;
  const likeInfix = `%${escapeLike(text)}%`;
  // Typo tolerance compares trigrams of the whole query with names for one-word queries, and of each
  // longer word with the words of names (`<%`, indexed) for several.
  const singleToken = !/\s/.test(text);
  const typoWords = terms.filter((w) => w.length >= MIN_TYPO_LETTERS).slice(0, 6);
  const visible = visibleTo(input.scope, sql.raw('s.visibility'), sql.raw('s.owner'));
  const folderVisible = visibleTo(input.scope, sql.raw('f.visibility'), sql.raw('f.owner'));
  const filters = filterConditions(input.filters, 's');
  const folderFilters = filterConditions(input.filters, 'f');
  const live = sql`s.gone_at is null and s.parse_error is null and ${visible} and ${filters}`;
  const after = input.after
    ? sql`where (score < ${input.after.score}::numeric or (score = ${input.after.score}::numeric and identity collate "C" > ${input.after.identity}))`
    : sql``;
  const nameMatch = sql.join(
    [
      sql`lower(s.name) like ${likePrefix}`,
      ...(singleToken ? [sql`s.name % ${text}`] : []),
      ...typoWords.map((w) => sql`${w} <% s.name`),
    ],
    sql` or `,
  );
  const wordArms = sql.join(
    everyWord.map(
      (w) => sql`(select s.id from skills s where ${live} and s.search_head @@ ${wordQuery(w, w === prefixed)}
        order by s.stars desc nulls last, s.id limit ${WORD_ARM_LIMIT})`,
    ),
    sql` union `,
  );
  const coverage = sql.join(
    terms.map((w) => sql`(s.search_head @@ ${wordQuery(w, w === prefixed)})::int`),
    sql` + `,
  );
  const wordSimilarity = typoWords.length
    ? sql`greatest(${sql.join(
        typoWords.map((w) => sql`word_similarity(${w}, s.name)`),
        sql`, `,
      )})`
    : sql`0`;

  // The planner's cost model ignores the price of detoasting the body's tsvector, so for a word found in
  // many bodies it prefers a sequential scan that detoasts every row (seconds at 50k skills) over the GIN
  // bitmap scan (milliseconds). Every arm here is index-driven and bounded, so sequential scans are off for
  // this one statement.
  const statement = sql`
    with name_arm as materialized (
      select s.id from skills s where ${live} and (${nameMatch})
      limit ${ARM_LIMIT}
    ),
    head_arm as materialized (
      select id from (${wordArms}) w
    ),
    body_match as materialized (
      select s.id from skills s where ${live} and s.search @@ ${bodyQuery()}
    ),
    body_arm as (
      -- The limit outside the materialized CTE: planned whole, a common word's matches come from the GIN
      -- bitmap, not from walking another index and detoasting each row's body vector (20x slower), and
      -- the scan still stops once the limit is read.
      select id from body_match limit ${BODY_ARM_LIMIT}
    ),
    candidates as (
      select id from name_arm union select id from head_arm union select id from body_arm
    ),
    skill_hits as (
      select 'skill'::text as kind, s.identity, s.source, s.owner, s.container, s.path, s.name, s.description,
        s.revision, s.stars, s.description_tokens, s.body_tokens, s.warnings, s.flags, null::int as skill_count,
        (case when lower(s.name) = ${text} then 1000 else 0 end
          + case when lower(s.name) like ${likePrefix} and lower(s.name) <> ${text}
              and lower(s.name) not like ${`${escapeLike(text)}-%`} then 500 else 0 end
          + ${terms.length ? sql`(${coverage})::float8 / ${terms.length} * 200` : sql`0`}
          + ts_rank(s.search_head, ${anyQuery()}, 1) * 100
          + similarity(s.name, ${text}) * 50
          + ${wordSimilarity} * 30) as relevance,
        -- The uses prior (apps/api /about/metrics): distinct clients of the last 7 days.
        coalesce((select sum(u.uses) from skill_uses u where u.skill_id = s.id and u.day > current_date - 7), 0)
          as week_uses
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
          + similarity(f.name, ${text}) * 50) as relevance,
        0 as week_uses
      from skill_folders f
      where ${singleToken ? sql`true` : sql`false`} and ${folderVisible} and ${folderFilters}
        and (f.name ilike ${likeInfix} or f.name % ${text})
    ),
    hits as (
      select h.*, (round(h.relevance::numeric, 4) * 10000000
        + least(h.stars + h.week_uses * ${USES_STAR_WEIGHT}, 9999999))::numeric as score
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
    ...indexedFields(r),
    skillCount: r.skill_count === null || r.skill_count === undefined ? null : Number(r.skill_count),
    score: String(r.score),
  }));
}

/** The columns every search row and search document carries, from a raw result row. */
function indexedFields(r: Record<string, unknown>) {
  return {
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
    flags: (r.flags ?? []) as SafetyFinding[],
  };
}

/** Runs a statement and returns its rows (node-postgres and PGlite both answer `{ rows }`). */
async function rowsOf(db: Database, statement: SQL): Promise<{ rows: Record<string, unknown>[] }> {
  return (await db.execute(statement)) as unknown as { rows: Record<string, unknown>[] };
}

/** A live skill as an in-process search index loads it (body included, for indexing). */
export interface SearchDocumentRow extends Omit<SearchRow, 'score' | 'kind' | 'skillCount'> {
  id: number;
  visibility: string;
  body: string;
}

/** A folder of several skills as an in-process search index loads it. */
export interface SearchFolderRow extends Omit<SearchRow, 'score' | 'kind' | 'skillCount' | 'identity'> {
  identity: string;
  visibility: string;
  skillCount: number;
}

/** Where a change scan starts: rows written by transactions from this one on (a 64-bit xid8, as text). */
export type ChangeMark = string;

const LIVE = sql`s.gone_at is null and s.parse_error is null`;

function documentRow(r: Record<string, unknown>): SearchDocumentRow {
  return {
    id: Number(r.id),
    identity: String(r.identity),
    ...indexedFields(r),
    visibility: String(r.visibility),
    body: String(r.body ?? ''),
  };
}

const DOCUMENT_COLUMNS = sql`s.id, s.identity, s.source, s.owner, s.container, s.path, s.name, s.description,
  s.revision, s.stars, s.description_tokens, s.body_tokens, s.warnings, s.flags, s.visibility,
  left(s.body, 60000) as body`;

/** Live, parsable skills with id > `afterId`, in id order, `limit` at a time (every visibility). */
export async function loadSearchDocuments(
  db: Database,
  afterId: number,
  limit: number,
): Promise<SearchDocumentRow[]> {
  const result = await rowsOf(
    db,
    sql`
    select ${DOCUMENT_COLUMNS} from skills s
    where s.id > ${afterId} and ${LIVE}
    order by s.id limit ${limit}`,
  );
  return result.rows.map(documentRow);
}

/** How many skills loadSearchDocuments would return, all pages together. */
export async function countSearchDocuments(db: Database): Promise<number> {
  const result = await rowsOf(db, sql`select count(*) as n from skills s where ${LIVE}`);
  return Number(result.rows[0]?.n ?? 0);
}

/** These skills, when live and parsable (every visibility). */
export async function loadSearchDocumentsById(db: Database, ids: number[]): Promise<SearchDocumentRow[]> {
  if (ids.length === 0) return [];
  const result = await rowsOf(
    db,
    sql`
    select ${DOCUMENT_COLUMNS} from skills s
    where s.id = any(${sql.param(ids)}::bigint[]) and ${LIVE}`,
  );
  return result.rows.map(documentRow);
}

/** Weekly (last 7 days) and all-time uses of every skill that has any, by identity. */
export async function loadSkillUses(db: Database): Promise<Map<string, { week: number; total: number }>> {
  const result = await rowsOf(
    db,
    sql`
    select s.identity,
      coalesce(sum(u.uses) filter (where u.day > current_date - 7), 0)::int as week,
      sum(u.uses)::int as total
    from skill_uses u join skills s on s.id = u.skill_id
    group by s.identity`,
  );
  return new Map(
    result.rows.map((r) => [String(r.identity), { week: Number(r.week), total: Number(r.total) }]),
  );
}

/** Every folder holding several live skills (every visibility). */
export async function loadSearchFolders(db: Database): Promise<SearchFolderRow[]> {
  const result = await rowsOf(
    db,
    sql`
    select f.source || ':' || f.owner || '/' || f.container || case when f.path = '' then '' else '/' || f.path end as identity,
      f.source, f.owner, f.container, f.path, f.name, f.revision, f.stars, f.visibility, f.skill_count
    from skill_folders f`,
  );
  return result.rows.map((r) => ({
    identity: String(r.identity),
    source: r.source as SearchRow['source'],
    owner: String(r.owner),
    container: String(r.container),
    path: String(r.path),
    name: String(r.name),
    description: '',
    revision: String(r.revision),
    stars: Number(r.stars),
    descriptionTokens: 0,
    bodyTokens: 0,
    warnings: [],
    flags: [],
    visibility: String(r.visibility),
    skillCount: Number(r.skill_count),
  }));
}

/**
 * The mark a later `changedSkills` starts from: the oldest transaction still running now. Every row a
 * transaction commits after this call carries an xmin at or above it, whoever wrote it (crawler, publish,
 * a SQL console), so nothing is missed; rows seen already may come again, which is harmless.
 */
export async function currentChangeMark(db: Database): Promise<ChangeMark> {
  const result = await rowsOf(db, sql`select pg_snapshot_xmin(pg_current_snapshot())::text as mark`);
  return String(result.rows[0]!.mark);
}

/** What a change scan found for one row written since a mark. */
export interface ChangedSkill {
  id: number;
  identity: string;
  revision: string;
  stars: number;
  visibility: string;
  /** Flags change without a new revision (a report decided): holders patch them like stars. */
  flags: SafetyFinding[];
  live: boolean;
}

/** What a change scan found since a mark. */
export interface SkillChanges {
  /** Skill rows written since the mark. */
  rows: ChangedSkill[];
  /**
   * Identities skills left since the mark (rows deleted outright, or renamed by a repository move) that no
   * skills row holds now: holders drop them. Read from migration 0015's tombstones, kept seven days.
   */
  left: string[];
  /** How many live skills there are now. */
  liveCount: number;
}

/**
 * Skills written since `mark` (by xmin, so no timestamp column has to be kept right by every writer) and
 * the identities they left, or null when the transaction counter wrapped since (the caller reloads
 * everything), plus the live count.
 */
export async function changedSkills(db: Database, mark: ChangeMark): Promise<SkillChanges | null> {
  const since = BigInt(mark);
  const epoch = since >> 32n;
  const current = await rowsOf(db, sql`select pg_snapshot_xmin(pg_current_snapshot())::text as mark`);
  if (BigInt(String(current.rows[0]!.mark)) >> 32n !== epoch) return null;
  const low = (since & 0xffffffffn).toString();
  const result = await rowsOf(
    db,
    sql`
    select s.id, s.identity, s.revision, s.stars, s.visibility, s.flags, (${LIVE}) as live
    from skills s where s.xmin::text::bigint >= ${low}::bigint`,
  );
  const left = await leftIdentities(db, sql`t.xmin::text::bigint >= ${low}::bigint`);
  const count = await rowsOf(db, sql`select count(*)::int as n from skills s where ${LIVE}`);
  return {
    left,
    rows: result.rows.map((r) => ({
      id: Number(r.id),
      identity: String(r.identity),
      revision: String(r.revision),
      stars: Number(r.stars),
      visibility: String(r.visibility),
      flags: (r.flags ?? []) as SafetyFinding[],
      live: r.live === true || r.live === 't',
    })),
    liveCount: Number(count.rows[0]!.n),
  };
}

/** Identities skills left (tombstones matching `where`) that no skills row holds now. */
async function leftIdentities(db: Database, where: SQL): Promise<string[]> {
  const result = await rowsOf(
    db,
    sql`
    select distinct t.identity from skill_tombstones t
    where ${where} and not exists (select 1 from skills s where s.identity = t.identity)`,
  );
  return result.rows.map((r) => String(r.identity));
}

/**
 * Every identity skills left in the tombstones' seven days that no skills row holds now: a sync with no
 * change mark (a first one, or Redis lost) sends them beside the live skills, so the containers deleted or
 * moved meanwhile are emptied too.
 */
export function recentlyLeftIdentities(db: Database): Promise<string[]> {
  return leftIdentities(db, sql`true`);
}

/** Identities of every live, parsable skill (to reconcile after rows were deleted outright). */
export async function liveSkillIdentities(db: Database): Promise<string[]> {
  const result = await rowsOf(db, sql`select s.identity from skills s where ${LIVE}`);
  return result.rows.map((r) => String(r.identity));
}

/**
 * After a crawl run: fresh planner statistics and GIN pending lists merged into their indexes, so search
 * does not wait for autovacuum (which an embedded PGlite database never runs, and a server may run late).
 * Stale statistics make the planner misjudge how common a word is; each query scans the pending entries
 * (up to 4 MB per index) of every GIN index it uses.
 */
export async function refreshSearchStatistics(db: Executor): Promise<void> {
  await db.execute(
    sql`select gin_clean_pending_list(i.indexrelid::regclass)
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam
        where a.amname = 'gin' and i.indrelid in ('skills'::regclass, 'skill_folders'::regclass)`,
  );
  await db.execute(sql`analyze skills, skill_folders`);
}
