/**
 * A hub start-up parses its settings once: every variable of the composed schema is read from the
 * environment exactly once, however many parts (app, runtime, in-process crawler, linked repositories) use it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { HubProcessSchema } from '../src/runtime/hub-settings.js';
import { type RunningHub, startHub } from '../src/runtime/start.js';

let db: TestDatabase;
let hub: RunningHub | undefined;

beforeAll(async () => {
  db = await createTestDatabase('hub_start_settings');
});

afterAll(async () => {
  await hub?.shutdown('test over');
  await db?.drop();
});

describe('startHub', () => {
  it('reads each variable of the environment once', async () => {
    const reads = new Map<string, number>();
    const env = new Proxy<Record<string, string | undefined>>(
      {
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: db.url,
        SEARCH_ENGINE: 'postgres',
        RECRAWL_TICK_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '2000',
        LINK_TOKEN_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      },
      {
        get(target, key) {
          if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
          return Reflect.get(target, key);
        },
      },
    );
    hub = await startHub({ env });
    const health = await fetch(`${hub.url}/healthz`);
    expect(health.status).toBe(200);

    const variables = Object.keys(HubProcessSchema.shape);
    expect(Object.fromEntries([...reads].sort(([a], [b]) => a.localeCompare(b)))).toEqual(
      Object.fromEntries(variables.sort().map((name) => [name, 1])),
    );
    // The parts got their settings from that one parse.
    expect(hub.config.github.auth.tokenKeys.map((k) => k.id)).toEqual(['k1']);
    expect(hub.ops.shutdownTimeoutMs).toBe(2000);
  });
});

describe('startHub with a setting the start cannot use', () => {
  it('stops naming ATSKILLS_DATA_DIR when the data folder cannot be made (it hung under /proc)', async () => {
    const started = Date.now();
    await expect(
      startHub({ env: { PORT: '0', LOG_LEVEL: 'silent', ATSKILLS_DATA_DIR: '/proc/nope/data' } }),
    ).rejects.toThrow(/^Invalid configuration: ATSKILLS_DATA_DIR: cannot make the folder \/proc\/nope\/data/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 10_000);

  it('stops naming HOST when it does not resolve, before touching the database', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hub-host-'));
    try {
      await expect(
        startHub({
          env: { PORT: '0', LOG_LEVEL: 'silent', HOST: 'not.a.host.invalid', ATSKILLS_DATA_DIR: dataDir },
        }),
      ).rejects.toThrow(/^Invalid configuration: HOST: not\.a\.host\.invalid does not resolve/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
