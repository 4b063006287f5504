import { request } from 'node:http';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerLeftSignal } from './suggest.js';

describe('callerLeftSignal', () => {
  const app = Fastify();
  const seen: { signal: AbortSignal; release: () => void }[] = [];
  let arrived: (() => void) | undefined;
  let url = '';
  beforeAll(async () => {
    app.get('/wait', async (_request, reply) => {
      const signal = callerLeftSignal(reply);
      await new Promise<void>((release) => {
        seen.push({ signal, release });
        arrived?.();
      });
      return 'done';
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const s of seen) s.release();
    await app.close();
  });

  const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));

  it('aborts when the connection closes before the answer was written', async () => {
    const here = nextArrival();
    const req = request(`${url}/wait`);
    req.on('error', () => {});
    req.end();
    await here;
    const { signal, release } = seen.at(-1)!;
    expect(signal.aborted).toBe(false);
    req.destroy();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    expect(signal.aborted).toBe(true);
    release();
  });

  it('does not abort once the answer was written', async () => {
    const here = nextArrival();
    const answered = new Promise<string>((resolve, reject) => {
      request(`${url}/wait`, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d;
        });
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
    await here;
    const { signal, release } = seen.at(-1)!;
    release();
    expect(await answered).toBe('done');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signal.aborted).toBe(false);
  });
});
