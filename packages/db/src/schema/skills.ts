import type { SafetyFinding } from '@atskills/protocol';
import { type SQL, sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { tsvector } from './columns.js';
import { repositories } from './repositories.js';
import { collections } from './teams.js';

/** One file of a skill folder as stored in the manifest. */
export interface SkillFile {
  path: string;
  size: number;
  sha256: string;
  /** Set when the file was not downloaded (over the size limit, content withheld, ...). */
  skipped?: string;
}

/**
 * Every indexed skill, crawled (`gh:`) or published (`hub:`); the row holds the current revision, older
 * revisions live in skill_revisions. `search` is a generated column, so the full-text index is current in
 * the same transaction as the row.
 */
export const skills = pgTable(
  'skills',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Canonical identity: `gh:owner/repo/path` or `hub:namespace/collection/path`. */
    identity: text('identity').notNull(),
    /** gh | hub */
    source: text('source').notNull(),
    repositoryId: bigint('repository_id', { mode: 'number' }).references(() => repositories.id, {
      onDelete: 'cascade',
    }),
    collectionId: bigint('collection_id', { mode: 'number' }).references(() => collections.id, {
      onDelete: 'cascade',
    }),
    /** gh: owner; hub: namespace (for filters). */
    owner: text('owner').notNull(),
    /** gh: repository name; hub: collection name. */
    container: text('container').notNull(),
    /** Folder path inside the repository or collection ('' for a root skill). */
    path: text('path').notNull(),
    name: text('name').notNull().default(''),
    description: text('description').notNull().default(''),
    frontmatter: jsonb('frontmatter').$type<Record<string, unknown>>().notNull().default({}),
    body: text('body').notNull().default(''),
    warnings: jsonb('warnings').$type<string[]>().notNull().default([]),
    /** Set when SKILL.md could not be parsed or its content is unavailable; such skills stay out of search. */
    parseError: jsonb('parse_error').$type<{ code: string; message: string } | null>(),
    files: jsonb('files').$type<SkillFile[]>().notNull().default([]),
    flags: jsonb('flags').$type<SafetyFinding[]>().notNull().default([]),
    /** Content revision of the skill folder (git tree sha for gh:, manifest sha256 for hub:). */
    revision: text('revision').notNull(),
    /** Commit the revision was seen at (gh:) or the collection revision (hub:). */
    commit: text('commit'),
    descriptionTokens: integer('description_tokens').notNull().default(0),
    bodyTokens: integer('body_tokens').notNull().default(0),
    /** Popularity for ranking: repository stars (gh:) or collection popularity (hub:). */
    stars: integer('stars').notNull().default(0),
    /** public | private */
    visibility: text('visibility').notNull().default('public'),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** When the skill disappeared upstream (or its collection was deleted); gone skills leave search. */
    goneAt: timestamp('gone_at', { withTimezone: true }),
    /**
     * Name and description only: small enough to stay inline in the heap row, so ranking never detoasts the
     * body's vector (`search` finds the rows, `search_head` ranks them).
     */
    searchHead: tsvector('search_head').generatedAlwaysAs(
      (): SQL =>
        sql`setweight(to_tsvector('simple', coalesce(${skills.name}, '') || ' ' || replace(coalesce(${skills.name}, ''), '-', ' ')), 'A') || setweight(to_tsvector('english', coalesce(${skills.description}, '')), 'B')`,
    ),
    search: tsvector('search').generatedAlwaysAs(
      (): SQL =>
        sql`setweight(to_tsvector('simple', coalesce(${skills.name}, '') || ' ' || replace(coalesce(${skills.name}, ''), '-', ' ')), 'A') || setweight(to_tsvector('english', coalesce(${skills.description}, '')), 'B') || setweight(to_tsvector('english', left(coalesce(${skills.body}, ''), 100000)), 'D')`,
    ),
  },
  (t) => [
    uniqueIndex('skills_identity_key').on(t.identity),
    index('skills_repository_idx').on(t.repositoryId),
    index('skills_collection_idx').on(t.collectionId),
    index('skills_owner_container_path_idx').on(t.owner, t.container, t.path),
    index('skills_search_idx').using('gin', t.search),
    index('skills_search_head_idx').using('gin', t.searchHead),
    index('skills_name_trgm_idx').using('gin', sql`${t.name} gin_trgm_ops`),
    // Name prefixes (search-as-you-type) through a btree instead of the trigram index.
    index('skills_name_prefix_idx').using('btree', sql`lower(${t.name}) text_pattern_ops`),
    // The most popular live skills first: a word found in thousands of descriptions takes its top matches
    // by walking this index instead of reading every match and sorting (the planner picks by selectivity).
    index('skills_live_stars_idx')
      .on(t.stars.desc(), t.id)
      .where(sql`${t.goneAt} is null and ${t.parseError} is null`),
    // Newest first for the browse pages and feeds (listRecentSkills), without sorting every live skill.
    index('skills_live_updated_idx')
      .on(t.updatedAt.desc().nullsFirst(), t.identity)
      .where(sql`${t.goneAt} is null and ${t.parseError} is null`),
    index('skills_live_first_seen_idx')
      .on(t.firstSeenAt.desc().nullsFirst(), t.identity)
      .where(sql`${t.goneAt} is null and ${t.parseError} is null`),
  ],
);

/**
 * Folders that hold two or more live skills (collections, e.g. `gh:o/r/skills` or `hub:ns/coll`), kept by a
 * statement trigger on `skills` (migration 0003) in the same transaction as the skill rows, so search can
 * offer folders without grouping every skill per query.
 */
export const skillFolders = pgTable(
  'skill_folders',
  {
    source: text('source').notNull(),
    owner: text('owner').notNull(),
    container: text('container').notNull(),
    /** Folder path inside the repository or collection ('' = the repository or collection itself). */
    path: text('path').notNull(),
    /** Last path segment, or the container's name for the root. */
    name: text('name').notNull(),
    visibility: text('visibility').notNull(),
    skillCount: integer('skill_count').notNull(),
    stars: integer('stars').notNull(),
    /** sha256 over the sorted `identity@revision` lines of its skills: the menu's revision. */
    revision: text('revision').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.source, t.owner, t.container, t.path] }),
    index('skill_folders_name_trgm_idx').using('gin', sql`${t.name} gin_trgm_ops`),
  ],
);

/** Every revision a skill ever had, so `?rev=` stays fetchable. */
export const skillRevisions = pgTable(
  'skill_revisions',
  {
    skillId: bigint('skill_id', { mode: 'number' })
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    revision: text('revision').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    frontmatter: jsonb('frontmatter').$type<Record<string, unknown>>().notNull(),
    body: text('body').notNull(),
    files: jsonb('files').$type<SkillFile[]>().notNull(),
    commit: text('commit'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.revision] })],
);

/**
 * Identities skills left: rows deleted outright or renamed (a moved repository), written by triggers on
 * `skills` (migration 0015) and read by the change feed beside the skills rows, with the container each
 * was in. Pruned after seven days.
 */
export const skillTombstones = pgTable(
  'skill_tombstones',
  {
    identity: text('identity').notNull(),
    source: text('source').notNull(),
    owner: text('owner').notNull(),
    container: text('container').notNull(),
    leftAt: timestamp('left_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('skill_tombstones_identity_idx').on(t.identity),
    index('skill_tombstones_left_at_idx').on(t.leftAt),
  ],
);
