/** Webhook deliveries handled once by X-GitHub-Delivery (the route calls these; SQL lives in @atskills/db). */
export {
  forgetWebhookDelivery,
  recordWebhookDelivery,
  setWebhookDeliveryOutcome,
} from '@atskills/db';
