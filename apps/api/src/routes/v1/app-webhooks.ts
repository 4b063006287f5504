import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SIGNED_BODY_LIMIT, verifiedBody, verifiedWebhookBodies } from '../../plugins/webhook-bodies.js';
import { problem } from '../../problems.js';
import { problems } from '../../schemas.js';
import { handleLinkEvent } from '../../services/links/github-events.js';
import {
  deliveryDigest,
  forgetWebhookDelivery,
  recordWebhookDelivery,
  setWebhookDeliveryOutcome,
} from '../../services/webhooks/deliveries.js';

const Headers = z.object({
  'x-github-event': z
    .string()
    .regex(/^[a-z_]{1,64}$/)
    .optional(),
  'x-github-delivery': z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/, 'expected a delivery id')
    .optional(),
  'x-hub-signature-256': z.string().max(200).optional(),
});

/**
 * POST /v1/webhooks/github-app: the GitHub App's webhook (its own URL and secret, GITHUB_APP_WEBHOOK_SECRET),
 * which keeps linked collections fresh (services/links/github-events.ts). A delivery only says which links to
 * look at: a rename, a deletion or a lost installation is applied once GitHub's API confirms it to the link's
 * own credential (SPEC 2.8). Every handler is idempotent (a re-index of an unchanged head costs one
 * ls-remote; a failure is recorded once), so redeliveries are safe; GitHub not answering is a 503 (redelivered).
 */
const appWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  // The signature covers the exact bytes GitHub sent: they stay raw in this plugin's scope, and nothing
  // of an unsigned request's body is read (finding 8 of issue 24).
  verifiedWebhookBodies(app, {
    secret: (instance) => instance.config.github.auth.app?.webhookSecret,
    unconfigured: 'The GitHub App webhook is not configured on this hub (GITHUB_APP_WEBHOOK_SECRET).',
    badSignature: 'unauthorized',
  });

  app.post(
    '/webhooks/github-app',
    {
      bodyLimit: SIGNED_BODY_LIMIT,
      schema: {
        operationId: 'githubAppWebhook',
        tags: ['teams'],
        summary:
          'GitHub App deliveries for linked repositories: push, installation, installation_repositories, repository',
        description:
          'X-Hub-Signature-256 must be the HMAC-SHA256 of the raw body under GITHUB_APP_WEBHOOK_SECRET (else 401, nothing changes). ' +
          'A delivery id or signed body seen within 7 days answers duplicate: true and changes nothing.',
        headers: Headers,
        response: {
          200: z.object({
            event: z.string(),
            reindexed: z.number().int(),
            failed: z.number().int(),
            /** True when this delivery id or signed body was handled before: nothing was done. */
            duplicate: z.boolean().optional(),
          }),
          ...problems(400, 401, 413, 503),
        },
      },
    },
    async (request) => {
      const body = verifiedBody(request, app.config.github.auth.app?.webhookSecret ?? '', 'unauthorized');
      const event = request.headers['x-github-event'];
      if (!event) throw problem('bad-request', 'A delivery needs an X-GitHub-Event header.');
      const deliveryId = request.headers['x-github-delivery'];
      if (!deliveryId) throw problem('bad-request', 'A delivery needs an X-GitHub-Delivery header.');
      let payload: unknown;
      try {
        payload = JSON.parse(body.toString('utf8'));
      } catch {
        throw problem('bad-request', 'The delivery body is not JSON.');
      }
      // One mechanism with the repository webhook: a delivery id or a signed body seen within the window is
      // a duplicate (a replay under a new X-GitHub-Delivery changes nothing).
      const action = (payload as { action?: unknown } | null)?.action;
      const first = await recordWebhookDelivery(app.db, {
        deliveryId: `app:${deliveryId}`,
        event,
        action: typeof action === 'string' ? action : null,
        repository: null,
        outcome: 'received',
        bodySha256: deliveryDigest('app', body),
      });
      if (!first) return { event, reindexed: 0, failed: 0, duplicate: true };
      let outcome: Awaited<ReturnType<typeof handleLinkEvent>>;
      try {
        outcome = await handleLinkEvent(
          {
            db: app.db,
            queue: app.linkQueue,
            access: app.linkAccess,
            now: app.clock(),
            requestId: request.id,
          },
          event,
          payload,
        );
      } catch (error) {
        // Not handled: GitHub's redelivery of this id must be handled again.
        await forgetWebhookDelivery(app.db, `app:${deliveryId}`).catch(() => {});
        throw error;
      }
      await setWebhookDeliveryOutcome(app.db, `app:${deliveryId}`, 'applied');
      request.log.info(
        { event, delivery: request.headers['x-github-delivery'], ...outcome },
        'app webhook delivery',
      );
      return { event, ...outcome };
    },
  );
};

export default appWebhookRoutes;
