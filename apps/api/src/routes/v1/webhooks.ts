import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SIGNED_BODY_LIMIT, verifiedBody, verifiedWebhookBodies } from '../../plugins/webhook-bodies.js';
import { problem } from '../../problems.js';
import { problems, WebhookAnswer } from '../../schemas.js';
import {
  deliveryDigest,
  forgetWebhookDelivery,
  recordWebhookDelivery,
  setWebhookDeliveryOutcome,
} from '../../services/webhooks/deliveries.js';

const WebhookHeaders = z.object({
  'x-github-event': z
    .string()
    .regex(/^[a-z_]{1,64}$/, 'expected a GitHub event name')
    .optional(),
  'x-github-delivery': z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/, 'expected a delivery id')
    .optional(),
  'x-hub-signature-256': z.string().max(200).optional(),
});

/** The payload of a delivery: JSON, or GitHub's form encoding (`payload=<json>`); undefined when neither. */
function parsePayload(body: Buffer, contentType: string | undefined): Record<string, unknown> | undefined {
  let text = body.toString('utf8');
  if (contentType?.startsWith('application/x-www-form-urlencoded')) {
    text = new URLSearchParams(text).get('payload') ?? '';
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST /v1/webhooks/github (SPEC 2.6): the raw body is verified against GITHUB_WEBHOOK_SECRET before
 * anything is parsed or written; each X-GitHub-Delivery is handled once (a redelivery or replay answers
 * `duplicate` and changes nothing); the dispatcher (app.webhooks) decides what an event does.
 */
const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  // The signature covers the exact bytes GitHub sent: they stay raw in this plugin's scope, and nothing
  // of an unsigned request's body is read (finding 8 of issue 24).
  verifiedWebhookBodies(app, {
    secret: (instance) => instance.config.githubWebhookSecret,
    unconfigured: 'Webhooks are not configured on this hub (GITHUB_WEBHOOK_SECRET)',
    badSignature: 'bad-signature',
  });

  app.post(
    '/webhooks/github',
    {
      bodyLimit: SIGNED_BODY_LIMIT,
      schema: {
        operationId: 'githubWebhook',
        tags: ['index'],
        summary:
          'GitHub webhook deliveries: push, repository (renamed, transferred, deleted, privatized, publicized)',
        description:
          'X-Hub-Signature-256 must be the HMAC-SHA256 of the raw body under GITHUB_WEBHOOK_SECRET (else 401, nothing ' +
          'changes). 202 when a crawl was queued, 200 otherwise (applied, ignored, or duplicate for a delivery id or a signed body seen within 7 days).',
        headers: WebhookHeaders,
        response: { 200: WebhookAnswer, 202: WebhookAnswer, ...problems(400, 401, 413, 503) },
      },
    },
    async (request, reply) => {
      const body = verifiedBody(request, app.config.githubWebhookSecret ?? '', 'bad-signature');
      const event = request.headers['x-github-event'];
      const deliveryId = request.headers['x-github-delivery'];
      if (!event || !deliveryId) {
        throw problem('bad-request', 'A delivery needs X-GitHub-Event and X-GitHub-Delivery headers');
      }
      const payload = parsePayload(body, request.headers['content-type']);
      if (!payload) throw problem('bad-request', 'The delivery body is not a JSON object');
      const action = typeof payload.action === 'string' ? payload.action : null;
      const repository =
        typeof (payload.repository as { full_name?: unknown } | undefined)?.full_name === 'string'
          ? String((payload.repository as { full_name: string }).full_name)
          : null;
      const first = await recordWebhookDelivery(app.db, {
        deliveryId,
        event,
        action,
        repository,
        outcome: 'received',
        bodySha256: deliveryDigest('repository', body),
      });
      if (!first) {
        return reply.code(200).send({
          delivery: deliveryId,
          event,
          outcome: 'duplicate' as const,
          detail: 'This delivery (its id or its signed body) was handled before; nothing changed.',
        });
      }
      let result: Awaited<ReturnType<typeof app.webhooks.dispatch>>;
      try {
        result = await app.webhooks.dispatch({
          id: deliveryId,
          event,
          action,
          payload,
          requestId: request.id,
          log: request.log,
        });
      } catch (error) {
        // Not handled: GitHub's redelivery of this id must be handled again.
        await forgetWebhookDelivery(app.db, deliveryId).catch(() => {});
        throw error;
      }
      await setWebhookDeliveryOutcome(app.db, deliveryId, result.outcome);
      request.log.info({ event, action, delivery: deliveryId, ...result }, 'webhook delivery');
      return reply
        .code(result.outcome === 'queued' ? 202 : 200)
        .send({ delivery: deliveryId, event, ...result });
    },
  );
};

export default webhookRoutes;
