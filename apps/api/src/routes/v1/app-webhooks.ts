import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../problems.js';
import { problems } from '../../schemas.js';
import { handleLinkEvent } from '../../services/links/github-events.js';

/** GitHub sends payloads up to 25 MB. */
const BODY_LIMIT = 25 * 1024 * 1024;

const Headers = z.object({
  'x-github-event': z
    .string()
    .regex(/^[a-z_]{1,64}$/)
    .optional(),
  'x-github-delivery': z.string().max(100).optional(),
  'x-hub-signature-256': z.string().max(200).optional(),
});

/** Whether `signature` is `sha256=` + the HMAC-SHA256 of the raw body under the secret (constant time). */
function signedBy(secret: string, body: Buffer, signature: string | undefined): boolean {
  if (!signature?.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * POST /v1/webhooks/github-app: the GitHub App's webhook (its own URL and secret, GITHUB_APP_WEBHOOK_SECRET),
 * which keeps linked collections fresh (services/links/github-events.ts). Every handler is idempotent (a
 * re-index of an unchanged head costs one ls-remote; a failure is recorded once), so redeliveries are safe.
 */
const appWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  // The signature covers the exact bytes GitHub sent: keep them raw in this plugin's scope.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_r, body, done) =>
    done(null, body),
  );

  app.post(
    '/webhooks/github-app',
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        operationId: 'githubAppWebhook',
        tags: ['teams'],
        summary:
          'GitHub App deliveries for linked repositories: push, installation, installation_repositories, repository',
        description:
          'X-Hub-Signature-256 must be the HMAC-SHA256 of the raw body under GITHUB_APP_WEBHOOK_SECRET (else 401, nothing changes).',
        headers: Headers,
        response: {
          200: z.object({ event: z.string(), reindexed: z.number().int(), failed: z.number().int() }),
          ...problems(400, 401, 413, 503),
        },
      },
    },
    async (request) => {
      const secret = app.config.github.auth.app?.webhookSecret;
      if (!secret)
        throw problem(
          'unavailable',
          'The GitHub App webhook is not configured on this hub (GITHUB_APP_WEBHOOK_SECRET).',
        );
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (!signedBy(secret, body, request.headers['x-hub-signature-256'])) {
        throw problem('unauthorized', 'X-Hub-Signature-256 is missing or does not match the body.');
      }
      const event = request.headers['x-github-event'];
      if (!event) throw problem('bad-request', 'A delivery needs an X-GitHub-Event header.');
      let payload: unknown;
      try {
        payload = JSON.parse(body.toString('utf8'));
      } catch {
        throw problem('bad-request', 'The delivery body is not JSON.');
      }
      const outcome = await handleLinkEvent(
        { db: app.db, queue: app.linkQueue, now: app.clock(), requestId: request.id },
        event,
        payload,
      );
      request.log.info(
        { event, delivery: request.headers['x-github-delivery'], ...outcome },
        'app webhook delivery',
      );
      return { event, ...outcome };
    },
  );
};

export default appWebhookRoutes;
