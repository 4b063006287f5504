import {
  appendAudit,
  countOwners,
  createTeamNamespace,
  createUserWithNamespace,
  type Database,
  findNamespace,
  findRole,
  findTokenById,
  findUserById,
  findUserByName,
  insertToken,
  listAudit,
  listMembers,
  listTokensOfUser,
  listUsers,
  type NamespaceRow,
  namespacesOfUser,
  type Role,
  removeMembership,
  revokeTokenRow,
  setMembership,
  type TokenRow,
  type UserRow,
} from '@atskills/db';
import { problem } from '../../problems.js';
import { checkAccountName } from './names.js';
import { canManage, isHubAdmin, requireScope } from './permissions.js';
import { generateToken, isScope, type Scope } from './tokens.js';
import type { Viewer } from './viewer.js';

/**
 * Accounts, teams, memberships and tokens: one set of functions behind both the admin API and
 * `npm run hub -- admin ...`. Every change is written to the audit log in the same transaction.
 *
 * Who may do what (the API passes the request's viewer; the CLI acts as the hub operator):
 * - create users and teams: hub administrators (admin-scoped token) and the operator;
 * - add, change and remove members, read the audit log: owners of the team (admin-scoped token);
 * - create tokens: for yourself (admin-scoped token), or anyone as an administrator or the operator;
 * - list and revoke tokens: yourself, an administrator, or an owner of a team the token's user belongs to
 *   (so an owner can cut off a member's leaked token without being able to mint tokens as them).
 */
export type Authority = { kind: 'operator' } | { kind: 'viewer'; viewer: Viewer };

/** The operator: the CLI on the hub's machine, trusted like the database itself. */
export const OPERATOR: Authority = Object.freeze({ kind: 'operator' });

/** Who an action is recorded against, and the request it belongs to. */
export interface ActionContext {
  authority: Authority;
  requestId?: string | null;
  now: Date;
}

