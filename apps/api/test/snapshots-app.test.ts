/**
 * INDEX_SNAPSHOTS in the app: the first hub on a database builds the in-memory search index and the
 * suggestion model and stores both; a second hub on the same database (a restart, another replica)
 * restores them, says so on /metrics, and answers search and suggestions as the first one does.
 */
import { modelSnapshotHeader } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriesValue } from '../../../test/support/metrics.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { SEARCH_INDEX_SNAPSHOT } from '../src/search/memory-engine.js';
import { SUGGESTION_SNAPSHOT } from '../src/suggest/snapshot.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedCorpus } from './support/seed.js';

const ENV = { SEARCH_ENGINE: 'memory' };

/** Resolves once both structures of `app` have ended their first build (or restore). */
async function started(app: FastifyInstance): Promise<void> {
  await app.ready();
  await app.searchIndexFirstBuild;
  await app.suggestEngine.firstBuild();
}

describe('stored structures in the app', () => {
  let hub: TestHub;
  let second: FastifyInstance | undefined;

  beforeAll(async () => {
    hub = await createTestHub('snapshots_app', ENV, {}, async (db) => {
      await seedCorpus(db.db, ['anthropics/skills', 'obra/superpowers']);
    });
    await started(hub.app);
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await hub?.close();
  });

  it('are stored by the first hub and restored by the next one, which answers alike', async () => {
    expect(await modelSnapshotHeader(hub.db.db, SEARCH_INDEX_SNAPSHOT)).not.toBeNull();
    expect(await modelSnapshotHeader(hub.db.db, SUGGESTION_SNAPSHOT)).not.toBeNull();
    const first = (await hub.app.inject({ url: '/metrics' })).body;
    expect(seriesValue(first, 'atskills_search_index_restore_seconds')).toBe(0);
    expect(seriesValue(first, 'atskills_suggest_model_restore_seconds')).toBe(0);

    second = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', READ_CACHE_MB: '0', AUTH_FAILURES_MAX: '0', ...ENV }),
      { database: hub.db },
    );
    await started(second);
    const metrics = (await second.inject({ url: '/metrics' })).body;
    expect(seriesValue(metrics, 'atskills_search_index_restore_seconds')).toBeGreaterThan(0);
    expect(seriesValue(metrics, 'atskills_suggest_model_restore_seconds')).toBeGreaterThan(0);
    expect(seriesValue(metrics, 'atskills_search_index_build_seconds')).toBe(0);

    for (const url of [
      '/search?q=pdf',
      '/search?q=brainstorm+a+design',
      '/v1/suggest?q=turn+my+notes+into+a+slide+deck',
      '/v1/suggest?q=debug+a+flaky+test+that+fails+in+CI',
    ]) {
      const a = await hub.app.inject({ url });
      const b = await second.inject({ url });
      expect(a.statusCode).toBe(200);
      expect(b.json()).toEqual(a.json());
      expect(b.headers['x-search-engine'] ?? 'memory').toBe(a.headers['x-search-engine'] ?? 'memory');
    }
  });
});
