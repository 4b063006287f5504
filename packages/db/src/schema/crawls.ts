import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { repositories } from './repositories.js';

/** One crawl (a discovery or an explicit list, a scheduled re-crawl, a rebuild). */
export const crawlRuns = pgTable('crawl_runs', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  /** repos | repos-file | code-search | org | schedule | rebuild */
  kind: text('kind').notNull(),
  /** running | finished | failed */
  status: text('status').notNull().default('running'),
  requestId: text('request_id'),
  repositoriesTotal: integer('repositories_total').notNull().default(0),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
  totals: jsonb('totals').$type<Record<string, number>>().notNull().default({}),
  /**
   * The process lock key (see process-lock.ts) of the process whose in-process queue holds the run's jobs;
   * null when they are in Redis. A running run whose owner is gone is ended as interrupted.
   */
  ownerLock: integer('owner_lock'),
});

/** What one repository job did, one row per repository per run. */
export const crawlReports = pgTable(
  'crawl_reports',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: bigint('run_id', { mode: 'number' }).references(() => crawlRuns.id, { onDelete: 'cascade' }),
    repositoryId: bigint('repository_id', { mode: 'number' })
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /**
     * The job's key in its run: the `owner/name` it was queued under, lower-cased (crawlJobKey). Two names of
     * one repository end on one row, each with its own report; null on reports written before it was kept.
     */
    queuedAs: text('queued_as'),
    /** indexed | unchanged | failed | gone */
    outcome: text('outcome').notNull(),
    headRevision: text('head_revision'),
    skillsFound: integer('skills_found').notNull().default(0),
    skillsAdded: integer('skills_added').notNull().default(0),
    skillsUpdated: integer('skills_updated').notNull().default(0),
    skillsRemoved: integer('skills_removed').notNull().default(0),
    warnings: jsonb('warnings')
      .$type<{ path: string; code: string; message: string }[]>()
      .notNull()
      .default([]),
    errors: jsonb('errors').$type<{ path: string; code: string; message: string }[]>().notNull().default([]),
    bytesDownloaded: bigint('bytes_downloaded', { mode: 'number' }).notNull().default(0),
    durationMs: integer('duration_ms').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('crawl_reports_repository_idx').on(t.repositoryId, t.startedAt),
    index('crawl_reports_run_idx').on(t.runId),
    index('crawl_reports_run_queued_idx').on(t.runId, t.queuedAs),
  ],
);
