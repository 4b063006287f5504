/**
 * The framework floor: a bare Fastify app (no plugins, no validation, no database) answering a fixed
 * JSON body of a given size, with a strong ETag so HEAD and If-None-Match -> 304 cost what Fastify itself
 * costs. Run as a child process (PORT, FLOOR_BYTES) so it is measured like the API.
 */
import Fastify from 'fastify';

const bytes = Number(process.env.FLOOR_BYTES ?? 2048);
const item = { identity: 'gh:owner/repo/skills/name', name: 'name', description: 'x'.repeat(120) };
const items: (typeof item)[] = [];
while (JSON.stringify({ hits: items }).length < bytes) items.push(item);
const body = JSON.stringify({ hits: items, nextCursor: null, engine: 'floor' }).slice(0, Math.max(2, bytes));
const payload = JSON.stringify({ pad: body.slice(0, Math.max(0, bytes - 12)) });
const etag = '"floor-revision"';

const app = Fastify({ logger: false });
app.get('/*', async (request, reply) => {
  reply.header('etag', etag).header('cache-control', 'no-cache').type('application/json');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return payload;
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
