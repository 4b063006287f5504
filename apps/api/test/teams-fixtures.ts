/**
 * Shared set-up of the teams and publish tests: users, a team with one member per role, and one token per
 * row of the access matrix, all made through the same services the admin API and CLI use.
 */

import type { Readable } from 'node:stream';
import type { Database } from '@atskills/db';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import {
  createTeam,
  createToken,
  createUser,
  OPERATOR,
  revokeToken,
  setMember,
} from '../src/services/auth/accounts.js';

/** Who is calling, for the access matrix. */
export type Caller =
  | 'anonymous'
  | 'outsider'
  | 'reader'
  | 'publisher'
  | 'owner'
  | 'revoked'
  | 'expired'
  | 'no-read-scope'
  | 'no-publish-scope'
  | 'admin';

/** Tokens (secrets) per caller; `anonymous` has none. */
export type Tokens = Record<Exclude<Caller, 'anonymous'>, string>;

const op = (now = new Date()) => ({ authority: OPERATOR, now, requestId: 'test-setup' });

/**
 * Creates team `team` (owner `<team>-owner`, publisher `<team>-publisher`, reader `<team>-reader`), a user of
 * another team (`outsider` in `<team>-rivals`), a hub administrator, and a token per matrix row.
 */
export async function seedTeam(db: Database, team: string): Promise<Tokens> {
  for (const name of ['owner', 'publisher', 'reader', 'outsider', 'admin']) {
    await createUser(db, { name: `${team}-${name}`, admin: name === 'admin' }, op());
  }
  await createTeam(db, { name: team, owner: `${team}-owner` }, op());
  await setMember(db, { team, user: `${team}-publisher`, role: 'publisher' }, op());
  await setMember(db, { team, user: `${team}-reader`, role: 'reader' }, op());
  await createTeam(db, { name: `${team}-rivals`, owner: `${team}-outsider` }, op());

  const token = async (user: string, scopes: string[], now?: Date, days = 30) =>
    (await createToken(db, { user: `${team}-${user}`, scopes, expiresInDays: days }, op(now))).token;
  const revoked = await createToken(db, { user: `${team}-reader`, scopes: ['read'] }, op());
  await revokeToken(db, revoked.id, op());
  return {
    outsider: await token('outsider', ['read', 'publish']),
    reader: await token('reader', ['read']),
    publisher: await token('publisher', ['read', 'publish']),
    owner: await token('owner', ['read', 'publish', 'admin']),
    revoked: revoked.token,
    // Made 40 days ago with a 30-day life.
    expired: await token('owner', ['read', 'publish', 'admin'], new Date(Date.now() - 40 * 86_400_000)),
    'no-read-scope': await token('publisher', ['publish']),
    'no-publish-scope': await token('publisher', ['read']),
    admin: await token('admin', ['read', 'publish', 'admin']),
  };
}

/** Authorization header for a caller. */
export function auth(tokens: Tokens, caller: Caller): Record<string, string> {
  return caller === 'anonymous' ? {} : { authorization: `Bearer ${tokens[caller]}` };
}

/** A request as `caller`; a payload goes as JSON (a string as it is, to send a body that is not valid JSON). */
export function callAs(
  app: FastifyInstance,
  tokens: Tokens,
  caller: Caller,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return app.inject({
    method,
    url,
    headers: {
      ...auth(tokens, caller),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(payload !== undefined
      ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
      : {}),
  });
}

/**
 * Files a report on `identity` as `reporter` (`kind` malicious, or a dispute of `rule`) and has the hub
 * administrator accept it with `note`; checks both answers and gives the report's id.
 */
export async function acceptedReport(
  app: FastifyInstance,
  tokens: Tokens,
  identity: string,
  reporter: Caller,
  report: { kind: 'malicious' | 'dispute'; rule?: string; note: string },
  note = 'Confirmed.',
): Promise<number> {
  const filed = await callAs(app, tokens, reporter, 'POST', `/v1/skills/${identity}/reports`, report);
  if (filed.statusCode !== 201) throw new Error(`report not filed: ${filed.statusCode} ${filed.body}`);
  const id = (filed.json() as { id: number }).id;
  const decided = await callAs(app, tokens, 'admin', 'POST', `/admin/reports/${id}/accept`, { note });
  if (decided.statusCode !== 200)
    throw new Error(`report not accepted: ${decided.statusCode} ${decided.body}`);
  return id;
}

/** PUT a collection archive. */
export function publish(
  app: FastifyInstance,
  target: string,
  /** The gzip tar, or a stream of it (a body that arrives later). */
  body: Buffer | Readable,
  headers: Record<string, string>,
  visibility: 'public' | 'private' = 'private',
) {
  return app.inject({
    method: 'PUT',
    url: `/v1/collections/${target}?visibility=${visibility}`,
    headers: { 'content-type': 'application/gzip', ...headers },
    payload: body,
  });
}

/** Row counts of every table a publish writes (to prove a refused publish stored nothing). */
export async function publishRowCounts(db: Database): Promise<Record<string, number>> {
  const tables = [
    'blobs',
    'collections',
    'collection_revisions',
    'skills',
    'skill_revisions',
    'safety_verdicts',
    'audit_log',
  ];
  const out: Record<string, number> = {};
  for (const table of tables) {
    const result = await db.execute(sql.raw(`select count(*)::int as n from ${table}`));
    out[table] = (result as unknown as { rows: { n: number }[] }).rows[0]?.n ?? -1;
  }
  return out;
}
