import { and, desc, eq, gte, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { apiTokens, auditLog, memberships, namespaces, users } from '../schema/teams.js';

// Table family `users`, `namespaces`, `memberships`, `api_tokens` and `audit_log` (src/schema/teams.ts):
// who may do what where, and the record of what they did. Collections are in collections.ts.

/** A member's role in a namespace; owners manage members and tokens, publishers publish, readers read. */
export type Role = 'owner' | 'publisher' | 'reader';

export type UserRow = typeof users.$inferSelect;
export type NamespaceRow = typeof namespaces.$inferSelect;
export type TokenRow = typeof apiTokens.$inferSelect;
export type AuditRow = typeof auditLog.$inferSelect;

/** Creates a user and its own namespace (same name, kind `user`), with the user as its owner. */
export async function createUserWithNamespace(
  tx: Executor,
  input: { name: string; email?: string | null; isAdmin?: boolean },
): Promise<{ user: UserRow; namespace: NamespaceRow }> {
  const [user] = await tx
    .insert(users)
    .values({ name: input.name, email: input.email ?? null, isAdmin: input.isAdmin ?? false })
    .returning();
  if (!user) throw new Error('insert into users returned no row');
  const [namespace] = await tx
    .insert(namespaces)
    .values({ name: input.name, kind: 'user', userId: user.id })
    .returning();
  if (!namespace) throw new Error('insert into namespaces returned no row');
  await tx.insert(memberships).values({ namespaceId: namespace.id, userId: user.id, role: 'owner' });
  return { user, namespace };
}

/** Creates a team namespace; `ownerUserId`, when given, becomes its first owner. */
export async function createTeamNamespace(
  tx: Executor,
  name: string,
  ownerUserId?: number,
): Promise<NamespaceRow> {
  const [namespace] = await tx.insert(namespaces).values({ name, kind: 'team' }).returning();
  if (!namespace) throw new Error('insert into namespaces returned no row');
  if (ownerUserId !== undefined) {
    await tx.insert(memberships).values({ namespaceId: namespace.id, userId: ownerUserId, role: 'owner' });
  }
  return namespace;
}

/** A user by name (case-insensitive). */
export async function findUserByName(db: Executor, name: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.name}) = ${name.toLowerCase()}`)
    .limit(1);
  return row;
}

/** A user by id. */
export async function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

/** Every user, by name. */
export async function listUsers(db: Executor): Promise<UserRow[]> {
  return db.select().from(users).orderBy(users.name);
}

/** A namespace by its (lowercase) name. */
export async function findNamespace(db: Executor, name: string): Promise<NamespaceRow | undefined> {
  const [row] = await db.select().from(namespaces).where(eq(namespaces.name, name.toLowerCase())).limit(1);
  return row;
}

/** Adds a member or changes the role of an existing one. */
export async function setMembership(
  tx: Executor,
  namespaceId: number,
  userId: number,
  role: Role,
): Promise<void> {
  await tx
    .insert(memberships)
    .values({ namespaceId, userId, role })
    .onConflictDoUpdate({ target: [memberships.namespaceId, memberships.userId], set: { role } });
}

/** Removes a member; true when there was one. */
export async function removeMembership(tx: Executor, namespaceId: number, userId: number): Promise<boolean> {
  const removed = await tx
    .delete(memberships)
    .where(and(eq(memberships.namespaceId, namespaceId), eq(memberships.userId, userId)))
    .returning({ userId: memberships.userId });
  return removed.length > 0;
}

/** The role of a user in a namespace, if a member. */
export async function findRole(db: Executor, namespaceId: number, userId: number): Promise<Role | undefined> {
  const [row] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.namespaceId, namespaceId), eq(memberships.userId, userId)))
    .limit(1);
  return row?.role as Role | undefined;
}

/** Members of a namespace with their roles, by name. */
export async function listMembers(
  db: Executor,
  namespaceId: number,
): Promise<{ userId: number; name: string; role: Role; since: Date }[]> {
  const rows = await db
    .select({ userId: users.id, name: users.name, role: memberships.role, since: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.namespaceId, namespaceId))
    .orderBy(users.name);
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

/** How many owners a namespace has (the last owner may not be removed or demoted). */
export async function countOwners(db: Executor, namespaceId: number): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(memberships)
    .where(and(eq(memberships.namespaceId, namespaceId), eq(memberships.role, 'owner')));
  return row?.n ?? 0;
}

/** Every namespace a user belongs to, with the role held there. */
export async function namespacesOfUser(
  db: Executor,
  userId: number,
): Promise<{ namespaceId: number; name: string; kind: string; role: Role }[]> {
  const rows = await db
    .select({
      namespaceId: namespaces.id,
      name: namespaces.name,
      kind: namespaces.kind,
      role: memberships.role,
    })
    .from(memberships)
    .innerJoin(namespaces, eq(namespaces.id, memberships.namespaceId))
    .where(eq(memberships.userId, userId))
    .orderBy(namespaces.name);
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

/** A namespace by id. */
export async function findNamespaceById(db: Executor, id: number): Promise<NamespaceRow | undefined> {
  const [row] = await db.select().from(namespaces).where(eq(namespaces.id, id)).limit(1);
  return row;
}

/** Stores a new token (its hash only). */
export async function insertToken(
  tx: Executor,
  input: {
    userId: number;
    label: string;
    prefix: string;
    hash: string;
    scopes: string[];
    expiresAt: Date | null;
  },
): Promise<TokenRow> {
  const [row] = await tx.insert(apiTokens).values(input).returning();
  if (!row) throw new Error('insert into api_tokens returned no row');
  return row;
}

/** The token with this hash together with its user, whatever its state (the caller checks expiry/revocation). */
export async function findTokenByHash(
  db: Executor,
  hash: string,
): Promise<{ token: TokenRow; user: UserRow } | undefined> {
  const [row] = await db
    .select({ token: apiTokens, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.hash, hash))
    .limit(1);
  return row;
}

/** A token by id. */
export async function findTokenById(db: Executor, id: number): Promise<TokenRow | undefined> {
  const [row] = await db.select().from(apiTokens).where(eq(apiTokens.id, id)).limit(1);
  return row;
}

/** A user's tokens, newest first (hashes included: callers must not send them out). */
export async function listTokensOfUser(db: Executor, userId: number): Promise<TokenRow[]> {
  return db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
}

/** Marks a token revoked (idempotent: an already revoked token keeps its first revocation time). */
export async function revokeTokenRow(tx: Executor, id: number, at: Date): Promise<TokenRow | undefined> {
  await tx
    .update(apiTokens)
    .set({ revokedAt: at })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)));
  return findTokenById(tx, id);
}

/**
 * Records a token's use, at most once per `minIntervalMs` (a busy client must not turn every read into a
 * write); true when the row was updated.
 */
export async function touchToken(
  db: Executor,
  id: number,
  at: Date,
  minIntervalMs = 60_000,
): Promise<boolean> {
  const threshold = new Date(at.getTime() - minIntervalMs);
  const updated = await db
    .update(apiTokens)
    .set({ lastUsedAt: at })
    .where(and(eq(apiTokens.id, id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, threshold))))
    .returning({ id: apiTokens.id });
  return updated.length > 0;
}

/** How many tokens a user holds that still work, and how many were minted since `since`. */
export async function tokenCounts(
  db: Executor,
  userId: number,
  now: Date,
  since: Date,
): Promise<{ live: number; recent: number }> {
  const [row] = await db
    .select({
      live: sql<number>`count(*) filter (where ${and(
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), sql`${apiTokens.expiresAt} > ${now.toISOString()}`),
      )})::int`,
      recent: sql<number>`count(*) filter (where ${gte(apiTokens.createdAt, since)})::int`,
    })
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId));
  return { live: row?.live ?? 0, recent: row?.recent ?? 0 };
}

/** One audit entry: who (actor), what (action on target), where (namespace), which request. */
export interface AuditEntry {
  namespaceId: number | null;
  actorUserId: number | null;
  action: string;
  target: string;
  details?: Record<string, unknown>;
  requestId?: string | null;
  at?: Date;
}

/** Appends an audit entry. */
export async function appendAudit(tx: Executor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    namespaceId: entry.namespaceId,
    actorUserId: entry.actorUserId,
    action: entry.action,
    target: entry.target,
    details: entry.details ?? {},
    requestId: entry.requestId ?? null,
    ...(entry.at ? { at: entry.at } : {}),
  });
}

/** A namespace's audit log, newest first, with the actor's name; `beforeId` pages backwards. */
export async function listAudit(
  db: Executor,
  namespaceId: number,
  opts: { limit: number; beforeId?: number },
): Promise<(AuditRow & { actorName: string | null })[]> {
  const where =
    opts.beforeId === undefined
      ? eq(auditLog.namespaceId, namespaceId)
      : and(eq(auditLog.namespaceId, namespaceId), lt(auditLog.id, opts.beforeId));
  const rows = await db
    .select({ entry: auditLog, actorName: users.name })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .where(where)
    .orderBy(desc(auditLog.id))
    .limit(opts.limit);
  return rows.map((r) => ({ ...r.entry, actorName: r.actorName }));
}
