import { jsonSchemaTransform } from 'fastify-type-provider-zod';

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What follows the identity in the path of an identity route (`/reports` of
     * `/v1/skills/<identity>/reports`): the route is a wildcard that checks it, the document names it.
     */
    identitySuffix?: string;
    /** The route answers 304 to a matching If-None-Match (its validators: ETag, Cache-Control). */
    revalidates?: boolean;
  }
}

/** A documented response: a JSON schema, or a description with content by media type. */
type DocumentedResponse = Record<string, unknown>;

const PROBLEM_MEDIA_TYPE = 'application/problem+json';

const NOT_MODIFIED: DocumentedResponse = {
  type: 'null',
  description: 'Not Modified: the revision named by If-None-Match is current (no body)',
};

/**
 * The zod-to-JSON-Schema transform, plus the fixes the document needs that route schemas cannot say:
 * - identity routes are Fastify wildcards (`/v1/skills/*`, an identity holds slashes), which OpenAPI cannot
 *   express; they are documented as a `{identity}` path parameter (and the route's `identitySuffix`);
 * - every problem (errors, and the `moved` redirect) is `application/problem+json` (the route's own media
 *   type, e.g. a tarball's, is for success);
 * - every rate-limited route can answer 429, whether or not its schema lists it;
 * - a route that revalidates answers 304 (`config.revalidates`).
 */
export function openapiTransform(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const out = jsonSchemaTransform(input) as { schema: Record<string, unknown>; url: string };
  const config = (
    input.route as { config?: { rateLimit?: unknown; identitySuffix?: string; revalidates?: boolean } }
  ).config;
  const schema = { ...out.schema };
  if (schema.response) {
    const responses = problemResponses(
      schema.response as Record<string, DocumentedResponse>,
      config?.rateLimit !== false,
    );
    if (config?.revalidates) responses['304'] = NOT_MODIFIED;
    schema.response = responses;
  }
  if (!out.url.endsWith('/*')) return { ...out, schema };
  return {
    url: `${out.url.slice(0, -1)}:identity${config?.identitySuffix ?? ''}`,
    schema: {
      ...schema,
      params: {
        type: 'object',
        properties: {
          identity: {
            type: 'string',
            description:
              'A gh: or hub: identity, slashes kept, e.g. hub:acme/playbooks/deploy or gh:owner/repo/path (percent-encoding allowed)',
          },
        },
        required: ['identity'],
      },
    },
  };
}

/** The responses with each problem status as problem+json, and a 429 added where the rate limit applies. */
function problemResponses(
  responses: Record<string, DocumentedResponse>,
  rateLimited: boolean,
): Record<string, DocumentedResponse> {
  const problemSchema = Object.entries(responses).find(
    ([status, documented]) => Number(status) >= 300 && !isJsonRpc(documented),
  )?.[1];
  const all = { ...responses };
  if (rateLimited && !('429' in all) && problemSchema) all['429'] = problemSchema;
  for (const [status, documented] of Object.entries(all)) {
    // A redirect is a problem too (`moved`, with the new location).
    if (Number(status) < 300 || 'content' in documented) continue;
    const { description, ...jsonSchema } = documented;
    all[status] = {
      description: typeof description === 'string' ? description : 'A problem (RFC 9457)',
      // /mcp's own refusals are JSON-RPC errors, which its clients read, not problems.
      content: { [isJsonRpc(documented) ? 'application/json' : PROBLEM_MEDIA_TYPE]: { schema: jsonSchema } },
    };
  }
  return all;
}

/** Whether a documented answer is a JSON-RPC message (it has a `jsonrpc` member). */
function isJsonRpc(documented: DocumentedResponse): boolean {
  const properties = documented.properties as Record<string, unknown> | undefined;
  return properties !== undefined && 'jsonrpc' in properties;
}
