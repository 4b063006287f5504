import type { ServiceLogger } from '../service-logger.js';

/** One verified GitHub webhook delivery, as handlers see it. */
export interface WebhookDelivery {
  /** X-GitHub-Delivery. */
  id: string;
  /** X-GitHub-Event (`push`, `repository`, `installation`, ...). */
  event: string;
  action: string | null;
  payload: Record<string, unknown>;
  requestId: string;
  log: ServiceLogger;
}

/** What a handler did with a delivery; `queued` answers 202, the others 200. */
export interface WebhookResult {
  outcome: 'queued' | 'applied' | 'ignored';
  detail: string;
  repository?: string;
  statusUrl?: string;
}

/** Handles a delivery, or returns undefined to leave it to the next handler of the event. */
export type WebhookHandler = (delivery: WebhookDelivery) => Promise<WebhookResult | undefined>;

/**
 * Routes verified deliveries to handlers by event. The first handler (in order) that returns a result
 * decides; `prepend` puts a handler before the others, so e.g. GitHub App installations can claim pushes
 * to the repositories they link before the public-repository handler sees them.
 */
export class WebhookDispatcher {
  private readonly handlers = new Map<string, WebhookHandler[]>();

  /** Adds a handler for an event (`*` for every event). */
  on(event: string, handler: WebhookHandler, options: { prepend?: boolean } = {}): void {
    const list = this.handlers.get(event) ?? [];
    if (options.prepend) list.unshift(handler);
    else list.push(handler);
    this.handlers.set(event, list);
  }

  /** Runs the handlers of the delivery's event, then the `*` ones, until one answers. */
  async dispatch(delivery: WebhookDelivery): Promise<WebhookResult> {
    for (const handler of [...(this.handlers.get(delivery.event) ?? []), ...(this.handlers.get('*') ?? [])]) {
      const result = await handler(delivery);
      if (result) return result;
    }
    return { outcome: 'ignored', detail: `The hub does not act on "${delivery.event}" events.` };
  }
}
