import type { FastifyPluginAsync } from 'fastify';
import searchRoutes from '../search.js';
import appWebhookRoutes from './app-webhooks.js';
import archiveRoutes from './archive.js';
import collectionsRoutes from './collections/index.js';
import crawlRoutes from './crawls.js';
import indexRequestRoutes from './index-requests.js';
import reportsRoutes from './reports.js';
import reposRoutes from './repos.js';
import resolveRoutes from './resolve.js';
import skillsRoutes from './skills.js';
import suggestRoutes from './suggest.js';
import linksRoutes from './teams/links.js';
import webhookRoutes from './webhooks.js';

/** Everything under /v1 (registered with that prefix; every /v1 route is declared in this folder). */
const v1Routes: FastifyPluginAsync = async (app) => {
  await app.register(searchRoutes);
  await app.register(suggestRoutes);
  await app.register(skillsRoutes);
  await app.register(archiveRoutes);
  await app.register(resolveRoutes);
  await app.register(reposRoutes);
  await app.register(indexRequestRoutes);
  await app.register(webhookRoutes);
  await app.register(collectionsRoutes);
  await app.register(crawlRoutes);
  await app.register(reportsRoutes);
  await app.register(linksRoutes);
  await app.register(appWebhookRoutes);
};

export default v1Routes;
