import fastJson from 'fast-json-stringify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

type SerializerCompiler = Parameters<typeof zodSerializerCompiler>[0];

/** The zod schema of a route's response (given bare, or as `{ properties }` like the zod provider takes). */
function zodSchemaOf(schema: unknown): z.ZodType | null {
  if (schema instanceof z.ZodType) return schema;
  if (
    schema &&
    typeof schema === 'object' &&
    'properties' in schema &&
    schema.properties instanceof z.ZodType
  ) {
    return schema.properties;
  }
  return null;
}

/**
 * Compiles each route's zod response schema once into a fast-json-stringify function over the JSON
 * Schema zod derives for its output, instead of encoding every answer through zod and then
 * `JSON.stringify` (the zod provider's serializer: about a tenth of a search's CPU at 20 hits). The answer
 * is shaped the same (unknown keys dropped, as zod strips them); a schema JSON Schema cannot express falls
 * back to the zod provider's serializer.
 */
export function compiledSerializerCompiler(route: SerializerCompiler): (data: unknown) => string {
  return responseSerializer(route).serialize;
}

/** The serializer of one route's response, and whether it is compiled (false: zod encodes each answer). */
export function responseSerializer(route: SerializerCompiler): {
  serialize: (data: unknown) => string;
  compiled: boolean;
} {
  const schema = zodSchemaOf(route.schema);
  const compiled = schema ? fastSerializer(schema) : null;
  if (compiled) return { serialize: compiled, compiled: true };
  return { serialize: zodSerializerCompiler(route), compiled: false };
}

/** A serializer of values of a zod schema, written the way a route answering that schema writes them. */
export function compileSerializer(schema: z.ZodType): (data: unknown) => string {
  return responseSerializer({ schema, method: 'GET', url: '/', httpStatus: '200' }).serialize;
}

/** fast-json-stringify over the JSON Schema of the schema's output, or null when JSON Schema cannot say it. */
function fastSerializer(schema: z.ZodType): ((data: unknown) => string) | null {
  try {
    const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'throw' });
    return fastJson(json as Parameters<typeof fastJson>[0]);
  } catch {
    // Not expressible as JSON Schema (a transform, a custom type): zod encodes it.
    return null;
  }
}
