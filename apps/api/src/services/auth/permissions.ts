import type { Role } from '@atskills/db';
import { problem } from '../../problems.js';
import { unauthorized } from './authenticate.js';
import { type Scope, scopesGrant } from './tokens.js';
import type { Viewer } from './viewer.js';

/** Roles that may publish to and delete collections of a namespace. */
const PUBLISHING_ROLES: readonly Role[] = ['owner', 'publisher'];

/** The caller's role in a namespace, if any. */
export function roleIn(viewer: Viewer, namespace: string): Role | undefined {
  return viewer.roles?.[namespace.toLowerCase()];
}

/** Throws 401 for anonymous callers and 403 when the token lacks `scope`. */
export function requireScope(viewer: Viewer, scope: Scope): void {
  if (viewer.userId === null) throw unauthorized(`This needs a token with the "${scope}" scope.`);
  if (!scopesGrant(viewer.scopes, scope)) {
    throw problem('forbidden', `This token lacks the "${scope}" scope.`, { scope });
  }
}

/** True when the viewer is a hub administrator acting with an admin-scoped token. */
export function isHubAdmin(viewer: Viewer): boolean {
  return viewer.isAdmin && scopesGrant(viewer.scopes, 'admin');
}

/**
 * Whether the viewer may publish to (or delete from) `namespace`: a publish-scoped token of an owner or
 * publisher there, or an admin-scoped token of a hub administrator.
 */
export function canPublishTo(viewer: Viewer, namespace: string): boolean {
  if (viewer.userId === null || !scopesGrant(viewer.scopes, 'publish')) return false;
  if (isHubAdmin(viewer)) return true;
  const role = roleIn(viewer, namespace);
  return role !== undefined && PUBLISHING_ROLES.includes(role);
}

/** Whether the viewer manages `namespace` (members, tokens of its members, audit log): owner or admin. */
export function canManage(viewer: Viewer, namespace: string): boolean {
  if (viewer.userId === null || !scopesGrant(viewer.scopes, 'admin')) return false;
  return viewer.isAdmin || roleIn(viewer, namespace) === 'owner';
}
