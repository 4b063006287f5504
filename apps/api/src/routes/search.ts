import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problems, SearchPageResponse, SearchQuery } from '../schemas.js';
import { searchSkills } from '../services/search.js';

/** GET /search (served at the root and under /v1): SPEC 2.1. */
const searchRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/search',
    {
      schema: {
        operationId: app.prefix === '' ? 'search' : `search${app.prefix.replace(/\W/g, '')}`,
        tags: ['search'],
        summary: 'Search skills and collections',
        description:
          'Ranking: exact name, name prefix, full text (name > description > body), typo similarity; stars break ties. ' +
          'Pass nextCursor back as cursor for the next page (stable while the index changes). ' +
          'The X-Search-Engine header names the engine that answered.',
        querystring: SearchQuery,
        response: { 200: SearchPageResponse, ...problems(400, 503) },
      },
    },
    async (request, reply) => {
      const { q, limit, cursor, source, owner, repo, namespace } = request.query;
      const outcome = await searchSkills(app.searchEngine, request.viewer, {
        q,
        limit,
        cursor,
        filters: {
          ...(source ? { source } : {}),
          ...(owner ? { owner } : {}),
          ...(repo ? { repo } : {}),
          ...(namespace ? { namespace } : {}),
        },
      });
      reply.header('x-search-engine', outcome.engine);
      reply.header('cache-control', 'no-cache');
      return outcome.page;
    },
  );
};

export default searchRoutes;
