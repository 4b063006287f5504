import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { noteText, problems, TOKEN_REQUIRED } from '../../schemas.js';
import {
  type ActionContext,
  answerInvitation,
  auditLogOf,
  createTeam,
  createToken,
  createUser,
  describeViewer,
  listAllUsers,
  MAX_TOKEN_DAYS,
  myInvitations,
  removeMember,
  revokeToken,
  setMember,
  teamMembers,
  userTokens,
} from '../../services/auth/accounts.js';
import type { Viewer } from '../../services/auth/viewer.js';
import { decideReport, reviewQueue } from '../../services/safety-reports.js';
import { ReportResponse } from '../v1/reports.js';

const Role = z.enum(['owner', 'publisher', 'reader']);
const Scope = z.enum(['read', 'publish', 'admin']);
const Name = z.string().min(1).max(100);

const UserResponse = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string().nullable(),
  admin: z.boolean(),
});
const TokenInfo = z.object({
  id: z.number().int(),
  user: z.string(),
  label: z.string(),
  prefix: z.string().describe('the first characters of the token, to tell tokens apart'),
  scopes: z.array(z.string()),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  createdAt: z.string(),
});
const MemberResponse = z.object({
  team: z.string(),
  user: z.string(),
  role: Role,
  previousRole: Role.nullable(),
  status: z
    .enum(['member', 'invited'])
    .describe('member: the membership is written; invited: the user must accept the invitation'),
});
const InvitationResponse = z.object({
  id: z.number().int(),
  team: z.string(),
  role: Role,
  invitedBy: z.string().nullable(),
  createdAt: z.string(),
});

/**
 * The admin and team-owner API: users, teams, members, tokens and the audit log (the same operations as
 * `npm run hub -- admin ...`). Every route needs a token with the admin scope; what it may touch depends on
 * who holds it (see services/auth/accounts.ts). Registered under /admin.
 */
