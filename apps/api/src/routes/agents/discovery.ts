import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../problems.js';
import { problems } from '../../schemas.js';
import { DiscoveryIndexes } from '../../services/discovery-index.js';

const DiscoveryIndexSchema = z
  .object({
    $schema: z.string(),
    skills: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        type: z.enum(['skill-md', 'archive']),
        url: z.string(),
        digest: z.string(),
      }),
    ),
  })
  .describe(
    'Agent skills discovery index, schema 0.2.0 (https://schemas.agentskills.io/discovery/0.2.0/schema.json)',
  );

// The `skills` CLI asks <url>/.well-known/agent-skills/index.json first, then the legacy
// <url>/.well-known/skills/index.json, each under the URL's path and then at the host's root
// (vercel-labs/skills, WellKnownProvider.fetchIndexCandidates).
const WELL_KNOWN = ['agent-skills', 'skills'] as const;

/**
 * The `skills` CLI's discovery indexes (SPEC 2.5): the hub's public hub: skills at
 * /.well-known/agent-skills/index.json, and one collection's at
 * /hub/<namespace>/<collection>/.well-known/agent-skills/index.json, so that `npx skills add <hub>` and
 * `npx skills add <hub>/hub/<namespace>/<collection>` list and install them.
 */
const discoveryRoutes: FastifyPluginAsyncZod = async (app) => {
  const indexes = new DiscoveryIndexes(app.db);

  for (const dir of WELL_KNOWN) {
    app.get(
      `/.well-known/${dir}/index.json`,
      {
        schema: {
          operationId: dir === 'agent-skills' ? 'getDiscoveryIndex' : 'getLegacyDiscoveryIndex',
          tags: ['agents'],
          summary: `The hub's public hub: skills for the skills CLI (npx skills add <hub>)${dir === 'skills' ? ', legacy path' : ''}`,
          response: { 200: DiscoveryIndexSchema, ...problems(503) },
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'no-cache');
        return indexes.build();
      },
    );
    app.get(
      `/hub/:namespace/:collection/.well-known/${dir}/index.json`,
      {
        schema: {
          operationId:
            dir === 'agent-skills' ? 'getCollectionDiscoveryIndex' : 'getLegacyCollectionDiscoveryIndex',
          tags: ['agents'],
          summary: `One public collection's skills for the skills CLI (npx skills add <hub>/hub/<namespace>/<collection>)${dir === 'skills' ? ', legacy path' : ''}`,
          params: z.object({ namespace: z.string().min(1).max(100), collection: z.string().min(1).max(100) }),
          response: { 200: DiscoveryIndexSchema, ...problems(404, 503) },
        },
      },
      async (request, reply) => {
        const { namespace, collection } = request.params;
        const index = await indexes.build({ namespace, collection });
        // A private or unknown collection has no index: the same 404 either way, so private names do not leak.
        if (index.skills.length === 0)
          throw problem('not-found', `No public skills in hub:${namespace}/${collection}`);
        reply.header('cache-control', 'no-cache');
        return index;
      },
    );
  }
};

export default discoveryRoutes;
