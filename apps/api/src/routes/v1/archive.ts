import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problem } from '../../problems.js';
import { FileQuery, problems, RawBytes, RevisionQuery } from '../../schemas.js';
import { buildSkillArchive, readSkillFile } from '../../services/archive.js';
import { ArchiveBuilds } from '../../services/archive-builds.js';
import { withMissingGh } from '../../services/indexing/missing-gh.js';
import { resolveIdentity } from '../../services/resolve.js';
import { validateRevision } from '../caching.js';
import { rawIdentity } from '../identity-path.js';

/** GET /v1/archive/<identity> and GET /v1/files/<identity>?path=: a skill's content. */
const archiveRoutes: FastifyPluginAsyncZod = async (app) => {
  const builds = new ArchiveBuilds({
    concurrent: app.config.archiveBuilds,
    cacheBytes: app.config.archiveCacheBytes,
  });
  app.get(
    '/archive/*',
    {
      config: { revalidates: true },
      schema: {
        operationId: 'getSkillArchive',
        tags: ['resolution'],
        summary: 'The skill folder as a deterministic tar.gz with Content-Digest (RFC 9530)',
        querystring: RevisionQuery,
        produces: ['application/gzip'],
        response: { 200: RawBytes, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      // 503 + Retry-After when builds are saturated (ARCHIVE_BUILDS); other routes never wait on them.
      const identity = rawIdentity(request, '/v1/archive/');
      const resolved = await withMissingGh(app, request, identity, () =>
        resolveIdentity(app.db, request.viewer, identity, request.query.rev),
      );
      if (resolved.kind !== 'skill') {
        throw problem('not-a-skill', `${resolved.identity} is a menu; archives hold one skill`);
      }
      app.noteUse(request, resolved.identity);
      if (validateRevision(request, reply, resolved.revision, resolved.pinned, resolved.private))
        return reply;
      // Access was decided above; the cache is keyed by content revision, which fixes the bytes.
      const archive = await builds.get(`${resolved.identity}\n${resolved.revision}`, () =>
        buildSkillArchive(app.db, resolved),
      );
      return reply
        .header('content-type', 'application/gzip')
        .header('content-digest', archive.contentDigest)
        .header('content-disposition', `attachment; filename="${resolved.revision.slice(0, 12)}.tar.gz"`)
        .send(archive.bytes);
    },
  );

  app.get(
    '/files/*',
    {
      config: { revalidates: true },
      schema: {
        operationId: 'getSkillFile',
        tags: ['resolution'],
        summary: 'One file of a skill folder',
        querystring: FileQuery,
        // By the file's extension (contentTypeOf): Markdown, JSON, text, or bytes.
        produces: ['text/markdown', 'text/plain', 'application/json', 'application/octet-stream'],
        response: { 200: RawBytes, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const identity = rawIdentity(request, '/v1/files/');
      const resolved = await withMissingGh(app, request, identity, () =>
        resolveIdentity(app.db, request.viewer, identity, request.query.rev),
      );
      if (resolved.kind !== 'skill') {
        throw problem('not-a-skill', `${resolved.identity} is a menu; files belong to skills`);
      }
      const file = await readSkillFile(app.db, resolved, request.query.path);
      if (validateRevision(request, reply, resolved.revision, resolved.pinned, resolved.private))
        return reply;
      return reply
        .header('content-type', contentTypeOf(file.path))
        .header('x-content-type-options', 'nosniff')
        .header('content-digest', `sha-256=:${Buffer.from(file.sha256, 'hex').toString('base64')}:`)
        .send(file.content);
    },
  );
};

// Text files are served as text so browsers and curl show them; never as HTML (a skill's files are
// untrusted content).
function contentTypeOf(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  if (ext === 'md' || ext === 'markdown') return 'text/markdown; charset=utf-8';
  if (ext === 'json') return 'application/json';
  if (
    [
      'txt',
      'py',
      'sh',
      'js',
      'ts',
      'yaml',
      'yml',
      'toml',
      'csv',
      'xml',
      'html',
      'css',
      'rb',
      'go',
      'rs',
    ].includes(ext)
  ) {
    return 'text/plain; charset=utf-8';
  }
  return 'application/octet-stream';
}

export default archiveRoutes;