const adminRoutes: FastifyPluginAsyncZod = async (app) => {
  const ctx = (request: { viewer: Viewer; id: string }): ActionContext => ({
    authority: { kind: 'viewer', viewer: request.viewer },
    requestId: request.id,
    now: app.clock(),
  });
  const tags = ['admin'];

  app.get(
    '/me',
    {
      schema: {
        operationId: 'whoAmI',
        security: TOKEN_REQUIRED,
        tags,
        summary:
          "The token's user, scopes, expiry and namespaces (any valid token; `atskills login` checks with it)",
        response: {
          200: z.object({
            user: z.string(),
            admin: z.boolean(),
            scopes: z.array(z.string()),
            namespaces: z.array(z.object({ name: z.string(), kind: z.string(), role: Role })),
          }),
          ...problems(401, 503),
        },
      },
    },
    async (request) => describeViewer(app.db, request.viewer),
  );

  app.post(
    '/users',
    {
      schema: {
        operationId: 'createUser',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Create a user and its own namespace (hub administrators)',
        body: z.object({
          name: Name,
          email: z.string().max(320).nullable().optional(),
          admin: z.boolean().optional(),
        }),
        response: { 201: UserResponse, ...problems(400, 401, 403, 409, 503) },
      },
    },
    async (request, reply) => {
      const user = await createUser(app.db, request.body, ctx(request));
      return reply.code(201).send(user);
    },
  );

  app.get(
    '/users',
    {
      schema: {
        operationId: 'listUsers',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Every user (hub administrators)',
        response: {
          200: z.object({ users: z.array(UserResponse.extend({ createdAt: z.string() })) }),
          ...problems(401, 403, 503),
        },
      },
    },
    async (request) => ({ users: await listAllUsers(app.db, ctx(request)) }),
  );

  app.post(
    '/teams',
    {
      schema: {
        operationId: 'createTeam',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Create a team namespace with a first owner (hub administrators)',
        body: z.object({ name: Name, owner: Name.nullable().optional() }),
        response: {
          201: z.object({ id: z.number().int(), name: z.string(), owner: z.string().nullable() }),
          ...problems(400, 401, 403, 404, 409, 503),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createTeam(app.db, request.body, ctx(request))),
  );

  app.get(
    '/teams/:team/members',
    {
      schema: {
        operationId: 'listMembers',
        security: TOKEN_REQUIRED,
        tags,
        summary: "A team's members and roles (team owners, administrators)",
        params: z.object({ team: Name }),
        response: {
          200: z.object({ members: z.array(z.object({ user: z.string(), role: Role, since: z.string() })) }),
          ...problems(401, 403, 404, 503),
        },
      },
    },
    async (request) => ({ members: await teamMembers(app.db, request.params.team, ctx(request)) }),
  );

  app.put(
    '/teams/:team/members/:user',
    {
      schema: {
        operationId: 'setMember',
        security: TOKEN_REQUIRED,
        tags,
        summary:
          "Change a member's role, or add a member: administrators add directly; a team owner invites (202), and the user joins by accepting",
        params: z.object({ team: Name, user: Name }),
        body: z.object({ role: Role }),
        response: {
          200: MemberResponse,
          202: MemberResponse,
          ...problems(400, 401, 403, 404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const change = await setMember(
        app.db,
        { team: request.params.team, user: request.params.user, role: request.body.role },
        ctx(request),
      );
      return reply.code(change.status === 'invited' ? 202 : 200).send(change);
    },
  );

  app.get(
    '/invitations',
    {
      schema: {
        operationId: 'listInvitations',
        security: TOKEN_REQUIRED,
        tags,
        summary: "The caller's pending team invitations (any valid token)",
        response: { 200: z.object({ invitations: z.array(InvitationResponse) }), ...problems(401, 503) },
      },
    },
    async (request) => ({ invitations: await myInvitations(app.db, ctx(request)) }),
  );

  app.post(
    '/invitations/:id/:answer',
    {
      schema: {
        operationId: 'answerInvitation',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Accept or decline one of your team invitations (the invited user, any valid token)',
        params: z.object({ id: z.coerce.number().int().positive(), answer: z.enum(['accept', 'decline']) }),
        response: {
          200: z.object({
            team: z.string(),
            user: z.string(),
            role: Role,
            status: z.enum(['member', 'declined']),
          }),
          ...problems(400, 401, 404, 503),
        },
      },
    },
    async (request) => answerInvitation(app.db, request.params.id, request.params.answer, ctx(request)),
  );

  app.delete(
    '/teams/:team/members/:user',
    {
      schema: {
        operationId: 'removeMember',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Remove a member (never the last owner)',
        params: z.object({ team: Name, user: Name }),
        response: {
          200: z.object({ team: z.string(), user: z.string(), removed: z.literal(true) }),
          ...problems(401, 403, 404, 409, 503),
        },
      },
    },
    async (request) => removeMember(app.db, request.params, ctx(request)),
  );

  app.post(
    '/users/:user/tokens',
    {
      schema: {
        operationId: 'createToken',
        security: TOKEN_REQUIRED,
        tags,
        summary:
          'Create a token; the secret is in this answer only (yourself, or anyone as an administrator)',
        params: z.object({ user: Name }),
        body: z.object({
          label: z.string().max(200).optional(),
          scopes: z.array(Scope).min(1).max(3),
          expiresInDays: z.number().int().min(1).max(MAX_TOKEN_DAYS).optional(),
        }),
        response: {
          201: TokenInfo.extend({ token: z.string().describe('ask_...: shown once') }),
          ...problems(400, 401, 403, 404, 409, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const created = await createToken(app.db, { user: request.params.user, ...request.body }, ctx(request));
      request.log.info({ tokenId: created.id, user: created.user, scopes: created.scopes }, 'token created');
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.get(
    '/users/:user/tokens',
    {
      schema: {
        operationId: 'listTokens',
        security: TOKEN_REQUIRED,
        tags,
        summary: "A user's tokens without secrets (yourself, administrators)",
        params: z.object({ user: Name }),
        response: { 200: z.object({ tokens: z.array(TokenInfo) }), ...problems(401, 403, 404, 503) },
      },
    },
    async (request) => ({ tokens: await userTokens(app.db, request.params.user, ctx(request)) }),
  );

  app.delete(
    '/tokens/:id',
    {
      schema: {
        operationId: 'revokeToken',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Revoke a token (idempotent)',
        params: z.object({ id: z.coerce.number().int().positive() }),
        response: { 200: TokenInfo, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (request) => revokeToken(app.db, request.params.id, ctx(request)),
  );

  app.get(
    '/reports',
    {
      schema: {
        operationId: 'listReports',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Reports about skills (flag disputes, malicious skills), newest first (hub administrators)',
        querystring: z.object({
          status: z.enum(['open', 'accepted', 'rejected']).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
        }),
        response: { 200: z.object({ reports: z.array(ReportResponse) }), ...problems(400, 401, 403, 503) },
      },
    },
    async (request) => ({
      reports: (await reviewQueue(
        app.db,
        request.query.status,
        request.query.limit,
        ctx(request),
      )) as z.infer<typeof ReportResponse>[],
    }),
  );

  app.post(
    '/reports/:id/:decision',
    {
      schema: {
        operationId: 'decideReport',
        security: TOKEN_REQUIRED,
        tags,
        summary:
          'Accept or reject an open report with a note (hub administrators); an accepted dispute suppresses that rule for that content',
        params: z.object({ id: z.coerce.number().int().positive(), decision: z.enum(['accept', 'reject']) }),
        body: z.object({ note: noteText(2000).default('') }),
        response: { 200: ReportResponse, ...problems(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) =>
      (await decideReport(
        app.db,
        request.params.id,
        request.params.decision,
        request.body.note,
        ctx(request),
      )) as z.infer<typeof ReportResponse>,
  );

  app.get(
    '/namespaces/:namespace/audit',
    {
      schema: {
        operationId: 'auditLog',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Publishes, deletions, membership and token changes in a namespace, newest first (owners)',
        params: z.object({ namespace: Name }),
        querystring: z.object({
          limit: z.coerce.number().int().min(1).max(500).default(50),
          before: z.coerce
            .number()
            .int()
            .positive()
            .optional()
            .describe('entries older than this id (paging)'),
        }),
        response: {
          200: z.object({
            entries: z.array(
              z.object({
                id: z.number().int(),
                at: z.string(),
                actor: z.string(),
                action: z.string(),
                target: z.string(),
                details: z.record(z.string(), z.unknown()),
                requestId: z.string().nullable(),
              }),
            ),
          }),
          ...problems(400, 401, 403, 404, 503),
        },
      },
    },
    async (request) => ({
      entries: await auditLogOf(
        app.db,
        request.params.namespace,
        { limit: request.query.limit, ...(request.query.before ? { beforeId: request.query.before } : {}) },
        ctx(request),
      ),
    }),
  );
};

export default adminRoutes;