/** Public view of a token: never the hash. */
export interface TokenInfo {
  id: number;
  user: string;
  label: string;
  prefix: string;
  scopes: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

const ROLES: readonly Role[] = ['owner', 'publisher', 'reader'];
/** Default and longest token lifetimes for tokens created over the API. */
export const DEFAULT_TOKEN_DAYS = 90;
export const MAX_TOKEN_DAYS = 3650;

function actorId(ctx: ActionContext): number | null {
  return ctx.authority.kind === 'viewer' ? ctx.authority.viewer.userId : null;
}

function requireAdmin(ctx: ActionContext, what: string): void {
  if (ctx.authority.kind === 'operator') return;
  requireScope(ctx.authority.viewer, 'admin');
  if (!isHubAdmin(ctx.authority.viewer)) throw problem('forbidden', `Only hub administrators may ${what}.`);
}

function requireManager(ctx: ActionContext, namespace: string, what: string): void {
  if (ctx.authority.kind === 'operator') return;
  requireScope(ctx.authority.viewer, 'admin');
  if (!canManage(ctx.authority.viewer, namespace)) {
    throw problem('forbidden', `Only owners of "${namespace}" may ${what}.`);
  }
}

/** Checks a role name; 400 otherwise. */
export function checkRole(raw: string): Role {
  if (!(ROLES as readonly string[]).includes(raw)) {
    throw problem(
      'bad-request',
      `A role is one of ${ROLES.join(', ')}; got ${JSON.stringify(raw.slice(0, 40))}.`,
    );
  }
  return raw as Role;
}

/** Checks a scope list (non-empty, known scopes, no repeats); 400 otherwise. */
export function checkScopes(raw: readonly string[]): Scope[] {
  const unknown = raw.filter((s) => !isScope(s));
  if (raw.length === 0 || unknown.length > 0) {
    throw problem(
      'bad-request',
      `Scopes are one or more of read, publish, admin${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}.`,
    );
  }
  return [...new Set(raw)] as Scope[];
}

async function userOr404(db: Database, name: string): Promise<UserRow> {
  const user = await findUserByName(db, name);
  if (!user) throw problem('not-found', `No user "${name}".`);
  return user;
}

async function teamOr404(db: Database, name: string): Promise<NamespaceRow> {
  const namespace = await findNamespace(db, name);
  if (namespace?.kind !== 'team') throw problem('not-found', `No team "${name}".`);
  return namespace;
}

function conflictOnUnique(err: unknown, message: string): never {
  const code =
    (err as { code?: string; cause?: { code?: string } }).code ??
    (err as { cause?: { code?: string } }).cause?.code;
  if (code === '23505') throw problem('conflict', message);
  throw err;
}

/** Creates a user and its own namespace. */
export async function createUser(
  db: Database,
  input: { name: string; email?: string | null; admin?: boolean },
  ctx: ActionContext,
): Promise<{ id: number; name: string; email: string | null; admin: boolean }> {
  requireAdmin(ctx, 'create users');
  const name = checkAccountName(input.name, 'user');
  if (await findNamespace(db, name)) throw problem('conflict', `The name "${name}" is taken.`);
  try {
    return await db.transaction(async (tx) => {
      const { user, namespace } = await createUserWithNamespace(tx, {
        name,
        email: input.email ?? null,
        isAdmin: input.admin ?? false,
      });
      await appendAudit(tx, {
        namespaceId: namespace.id,
        actorUserId: actorId(ctx),
        action: 'user.create',
        target: name,
        details: { admin: user.isAdmin },
        requestId: ctx.requestId ?? null,
        at: ctx.now,
      });
      return { id: user.id, name: user.name, email: user.email, admin: user.isAdmin };
    });
  } catch (err) {
    conflictOnUnique(err, `The name "${name}" is taken.`);
  }
}

/** Every user (administrators only). */
export async function listAllUsers(db: Database, ctx: ActionContext) {
  requireAdmin(ctx, 'list users');
  return (await listUsers(db)).map((u) => ({
    id: u.id,
    name: u.name,
    email: u.email,
    admin: u.isAdmin,
    createdAt: u.createdAt.toISOString(),
  }));
}

/** Creates a team namespace, with `owner` (a user name) as its first owner when given. */
export async function createTeam(
  db: Database,
  input: { name: string; owner?: string | null },
  ctx: ActionContext,
): Promise<{ id: number; name: string; owner: string | null }> {
  requireAdmin(ctx, 'create teams');
  const name = checkAccountName(input.name, 'team');
  if (await findNamespace(db, name)) throw problem('conflict', `The name "${name}" is taken.`);
  const owner = input.owner ? await userOr404(db, input.owner.toLowerCase()) : undefined;
  try {
    return await db.transaction(async (tx) => {
      const team = await createTeamNamespace(tx, name, owner?.id);
      await appendAudit(tx, {
        namespaceId: team.id,
        actorUserId: actorId(ctx),
        action: 'team.create',
        target: name,
        details: owner ? { owner: owner.name } : {},
        requestId: ctx.requestId ?? null,
        at: ctx.now,
      });
      return { id: team.id, name: team.name, owner: owner?.name ?? null };
    });
  } catch (err) {
    conflictOnUnique(err, `The name "${name}" is taken.`);
  }
}

/** Adds a member to a team or changes their role. */
export async function setMember(
  db: Database,
  input: { team: string; user: string; role: string },
  ctx: ActionContext,
): Promise<{ team: string; user: string; role: Role; previousRole: Role | null }> {
  const role = checkRole(input.role);
  const teamName = input.team.toLowerCase();
  requireManager(ctx, teamName, 'manage members');
  const team = await teamOr404(db, teamName);
  const user = await userOr404(db, input.user);
  return db.transaction(async (tx) => {
    const previous = (await findRole(tx, team.id, user.id)) ?? null;
    if (previous === 'owner' && role !== 'owner' && (await countOwners(tx, team.id)) <= 1) {
      throw problem(
        'conflict',
        `"${user.name}" is the last owner of "${team.name}"; add another owner first.`,
      );
    }
    await setMembership(tx, team.id, user.id, role);
    await appendAudit(tx, {
      namespaceId: team.id,
      actorUserId: actorId(ctx),
      action: previous ? 'member.role' : 'member.add',
      target: user.name,
      details: { role, previousRole: previous },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return { team: team.name, user: user.name, role, previousRole: previous };
  });
}

/** Removes a member from a team (never the last owner). */
export async function removeMember(
  db: Database,
  input: { team: string; user: string },
  ctx: ActionContext,
): Promise<{ team: string; user: string; removed: true }> {
  const teamName = input.team.toLowerCase();
  requireManager(ctx, teamName, 'manage members');
  const team = await teamOr404(db, teamName);
  const user = await userOr404(db, input.user);
  return db.transaction(async (tx) => {
    const previous = await findRole(tx, team.id, user.id);
    if (!previous) throw problem('not-found', `"${user.name}" is not a member of "${team.name}".`);
    if (previous === 'owner' && (await countOwners(tx, team.id)) <= 1) {
      throw problem(
        'conflict',
        `"${user.name}" is the last owner of "${team.name}"; add another owner first.`,
      );
    }
    await removeMembership(tx, team.id, user.id);
    await appendAudit(tx, {
      namespaceId: team.id,
      actorUserId: actorId(ctx),
      action: 'member.remove',
      target: user.name,
      details: { previousRole: previous },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return { team: team.name, user: user.name, removed: true as const };
  });
}

/** The members of a team with their roles (owners of the team and administrators). */
export async function teamMembers(db: Database, teamName: string, ctx: ActionContext) {
  const name = teamName.toLowerCase();
  requireManager(ctx, name, 'list members');
  const team = await teamOr404(db, name);
  return (await listMembers(db, team.id)).map((m) => ({
    user: m.name,
    role: m.role,
    since: m.since.toISOString(),
  }));
}

function tokenInfo(token: TokenRow, userName: string): TokenInfo {
  return {
    id: token.id,
    user: userName,
    label: token.label,
    prefix: token.prefix,
    scopes: token.scopes,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
    createdAt: token.createdAt.toISOString(),
  };
}

/** Whether the authority may see and revoke `user`'s tokens. */
async function mayOverseeTokens(db: Database, user: UserRow, ctx: ActionContext): Promise<boolean> {
  if (ctx.authority.kind === 'operator') return true;
  const viewer = ctx.authority.viewer;
  requireScope(viewer, 'admin');
  if (isHubAdmin(viewer) || viewer.userId === user.id) return true;
  const teams = await namespacesOfUser(db, user.id);
  return teams.some((t) => t.kind === 'team' && viewer.roles?.[t.name] === 'owner');
}

/**
 * Creates a token for `user`; the secret is in the answer and nowhere else, ever. `expiresInDays: null`
 * (never expires) is for the operator only.
 */
export async function createToken(
  db: Database,
  input: { user: string; label?: string; scopes: readonly string[]; expiresInDays?: number | null },
  ctx: ActionContext,
): Promise<TokenInfo & { token: string }> {
  if (ctx.authority.kind === 'viewer') requireScope(ctx.authority.viewer, 'admin');
  const scopes = checkScopes(input.scopes);
  const user = await userOr404(db, input.user);
  if (ctx.authority.kind === 'viewer') {
    const viewer = ctx.authority.viewer;
    requireScope(viewer, 'admin');
    if (!isHubAdmin(viewer) && viewer.userId !== user.id) {
      throw problem('forbidden', 'You may create tokens only for yourself.');
    }
    if (input.expiresInDays === null)
      throw problem('bad-request', 'Tokens created over the API must expire.');
  }
  const days = input.expiresInDays === undefined ? DEFAULT_TOKEN_DAYS : input.expiresInDays;
  if (days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS)) {
    throw problem('bad-request', `expiresInDays is a whole number of days from 1 to ${MAX_TOKEN_DAYS}.`);
  }
  const label = (input.label ?? '').trim().slice(0, 200);
  const generated = generateToken();
  const expiresAt = days === null ? null : new Date(ctx.now.getTime() + days * 86_400_000);
  const own = await findNamespace(db, user.name);
  return db.transaction(async (tx) => {
    const row = await insertToken(tx, {
      userId: user.id,
      label,
      prefix: generated.prefix,
      hash: generated.hash,
      scopes,
      expiresAt,
    });
    await appendAudit(tx, {
      namespaceId: own?.id ?? null,
      actorUserId: actorId(ctx),
      action: 'token.create',
      target: `${user.name}#${row.id}`,
      details: { prefix: row.prefix, scopes, label, expiresAt: expiresAt?.toISOString() ?? null },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return { ...tokenInfo(row, user.name), token: generated.secret };
  });
}

/** A user's tokens (never their secrets or hashes). */
export async function userTokens(db: Database, userName: string, ctx: ActionContext): Promise<TokenInfo[]> {
  if (ctx.authority.kind === 'viewer') requireScope(ctx.authority.viewer, 'admin');
  const user = await userOr404(db, userName);
  if (!(await mayOverseeTokens(db, user, ctx)))
    throw problem('forbidden', `You may not list the tokens of "${user.name}".`);
  return (await listTokensOfUser(db, user.id)).map((t) => tokenInfo(t, user.name));
}

/** Revokes a token by id (idempotent). */
export async function revokeToken(db: Database, tokenId: number, ctx: ActionContext): Promise<TokenInfo> {
  // The scope check comes before the lookup so its 403 cannot tell existing ids from missing ones.
  if (ctx.authority.kind === 'viewer') requireScope(ctx.authority.viewer, 'admin');
  const token = await findTokenById(db, tokenId);
  const user = token ? await findUserById(db, token.userId) : undefined;
  // A token the caller may not oversee answers like a missing one: ids must not be probeable.
  if (!token || !user || !(await mayOverseeTokens(db, user, ctx)))
    throw problem('not-found', `No token ${tokenId}.`);
  const own = await findNamespace(db, user.name);
  return db.transaction(async (tx) => {
    const revoked = (await revokeTokenRow(tx, token.id, ctx.now)) as TokenRow;
    if (!token.revokedAt) {
      await appendAudit(tx, {
        namespaceId: own?.id ?? null,
        actorUserId: actorId(ctx),
        action: 'token.revoke',
        target: `${user.name}#${token.id}`,
        details: { prefix: token.prefix },
        requestId: ctx.requestId ?? null,
        at: ctx.now,
      });
    }
    return tokenInfo(revoked, user.name);
  });
}

/** A namespace's audit log, newest first (owners of the namespace and administrators). */
export async function auditLogOf(
  db: Database,
  namespaceName: string,
  opts: { limit: number; beforeId?: number },
  ctx: ActionContext,
) {
  const name = namespaceName.toLowerCase();
  requireManager(ctx, name, 'read the audit log');
  const namespace = await findNamespace(db, name);
  if (!namespace) throw problem('not-found', `No namespace "${name}".`);
  const rows = await listAudit(db, namespace.id, opts);
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    actor: r.actorName ?? (r.actorUserId === null ? 'operator' : 'deleted user'),
    action: r.action,
    target: r.target,
    details: r.details,
    requestId: r.requestId,
  }));
}
