import { jsonSchemaTransform } from 'fastify-type-provider-zod';

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/**
 * The zod-to-JSON-Schema transform, plus one fix for the document: identity routes are Fastify wildcards
 * (`/v1/skills/*`, an identity holds slashes), which OpenAPI cannot express; they are documented as a
 * `{identity}` path parameter instead, which is what a client substitutes.
 */
export function openapiTransform(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const out = jsonSchemaTransform(input) as { schema: Record<string, unknown>; url: string };
  if (!out.url.endsWith('/*')) return out;
  return {
    url: `${out.url.slice(0, -1)}:identity`,
    schema: {
      ...out.schema,
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
