import type { ReadScope } from '@atskills/db';
import { topScoredSlots } from './top-slots.js';

/** An OpenAI-compatible embeddings service (POST {url}/v1/embeddings). */
export interface EmbeddingsSettings {
  url: string;
  model?: string | undefined;
  apiKey?: string | undefined;
  /** Texts per request. */
  batchSize?: number;
  /** Attempts per request (the first plus retries). */
  attempts?: number;
  /** Milliseconds before a request counts as failed. */
  timeoutMs?: number;
}

/** Turns texts into unit vectors through the embeddings service; throws when it cannot. */
export interface EmbeddingsClient {
  embed(
    texts: readonly string[],
    options?: { timeoutMs?: number; attempts?: number },
  ): Promise<Float32Array[]>;
}

const DEFAULT_BATCH = 64;
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Characters of a text sent (services cap their input; the opening says most). */
const MAX_TEXT_CHARS = 2_000;

/**
 * What a skill is, as text for an embedding model: name, description, headings. Shared by the suggestion
 * engine and the Meilisearch index so both hold the same vector for a skill.
 */
export function skillEmbeddingText(skill: { name: string; description: string }, headings: string): string {
  return `${skill.name}: ${skill.description}\n${headings}`.slice(0, MAX_TEXT_CHARS);
}

/** The endpoint of a base URL: `/v1/embeddings` is added unless the URL already ends with it. */
export function embeddingsEndpoint(url: string): string {
  const base = url.replace(/\/+$/, '');
  return base.endsWith('/embeddings') ? base : `${base.endsWith('/v1') ? base : `${base}/v1`}/embeddings`;
}

function unit(values: readonly number[]): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** A client of an OpenAI-compatible `/v1/embeddings` endpoint: batched, retried with back-off, timed out. */
export function createEmbeddingsClient(settings: EmbeddingsSettings): EmbeddingsClient {
  const endpoint = embeddingsEndpoint(settings.url);
  const batchSize = settings.batchSize ?? DEFAULT_BATCH;
  const post = async (input: string[], timeoutMs: number, attempts: number): Promise<Float32Array[]> => {
    let last: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 100 * 3 ** (attempt - 1)));
      try {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
          },
          body: JSON.stringify({ input, ...(settings.model ? { model: settings.model } : {}) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) {
          last = new Error(`embeddings service answered ${res.status}`);
          // A client error will not pass on a retry (bad key, bad model); a 429 or 5xx may.
          if (res.status < 500 && res.status !== 429) break;
          continue;
        }
        const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
        const data = body.data ?? [];
        if (data.length !== input.length) throw new Error('embeddings service answered the wrong count');
        const out: Float32Array[] = new Array(input.length);
        data.forEach((d, i) => {
          const at = typeof d.index === 'number' ? d.index : i;
          if (!Array.isArray(d.embedding) || d.embedding.some((x) => typeof x !== 'number')) {
            throw new Error('embeddings service answered a malformed vector');
          }
          out[at] = unit(d.embedding as number[]);
        });
        return out;
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  };
  return {
    async embed(texts, options = {}) {
      const timeoutMs = options.timeoutMs ?? settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const attempts = options.attempts ?? settings.attempts ?? DEFAULT_ATTEMPTS;
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const batch = texts.slice(i, i + batchSize).map((t) => t.slice(0, MAX_TEXT_CHARS) || ' ');
        out.push(...(await post(batch, timeoutMs, attempts)));
      }
      return out;
    },
  };
}

/**
 * The identities of the `depth` skills nearest an embedding that `viewer` may read, best first, from an index
 * holding the same vectors as the suggestion engine (Meilisearch); null when that index cannot answer.
 */
export type VectorSearch = (
  vector: Float32Array,
  viewer: ReadScope,
  depth: number,
) => Promise<string[] | null>;

/** Unit vectors by slot, searched by cosine (brute force over the slots held; bounded by the skills held). */
export class VectorStore {
  private readonly vectors = new Map<number, Float32Array>();
  private dims = 0;

  get size(): number {
    return this.vectors.size;
  }

  set(slot: number, v: Float32Array): void {
    if (this.dims === 0) this.dims = v.length;
    if (v.length !== this.dims)
      throw new Error(`embedding of ${v.length} dimensions, the store holds ${this.dims}`);
    this.vectors.set(slot, v);
  }

  delete(slot: number): void {
    this.vectors.delete(slot);
  }

  has(slot: number): boolean {
    return this.vectors.has(slot);
  }

  /** The `depth` slots most similar to `q` that `admit` lets through, best first. */
  nearest(
    q: Float32Array,
    depth: number,
    admit: (slot: number) => boolean,
  ): { slot: number; score: number }[] {
    const slots = new Uint32Array(this.vectors.size);
    const scores = new Float64Array(this.vectors.size);
    let count = 0;
    for (const [slot, v] of this.vectors) {
      if (v.length !== q.length) continue;
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += v[i]! * q[i]!;
      slots[count] = slot;
      scores[count++] = dot;
    }
    return topScoredSlots(slots, scores, count, depth, admit);
  }

  /** Estimated bytes held. */
  bytes(): number {
    return this.vectors.size * (this.dims * 4 + 80);
  }
}
