/**
 * A small OpenAI-compatible embeddings service for tests (POST /v1/embeddings): deterministic vectors (a
 * hash of each text's words spread over the dimensions), so tests check the plumbing (batching, retries,
 * falling back when the service is down), never a model's answers. `failNext` makes the next requests fail.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface EmbeddingsServer {
  url: string;
  /** Sizes of the batches received, in order (failed requests included). */
  batches: number[];
  /** Answer the next `n` requests with a 503. */
  failNext(n: number): void;
  close(): Promise<void>;
}

/** The vector the server gives a text: each word adds a hashed +-1 on a few dimensions. */
export function hashVector(text: string, dims = 32): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash('sha256').update(word).digest();
    for (let k = 0; k < 3; k++) v[h[k]! % dims]! += h[k + 3]! & 1 ? 1 : -1;
  }
  return v;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startEmbeddingsServer(dims = 32): Promise<EmbeddingsServer> {
  const batches: number[] = [];
  let failures = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const { input } = JSON.parse(raw) as { input: string[] };
      batches.push(input.length);
      if (failures > 0) {
        failures--;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"overloaded"}');
        return;
      }
      const data = input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: hashVector(text, dims),
      }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    batches,
    failNext(n) {
      failures = n;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
