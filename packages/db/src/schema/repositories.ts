import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** A GitHub repository the crawler knows about, with what it last saw of it. */
export const repositories = pgTable(
  'repositories',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    owner: text('owner').notNull(),
    name: text('name').notNull(),
    defaultBranch: text('default_branch'),
    headRevision: text('head_revision'),
    description: text('description'),
    stars: integer('stars').notNull().default(0),
    license: text('license'),
    archived: boolean('archived').notNull().default(false),
    pushedAt: timestamp('pushed_at', { withTimezone: true }),
    topics: jsonb('topics').$type<string[]>().notNull().default([]),
    metadataEtag: text('metadata_etag'),
    lastCrawledAt: timestamp('last_crawled_at', { withTimezone: true }),
    /** indexed | unchanged | failed | gone */
    lastCrawlOutcome: text('last_crawl_outcome'),
    lastCrawlError: text('last_crawl_error'),
    /** When the scheduler should probe this repository again (activity-based back-off). */
    nextCrawlAt: timestamp('next_crawl_at', { withTimezone: true }),
    goneAt: timestamp('gone_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // GitHub owner and repository names are case-insensitive; identities keep the case they were found with.
    uniqueIndex('repositories_full_name_key').on(sql`lower(${t.owner})`, sql`lower(${t.name})`),
    index('repositories_next_crawl_idx').on(t.nextCrawlAt),
  ],
);
