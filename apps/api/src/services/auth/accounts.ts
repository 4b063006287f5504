import {
  appendAudit,
  countOwners,
  createTeamNamespace,
  createUserWithNamespace,
  type Database,
  decideInvitation,
  findNamespace,
  findNamespaceById,
  findPendingInvitation,
  findRole,
  findTokenById,
  findUserById,
  findUserByName,
  insertToken,
  listAudit,
  listMembers,
  listPendingInvitations,
  listTokensOfUser,
  listUsers,
  type NamespaceRow,
  namespacesOfUser,
  type Role,
  removeMembership,
  revokeTokenRow,
  setMembership,
  type TokenRow,
  tokenCounts,
  type UserRow,
  upsertInvitation,
  withdrawInvitations,
} from '@atskills/db';
import { problem } from '../../problems.js';
import { unauthorized } from './authenticate.js';
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
 * - add members: administrators and the operator directly; a team owner only invites, and the invitee's
 *   acceptance makes the membership (SPEC 2.3: nobody joins a team without consent);
 * - change roles of and remove members, read the audit log: owners of the team (admin-scoped token);
 * - create tokens: for yourself (admin-scoped token), or anyone as an administrator or the operator;
 * - list and revoke tokens: yourself or an administrator. A team owner has no authority over a member's
 *   tokens (they act in every namespace of the member); an owner cuts a member off by removing them.
 * Refusals never depend on whether the target exists (no user-name enumeration): permission is decided
 * from the caller alone, before any lookup by name.
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
/** Token minting bounds over the API: working tokens a user may hold, and tokens minted per hour. */
export const MAX_LIVE_TOKENS = 50;
export const MAX_TOKENS_PER_HOUR = 20;

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

/** What setMember did: a membership written, or (an owner adding someone new) an invitation sent. */
export type MemberChange =
  | { team: string; user: string; role: Role; previousRole: Role | null; status: 'member' }
  | { team: string; user: string; role: Role; previousRole: null; status: 'invited' };

/**
 * Adds a member to a team or changes a member's role. Administrators and the operator add directly; a team
 * owner adding someone who is not yet a member only invites them (`status: 'invited'`), and the answer is
 * the same whether or not the user exists, so owners cannot probe user names.
 */
