import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  check,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { collections, namespaces, users } from './teams.js';

/** A problem the indexer found in a linked repository: the file and the reason. */
export interface LinkProblem {
  path: string;
  code: string;
  message: string;
}

/**
 * A team's collection `hub:<team>/<collection>` kept in a (usually private) GitHub repository folder. The
 * crawler indexes it with the link's credential: a GitHub App installation, or a fine-grained token the
 * team gave, stored sealed (AES-256-GCM, see @atskills/github-auth) and never returned; only its last four
 * characters and expiry are shown.
 */
export const repositoryLinks = pgTable(
  'repository_links',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    namespaceId: bigint('namespace_id', { mode: 'number' })
      .notNull()
      .references(() => namespaces.id, { onDelete: 'cascade' }),
    collectionId: bigint('collection_id', { mode: 'number' })
      .notNull()
      .references(() => collections.id, { onDelete: 'cascade' }),
    githubOwner: text('github_owner').notNull(),
    githubRepo: text('github_repo').notNull(),
    /** GitHub's numeric repository id: follows renames and transfers. */
    githubRepoId: bigint('github_repo_id', { mode: 'number' }),
    /** Folder inside the repository that is the collection root ('' = the whole repository). */
    folder: text('folder').notNull().default(''),
    /** app | token */
    credential: text('credential').notNull(),
    installationId: bigint('installation_id', { mode: 'number' }),
    tokenKeyId: text('token_key_id'),
    tokenSealed: text('token_sealed'),
    tokenLast4: text('token_last4'),
    tokenExpiresAt: timestamp('token_expires_at', { withTimezone: true }),
    /** queued | indexing | indexed | failed */
    status: text('status').notNull().default('queued'),
    failureCode: text('failure_code'),
    failureMessage: text('failure_message'),
    failedAt: timestamp('failed_at', { withTimezone: true }),
    /** The commit the collection's current revision follows (the last good index). */
    headCommit: text('head_commit'),
    lastIndexedAt: timestamp('last_indexed_at', { withTimezone: true }),
    problems: jsonb('problems').$type<LinkProblem[]>().notNull().default([]),
    createdBy: bigint('created_by', { mode: 'number' }).references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('repository_links_collection_key').on(t.collectionId),
    index('repository_links_repo_idx').on(sql`lower(${t.githubOwner})`, sql`lower(${t.githubRepo})`),
    index('repository_links_repo_id_idx').on(t.githubRepoId),
    index('repository_links_installation_idx').on(t.installationId),
    check(
      'repository_links_credential_check',
      sql`(${t.credential} = 'app' and ${t.tokenSealed} is null) or (${t.credential} = 'token' and ${t.tokenSealed} is not null and ${t.tokenKeyId} is not null and ${t.installationId} is null)`,
    ),
  ],
);
