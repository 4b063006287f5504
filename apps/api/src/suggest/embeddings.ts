import type { ReadScope } from '@atskills/db';
import { trimTrailingSlashes } from '@atskills/protocol';
import { dots } from './dots.js';
import { grown } from './grow.js';
import { topScoredSlots } from './top-slots.js';
import { toUnit } from './unit-vector.js';
import { plainStorage, VectorRows } from './vector-rows.js';

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
  const base = trimTrailingSlashes(url);
  return base.endsWith('/embeddings') ? base : `${base.endsWith('/v1') ? base : `${base}/v1`}/embeddings`;
}

/** A service's vector as a float32 unit vector (all zeros stays as it is). */
function unit(values: readonly number[]): Float32Array {
  const v = Float32Array.from(values);
  return toUnit(v) ?? v;
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

/**
 * Unit vectors by slot, searched by cosine: exact, over every slot held, in one flat float32 array with four
 * dot products at once (`dots`: the same sums to the last bit as one at a time). At 54,000 vectors of 768
 * dimensions a scan takes 27 ms, where a Map of arrays scanned one at a time took 60 ms (`npm run bench --
 * suggest-vectors`); at that scale Meilisearch's index (MEILI_URL) answers instead (see `VectorSearch`).
 */
export class VectorStore {
  private rows: VectorRows<Float32Array> | null = null;
  private dims = 0;
  /** Scratch of `nearest`: the slots held, their rows' offsets, their scores. */
  private slots = new Uint32Array(0);
  private bases = new Int32Array(0);
  private scores = new Float64Array(0);
  /** Scratch of `cosine`: one row's offset and its dot product. */
  private readonly oneBase = new Int32Array(1);
  private readonly oneDot = new Float64Array(1);

  get size(): number {
    return this.rows?.size ?? 0;
  }

  set(slot: number, v: Float32Array): void {
    if (!this.rows) {
      this.dims = v.length;
      this.rows = new VectorRows(
        v.length,
        0,
        plainStorage((length) => new Float32Array(length)),
      );
    }
    if (v.length !== this.dims)
      throw new Error(`embedding of ${v.length} dimensions, the store holds ${this.dims}`);
    this.rows.set(slot, v);
  }

  delete(slot: number): void {
    this.rows?.delete(slot);
  }

  has(slot: number): boolean {
    return (this.rows?.row(slot) ?? -1) >= 0;
  }

  /** The `depth` slots most similar to `q` that `admit` lets through, best first (none for a vector of other dimensions). */
  nearest(
    q: Float32Array,
    depth: number,
    admit: (slot: number) => boolean,
  ): { slot: number; score: number }[] {
    const rows = this.rows;
    if (!rows || q.length !== this.dims) return [];
    this.slots = grown(this.slots, rows.size);
    this.bases = grown(this.bases, rows.size);
    this.scores = grown(this.scores, rows.size);
    let count = 0;
    for (let r = 0; r < rows.rows; r++) {
      const slot = rows.slotAt(r);
      if (slot < 0) continue;
      this.slots[count] = slot;
      this.bases[count++] = r * this.dims;
    }
    dots(rows.values, this.bases, count, q, this.scores);
    return topScoredSlots(this.slots, this.scores, count, depth, admit);
  }

  /** Cosine of a slot's vector to `q` (both unit vectors); 0 when the slot has none or `q` has other dimensions. */
  cosine(slot: number, q: Float32Array): number {
    const rows = this.rows;
    if (!rows || q.length !== this.dims) return 0;
    const r = rows.row(slot);
    if (r < 0) return 0;
    this.oneBase[0] = r * this.dims;
    dots(rows.values, this.oneBase, 1, q, this.oneDot);
    return this.oneDot[0]!;
  }

  /** Bytes held (the vectors and the scan's scratch). */
  bytes(): number {
    return (this.rows?.bytes() ?? 0) + this.slots.byteLength + this.bases.byteLength + this.scores.byteLength;
  }
}
