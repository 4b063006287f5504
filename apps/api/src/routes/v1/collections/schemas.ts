import { z } from 'zod';

/** `:namespace/:collection` of the collection routes (checked strictly by the service). */
export const CollectionParams = z.object({
  namespace: z.string().min(1).max(100),
  collection: z.string().min(1).max(200),
});

/** `?visibility=` of a publish; private unless said otherwise, so nothing goes public by accident. */
export const PublishQuery = z.object({
  visibility: z.enum(['private', 'public']).default('private').describe('Who may read the collection.'),
});

const Warning = z.object({ code: z.string(), message: z.string(), path: z.string().optional() });

/** PUT /v1/collections/<namespace>/<collection> answer. */
export const PublishResponse = z.object({
  identity: z.string().describe('hub:<namespace>/<collection>'),
  revision: z.string().describe('sha256 of the collection manifest: the new (or unchanged) revision'),
  previousRevision: z.string().nullable(),
  unchanged: z.boolean().describe('true when the content equals the current revision (no new revision made)'),
  visibility: z.enum(['private', 'public']),
  skills: z.array(z.string()).describe('identities of the published skills'),
  warnings: z.array(Warning),
});
export type PublishResponse = z.infer<typeof PublishResponse>;

/** DELETE /v1/collections/<namespace>/<collection> answer. */
export const DeleteCollectionResponse = z.object({
  identity: z.string(),
  deleted: z.literal(true),
  lastRevision: z.string().nullable(),
});

/** GET /v1/collections/<namespace>/<collection>/revisions answer. */
export const RevisionsResponse = z.object({
  identity: z.string(),
  visibility: z.enum(['private', 'public']),
  currentRevision: z.string().nullable(),
  deletedAt: z.string().nullable(),
  revisions: z.array(
    z.object({
      revision: z.string(),
      skillCount: z.number().int(),
      sizeBytes: z.number().int(),
      visibility: z.enum(['private', 'public']),
      publishedBy: z.string().nullable(),
      publishedAt: z.string(),
    }),
  ),
});
