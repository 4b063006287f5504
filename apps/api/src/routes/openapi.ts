import type { FastifyPluginAsync } from 'fastify';

/** GET /openapi.json: the OpenAPI 3.1 document built from the route schemas. */
const openapiRoutes: FastifyPluginAsync = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

export default openapiRoutes;
