import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { leanJsonRoute } from '../plugins/security.js';
import { problems, SearchPageResponse, SearchQuery } from '../schemas.js';
import { engineHeader } from '../search/engine.js';
import { cacheKey, scopeKey } from '../services/read-cache.js';
import { searchPageJson, searchSkills } from '../services/search.js';
import { sendJsonText } from './caching.js';

/** GET /search (served at the root and under /v1): SPEC 2.1. */
const searchRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/search',
    {
      ...leanJsonRoute,
      schema: {
        operationId: app.prefix === '' ? 'search' : `search${app.prefix.replace(/\W/g, '')}`,
        tags: ['search'],
        summary: 'Search skills and collections',
        description:
          'Ranking: exact name, name prefix, full text (name > description > body), typo similarity; stars break ties. ' +
          'Pass nextCursor back as cursor for the next page (stable while the index changes). ' +
          'The X-Search-Engine header names the engine that answered.',
        querystring: SearchQuery,
        // 401 for a token that is not valid (plugins/viewer.ts), 429 past the rate limit.
        response: { 200: SearchPageResponse, ...problems(400, 401, 429, 503) },
      },
    },
    async (request, reply) => {
      const { q, limit, cursor, source, owner, repo, namespace } = request.query;
      reply.header('cache-control', 'no-cache');
      const cache = app.readCache;
      const cacheable = app.searchEngine.name === 'postgres' && cache.enabled;
      const key = cacheable
        ? cacheKey(scopeKey(request.viewer), q.trim(), limit, cursor, source, owner, repo, namespace)
        : '';
      const cached = cacheable ? cache.getSearchPage(key) : undefined;
      if (cached) {
        reply.header('x-search-engine', cached.engine);
        return sendJsonText(reply, cached.body);
      }
      const generation = cache.generation;
      const outcome = await searchSkills(
        app.searchEngine,
        request.viewer,
        {
          q,
          limit,
          cursor,
          filters: {
            ...(source ? { source } : {}),
            ...(owner ? { owner } : {}),
            ...(repo ? { repo } : {}),
            ...(namespace ? { namespace } : {}),
          },
        },
        app.db,
      );
      reply.header('x-search-engine', engineHeader(outcome.engine));
      // The bytes the route's schema would write (searchPageJson), kept as is by the read cache.
      const body = searchPageJson(outcome);
      if (cacheable && outcome.engine.name === 'postgres' && !outcome.engine.fallback) {
        cache.putSearchPage(key, { body, engine: engineHeader(outcome.engine) }, generation);
      }
      return sendJsonText(reply, body);
    },
  );
};

export default searchRoutes;
