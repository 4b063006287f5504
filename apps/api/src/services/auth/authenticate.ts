import { type Database, findTokenByHash, namespacesOfUser, type Role, touchToken } from '@atskills/db';
import { problem } from '../../problems.js';
import { hashesEqual, hashToken, readBearer, scopesGrant } from './tokens.js';
import type { Viewer } from './viewer.js';

/** How often a token's last-used time is written. */
const TOUCH_INTERVAL_MS = 60_000;

/** The Authorization challenge sent with every 401 (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="atskills"';

/** A 401 problem with the bearer challenge; the detail never repeats the token. */
export function unauthorized(detail: string) {
  return problem('unauthorized', detail, {}, { 'www-authenticate': BEARER_CHALLENGE });
}

/**
 * Turns an Authorization header into the viewer: none -> `anonymous`; a valid token -> its user, scopes
 * and the namespaces it may read. A malformed, unknown, revoked or expired token is a 401, never a silent
 * downgrade to anonymous (the caller meant to be someone).
 */
export async function viewerFromAuthorization(
  db: Database,
  header: string | string[] | undefined,
  now: Date,
  anonymous: Viewer,
  onTouchError: (err: unknown) => void = () => {},
): Promise<Viewer> {
  const bearer = readBearer(header);
  if (bearer.kind === 'none') return anonymous;
  if (bearer.kind === 'malformed') throw unauthorized(bearer.reason);
  const hash = hashToken(bearer.secret);
  const found = await findTokenByHash(db, hash);
  // The lookup is by hash; the constant-time compare guards against any index/collation surprise.
  if (!found || !hashesEqual(found.token.hash, hash)) throw unauthorized('Unknown token.');
  const { token, user } = found;
  if (token.revokedAt) throw unauthorized('This token was revoked; create a new one.');
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) {
    throw unauthorized(
      `This token expired on ${token.expiresAt.toISOString().slice(0, 10)}; create a new one.`,
    );
  }
  // Last-used bookkeeping: at most one write a minute per token (the row read above says whether one is
  // due), and it must never fail a request.
  if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) {
    await touchToken(db, token.id, now, TOUCH_INTERVAL_MS).catch(onTouchError);
  }

  const memberships = await namespacesOfUser(db, user.id);
  const roles: Record<string, Role> = {};
  for (const m of memberships) roles[m.name] = m.role;
  // Reading private content needs the read scope; a publish-only token sees what anonymous callers see.
  const canRead = scopesGrant(token.scopes, 'read');
  // An administrator's everyday read/publish token acts as an ordinary member: hub-wide powers (every
  // team's private namespace) need a token the administrator made for that on purpose.
  return {
    userId: user.id,
    userName: user.name,
    isAdmin: user.isAdmin && token.scopes.includes('admin'),
    scopes: [...token.scopes],
    readableNamespaces: canRead ? Object.keys(roles) : [],
    tokenId: token.id,
    roles,
  };
}
