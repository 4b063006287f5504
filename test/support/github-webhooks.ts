/**
 * GitHub webhook deliveries for tests: payloads shaped as GitHub sends them (@octokit/webhooks-types
 * shapes, trimmed to the fields the hub reads plus the usual neighbours), signed with X-Hub-Signature-256,
 * with a delivery id; sent over HTTP or handed to `app.inject`.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export interface WebhookRepository {
  id: number;
  name: string;
  full_name: string;
  private: boolean;
  default_branch: string;
  owner: { login: string; type?: string };
}

/** A repository as webhook payloads carry it. */
export function webhookRepository(
  fullName: string,
  options: { id?: number; private?: boolean; defaultBranch?: string } = {},
): WebhookRepository {
  const [owner = '', name = ''] = fullName.split('/');
  return {
    id: options.id ?? 1,
    name,
    full_name: fullName,
    private: options.private ?? false,
    default_branch: options.defaultBranch ?? 'main',
    owner: { login: owner, type: 'Organization' },
  };
}

/** A `push` payload: `ref` defaults to the default branch. */
export function pushPayload(
  repository: WebhookRepository,
  options: { ref?: string; before?: string; after?: string; deleted?: boolean } = {},
) {
  return {
    ref: options.ref ?? `refs/heads/${repository.default_branch}`,
    before: options.before ?? '0'.repeat(40),
    after: options.after ?? 'f'.repeat(40),
    created: false,
    deleted: options.deleted ?? false,
    forced: false,
    commits: [],
    repository,
    pusher: { name: 'author', email: 'author@example.org' },
    sender: { login: 'author', id: 7 },
  };
}

/** A `repository` payload; `renamed` and `transferred` carry GitHub's `changes`. */
export function repositoryPayload(
  action: 'renamed' | 'transferred' | 'deleted' | 'privatized' | 'publicized' | 'edited' | 'archived',
  repository: WebhookRepository,
  previous?: { name?: string; owner?: string },
) {
  const changes =
    action === 'renamed'
      ? { repository: { name: { from: previous?.name } } }
      : action === 'transferred'
        ? { owner: { from: { organization: { login: previous?.owner } } } }
        : undefined;
  return { action, ...(changes ? { changes } : {}), repository, sender: { login: 'author', id: 7 } };
}

/** Headers and body of a delivery, signed with `secret` (pass `signature` to send a wrong one). */
export function webhookRequest(
  secret: string,
  event: string,
  payload: unknown,
  options: { deliveryId?: string; signature?: string | null; body?: string } = {},
) {
  const body = options.body ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/test',
    'x-github-event': event,
    'x-github-delivery': options.deliveryId ?? randomUUID(),
    'x-github-hook-id': '1',
  };
  const signature =
    options.signature === undefined
      ? `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
      : options.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  return { headers, body };
}

/** Hands a delivery made by webhookRequest to `app.inject`, as a POST to `route` (the repository webhook by default). */
export function injectWebhook(
  app: FastifyInstance,
  delivery: { headers: Record<string, string>; body: string },
  route = '/v1/webhooks/github',
) {
  return app.inject({ method: 'POST', url: route, headers: delivery.headers, payload: delivery.body });
}

/** POSTs a delivery to a hub's /v1/webhooks/github over HTTP, as GitHub does. */
export async function deliverWebhook(
  hubUrl: string,
  secret: string,
  event: string,
  payload: unknown,
  options: { deliveryId?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const { headers, body } = webhookRequest(secret, event, payload, options);
  const res = await fetch(`${hubUrl}/v1/webhooks/github`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
}
