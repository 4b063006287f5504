/**
 * Index requests and renames, end to end (the hub app with a real in-process crawler over the GitHub
 * stand-in): a repository asked for by its new name before the hub saw the rename is indexed once, under
 * the new name; and an old name that GitHub now answers with another repository is indexed as that one.
 */
import { repositories } from '@atskills/db';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

let hub: CrawlingHub;
let app: FastifyInstance;

beforeAll(async () => {
  hub = await startCrawlingHub(
    'indexing_renames',
    {
      'tester/hostile-new': { 'deploy/SKILL.md': skillFile('deploy', 'Deploys the service.') },
      'tester/hostile': { 'old/SKILL.md': skillFile('old', 'The moved repository’s skill.') },
    },
    { INDEX_REQUESTS_PER_MINUTE: '100000' },
  );
  ({ app } = hub);
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

const requestIndex = (repo: string) =>
  app.inject({ method: 'POST', url: '/v1/index-requests', payload: { repo } });

/** Asks for `repo` and waits until its status (at that name) is indexed or failed. */
async function indexed(repo: string) {
  const res = await requestIndex(repo);
  expect(res.statusCode).toBe(202);
  return until(
    async () => (await app.inject({ url: `/v1/repos/${repo}` })).json(),
    (s) => s.status === 'indexed' || s.status === 'failed',
  );
}

describe('an index request for a renamed repository’s new name', () => {
  it('moves the row the hub had instead of indexing the repository twice', async () => {
    expect((await indexed('tester/hostile-new')).status).toBe('indexed');
    await hub.standin.renameRepository('tester/hostile-new', 'tester/hostile-v3');

    expect((await indexed('tester/hostile-v3')).skills).toEqual(['gh:tester/hostile-v3/deploy']);

    const rows = await hub.db.db
      .select({ owner: repositories.owner, name: repositories.name })
      .from(repositories)
      .where(eq(repositories.githubId, hub.standin.idOf('tester/hostile-v3')));
    expect(rows).toEqual([{ owner: 'tester', name: 'hostile-v3' }]);
    const old = await app.inject({ url: '/v1/skills/gh:tester/hostile-new/deploy' });
    expect(old.statusCode).toBe(301);
    expect(old.headers.location).toBe('/v1/skills/gh:tester/hostile-v3/deploy');
  });
});

describe('an index request for an old name that holds another repository now', () => {
  it('drops the redirect and indexes the new repository at that name', async () => {
    expect((await indexed('tester/hostile')).status).toBe('indexed');
    await hub.standin.renameRepository('tester/hostile', 'tester/hostile-moved');
    // The hub learns of the rename through a crawl of the old name: it stores the redirect.
    await requestIndex('tester/hostile');
    await until(
      async () => (await app.inject({ url: '/v1/skills/gh:tester/hostile/old' })).statusCode,
      (code) => code === 301,
    );
    await createRepo(hub.root, 'tester/hostile', {
      'fresh/SKILL.md': skillFile('fresh', 'A new repository at the old name.'),
    });

    const res = await requestIndex('tester/hostile');

    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toMatch(/\/v1\/repos\/tester\/hostile$/);
    const status = await until(
      async () => (await app.inject({ url: '/v1/repos/tester/hostile' })).json(),
      (s) => s.status === 'indexed',
    );
    expect(status.skills).toEqual(['gh:tester/hostile/fresh']);
    expect((await app.inject({ url: '/v1/skills/gh:tester/hostile/fresh' })).statusCode).toBe(200);
    // The moved repository keeps its skills under its new name.
    expect((await app.inject({ url: '/v1/skills/gh:tester/hostile-moved/old' })).statusCode).toBe(200);
  });
});
