import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { crawlRuns } from './crawls.js';
import { repositories } from './repositories.js';

/**
 * Index requests (POST /v1/index-requests, on-demand `gh:` reads, webhooks): at most one open request per
 * repository, so concurrent requests coalesce into one crawl; it closes when its run has finished.
 */
export const indexRequests = pgTable(
  'index_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    owner: text('owner').notNull(),
    name: text('name').notNull(),
    /** api | on-demand | webhook */
    origin: text('origin').notNull(),
    /** open | closed */
    state: text('state').notNull().default('open'),
    runId: bigint('run_id', { mode: 'number' }).references(() => crawlRuns.id, { onDelete: 'set null' }),
    /** How many later requests joined this one. */
    coalesced: integer('coalesced').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('index_requests_open_key')
      .on(sql`lower(${t.owner})`, sql`lower(${t.name})`)
      .where(sql`${t.state} = 'open'`),
    index('index_requests_repository_idx').on(sql`lower(${t.owner})`, sql`lower(${t.name})`, t.createdAt),
  ],
);

/** GitHub webhook deliveries already handled, by X-GitHub-Delivery (a redelivery changes nothing). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    deliveryId: text('delivery_id').primaryKey(),
    event: text('event').notNull(),
    action: text('action'),
    repository: text('repository'),
    /** What the hub did: queued | applied | ignored */
    outcome: text('outcome').notNull(),
    /** SHA-256 of the route and the signed body: a replay under a new delivery id is a duplicate. */
    bodySha256: text('body_sha256'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_body_key').on(t.bodySha256),
    index('webhook_deliveries_received_idx').on(t.receivedAt),
  ],
);

/** The old owner/name of a renamed or transferred repository; its identities answer 301 to the new ones. */
export const repositoryRedirects = pgTable(
  'repository_redirects',
  {
    oldOwner: text('old_owner').notNull(),
    oldName: text('old_name').notNull(),
    repositoryId: bigint('repository_id', { mode: 'number' })
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('repository_redirects_old_key').on(sql`lower(${t.oldOwner})`, sql`lower(${t.oldName})`),
    index('repository_redirects_repository_idx').on(t.repositoryId),
  ],
);
