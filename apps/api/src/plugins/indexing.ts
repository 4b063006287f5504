import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { CallerBudget, GithubQuota } from '../services/indexing/caller-budget.js';
import { IndexRequests } from '../services/indexing/index-requests.js';
import { WebhookDispatcher } from '../services/webhooks/dispatcher.js';
import { registerGithubEvents } from '../services/webhooks/github-events.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Index requests (SPEC 2.6): POST /v1/index-requests, on-demand gh: reads and webhooks start them. */
    indexRequests: IndexRequests;
    /** Verified GitHub webhook deliveries go here; other areas add handlers (`app.webhooks.on(event, fn)`). */
    webhooks: WebhookDispatcher;
  }
}

/** Index requests over the app's crawl queue, and the webhook dispatcher with the public-repository events. */
export default fp(
  async function indexingPlugin(app: FastifyInstance) {
    const indexRequests = new IndexRequests(
      app.db,
      app.queue,
      app.config.publicUrl,
      new CallerBudget(app.config.indexRequestsPerMinute),
      {
        quota: new GithubQuota(
          app.config.indexNewRepos.perCallerPerHour,
          app.config.indexNewRepos.totalPerHour,
        ),
        notFoundTtlS: app.config.indexNewRepos.notFoundTtlS,
      },
    );
    const webhooks = new WebhookDispatcher();
    registerGithubEvents(webhooks, { db: app.db, indexRequests, search: app.searchEngine });
    app.decorate('indexRequests', indexRequests);
    app.decorate('webhooks', webhooks);
  },
  { name: 'atskills-indexing', dependencies: ['atskills-database', 'atskills-search'] },
);