export async function setMember(
  db: Database,
  input: { team: string; user: string; role: string },
  ctx: ActionContext,
): Promise<MemberChange> {
  const role = checkRole(input.role);
  const teamName = input.team.toLowerCase();
  requireManager(ctx, teamName, 'manage members');
  const direct = ctx.authority.kind === 'operator' || isHubAdmin(ctx.authority.viewer);
  const team = await teamOr404(db, teamName);
  const user = direct ? await userOr404(db, input.user) : await findUserByName(db, input.user);
  const invited = {
    team: team.name,
    user: input.user.toLowerCase(),
    role,
    previousRole: null,
    status: 'invited' as const,
  };
  return db.transaction(async (tx) => {
    const previous = user ? ((await findRole(tx, team.id, user.id)) ?? null) : null;
    if (!user || (!previous && !direct)) {
      if (user) {
        await upsertInvitation(tx, {
          namespaceId: team.id,
          userId: user.id,
          role,
          invitedBy: actorId(ctx),
          at: ctx.now,
        });
        await appendAudit(tx, {
          namespaceId: team.id,
          actorUserId: actorId(ctx),
          action: 'member.invite',
          target: user.name,
          details: { role },
          requestId: ctx.requestId ?? null,
          at: ctx.now,
        });
      }
      return invited;
    }
    if (previous === 'owner' && role !== 'owner' && (await countOwners(tx, team.id)) <= 1) {
      throw problem(
        'conflict',
        `"${user.name}" is the last owner of "${team.name}"; add another owner first.`,
      );
    }
    await setMembership(tx, team.id, user.id, role);
    await withdrawInvitations(tx, team.id, user.id, ctx.now);
    await appendAudit(tx, {
      namespaceId: team.id,
      actorUserId: actorId(ctx),
      action: previous ? 'member.role' : 'member.add',
      target: user.name,
      details: { role, previousRole: previous },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return { team: team.name, user: user.name, role, previousRole: previous, status: 'member' as const };
  });
}

function inviteeOf(ctx: ActionContext): Viewer {
  if (ctx.authority.kind === 'operator')
    throw problem('bad-request', 'Invitations are answered by the invited user with their own token.');
  const viewer = ctx.authority.viewer;
  if (viewer.userId === null) throw problem('unauthorized', 'Send a token: Authorization: Bearer ask_...');
  return viewer;
}

/** The caller's pending team invitations. */
export async function myInvitations(db: Database, ctx: ActionContext) {
  const viewer = inviteeOf(ctx);
  return (await listPendingInvitations(db, { userId: viewer.userId as number })).map((i) => ({
    id: i.id,
    team: i.team,
    role: i.role,
    invitedBy: i.invitedBy,
    createdAt: i.createdAt.toISOString(),
  }));
}

/**
 * Accepts or declines one of the caller's invitations: only the invitee can, with any valid token of
 * theirs. Someone else's invitation id answers like a missing one.
 */
export async function answerInvitation(
  db: Database,
  id: number,
  answer: 'accept' | 'decline',
  ctx: ActionContext,
): Promise<{ team: string; user: string; role: Role; status: 'member' | 'declined' }> {
  const viewer = inviteeOf(ctx);
  const invitation = await findPendingInvitation(db, id);
  if (!invitation || invitation.userId !== viewer.userId)
    throw problem('not-found', `No pending invitation ${id}.`);
  const [team, user] = await Promise.all([
    findNamespaceById(db, invitation.namespaceId),
    findUserById(db, invitation.userId),
  ]);
  if (!team || !user) throw problem('not-found', `No pending invitation ${id}.`);
  const role = invitation.role as Role;
  return db.transaction(async (tx) => {
    if (answer === 'accept') {
      const previous = (await findRole(tx, team.id, user.id)) ?? null;
      // Joining never lowers a role the user already holds.
      if (!previous) await setMembership(tx, team.id, user.id, role);
    }
    await decideInvitation(tx, invitation.id, answer === 'accept' ? 'accepted' : 'declined', ctx.now);
    await appendAudit(tx, {
      namespaceId: team.id,
      actorUserId: user.id,
      action: answer === 'accept' ? 'member.accept' : 'member.decline',
      target: user.name,
      details: { role, invitation: invitation.id },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return { team: team.name, user: user.name, role, status: answer === 'accept' ? 'member' : 'declined' };
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
  // A missing user and a non-member answer alike (no user-name enumeration).
  const notMember = () =>
    problem('not-found', `"${input.user.toLowerCase()}" is not a member of "${team.name}".`);
  const user = await findUserByName(db, input.user);
  if (!user) throw notMember();
  return db.transaction(async (tx) => {
    const previous = await findRole(tx, team.id, user.id);
    if (!previous) throw notMember();
    if (previous === 'owner' && (await countOwners(tx, team.id)) <= 1) {
      throw problem(
        'conflict',
        `"${user.name}" is the last owner of "${team.name}"; add another owner first.`,
      );
    }
    await removeMembership(tx, team.id, user.id);
    await withdrawInvitations(tx, team.id, user.id, ctx.now);
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

/**
 * Whether the authority may see, mint and revoke tokens of the user named `userName`: the operator, a hub
 * administrator, or the user themself. Decided from the caller alone, so a refusal never says whether the
 * user exists. Team owners have no say over a member's tokens: every token acts in all of its user's
 * namespaces, so any authority over it would reach beyond the owner's team.
 */
function mayOverseeTokensOf(userName: string, ctx: ActionContext): boolean {
  if (ctx.authority.kind === 'operator') return true;
  const viewer = ctx.authority.viewer;
  requireScope(viewer, 'admin');
  return isHubAdmin(viewer) || (viewer.userName ?? '').toLowerCase() === userName.toLowerCase();
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
  if (!mayOverseeTokensOf(input.user, ctx))
    throw problem('forbidden', 'You may create tokens only for yourself.');
  const user = await userOr404(db, input.user);
  if (ctx.authority.kind === 'viewer') {
    if (input.expiresInDays === null)
      throw problem('bad-request', 'Tokens created over the API must expire.');
    // Bounded minting: every token is a rate-limit bucket and a credential to keep track of.
    const counts = await tokenCounts(db, user.id, ctx.now, new Date(ctx.now.getTime() - 3_600_000));
    if (counts.recent >= MAX_TOKENS_PER_HOUR)
      throw problem(
        'rate-limited',
        `At most ${MAX_TOKENS_PER_HOUR} tokens may be created per hour for one user; try again later.`,
        { limit: MAX_TOKENS_PER_HOUR },
        { 'retry-after': '3600' },
      );
    if (counts.live >= MAX_LIVE_TOKENS)
      throw problem(
        'conflict',
        `"${user.name}" already holds ${counts.live} working tokens (at most ${MAX_LIVE_TOKENS}); revoke some first.`,
      );
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
  if (!mayOverseeTokensOf(userName, ctx)) throw problem('forbidden', 'You may list only your own tokens.');
  const user = await userOr404(db, userName);
  return (await listTokensOfUser(db, user.id)).map((t) => tokenInfo(t, user.name));
}

/** Revokes a token by id (idempotent). */
export async function revokeToken(db: Database, tokenId: number, ctx: ActionContext): Promise<TokenInfo> {
  // The scope check comes before the lookup so its 403 cannot tell existing ids from missing ones.
  if (ctx.authority.kind === 'viewer') requireScope(ctx.authority.viewer, 'admin');
  const token = await findTokenById(db, tokenId);
  const user = token ? await findUserById(db, token.userId) : undefined;
  // A token the caller may not oversee answers like a missing one: ids must not be probeable.
  if (!token || !user || !mayOverseeTokensOf(user.name, ctx))
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

/** GET /v1/whoami: the token's user, scopes and namespaces; 401 for a caller without a token. */
export async function describeViewer(db: Database, viewer: Viewer) {
  if (viewer.userId === null) throw unauthorized('Send a token: Authorization: Bearer ask_...');
  const namespaces = await namespacesOfUser(db, viewer.userId);
  return {
    user: viewer.userName ?? '',
    admin: viewer.isAdmin,
    scopes: viewer.scopes,
    namespaces: namespaces.map((n) => ({ name: n.name, kind: n.kind, role: n.role })),
  };
}
