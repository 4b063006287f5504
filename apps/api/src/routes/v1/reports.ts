import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../problems.js';
import { lineText, noteText, problems, TOKEN_REQUIRED } from '../../schemas.js';
import { fileReport } from '../../services/safety-reports.js';
import { rawIdentity } from '../identity-path.js';

/** A report as answered by the API (also listed by GET /admin/reports). */
export const ReportResponse = z.object({
  id: z.number().int(),
  identity: z.string(),
  revision: z.string(),
  kind: z.enum(['dispute', 'malicious']),
  rule: z.string().nullable(),
  contentHash: z.string().nullable().describe("sha256 over the skill's (path, sha256) list at that revision"),
  note: z.string(),
  status: z.enum(['open', 'accepted', 'rejected']),
  reporter: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decisionNote: z.string().nullable(),
  decidedAt: z.string().nullable(),
  createdAt: z.string(),
});

const SUFFIX = '/reports';

/** POST /v1/skills/<identity>/reports: dispute a safety flag, or report a skill as malicious. */
const reportsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/skills/*',
    {
      config: { identitySuffix: SUFFIX },
      schema: {
        operationId: 'reportSkill',
        security: TOKEN_REQUIRED,
        tags: ['resolution'],
        summary:
          'Dispute a safety flag of a skill (kind dispute, rule) or report it as malicious, at a revision (default: current); authenticated, 10 an hour per user',
        body: z.object({
          kind: z.enum(['dispute', 'malicious']),
          rule: lineText(100, 1).optional().describe('the disputed rule (disputes)'),
          revision: lineText(200, 1).optional(),
          note: noteText(2000).default(''),
        }),
        response: { 201: ReportResponse, ...problems(400, 401, 404, 410, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const raw = rawIdentity(request, '/v1/skills/');
      if (!raw.endsWith(SUFFIX)) throw problem('not-found', `No route POST ${request.url.split('?')[0]}`);
      const report = await fileReport(app.db, request.viewer, raw.slice(0, -SUFFIX.length), request.body, {
        requestId: request.id,
        now: app.clock(),
      });
      return reply.code(201).send(report as z.infer<typeof ReportResponse>);
    },
  );
};

export default reportsRoutes;
