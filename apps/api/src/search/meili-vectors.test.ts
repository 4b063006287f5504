import { describe, expect, it } from 'vitest';
import {
  embedderDimensions,
  embedderSettings,
  hybridSearchBody,
  MEILI_EMBEDDER,
  SEMANTIC_RATIO,
  withVector,
} from './meili-vectors.js';

describe('Meilisearch vector bodies', () => {
  it('declares a user-provided embedder of the given dimensions, and reads the dimensions back', () => {
    const settings = embedderSettings(384);
    expect(settings).toEqual({
      embedders: { [MEILI_EMBEDDER]: { source: 'userProvided', dimensions: 384 } },
    });
    expect(embedderDimensions(settings)).toBe(384);
  });

  it('reads no dimensions from an index without our user-provided embedder', () => {
    expect(embedderDimensions({})).toBeNull();
    expect(embedderDimensions({ embedders: null })).toBeNull();
    expect(
      embedderDimensions({ embedders: { other: { source: 'userProvided', dimensions: 8 } } }),
    ).toBeNull();
    expect(
      embedderDimensions({ embedders: { [MEILI_EMBEDDER]: { source: 'openAi', dimensions: 8 } } }),
    ).toBeNull();
    expect(embedderDimensions({ embedders: { [MEILI_EMBEDDER]: { source: 'userProvided' } } })).toBeNull();
  });

  it('puts a vector of the index dimensions under _vectors as a plain array', () => {
    const doc = { id: 'a', name: 'x' };
    const out = withVector(doc, Float32Array.from([0.5, -0.25, 0]), 3);
    expect(out).toEqual({ id: 'a', name: 'x', _vectors: { [MEILI_EMBEDDER]: [0.5, -0.25, 0] } });
    expect(Array.isArray(out._vectors?.[MEILI_EMBEDDER])).toBe(true);
    expect(doc).toEqual({ id: 'a', name: 'x' });
  });

  it('sends a document without a vector, or with one of other dimensions, without _vectors', () => {
    expect(withVector({ id: 'a' }, undefined, 3)).toEqual({ id: 'a' });
    expect(withVector({ id: 'a' }, [1, 0], 3)).toEqual({ id: 'a' });
  });

  it('builds a hybrid search by vector over skills, keeping the caller filters', () => {
    const body = hybridSearchBody(Float32Array.from([1, 0]), ['visibility = "public"'], 50);
    expect(body).toEqual({
      vector: [1, 0],
      hybrid: { embedder: MEILI_EMBEDDER, semanticRatio: SEMANTIC_RATIO },
      filter: ['visibility = "public"', 'kind = "skill"'],
      limit: 50,
      attributesToRetrieve: ['identity'],
    });
    expect(hybridSearchBody([0, 1], [], 5, 0.5).hybrid.semanticRatio).toBe(0.5);
  });
});
