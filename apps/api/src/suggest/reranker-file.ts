import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RERANK_FEATURES, type Reranker, type RerankFeature } from './abstain.js';

/** The format a reranker file declares (what `bench/suggest/fit-rerank.py --json` writes). */
export const RERANKER_FORMAT = 'atskills-reranker/1';

const weight = z.number().finite();

const RerankerFileSchema = z.strictObject({
  format: z.literal(RERANKER_FORMAT),
  /** Free text: what it was fitted on (the judged messages, the embeddings model), for whoever reads it. */
  fitted: z.string().optional(),
  weights: z
    .strictObject(
      Object.fromEntries(RERANK_FEATURES.map((f) => [f, weight.optional()])) as Record<
        RerankFeature,
        z.ZodOptional<typeof weight>
      >,
    )
    .refine((w) => Object.values(w).some((v) => v !== undefined && v !== 0), 'weighs no evidence'),
  platt: z.strictObject({ scale: z.number().finite().positive(), bias: z.number().finite() }),
  abstainBelow: z.number().min(0).max(1),
  /** The shown score's calibration (abstain.ts SHOWN); files written before it have none. */
  shown: z
    .strictObject({
      logit: z.number().finite().positive(),
      gap: z.number().finite().min(0),
      bias: z.number().finite(),
    })
    .optional(),
});

/** A reranker from its JSON text; throws an Error naming what is wrong (the key and the rule). */
export function parseReranker(text: string): Reranker {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON: ${(err as Error).message}`);
  }
  const parsed = RerankerFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the file';
    throw new Error(`${where}: ${issue.message}`);
  }
  const { weights, platt, abstainBelow, shown } = parsed.data;
  const defined = Object.fromEntries(Object.entries(weights).filter(([, v]) => v !== undefined));
  return Object.freeze({
    weights: Object.freeze(defined),
    platt: Object.freeze(platt),
    abstainBelow,
    ...(shown ? { shown: Object.freeze(shown) } : {}),
  });
}

/** A reranker file (`SUGGEST_RERANKER`); throws an Error naming the path and what is wrong. */
export function loadRerankerFile(path: string): Reranker {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return parseReranker(text);
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/** A reranker as the JSON text of its file (the shipped one can be written out as a starting point). */
export function rerankerFileText(r: Reranker, fitted?: string): string {
  return `${JSON.stringify(
    {
      format: RERANKER_FORMAT,
      ...(fitted ? { fitted } : {}),
      weights: r.weights,
      platt: r.platt,
      abstainBelow: r.abstainBelow,
      ...(r.shown ? { shown: r.shown } : {}),
    },
    null,
    2,
  )}\n`;
}
