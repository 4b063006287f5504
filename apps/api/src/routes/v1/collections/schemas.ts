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

// The publish answer is a wire shape the CLI parses too, so it lives in @atskills/protocol (http.ts).
export { PublishResponse } from '@atskills/protocol';

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
