/**
 * Finding 3 of issue 16: parallel downloads of large public skills were each rebuilt in memory (~1.9 s CPU
 * on the event loop), gave 500s, grew RSS by hundreds of MiB and made unrelated reads fail. Here the hub
 * listens on 127.0.0.1 and is loaded over real HTTP while unrelated reads run beside the downloads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, publish, seedTeam, type Tokens } from './teams-fixtures.js';

const MiB = 1024 * 1024;
let hub: TestHub;
let tokens: Tokens;
let base: string;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  digest: string | undefined;
  /** sha-256 of the body, base64, computed while it streams (bodies are never held). */
  bodyDigest: string;
  bytes: number;
}

/** GET over HTTP, hashing the body as it arrives. */
function get(path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
          digest: res.headers['content-digest'] as string | undefined,
          bodyDigest: `sha-256=:${hash.digest('base64')}:`,
          bytes,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Unrelated reads, one after another, until `done` settles. */
async function readWhile(done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  const statuses: number[] = [];
  while (!finished) {
    for (const path of ['/v1/skills/hub:acme/big/small', '/v1/search?q=small', '/healthz']) {
      statuses.push((await get(path)).status);
    }
  }
  return statuses;
}

beforeAll(async () => {
  hub = await createTestHub('archive_load', {
    ARCHIVE_BUILDS: '1',
    // Small enough that the six 4 MiB skills below do not all fit, big enough for one of them.
    ARCHIVE_CACHE_MB: '20',
    PUBLISH_MAX_UNPACKED_BYTES: String(80 * MiB),
    PUBLISH_MAX_ARCHIVE_BYTES: String(80 * MiB),
  });
  tokens = await seedTeam(hub.db.db, 'acme');
  // One skill at the per-file limit four times over (random bytes: gzip cannot shrink them), one small skill.
  const files: Record<string, string | Buffer> = {
    'large/SKILL.md': skillMd('large', 'Four files of 10 MiB.'),
    'small/SKILL.md': skillMd('small', 'A small skill to read meanwhile.'),
  };
  for (let i = 0; i < 4; i++) files[`large/data-${i}.bin`] = randomBytes(10 * MiB);
  for (let s = 0; s < 6; s++) {
    files[`wide-${s}/SKILL.md`] = skillMd(`wide-${s}`, `Wide skill ${s}.`);
    for (let i = 0; i < 4; i++) files[`wide-${s}/part-${i}.bin`] = randomBytes(MiB);
  }
  const res = await publish(hub.app, 'acme/big', packCollection(files), auth(tokens, 'publisher'), 'public');
  expect(res.statusCode, res.body).toBe(200);
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

describe('archive downloads under load', () => {
  it('16 parallel downloads of a 40 MiB skill: one build, all 200 with a matching digest, reads stay 200', async () => {
    const rssBefore = process.memoryUsage().rss;
    const downloads = Promise.all(Array.from({ length: 16 }, () => get('/v1/archive/hub:acme/big/large')));
    const [answers, reads] = await Promise.all([downloads, readWhile(downloads)]);
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    for (const a of answers) {
      expect(a.bytes).toBeGreaterThan(40 * MiB);
      expect(a.bodyDigest).toBe(a.digest);
    }
    expect(new Set(answers.map((a) => a.digest)).size).toBe(1);
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set([200]));
    // Before: each download held its own raw tar and gzip (RSS 200 -> 863 MB for 8). Now one build of
    // ~40 MiB is shared; the rest is socket buffers.
    expect(rssGrowth).toBeLessThan(300 * MiB);
  }, 120_000);

  it('distinct large archives beyond the build bound get 503 with Retry-After, never 500; reads stay 200', async () => {
    const paths = Array.from({ length: 6 }, (_, s) => `/v1/archive/hub:acme/big/wide-${s}`);
    const downloads = Promise.all([...paths, ...paths].map((p) => get(p)));
    const [answers, reads] = await Promise.all([downloads, readWhile(downloads)]);
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(statuses).toContain(200);
    for (const a of answers.filter((x) => x.status === 503)) expect(Number(a.retryAfter)).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set([200]));
    // Retried after the burst, every archive is served, and the same bytes as before (deterministic).
    for (const p of paths) {
      const again = await get(p);
      expect(again.status).toBe(200);
      expect(again.bodyDigest).toBe(again.digest);
      const first = answers.find((a, i) => [...paths, ...paths][i] === p && a.status === 200);
      if (first) expect(again.digest).toBe(first.digest);
    }
  }, 120_000);
});
