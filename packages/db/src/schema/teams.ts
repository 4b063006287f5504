import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** A person (or a service account) that holds tokens. */
export const users = pgTable(
  'users',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    name: text('name').notNull(),
    email: text('email'),
    isAdmin: boolean('is_admin').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_name_key').on(sql`lower(${t.name})`)],
);

/** A namespace: a user's own name or a team. Collections live in namespaces. */
export const namespaces = pgTable(
  'namespaces',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Lowercase, the `namespace` of `hub:namespace/collection`. */
    name: text('name').notNull(),
    /** user | team */
    kind: text('kind').notNull(),
    userId: bigint('user_id', { mode: 'number' }).references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('namespaces_name_key').on(t.name)],
);

/** Membership of a user in a namespace with a role: owner, publisher or reader. */
export const memberships = pgTable(
  'memberships',
  {
    namespaceId: bigint('namespace_id', { mode: 'number' })
      .notNull()
      .references(() => namespaces.id, { onDelete: 'cascade' }),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.namespaceId, t.userId] })],
);

/** An API token: only its sha256 is stored; the secret is shown once at creation. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    label: text('label').notNull().default(''),
    /** The first characters of the token (`ask_abcd`), to tell tokens apart in lists. */
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('api_tokens_hash_key').on(t.hash), index('api_tokens_user_idx').on(t.userId)],
);

/** A published collection `hub:namespace/name`. */
export const collections = pgTable(
  'collections',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    namespaceId: bigint('namespace_id', { mode: 'number' })
      .notNull()
      .references(() => namespaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** public | private */
    visibility: text('visibility').notNull().default('private'),
    currentRevision: text('current_revision'),
    popularity: integer('popularity').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('collections_namespace_name_key').on(t.namespaceId, t.name)],
);

/** An immutable published revision of a collection: its manifest of files (content in blobs). */
export const collectionRevisions = pgTable(
  'collection_revisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    collectionId: bigint('collection_id', { mode: 'number' })
      .notNull()
      .references(() => collections.id, { onDelete: 'cascade' }),
    /** sha256 of the canonical manifest; identical content gives the same revision. */
    revision: text('revision').notNull(),
    manifest: jsonb('manifest').$type<{ path: string; size: number; sha256: string }[]>().notNull(),
    skillCount: integer('skill_count').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    visibility: text('visibility').notNull(),
    publishedBy: bigint('published_by', { mode: 'number' }).references(() => users.id, {
      onDelete: 'set null',
    }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('collection_revisions_key').on(t.collectionId, t.revision)],
);

/** Who did what, when: publishes, deletions, membership and token changes. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    namespaceId: bigint('namespace_id', { mode: 'number' }).references(() => namespaces.id, {
      onDelete: 'cascade',
    }),
    actorUserId: bigint('actor_user_id', { mode: 'number' }).references(() => users.id, {
      onDelete: 'set null',
    }),
    action: text('action').notNull(),
    target: text('target').notNull(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    requestId: text('request_id'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('audit_log_namespace_idx').on(t.namespaceId, t.at)],
);
