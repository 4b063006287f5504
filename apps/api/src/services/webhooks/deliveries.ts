import { createHash } from 'node:crypto';

/** Webhook deliveries handled once by X-GitHub-Delivery (the route calls these; SQL lives in @atskills/db). */
export {
  forgetWebhookDelivery,
  recordWebhookDelivery,
  setWebhookDeliveryOutcome,
} from '@atskills/db';

/**
 * The digest a delivery is also deduplicated by: SHA-256 of the route and the signed body. GitHub's own
 * deliveries differ in their bodies (timestamps, shas, the hook), so one body seen twice within the window
 * is a replay, whatever X-GitHub-Delivery it carries.
 */
export function deliveryDigest(route: 'repository' | 'app', body: Buffer): string {
  return createHash('sha256').update(route).update('\0').update(body).digest('hex');
}
