import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problem } from '../../../problems.js';
import { problems, TOKEN_REQUIRED } from '../../../schemas.js';
import { ConcurrencyGate } from '../../../services/concurrency-gate.js';
import {
  authorizePublish,
  collectionRevisions,
  deleteCollection,
  publishCollection,
} from '../../../services/publish/publish.js';
import {
  CollectionParams,
  DeleteCollectionResponse,
  PublishQuery,
  PublishResponse,
  RevisionsResponse,
} from './schemas.js';

/** Media types a collection upload may be sent as (all mean "gzip tar"; docs/teams.md lists them). */
const ARCHIVE_TYPES = [
  'application/gzip',
  'application/x-gzip',
  'application/x-tar+gzip',
  'application/octet-stream',
];

/** How long a publish waits for a slot before it gets 503, and the Retry-After it is told. */
const PUBLISH_WAIT_MS = 30_000;
const PUBLISH_RETRY_AFTER_S = 10;

/** Publishing (SPEC 2.3): PUT a gzip tar as a new revision, list revisions, delete. Registered under /v1. */
const collectionsRoutes: FastifyPluginAsyncZod = async (app) => {
  const limits = app.config.publishLimits;
  // Each publish holds its archive and its unpacked files in memory while it is checked (up to 100 MiB at
  // the default limits, and the safety scan's copy): without a bound, concurrent large publishes grow the
  // process without limit. A slot is taken once the body has arrived: taken before, an upload that sends
  // its headers and stalls would hold it until the request timeout, and a few such uploads would block
  // every team's publishes.
  const publishing = new ConcurrencyGate(
    {
      concurrent: app.config.publishConcurrency,
      maxWaiting: app.config.publishConcurrency,
      maxWaitMs: PUBLISH_WAIT_MS,
    },
    {
      detail: `${app.config.publishConcurrency} publishes are being checked; retry shortly (PUBLISH_CONCURRENCY).`,
      retryAfterSeconds: PUBLISH_RETRY_AFTER_S,
    },
  );
  // Scoped to this plugin: only the publish route accepts raw archives, with its own size limit.
  app.addContentTypeParser(
    ARCHIVE_TYPES,
    { parseAs: 'buffer', bodyLimit: limits.maxCompressedBytes },
    (_req, body, done) => done(null, body),
  );

  app.put(
    '/collections/:namespace/:collection',
    {
      bodyLimit: limits.maxCompressedBytes,
      schema: {
        operationId: 'publishCollection',
        security: TOKEN_REQUIRED,
        tags: ['teams'],
        summary: 'Publish a collection (gzip tar) as a new immutable revision',
        description:
          'Needs a token with the publish scope and the owner or publisher role in the namespace. The body is a ' +
          '.tar.gz of the collection folder (content-type application/gzip). Everything is validated before anything ' +
          'is stored; each refusal has its own problem code (archive-*, invalid-skill, too-many-skills, ...). ' +
          'Identical content makes no new revision (unchanged: true).',
        params: CollectionParams,
        querystring: PublishQuery,
        response: { 200: PublishResponse, ...problems(400, 401, 403, 409, 413, 415, 422, 503) },
      },
      // Refuse callers, and bodies of another media type, before reading up to the body limit from them
      // (and before another parser, JSON's, could answer 400 for what is a 415).
      preParsing: async (request, _reply, payload) => {
        const { namespace, collection } = request.params as { namespace: string; collection: string };
        await authorizePublish(app.db, request.viewer, namespace, collection);
        const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
        if (type !== undefined && type !== '' && !ARCHIVE_TYPES.includes(type)) throw unsupportedType();
        return payload;
      },
    },
    async (request) => {
      const body = request.body;
      if (body !== undefined && body !== null && !Buffer.isBuffer(body)) throw unsupportedType();
      if (!Buffer.isBuffer(body) || body.length === 0) {
        throw problem(
          'archive-corrupt',
          'The body is empty: send the collection as a gzip tar (application/gzip).',
        );
      }
      const release = await publishing.acquire();
      let answer: Awaited<ReturnType<typeof publishCollection>>;
      try {
        // A client that left while this publish waited for its slot is not worth checking for.
        if (request.raw.socket?.destroyed) throw problem('bad-request', 'The client closed the request.');
        answer = await publishCollection(app.db, {
          viewer: request.viewer,
          namespace: request.params.namespace,
          collection: request.params.collection,
          visibility: request.query.visibility,
          body,
          limits,
          requestId: request.id,
          now: app.clock(),
        });
      } finally {
        release();
      }
      request.log.info(
        {
          identity: answer.identity,
          revision: answer.revision,
          unchanged: answer.unchanged,
          skills: answer.skills.length,
        },
        'collection published',
      );
      return answer;
    },
  );

  app.delete(
    '/collections/:namespace/:collection',
    {
      schema: {
        operationId: 'deleteCollection',
        security: TOKEN_REQUIRED,
        tags: ['teams'],
        summary: 'Delete a collection: its identities answer 410 to those who may see them',
        params: CollectionParams,
        response: { 200: DeleteCollectionResponse, ...problems(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => {
      const answer = await deleteCollection(app.db, {
        viewer: request.viewer,
        namespace: request.params.namespace,
        collection: request.params.collection,
        requestId: request.id,
        now: app.clock(),
      });
      request.log.info({ identity: answer.identity }, 'collection deleted');
      return answer;
    },
  );

  app.get(
    '/collections/:namespace/:collection/revisions',
    {
      schema: {
        operationId: 'listCollectionRevisions',
        tags: ['teams'],
        summary: 'Every published revision of a collection, newest first (each stays fetchable with ?rev=)',
        params: CollectionParams,
        response: { 200: RevisionsResponse, ...problems(400, 401, 404, 503) },
      },
    },
    async (request) =>
      collectionRevisions(app.db, request.viewer, request.params.namespace, request.params.collection),
  );
};

function unsupportedType() {
  return problem(
    'unsupported-media-type',
    'Send the collection as a gzip tar (content-type application/gzip).',
  );
}

export default collectionsRoutes;
