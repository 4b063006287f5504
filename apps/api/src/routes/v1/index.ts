import type { FastifyPluginAsync } from 'fastify';
import searchRoutes from '../search.js';
import archiveRoutes from './archive.js';
import indexRequestRoutes from './index-requests.js';
import reportsRoutes from './reports.js';
import reposRoutes from './repos.js';
import resolveRoutes from './resolve.js';
import skillsRoutes from './skills.js';
import webhookRoutes from './webhooks.js';

/** Everything under /v1. */
const v1Routes: FastifyPluginAsync = async (app) => {
  await app.register(searchRoutes);
  await app.register(skillsRoutes);
  await app.register(archiveRoutes);
  await app.register(resolveRoutes);
  await app.register(reposRoutes);
  await app.register(indexRequestRoutes);
  await app.register(webhookRoutes);
  await app.register(reportsRoutes);
};

export default v1Routes;
