import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../problems.js';
import { getFeedSkills, getOwnerOverview } from '../services/browse.js';
import { renderFeed } from '../web/feed.js';
import { renderOwnerPage } from '../web/pages/owner-page.js';
import { ownerFeedUrl, ownerPageUrl } from '../web/urls.js';
import { ifNoneMatchHits } from './caching.js';

// The browsing routes beside the skill pages: owner and namespace pages and the Atom feeds. Registered by
// the web plugin inside its encapsulated context, so their errors are HTML pages like every other page's.

type SendPage = (reply: FastifyReply, status: number, page: string) => FastifyReply;

const OWNER_SOURCES = { o: 'gh', n: 'hub' } as const;

/** Reads an owner or namespace from a URL: short plain names only, anything else is simply not found. */
function ownerParam(value: string): string {
  if (value.length === 0 || value.length > 100 || /[/\s]/.test(value)) {
    throw problem('not-found', 'No such owner or namespace');
  }
  return value;
}

/** /o/<owner> (a GitHub owner) and /n/<namespace> (a hub namespace): what the viewer may see of it. */
async function ownerPage(
  app: FastifyInstance,
  request: FastifyRequest<{ Params: { owner: string } }>,
  reply: FastifyReply,
  source: 'gh' | 'hub',
  sendPage: SendPage,
) {
  const overview = await getOwnerOverview(app.db, request.viewer, source, ownerParam(request.params.owner));
  return sendPage(reply, 200, renderOwnerPage(overview));
}

/** /feed.xml and /o|n/<owner>/feed.xml: Atom feeds of public skills only, whoever asks, so any cache may keep them. */
async function feed(
  app: FastifyInstance,
  request: FastifyRequest<{ Params: { owner?: string } }>,
  reply: FastifyReply,
  source?: 'gh' | 'hub',
) {
  const owner = source && request.params.owner !== undefined ? ownerParam(request.params.owner) : undefined;
  const found = await getFeedSkills(app.db, source && owner ? { source, owner } : undefined);
  const pagePath = source && found.owner ? ownerPageUrl(source, found.owner) : '/';
  const body = renderFeed({
    hubUrl: app.config.publicUrl,
    selfPath: source && found.owner ? ownerFeedUrl(source, found.owner) : '/feed.xml',
    pagePath,
    title: found.owner ? `New and updated skills of ${source}:${found.owner}` : 'New and updated skills',
    entries: found.skills,
  });
  const etag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  reply.header('etag', `"${etag}"`).header('cache-control', 'public, max-age=300');
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.header('content-type', 'application/atom+xml; charset=utf-8').send(body);
}

/** Registers /o/<owner>, /n/<namespace>, their feed.xml and /feed.xml on the web plugin's context. */
export function registerBrowseRoutes(web: FastifyInstance, sendPage: SendPage): void {
  for (const [prefix, source] of Object.entries(OWNER_SOURCES)) {
    web.get(`/${prefix}/:owner`, { schema: { hide: true } }, (request, reply) =>
      ownerPage(web, request as FastifyRequest<{ Params: { owner: string } }>, reply, source, sendPage),
    );
    web.get(`/${prefix}/:owner/feed.xml`, { schema: { hide: true } }, (request, reply) =>
      feed(web, request as FastifyRequest<{ Params: { owner: string } }>, reply, source),
    );
  }
  web.get('/feed.xml', { schema: { hide: true } }, (request, reply) =>
    feed(web, request as FastifyRequest<{ Params: { owner?: string } }>, reply),
  );
}
